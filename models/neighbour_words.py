"""A language-model objective beside tagging (Rei 2017, "Semi-supervised multitask
learning for sequence labeling"): the tagger's forward states also predict the next word
and its backward states the previous one, on the training sentences themselves.

The layer sits on the first bidirectional layer's output, where the forward half at a
word has read only the words up to it and the backward half only the words from it on,
so neither can see the word it predicts. Above that layer (or with features that show a
word's neighbours, such as token bigrams) the objective would be trivial, so a stacked
encoder is split (`stacked_encoders`): the objective reads the first layer, and the
layers above read its output as they would without the objective.
"""

import keras

from elman.models.encoders import RecurrentEncoder

BOUNDARY = 0  # the class of "no word here": past the sentence's end or before its start
OTHER = 1  # the class of every word outside the objective's vocabulary (the OOV id)


def neighbour_targets(words, vocabulary_size):
    """(next, previous) word classes [batch, length] of each position.

    Word ids at or above `vocabulary_size` become OTHER; past the end of a sentence (right
    padding) and before its start the class is BOUNDARY.

    Args:
        words: int tensor [batch, length], 0 = padding (right padded), 1 = OOV.
        vocabulary_size: int, the objective's classes (the most frequent word ids).
    """
    ops = keras.ops
    words = ops.cast(words, "int32")
    classes = ops.where(words < vocabulary_size, words, OTHER)
    edge = ops.zeros_like(classes[:, :1]) + BOUNDARY
    following = ops.concatenate([classes[:, 1:], edge], axis=1)
    preceding = ops.concatenate([edge, classes[:, :-1]], axis=1)
    return following, preceding


def stacked_encoders(encoder_args, lm_weight=0.0):
    """The recurrent encoders of a model, as a list: one `RecurrentEncoder` named
    "encoder"; or, with the neighbour-word objective and more than one layer, the first
    layer alone ("encoder") and the others ("upper_encoder"). The stack computes what one
    encoder of `num_layers` layers does, since `RecurrentEncoder` drops out after each
    layer. Models build these where they built their one encoder, so that the random
    draws of a seeded run come in the same order as before the split.

    Args:
        encoder_args: dict, `RecurrentEncoder` arguments (`units`, `num_layers`,
            `bidirectional`, ...) except `name`.
        lm_weight: float, the objective's weight; 0 (the default): no objective.
    """
    layers = encoder_args.get("num_layers", 1)
    if not lm_weight or layers == 1:
        return [RecurrentEncoder(**encoder_args, name="encoder")]
    return [RecurrentEncoder(**dict(encoder_args, num_layers=1, return_sequences=True),
                             name="encoder"),
            RecurrentEncoder(**dict(encoder_args, num_layers=layers - 1),
                             name="upper_encoder")]


def encode_with_objective(encoders, x, words, lm_weight=0.0, lm_words=2000, lm_hidden=50,
                          vocabulary_size=None):
    """The output of `stacked_encoders`' encoders on `x`, with the neighbour-word
    objective ("neighbour_words") on the first one's (dropped-out) states.

    Args:
        encoders: list of `RecurrentEncoder`, from `stacked_encoders`.
        x: the word vectors [batch, length, features] (a Keras tensor).
        words: the word ids [batch, length] before any word dropout (a Keras tensor).
        lm_weight: float, the objective's weight; 0 leaves it out. Default 0.
        lm_words: int, the objective's classes at most. Default 2000.
        lm_hidden: int, tanh units before each of its softmaxes. Default 50.
        vocabulary_size: int, the word ids' range (the objective's classes are
            `min(lm_words, vocabulary_size)`, at least 3).
    """
    first, *upper = encoders
    x = first(x)
    if lm_weight:  # the states, unchanged; while training, a loss on the neighbour words
        x = NeighbourWordObjective(max(3, min(lm_words, vocabulary_size)), first.units,
                                   bidirectional=first.bidirectional, weight=lm_weight,
                                   hidden=lm_hidden, name="neighbour_words")([x, words])
    for encoder in upper:
        x = encoder(x)
    return x


