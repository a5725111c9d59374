"""A saved translation run: raw source sentences in, translations out."""

from elman.errors import UserError
from elman.tasks.base import Predictor


class TranslationPredictor(Predictor):
    """Translates raw source sentences with a saved translation run.

    Args:
        run_dir: str or Path, the run folder.

    Example:
        >>> TranslationPredictor("runs/translation/demo").predict(["i like tea"])
        [{'text': 'i like tea', 'translation': '我喜欢茶'}]
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

    def translate(self, texts, beam=0):
        """Translated strings, one per text.

        Args:
            texts: list of str, non-empty source sentences.
            beam: int, 0 for greedy decoding, k > 0 for beam search of width k.
        """
        for i, text in enumerate(texts, start=1):
            if not text.strip():
                raise UserError(f"text {i} is empty; expected a sentence to translate")
        beam = int(beam or 0)
        if beam < 0:
            raise UserError(f"--beam must be 0 (greedy) or a positive width; got {beam}")
        translator = self.translator
        if beam > translator.model.target_vocab_size:
            raise UserError(f"--beam {beam} is larger than the target vocabulary")
        return translator.translate(texts, beam)

    def predict(self, texts, beam=0):
        """One {"text", "translation"} dict per text."""
        return [{"text": text, "translation": translation}
                for text, translation in zip(texts, self.translate(texts, beam))]

    def format_text(self, prediction):
        """The translation, on one line."""
        return prediction["translation"].replace("\n", " ")
