"""A saved sentiment run: raw texts in, label and class probabilities out; the reading
trace (probabilities after every prefix) for `elman predict --trace`."""

from elman.errors import UserError
from elman.tasks.base import Predictor


class SentimentPredictor(Predictor):
    """Classifies raw texts with a saved sentiment run.

    Args:
        run_dir: str or Path, the run folder.

    Example:
        >>> SentimentPredictor("runs/sentiment/demo").predict(["a fine film"])
        [{'text': 'a fine film', 'label': 'pos', 'probabilities': {...}, 'truncated': None}]
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

    def truncation(self, texts):
        """Per text, None when the model reads all of it, else {"tokens", "read", "kept"}:
        the text's token count, how many the model reads (`tokenizer.max_length`) and
        whether those are the "first" or the "last" ones (`tokenizer.truncation`)."""
        return self.model.get_layer("tokenizer").truncation_info(list(texts))

    def predict(self, texts):
        """One {"text", "label", "probabilities", "truncated"} dict per text.

        "truncated" is None when the model read the whole text; for a text longer than
        the run's `tokenizer.max_length` tokens it is {"tokens": N, "read": M, "kept":
        "first" or "last"} (the label is the model's reading of those M tokens only).
        """
        out = []
        for text, row, cut in zip(texts, self.probabilities(texts), self.truncation(texts)):
            out.append({"text": text, "label": self.labels[int(row.argmax())],
                        "probabilities": {label: round(float(p), 6)
                                          for label, p in zip(self.labels, row)},
                        "truncated": cut})
        return out

    def format_text(self, prediction):
        """`label<TAB>label=p ...<TAB>text`."""
        detail = "  ".join(f"{label}={p:.4f}" for label, p in prediction["probabilities"].items())
        return f"{prediction['label']}\t{detail}\t{prediction['text']}"

    @property
    def tracer(self):
        """The run's `PrefixTracer` (the saved model's tokenizer and classifiers)."""
        if getattr(self, "_tracer", None) is None:
            from elman.tasks.sentiment.trace import PrefixTracer, model_parts

            tokenizer, char_layer, classifiers = model_parts(self.model)
            self._tracer = PrefixTracer(tokenizer, classifiers, self.labels, char_layer)
        return self._tracer

    def trace(self, texts):
        """The class probabilities after reading the first t tokens, for every t.

        All prefixes of a text go through the model as one masked batch. With a
        bidirectional encoder each row is the model applied to the prefix (its backward
        direction reads only the prefix); the last row is `predict`'s answer.

        Returns:
            One dict per text: "text", "tokens", "labels", "steps" (one {"token", "oov",
            "label", "probabilities"} per token read, plus "attention", the token's weight
            in the whole text, with attention pooling), the final "label" and
            "probabilities", "bidirectional", and "truncated" (as in `predict`).
        """
        traces = self.tracer.trace(list(texts))
        for trace, cut in zip(traces, self.truncation(texts)):
            trace["truncated"] = cut
        return traces

    def format_trace(self, trace):
        """The token-by-token table: each class's probability after each token, a bar
        of the final label's, and ← where the leading label changes."""
        from elman.core.trace import bar, shown, table

        final, labels = trace["label"], trace["labels"]
        rows, previous = [], None
        for t, step in enumerate(trace["steps"], start=1):
            p = step["probabilities"]
            turn = "" if previous in (None, step["label"]) else f"← {step['label']}"
            previous = step["label"]
            weight = [f"{step['attention']:.4f}"] if "attention" in step else []
            rows.append([str(t), shown(step["token"]) + (" (unknown)" if step["oov"] else ""),
                         *[f"{p[label]:.4f}" for label in labels], *weight, bar(p[final]),
                         turn])
        lines = [trace["text"]]
        if trace["bidirectional"]:
            lines.append("(bidirectional encoder: row t is the model applied to the first t "
                         "tokens; its backward direction reads only those)")
        attention = ["attention"] if trace["steps"] and "attention" in trace["steps"][0] else []
        if attention:
            lines.append("(attention: the weight of each token in the whole text's pooled "
                         "vector; the weights sum to 1)")
        lines.append(table(["t", "token", *labels, *attention, f"p({final})", ""], rows,
                           right=(0, *range(2, 2 + len(labels) + len(attention)))))
        lines.append(f"→ {final} ({trace['probabilities'][final]:.4f})")
        return "\n".join(lines)