def scale_for_replicas(loss):
    """`loss` as each replica's share of the global mean (Keras losses are returned so
    under a `tf.distribute` strategy)."""
    import tensorflow as tf

    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    return loss / replicas if replicas > 1 else loss


@keras.saving.register_keras_serializable(package="elman")
class NeighbourWordObjective(keras.layers.Layer):
    """Identity on an encoder's states; while training it adds `weight` times the
    neighbour-word loss to the model's losses.

    Inputs are `[states, words]`: states [batch, length, units] (bidirectional: the
    forward half first, then the backward half, each `units` wide; otherwise forward
    only) and the word ids [batch, length] before any word dropout. Each direction's
    state goes through a tanh layer of `hidden` units and a softmax over
    `vocabulary_size` classes (BOUNDARY, OTHER and the word ids 2 … vocabulary_size - 1,
    the most frequent words when ids are given by frequency). The loss is, for each
    direction, the cross-entropy averaged over the real words of the batch; the two are
    summed. The layer adds nothing at inference and the output is its input.

    Args:
        vocabulary_size: int >= 3, classes of the prediction.
        units: int, the width of one direction's states.
        bidirectional: bool, the states hold a backward half too. Default True.
        weight: float > 0, the loss's weight beside the tagging loss. Default 0.1.
        hidden: int, tanh units before each softmax. Default 50.
    """

    def __init__(self, vocabulary_size, units, bidirectional=True, weight=0.1, hidden=50,
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(vocabulary_size, int) or vocabulary_size < 3:
            raise ValueError("Expected vocabulary_size to be an int of at least 3. "
                             f"Received: vocabulary_size={vocabulary_size!r}")
        for name, value in (("units", units), ("hidden", hidden)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"Expected {name} to be a positive int. Received: {name}={value!r}")
        if not weight > 0:
            raise ValueError(f"Expected weight > 0. Received: weight={weight!r}")
        self.vocabulary_size = vocabulary_size
        self.units = units
        self.bidirectional = bool(bidirectional)
        self.weight = float(weight)
        self.hidden = hidden
        self.supports_masking = True
        directions = ("forward", "backward") if self.bidirectional else ("forward",)
        self.hidden_layers = [keras.layers.Dense(hidden, activation="tanh",
                                                 name=f"{d}_hidden") for d in directions]
        self.output_layers = [keras.layers.Dense(vocabulary_size, dtype="float32",
                                                 name=f"{d}_words") for d in directions]

    def build(self, input_shapes):
        for hidden, output in zip(self.hidden_layers, self.output_layers):
            hidden.build((None, None, self.units))
            output.build((None, None, self.hidden))
        self.built = True

    def direction_logits(self, states):
        """Logits [batch, length, vocabulary_size] of each direction (forward: the next
        word, backward: the previous one), as a list."""
        halves = [states[..., : self.units], states[..., self.units:]]
        return [output(hidden(half)) for half, hidden, output
                in zip(halves, self.hidden_layers, self.output_layers)]

    def objective(self, states, words):
        """The summed per-direction token-mean cross-entropy (a scalar)."""
        ops = keras.ops
        real = ops.cast(ops.not_equal(words, 0), "float32")
        count = ops.maximum(ops.sum(real), 1.0)
        total = 0.0
        for logits, targets in zip(self.direction_logits(states),
                                   neighbour_targets(words, self.vocabulary_size)):
            per_word = keras.losses.sparse_categorical_crossentropy(
                targets, ops.cast(logits, "float32"), from_logits=True)
            total = total + ops.sum(per_word * real) / count
        return total

    def call(self, inputs, training=None):
        states, words = inputs
        if training:
            self.add_loss(scale_for_replicas(self.weight * self.objective(states, words)))
        return states

    def compute_mask(self, inputs, mask=None):
        return mask[0] if isinstance(mask, (list, tuple)) else mask

    def compute_output_shape(self, input_shapes):
        return input_shapes[0]

    def get_config(self):
        config = super().get_config()
        config.update(vocabulary_size=self.vocabulary_size, units=self.units,
                      bidirectional=self.bidirectional, weight=self.weight,
                      hidden=self.hidden)
        return config
