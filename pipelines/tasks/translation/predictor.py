"""A saved translation run: raw source sentences in, translations out."""

from elman.errors import UserError
from elman.tasks.base import Predictor


class TranslationPredictor(Predictor):
    """Translates raw source sentences with a saved translation run.

    Args:
        run_dir: str or Path, the run folder.

    Example:
        >>> TranslationPredictor("runs/translation/demo").predict(["i like tea"])
        [{'text': 'i like tea', 'translation': '我喜欢茶', 'truncated': None}]
    """

    task = "translation"
    options = {"beam": (int, 0)}

    def __init__(self, run_dir):
        super().__init__(run_dir)
        self._translator = None

    @property
    def translator(self):
        """The run's `Translator` (model.keras + tokenizers.json), loaded once."""
        if self._translator is None:
            from elman.tasks.translation.translator import Translator, read_tokenizers

            source_tok, target_tok, decoding = read_tokenizers(self.run_dir)
            self._translator = Translator(self.model, source_tok, target_tok, decoding,
                                          self.info.get("target_lang", ""))
        return self._translator

    def _checked_beam(self, texts, beam):
        """The beam width as an int, after checking the texts and the width."""
        for i, text in enumerate(texts, start=1):
            if not text.strip():
                raise UserError(f"text {i} is empty; expected a sentence to translate")
        beam = int(beam or 0)
        if beam < 0:
            raise UserError(f"--beam must be 0 (greedy) or a positive width; got {beam}")
        translator = self.translator
        if beam > translator.model.target_vocab_size:
            raise UserError(f"--beam {beam} is larger than the target vocabulary")
        return beam

    def translate(self, texts, beam=0):
        """Translated strings, one per text.

        Args:
            texts: list of str, non-empty source sentences.
            beam: int, 0 for greedy decoding, k > 0 for beam search of width k.
        """
        beam = self._checked_beam(texts, beam)
        return self.translator.translate(texts, beam)

    def truncation(self, texts):
        """Per text, None when the encoder reads all of it, else {"tokens", "read", "kept"}:
        the source's token count, how many the encoder reads
        (`source_tokenizer.max_length`) and whether those are the "first" or the "last"."""
        return self.translator.source_tokenizer.truncation_info(list(texts))

    def predict(self, texts, beam=0):
        """One {"text", "translation", "truncated"} dict per text.

        "truncated" is None when the encoder read the whole source; for a source longer
        than the run's `source_tokenizer.max_length` tokens it is {"tokens": N, "read": M,
        "kept": "first" or "last"} (only those M tokens are translated).
        """
        return [{"text": text, "translation": translation, "truncated": cut}
                for text, translation, cut in zip(texts, self.translate(texts, beam),
                                                  self.truncation(texts))]

    def format_text(self, prediction):
        """The translation, on one line."""
        return prediction["translation"].replace("\n", " ")

    def trace(self, texts, beam=0):
        """Each output token's probability and (with attention) the weights over the source.

        The texts are translated as `predict` does; one teacher-forced pass over the
        outputs then scores every output token, the end token included.

        Returns:
            One dict per text: "text", "translation", "source_tokens", "steps" (one
            {"token", "probability", "attention" (one weight per source token, or
            None without attention)} per output token), "log_probability" (nats),
            "beam", "ended" (whether the end token was produced) and "truncated" (as
            in `predict`).
        """
        from elman.tasks.translation.trace import trace_texts

        beam = self._checked_beam(texts, beam)
        traces = trace_texts(self.translator, list(texts), beam)
        for trace, cut in zip(traces, self.truncation(texts)):
            trace["truncated"] = cut
        return traces

    def format_trace(self, trace):
        """One row per output token: its probability (with a bar) and the source tokens
        it attends to most."""
        from elman.core.trace import bar, shown, table

        source, rows = trace["source_tokens"], []
        for t, step in enumerate(trace["steps"], start=1):
            focus = ""
            if step["attention"]:
                top = sorted(range(len(source)), key=lambda k: -step["attention"][k])[:3]
                focus = ", ".join(f"{shown(source[k])} {step['attention'][k]:.2f}" for k in top)
            rows.append([str(t), shown(step["token"]), f"{step['probability']:.4f}",
                         bar(step["probability"], 10), focus])
        heading = "attends to (weight)" if any(s["attention"] for s in trace["steps"]) else ""
        return "\n".join([f"{trace['text']} → {trace['translation']}",
                          table(["t", "token", "p", "", heading], rows, right=(0, 2)),
                          f"log-probability {trace['log_probability']:.4f} nats"
                          + ("" if trace["ended"] else " (stopped at the length cap)")])
