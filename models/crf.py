"""A linear-chain conditional random field layer: Viterbi decoding, likelihood and the
per-position tag marginals (forward–backward)."""

import keras
import numpy as np
import tensorflow as tf

_CONSTRAINTS = ("BIO", "BIOES")

# Added to the score of a forbidden transition. Large enough that no allowed path
# loses to a forbidden one, small enough to keep float32 sums and gradients finite.
_FORBIDDEN = -1e4


def _allowed(tag_names, constraint):
    """Boolean masks (transitions [T, T], start [T], end [T]) for a tag scheme."""
    prefixes = {"BIO": "BI", "BIOES": "BIES"}[constraint]
    parsed = []
    for name in tag_names:
        if name == "O":
            parsed.append(("O", None))
        elif (isinstance(name, str) and len(name) > 2 and name[1] == "-"
              and name[0] in prefixes):
            parsed.append((name[0], name[2:]))
        else:
            allowed = ", ".join(f"'{p}-TYPE'" for p in prefixes)
            raise ValueError(
                f"Expected tag_names to be 'O' or {allowed} for constraint={constraint!r}. "
                f"Received: {name!r}"
            )
    size = len(parsed)
    transitions = np.zeros((size, size), dtype=bool)
    start = np.zeros(size, dtype=bool)
    end = np.zeros(size, dtype=bool)
    for j, (prefix, type_) in enumerate(parsed):
        start[j] = prefix in ("O", "B", "S")
        end[j] = prefix in ("O", "I", "B") if constraint == "BIO" else prefix in ("O", "E", "S")
        for i, (previous, previous_type) in enumerate(parsed):
            if constraint == "BIO":
                ok = prefix != "I" or (previous in ("B", "I") and previous_type == type_)
            elif previous in ("B", "I"):
                ok = prefix in ("I", "E") and previous_type == type_
            else:
                ok = prefix in ("O", "B", "S")
            transitions[i, j] = ok
    return transitions, start, end


def _scan(step, initial, steps, reverse=False):
    """Runs `carry = step(carry, steps[t])` over time; returns every carry, stacked.

    `tf.scan`, not `keras.ops.scan`: in Keras 3.15 the TensorFlow `keras.ops.scan`
    fails when the number of steps is unknown while tracing (tf.data batches of
    different lengths): `'NoneType' object has no attribute
    'assert_is_compatible_with'`.
    """
    return tf.scan(step, steps, initializer=initial, reverse=reverse)


