"""A saved sentiment run: raw texts in, label and class probabilities out."""

from elman.errors import UserError
from elman.tasks.base import Predictor


class SentimentPredictor(Predictor):
    """Classifies raw texts with a saved sentiment run.

    Args:
        run_dir: str or Path, the run folder.

    Example:
        >>> SentimentPredictor("runs/sentiment/demo").predict(["a fine film"])
        [{'text': 'a fine film', 'label': 'pos', 'probabilities': {...}}]
    """

    task = "sentiment"

    @property
    def labels(self):
        """The class labels, in the order of the probabilities."""
        return self.info["labels"]

    def probabilities(self, texts):
        """Class probabilities of each text: a numpy array [len(texts), len(labels)]."""
        import numpy as np
        import tensorflow as tf

        for i, text in enumerate(texts, start=1):
            if not text.strip():
                raise UserError(f"text {i} is empty; expected some text to classify")
        return np.asarray(self.model.predict(tf.constant(list(texts)), verbose=0,
                                             batch_size=256))

    def predict(self, texts):
        """One {"text", "label", "probabilities"} dict per text."""
        out = []
        for text, row in zip(texts, self.probabilities(texts)):
            out.append({"text": text, "label": self.labels[int(row.argmax())],
                        "probabilities": {label: round(float(p), 6)
                                          for label, p in zip(self.labels, row)}})
        return out

    def format_text(self, prediction):
        """`label<TAB>label=p ...<TAB>text`."""
        detail = "  ".join(f"{label}={p:.4f}" for label, p in prediction["probabilities"].items())
        return f"{prediction['label']}\t{detail}\t{prediction['text']}"
