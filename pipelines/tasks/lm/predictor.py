"""A saved language-model run: the most likely next tokens after a text, generation, and
the surprisal trace of a text or a file."""

import math

from elman.errors import UserError
from elman.tasks.base import Predictor
from elman.tasks.lm.vocabulary import (decode_ids, detokenize, encode_prefix, read_subword,
                                       read_vocabulary, unknown_tokens, VOCABULARY_FILE)


class LMPredictor(Predictor):
    """Continues raw texts with a saved language-model run.

    Args:
        run_dir: str or Path, the run folder.

    Example:
        >>> LMPredictor("runs/lm/demo").predict(["the cat"])[0]["next"][0]
        {'token': 'is', 'probability': 0.41...}
        >>> LMPredictor("runs/lm/demo").generate("the cat", 20)["text"]
    """

    task = "lm"
    options = {"top": (int, 5)}

    def __init__(self, run_dir):
        from elman.core import runs

        super().__init__(run_dir)
        self.cfg = runs.read_config(self.run_dir, self.task)
        self.vocabulary = read_vocabulary(self.run_dir)
        # subword level: the SentencePiece model the run learned (`subword.model`)
        self.pieces = read_subword(self.run_dir) if self.cfg.text.level == "subword" else None

    @property
    def model(self):
        """The run's inference model; its ids must match `vocabulary.json`."""
        model = super().model
        if model.vocabulary_size != len(self.vocabulary):
            raise UserError(f"model.keras has {model.vocabulary_size} ids but "
                            f"{VOCABULARY_FILE} {len(self.vocabulary)}", path=self.run_dir)
        return model

    def next_tokens(self, text, top=5):
        """The `top` most likely next tokens after `text`: list of (token, probability)."""
        import numpy as np

        _, ids = encode_prefix(text, self.cfg.text, self.vocabulary, self.pieces)
        logits = np.asarray(self.model(ids[None, :], training=False))[0, -1].astype("float64")
        logits[0] = -np.inf  # padding is never a next token
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        best = np.argsort(-probs, kind="stable")[:top]
        return [(self.vocabulary[j], float(probs[j])) for j in best]

    def predict(self, texts, top=5):
        """One {"text", "next": [{"token", "probability"}, ...], "truncated"} dict per text.

        "truncated" is always None: the model reads the whole text, however long (its
        recurrent state carries it; there is no context window).

        Args:
            texts: list of str, texts to continue (not empty).
            top: int, how many next tokens, most likely first. Default 5.
        """
        for i, text in enumerate(texts, start=1):
            if not text.strip():
                raise UserError(f"text {i} is empty; expected some text to continue")
        return [{"text": text, "next": [{"token": t, "probability": round(p, 6)}
                                        for t, p in self.next_tokens(text, top)],
                 "truncated": None} for text in texts]

    def trace(self, texts, top=5):
        """Each token's surprisal (bits) and the tokens the model expected there.

        A text is read as one line (`<eol>` first and last, as `evaluate` reads a file
        of that one line), from a fresh state; the final `<eol>` is scored too.

        Args:
            texts: list of str, texts to trace (not empty).
            top: int, expected tokens per position, most likely first. Default 5.

        Returns:
            One dict per text: "text", "steps" (one {"token", "oov", "surprisal_bits",
            "probability", "expected": [{"token", "probability"}, ...], "fresh_state"}
            per token), "tokens_scored", "total_bits", "negative_log_likelihood" (nats),
            "cross_entropy" and "perplexity".
        """
        from elman.tasks.lm.data import token_stream
        from elman.tasks.lm.trace import stream_trace, trace_record
        from elman.tasks.lm.vocabulary import encode_stream

        out = []
        for i, text in enumerate(texts, start=1):
            if not text.strip():
                raise UserError(f"text {i} is empty; expected some text to trace")
            tokens = token_stream([text], self.cfg.text, self.pieces)
            ids = encode_stream(tokens, self.vocabulary)
            scored = stream_trace(self.model, ids, 1, top)
            out.append({"text": text, **trace_record(tokens, ids, scored, self.vocabulary)})
        return out

    def trace_file(self, data=None, top=5):
        """The trace of a text file, read as `evaluate` reads it (`train.eval_batch_size`
        parallel pieces, each from a fresh state): the surprisals sum to the negative
        log-likelihood `evaluate` reports.

        Args:
            data: str, Path or None, the file (default: the run's test, else validation
                file).
            top: int, expected tokens per position. Default 5.

        Returns:
            The dict `trace` gives for one text, with "data" (the file) and "streams"
            instead of "text".
        """
        from elman import tasks
        from elman.tasks.lm.data import read_text_lines, token_stream
        from elman.tasks.lm.trace import stream_trace, trace_record
        from elman.tasks.lm.vocabulary import encode_stream

        path = tasks.get(self.task).evaluation_file(self.cfg, {"data": data}, "a text file")
        lines = read_text_lines(path, self.cfg.data.encoding)
        tokens = token_stream(lines, self.cfg.text, self.pieces)
        ids = encode_stream(tokens, self.vocabulary)
        streams = max(1, min(self.cfg.train.eval_batch_size, len(ids) - 1))
        scored = stream_trace(self.model, ids, streams, top)
        return {"data": str(path), "streams": streams,
                **trace_record(tokens, ids, scored, self.vocabulary)}

    def format_trace(self, trace):
        """One row per token: its surprisal in bits (with a bar, 1 column a bit), its
        probability and the tokens the model expected; ↺ where the state starts afresh."""
        from elman.core.trace import bar, shown, table

        rows = []
        for t, step in enumerate(trace["steps"], start=1):
            expected = "  ".join(f"{shown(e['token'], 12)} {e['probability']:.3f}"
                                 for e in step["expected"][:3])
            rows.append([str(t), ("↺ " if step["fresh_state"] and t > 1 else "")
                         + shown(step["token"]) + (" (unknown)" if step["oov"] else ""),
                         f"{step['surprisal_bits']:.2f}", f"{step['probability']:.4f}",
                         bar(min(step["surprisal_bits"], 20) / 20), expected])
        head = trace.get("text", trace.get("data", ""))
        lines = [head, table(["t", "token", "bits", "p", "surprisal", "expected (p)"], rows,
                             right=(0, 2, 3))]
        lines.append(f"{trace['total_bits']:.2f} bits over {trace['tokens_scored']} tokens = "
                     f"{trace['negative_log_likelihood']:.4f} nats; cross-entropy "
                     f"{trace['cross_entropy']:.4f} nats/token, perplexity "
                     f"{trace['perplexity']:.4f}")
        if trace.get("streams", 1) > 1:
            lines.append(f"(read as `elman evaluate` reads it: {trace['streams']} parallel "
                         "pieces, each from a fresh state (↺)"
                         + (f"; the last {trace['unscored']} tokens are not scored)"
                            if trace["unscored"] else ")"))
        return "\n".join(lines)

    def format_text(self, prediction):
        """`text<TAB>'token'=p  'token'=p ...`."""
        return prediction["text"] + "\t" + "  ".join(
            f"{n['token']!r}={n['probability']:.4f}" for n in prediction["next"])

    def generate(self, prefix, length, temperature=0.0, seed=0):
        """Continues `prefix` by `length` tokens (state-carrying, compiled generator).

        Greedy when `temperature` is 0; otherwise sampled, the same `seed` giving the
        same tokens.

        Args:
            prefix: str, the text to continue (may be empty: a line starts).
            length: int >= 0, tokens to generate.
            temperature: float >= 0. Default 0.0 (greedy).
            seed: int, the sampling seed. Default 0.

        Returns:
            dict with "prefix", "text" (the tokenized prefix followed by the
            continuation, joined as the run's level does: no spaces at character
            level, spaces at word level, pieces with `▁` as spaces at subword level),
            "tokens" (the generated tokens) and
            "unknown" (prefix tokens not in the vocabulary, read as [UNK]).
        """
        from elman.tasks.lm.generation import generate

        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise UserError(f"--length must be an integer >= 0; got {length!r}")
        if not (math.isfinite(temperature) and temperature >= 0):
            raise UserError(f"--temperature must be >= 0 (0: greedy); got {temperature}")
        tokens, ids = encode_prefix(prefix, self.cfg.text, self.vocabulary, self.pieces)
        generated = decode_ids(generate(self.model, ids, length, temperature=float(temperature),
                                        seed=seed), self.vocabulary)
        return {"prefix": prefix, "text": detokenize(tokens + generated, self.cfg.text.level),
                "tokens": generated, "unknown": unknown_tokens(tokens, self.vocabulary)}