@keras.saving.register_keras_serializable(package="elman")
class CRF(keras.layers.Layer):
    """Linear-chain CRF over per-position tag scores ("potentials").

    The score of a tag path `y` for potentials `x` [length, num_tags] is
    `start[y_0] + sum_t x[t, y_t] + sum_t transitions[y_(t-1), y_t] + end[y_last]`.
    Calling the layer returns the best path of each sentence (batched Viterbi in a
    `tf.scan`); `negative_log_likelihood` is the training loss (forward
    algorithm in log space). Masks are `True` for real tokens, right padded; padded
    positions decode to tag id 0. Everything is computed in float32.

    With `constraint="BIO"` and `tag_names`, a path with `I-X` at the start or after
    anything but `B-X`/`I-X` gets a large negative score (both when decoding and in
    the likelihood), so it is never predicted. `"BIOES"` forbids the invalid BIOES
    transitions the same way. Gold paths must then be valid (repair them first).

    Args:
        num_tags: int, number of tags T.
        tag_names: list of str or None, the name of each tag id; needed by
            `constraint`. Default None.
        constraint: str or None, `"BIO"`, `"BIOES"` or None (every transition
            allowed). Default None.
        transitions_initializer: initializer of the [T, T] transition scores.
            Start and end scores start at zero. Default "glorot_uniform".

    Example:

    ```python
    crf = CRF(3, tag_names=["O", "B-PER", "I-PER"], constraint="BIO")
    potentials = keras.random.normal((2, 5, 3))
    mask = keras.ops.array([[True] * 5, [True] * 3 + [False] * 2])
    tags = crf(potentials, mask=mask)                      # [2, 5] int32
    loss = crf.negative_log_likelihood(potentials, tags, mask)   # [2]
    ```
    """

    def __init__(self, num_tags, tag_names=None, constraint=None,
                 transitions_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        if not isinstance(num_tags, int) or num_tags < 1:
            raise ValueError(
                f"Expected num_tags to be a positive int. Received: num_tags={num_tags!r}"
            )
        if tag_names is not None:
            tag_names = [str(name) for name in tag_names]
            if len(tag_names) != num_tags:
                raise ValueError(
                    f"Expected {num_tags} tag_names (one per tag). "
                    f"Received: {len(tag_names)} tag_names"
                )
        if constraint is not None and constraint not in _CONSTRAINTS:
            raise ValueError(
                f"Expected constraint to be one of {{None, 'BIO', 'BIOES'}}. "
                f"Received: constraint={constraint!r}"
            )
        if constraint is not None and tag_names is None:
            raise ValueError(
                f"Expected tag_names with constraint={constraint!r}. Received: tag_names=None"
            )
        self.num_tags = num_tags
        self.tag_names = tag_names
        self.constraint = constraint
        self.transitions_initializer = keras.initializers.get(transitions_initializer)
        self.supports_masking = True
        if constraint is None:
            self._penalties = None
        else:
            self._penalties = [
                np.where(allowed, 0.0, _FORBIDDEN).astype("float32")
                for allowed in _allowed(tag_names, constraint)
            ]
        # The shapes only depend on num_tags: create the weights now, so the layer
        # is usable (and saved) even when a model never calls it symbolically.
        self.transitions = self.add_weight(
            shape=(num_tags, num_tags), initializer=self.transitions_initializer,
            name="transitions")
        self.start_scores = self.add_weight(
            shape=(num_tags,), initializer="zeros", name="start_scores")
        self.end_scores = self.add_weight(
            shape=(num_tags,), initializer="zeros", name="end_scores")
        self.built = True

    def allowed_transitions(self):
        """Returns the allowed moves as boolean numpy arrays, or None without a constraint.

        Returns:
            None, or a dict with `transitions` [T, T] (`[i, j]`: tag j may follow tag
            i), `start` [T] (may begin a sentence) and `end` [T] (may end one).
        """
        if self.constraint is None:
            return None
        transitions, start, end = _allowed(self.tag_names, self.constraint)
        return {"transitions": transitions, "start": start, "end": end}

    def _scores(self):
        """Transition, start and end scores with the constraint penalties added."""
        transitions = keras.ops.cast(self.transitions, "float32")
        start = keras.ops.cast(self.start_scores, "float32")
        end = keras.ops.cast(self.end_scores, "float32")
        if self._penalties is not None:
            transitions = transitions + self._penalties[0]
            start = start + self._penalties[1]
            end = end + self._penalties[2]
        return transitions, start, end

    def _prepare(self, potentials, mask):
        potentials = keras.ops.cast(potentials, "float32")
        shape = keras.ops.shape(potentials)
        if mask is None:
            mask = keras.ops.ones(shape[:2], dtype="bool")
        mask = keras.ops.cast(mask, "bool")
        # Time-major inputs for the scans: the potentials, the mask and a flag for
        # the first position (which starts a path: start score, no transition).
        steps = (
            keras.ops.transpose(potentials, (1, 0, 2)),
            keras.ops.expand_dims(keras.ops.transpose(mask, (1, 0)), -1),
            keras.ops.equal(keras.ops.arange(shape[1]), 0),
        )
        return potentials, mask, steps

    def log_partition(self, potentials, mask=None):
        """Log of the sum of exp(score) over every tag path (the forward algorithm).

        Args:
            potentials: float tensor [batch, length, num_tags].
            mask: bool tensor [batch, length] or None (all positions real).

        Returns:
            float32 tensor [batch]; 0 for a sentence without real positions.
        """
        potentials, mask, steps = self._prepare(potentials, mask)
        transitions, start, end = self._scores()

        def step(alpha, inputs):
            potential, real, first = inputs
            carried = keras.ops.expand_dims(alpha, 2) + transitions  # [B, from, to]
            new = keras.ops.where(
                first, start + potential, keras.ops.logsumexp(carried, axis=1) + potential
            )
            return keras.ops.where(keras.ops.logical_or(real, first), new, alpha)

        initial = keras.ops.zeros_like(potentials[:, 0, :])
        alpha = _scan(step, initial, steps)[-1]
        log_z = keras.ops.logsumexp(alpha + end, axis=1)
        return keras.ops.where(keras.ops.any(mask, axis=1), log_z, 0.0)

    def forward_backward(self, potentials, mask=None):
        """Forward and backward log-scores of every position and tag (forward–backward).

        `alpha[b, t, j]` is the log of the summed exp(score) of every path prefix that
        ends in tag j at position t (start, potentials and transitions up to t);
        `beta[b, t, j]` that of every continuation after tag j at t (transitions and
        potentials after t, then the end score). So `alpha + beta - log_z` is the log of
        the probability that position t carries tag j, and a tag segment's probability
        is `alpha[s, y_s] + Σ (transition + potential) + beta[e, y_e] - log_z`.

        Args:
            potentials: float tensor [batch, length, num_tags].
            mask: bool tensor [batch, length] or None (all positions real); right padded.

        Returns:
            `(alpha, beta, log_z)`: float32 tensors [batch, length, num_tags] (padded
            positions hold carried or end values; ignore them) and [batch].
        """
        potentials, mask, steps = self._prepare(potentials, mask)
        transitions, start, end = self._scores()

        def forward(alpha, inputs):
            potential, real, first = inputs
            carried = keras.ops.expand_dims(alpha, 2) + transitions  # [B, from, to]
            new = keras.ops.where(
                first, start + potential, keras.ops.logsumexp(carried, axis=1) + potential
            )
            return keras.ops.where(keras.ops.logical_or(real, first), new, alpha)

        initial = keras.ops.zeros_like(potentials[:, 0, :])
        alpha = _scan(forward, initial, steps)  # [L, B, T]
        # Backward: beta_t = logsumexp_j(transition[i, j] + potential_{t+1}[j] + beta_{t+1}[j])
        # while position t + 1 is real, else the end score.
        next_potentials = keras.ops.concatenate(
            [steps[0][1:], keras.ops.zeros_like(steps[0][:1])], axis=0)
        next_real = keras.ops.concatenate(
            [steps[1][1:], keras.ops.zeros_like(steps[1][:1])], axis=0)

        def backward(beta, inputs):
            potential, real = inputs
            ahead = keras.ops.expand_dims(potential + beta, 1) + transitions  # [B, from, to]
            return keras.ops.where(real, keras.ops.logsumexp(ahead, axis=2), end)

        last = end + keras.ops.zeros_like(potentials[:, 0, :])
        beta = _scan(backward, last, (next_potentials, next_real), reverse=True)
        # padded positions carry alpha, so the last step holds the last real position's
        log_z = keras.ops.where(keras.ops.any(mask, axis=1),
                                keras.ops.logsumexp(alpha[-1] + end, axis=1), 0.0)
        return (keras.ops.transpose(alpha, (1, 0, 2)), keras.ops.transpose(beta, (1, 0, 2)),
                log_z)

    def marginals(self, potentials, mask=None):
        """The probability of every tag at every position: [batch, length, num_tags].

        From `forward_backward`: `exp(alpha + beta - log_z)`, computed in the graph. Each
        real position's row sums to 1; padded positions are 0.

        Args:
            potentials: float tensor [batch, length, num_tags].
            mask: bool tensor [batch, length] or None (all positions real).
        """
        alpha, beta, log_z = self.forward_backward(potentials, mask)
        probs = keras.ops.exp(alpha + beta - keras.ops.reshape(log_z, (-1, 1, 1)))
        if mask is None:
            return probs
        return probs * keras.ops.expand_dims(keras.ops.cast(mask, "float32"), -1)

    def sequence_score(self, potentials, tags, mask=None):
        """Score of the given tag paths (unnormalised log-probability).

        Args:
            potentials: float tensor [batch, length, num_tags].
            tags: int tensor [batch, length]; values at padded positions are ignored.
            mask: bool tensor [batch, length] or None (all positions real).

        Returns:
            float32 tensor [batch]; 0 for a sentence without real positions.
        """
        potentials, mask, _ = self._prepare(potentials, mask)
        transitions, start, end = self._scores()
        tags = keras.ops.where(mask, keras.ops.cast(tags, "int32"), 0)
        real = keras.ops.cast(mask, "float32")
        unary = keras.ops.sum(potentials * keras.ops.one_hot(tags, self.num_tags), axis=2)
        score = keras.ops.sum(unary * real, axis=1)
        pairs = tags[:, :-1] * self.num_tags + tags[:, 1:]
        pair_scores = keras.ops.take(keras.ops.reshape(transitions, (-1,)), pairs)
        score = score + keras.ops.sum(pair_scores * real[:, 1:] * real[:, :-1], axis=1)
        lengths = keras.ops.sum(keras.ops.cast(mask, "int32"), axis=1)
        last = keras.ops.take_along_axis(
            tags, keras.ops.expand_dims(keras.ops.maximum(lengths - 1, 0), -1), axis=1
        )
        score = score + keras.ops.take(start, tags[:, 0]) + keras.ops.take(end, last[:, 0])
        return keras.ops.where(lengths > 0, score, 0.0)

    def log_likelihood(self, potentials, tags, mask=None):
        """Log-probability of the given tag paths: `sequence_score - log_partition`.

        Args:
            potentials: float tensor [batch, length, num_tags].
            tags: int tensor [batch, length].
            mask: bool tensor [batch, length] or None (all positions real).

        Returns:
            float32 tensor [batch].
        """
        return self.sequence_score(potentials, tags, mask) - self.log_partition(potentials, mask)

    def negative_log_likelihood(self, potentials, tags, mask=None):
        """The training loss of each sentence: `-log_likelihood`, a float32 tensor [batch].

        Args:
            potentials: float tensor [batch, length, num_tags].
            tags: int tensor [batch, length].
            mask: bool tensor [batch, length] or None (all positions real).
        """
        return -self.log_likelihood(potentials, tags, mask)

    def viterbi_decode(self, potentials, mask=None):
        """Best tag path of each sentence and its score.

        Args:
            potentials: float tensor [batch, length, num_tags].
            mask: bool tensor [batch, length] or None (all positions real).

        Returns:
            `(tags, scores)`: int32 tensor [batch, length] (0 at padded positions)
            and float32 tensor [batch] (the best path's `sequence_score`).
        """
        potentials, mask, steps = self._prepare(potentials, mask)
        transitions, start, end = self._scores()
        identity = keras.ops.expand_dims(keras.ops.arange(self.num_tags, dtype="int32"), 0)

        def forward(carry, inputs):
            score, _ = carry
            potential, real, first = inputs
            candidates = keras.ops.expand_dims(score, 2) + transitions  # [B, from, to]
            best = keras.ops.max(candidates, axis=1) + potential
            new = keras.ops.where(first, start + potential, best)
            score = keras.ops.where(keras.ops.logical_or(real, first), new, score)
            # Backpointers; identity where nothing moves (first and padded positions).
            moved = keras.ops.logical_and(real, keras.ops.logical_not(first))
            pointers = keras.ops.where(
                moved, keras.ops.cast(keras.ops.argmax(candidates, axis=1), "int32"), identity
            )
            return score, pointers

        initial_score = keras.ops.zeros_like(potentials[:, 0, :])
        initial = (initial_score, keras.ops.zeros_like(initial_score, dtype="int32"))
        scores, pointers = _scan(forward, initial, steps)
        final = scores[-1] + end
        last = keras.ops.cast(keras.ops.argmax(final, axis=1), "int32")

        # Backtrack from the end: tag[t] = pointers[t + 1][tag[t + 1]], and the last
        # position follows an identity pointer so that it keeps `last`.
        following = keras.ops.concatenate(
            [pointers[1:], keras.ops.expand_dims(keras.ops.zeros_like(pointers[0]) + identity, 0)],
            axis=0)

        def backward(tag, pointer):
            previous = keras.ops.take_along_axis(pointer, keras.ops.expand_dims(tag, 1), axis=1)
            return keras.ops.squeeze(previous, 1)

        path = _scan(backward, last, following, reverse=True)
        tags = keras.ops.where(mask, keras.ops.transpose(path, (1, 0)), 0)
        best = keras.ops.where(keras.ops.any(mask, axis=1), keras.ops.max(final, axis=1), 0.0)
        return tags, best

    def call(self, potentials, mask=None):
        tags, _ = self.viterbi_decode(potentials, mask)
        return tags

    def compute_output_spec(self, potentials, mask=None):
        return keras.KerasTensor(potentials.shape[:-1], dtype="int32")

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1])

    def get_config(self):
        config = super().get_config()
        config.update(
            num_tags=self.num_tags,
            tag_names=self.tag_names,
            constraint=self.constraint,
            transitions_initializer=keras.initializers.serialize(self.transitions_initializer),
        )
        return config
