"""The sentiment reading trace: the class probabilities after each prefix of a text.

For a text of T tokens the classifier is applied to its T prefixes at once: one batch
whose row t holds the first t tokens followed by padding (id 0, masked by the
embedding), so the recurrent layers stop at the prefix's last token. Several texts'
prefixes share one batch (at most `max_rows` rows), so tracing costs one batched
forward pass per text, not T calls. An ensemble's members are averaged as the saved
model averages them, and char features are cut to the same prefixes.

A bidirectional encoder makes each row "the model applied to the prefix": its
backward direction reads the prefix from its last token back to the first, not the
whole text. The last row is the model's prediction for the whole text; an earlier
row is what it would say had the text ended there. A unidirectional model with
pooling "last" reads exactly as the course's step-by-step walk-through does.
"""

import numpy as np

from elman.errors import UserError


def model_parts(model):
    """The (tokenizer, char layer or None, classifiers) inside a saved inference model."""
    from elman.models.sentiment_classifier import SentimentClassifier
    from elman.text.tokenize import CharIds, TokenIds

    # a TextTokenizer or a SubwordTokenizer: both are TokenIds layers
    tokenizer = next(layer for layer in model.layers if isinstance(layer, TokenIds))
    chars = [layer for layer in model.layers if isinstance(layer, CharIds)]
    classifiers = [layer for layer in model.layers if isinstance(layer, SentimentClassifier)]
    return tokenizer, chars[0] if chars else None, classifiers


def prefix_rows(values, width=None):
    """The prefixes of one text's ids: row t keeps the first t + 1 positions, then zeros.

    Args:
        values: int array [T] (token ids) or [T, C] (char ids of each token).
        width: int or None, the rows' length (>= T; default T).

    Returns:
        int32 array [max(T, 1), width, ...]; a text without tokens gives one row of
        padding (what the plain prediction reads).
    """
    values = np.asarray(values, np.int32)
    length = values.shape[0]
    width = max(width or length, 1)
    rows = np.zeros((max(length, 1), width) + values.shape[1:], np.int32)
    for t in range(length):
        rows[t, :t + 1] = values[:t + 1]
    return rows


def _char_grid(chars, depth):
    """One text's char ids (a list per token) as an int32 array [T, max(depth, 1)]."""
    grid = np.zeros((len(chars), max(depth, 1)), np.int32)
    for t, c in enumerate(chars):
        grid[t, :len(c)] = c
    return grid


class PrefixTracer:
    """Class probabilities after every prefix of raw texts, batched.

    Args:
        tokenizer: the run's tokenizer (TextTokenizer, or SubwordTokenizer: its tokens are
            pieces).
        classifiers: list of SentimentClassifier (an ensemble is averaged).
        labels: list of str, the class labels in output order.
        char_layer: the CharIds layer when the classifiers use char features.
        max_rows: int, the most prefix rows in one forward pass. Default 4096.
    """

    def __init__(self, tokenizer, classifiers, labels, char_layer=None, max_rows=4096):
        self.tokenizer = tokenizer
        self.classifiers = list(classifiers)
        self.labels = list(labels)
        self.char_layer = char_layer
        self.max_rows = max_rows
        self._function = None
        self._encoders = {}  # member index → its embedding-to-encoder model (attention)

    @property
    def bidirectional(self):
        """Whether the encoders read both ways (each row then reads only its prefix)."""
        return any(c.bidirectional for c in self.classifiers)

    def _forward(self, inputs):
        """Mean class probabilities of the classifiers on one batch (one compiled call)."""
        import tensorflow as tf

        if self._function is None:
            members = self.classifiers

            def forward(x):
                outputs = [member(x, training=False) for member in members]
                return tf.add_n(outputs) / float(len(outputs))

            spec = tf.TensorSpec([None, None], tf.int32)  # traced once for every shape
            if self.char_layer is not None:
                spec = {"token_ids": spec, "char_ids": tf.TensorSpec([None, None, None],
                                                                     tf.int32)}
            self._function = tf.function(forward, input_signature=[spec])
        return np.asarray(self._function(inputs))

    def probabilities(self, token_ids, char_ids=None):
        """The probabilities after each prefix of one text's ids: array [T, classes].

        Args:
            token_ids: int array [T], the text's token ids.
            char_ids: int array [T, C] or None, its char ids (with char features).
        """
        rows = prefix_rows(token_ids)
        if char_ids is None:
            return self._forward(rows)
        return self._forward({"token_ids": rows, "char_ids": prefix_rows(char_ids)})

    def _encode(self, texts):
        """Tokens (str), token ids and char ids (or None) of each text."""
        import tensorflow as tf

        strings = tf.constant(list(texts))
        tokens = self.tokenizer.truncate(self.tokenizer.split(strings)).to_list()
        ids = self.tokenizer.ragged_ids(strings).to_list()
        chars = (self.char_layer.ragged_ids(strings).to_list()
                 if self.char_layer is not None else [None] * len(ids))
        tokens = [[t.decode("utf-8") for t in row] for row in tokens]
        return tokens, ids, chars

    def _groups(self, lengths):
        """Text indices in groups whose prefix rows fit `max_rows` (longest first)."""
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        groups, current, rows = [], [], 0
        for i in order:
            need = max(lengths[i], 1)
            if current and rows + need > self.max_rows:
                groups.append(current)
                current, rows = [], 0
            current.append(i)
            rows += need
        return groups + ([current] if current else [])

    def _batch(self, ids, chars, group):
        """One batch holding the prefix rows of the texts in `group`; returns it and the
        row where each text's prefixes start."""
        width = max(max(len(ids[i]), 1) for i in group)
        depth = max((len(c) for i in group for c in (chars[i] or [])), default=1)
        word_rows, char_rows, starts, start = [], [], [], 0
        for i in group:
            starts.append(start)
            word_rows.append(prefix_rows(ids[i], width))
            start += len(word_rows[-1])
            if chars[i] is not None:
                char_rows.append(prefix_rows(_char_grid(chars[i], depth), width))
        x = np.concatenate(word_rows)
        if self.char_layer is not None:
            x = {"token_ids": x, "char_ids": np.concatenate(char_rows)}
        return x, starts

    def attention(self, ids, chars=None):
        """With attention pooling: the weight each token of each whole text gets, averaged
        over the members that pool by attention (list of arrays [T]); None otherwise.

        The weights are the pooling layer's own (`MaskedPooling.attention_weights`) on the
        encoder's outputs for the whole text, the row `predict` reads."""
        import keras

        members = [k for k, c in enumerate(self.classifiers) if c.pooling == "attention"]
        if not members:
            return None
        if len(ids) > 256:  # texts in chunks, so the padded grid stays small
            return [w for start in range(0, len(ids), 256)
                    for w in self.attention(ids[start:start + 256],
                                            None if chars is None else chars[start:start + 256])]
        width = max(max((len(r) for r in ids), default=1), 1)
        grid = np.zeros((len(ids), width), np.int32)
        for i, row in enumerate(ids):
            grid[i, :len(row)] = row
        x = grid
        if self.char_layer is not None:
            depth = max((len(c) for row in chars for c in row), default=1)
            char_grid = np.zeros((len(ids), width, max(depth, 1)), np.int32)
            for i, row in enumerate(chars):
                char_grid[i, :len(row)] = _char_grid(row, depth)
            x = {"token_ids": grid, "char_ids": char_grid}
        total = np.zeros(grid.shape, np.float64)
        for k in members:
            member = self.classifiers[k]
            if k not in self._encoders:
                read = "rcnn" if member.rcnn else "encoder"  # what the pooling reads
                self._encoders[k] = keras.Model(member.input, member.get_layer(read).output)
            encoded = self._encoders[k](x, training=False)
            weights = member.get_layer("pooling").attention_weights(encoded, grid != 0)
            total += np.asarray(weights, np.float64)
        total /= len(members)
        return [total[i, :len(row)] for i, row in enumerate(ids)]

    def trace(self, texts):
        """One trace dict per text (see `SentimentPredictor.trace`)."""
        for i, text in enumerate(texts, start=1):
            if not str(text).strip():
                raise UserError(f"text {i} is empty; expected some text to trace")
        tokens, ids, chars = self._encode(texts)
        probs = [None] * len(texts)
        for group in self._groups([len(r) for r in ids]):
            x, starts = self._batch(ids, chars, group)
            out = self._forward(x)
            for i, start in zip(group, starts):
                probs[i] = out[start:start + max(len(ids[i]), 1)]
        weights = self.attention(ids, chars) or [None] * len(ids)
        return [self._record(text, toks, row_ids, p, w)
                for text, toks, row_ids, p, w in zip(texts, tokens, ids, probs, weights)]

    def _record(self, text, tokens, ids, probs, attention=None):
        labels = self.labels

        def dist(row):
            return {label: round(float(p), 6) for label, p in zip(labels, row)}

        steps = [{"token": token, "oov": token_id == 1, "label": labels[int(row.argmax())],
                  "probabilities": dist(row)}
                 for token, token_id, row in zip(tokens, ids, probs)]
        if attention is not None:  # how much of the whole text's pooled vector each token is
            for step, weight in zip(steps, attention):
                step["attention"] = round(float(weight), 6)
        final = probs[-1]
        return {"text": text, "tokens": tokens, "labels": labels, "steps": steps,
                "label": labels[int(final.argmax())], "probabilities": dist(final),
                "bidirectional": self.bidirectional}
