"""Sequence tagger: word (+ char, bigram, shape) embeddings → recurrent encoder → softmax
or CRF head."""

import keras

from elman.models.adversarial import AdversarialTraining, EmbeddingPerturbation
from elman.models.char_word_features import CharWordFeatures, JoinWordFeatures
from elman.models.crf import CRF
from elman.models.neighbour_words import (encode_with_objective, scale_for_replicas,
                                          stacked_encoders)
from elman.models.serialization import EmbeddingInitializerConfig
from elman.models.word_dropout import WordDropout

_HEADS = ("softmax", "crf")
_CHAR_FEATURES = ("none", "lstm", "cnn")


def _word_ids(x):
    """The word ids [batch, length] out of the model's inputs."""
    if isinstance(x, dict):
        return x["words"]
    if isinstance(x, (list, tuple)):
        return x[0]
    return x


def _check_arguments(vocabulary_size, num_tags, embedding_dim, head, char_features,
                     char_vocabulary_size, constraint, dropout, word_dropout, sizes=(),
                     optional_sizes=()):
    """Raises ValueError for arguments SequenceTagger cannot build from."""
    if head not in _HEADS:
        raise ValueError(f"Expected head to be one of {set(_HEADS)}. Received: head={head!r}")
    if char_features not in _CHAR_FEATURES:
        raise ValueError(
            f"Expected char_features to be one of {set(_CHAR_FEATURES)}. "
            f"Received: char_features={char_features!r}"
        )
    for name, value in (("vocabulary_size", vocabulary_size), ("num_tags", num_tags),
                        ("embedding_dim", embedding_dim), *sizes):
        if not isinstance(value, int) or value < 1:
            raise ValueError(
                f"Expected {name} to be a positive int. Received: {name}={value!r}")
    if char_features != "none" and (
        not isinstance(char_vocabulary_size, int) or char_vocabulary_size < 1
    ):
        raise ValueError(
            f"Expected char_vocabulary_size to be a positive int with "
            f"char_features={char_features!r}. "
            f"Received: char_vocabulary_size={char_vocabulary_size!r}"
        )
    for name, value in optional_sizes:  # None, or a positive int
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value < 1):
            raise ValueError(
                f"Expected {name} to be None or a positive int. Received: {name}={value!r}")
    if constraint is not None and head != "crf":
        raise ValueError(
            f"Expected head='crf' with constraint={constraint!r}. Received: head={head!r}"
        )
    if not 0.0 <= float(dropout) < 1.0:
        raise ValueError(f"Expected dropout to be in [0, 1). Received: dropout={dropout!r}")
    if not 0.0 <= float(word_dropout) < 1.0:
        raise ValueError(
            f"Expected word_dropout to be in [0, 1). Received: word_dropout={word_dropout!r}")


@keras.saving.register_keras_serializable(package="elman")
class SequenceTagger(EmbeddingInitializerConfig, AdversarialTraining, keras.Model):
    """Tags each word of a sentence: embeddings → (Bi)LSTM/GRU → softmax or CRF.

    Inputs are word ids [batch, length] (0 = padding, right padded), or with any
    other feature a dict of `"words"` [batch, length] and: with `char_features`,
    `"chars"` [batch, length, chars] (char id 0 = padding); with
    `bigram_vocabulary_size`, `"bigrams"` [batch, length, 2] (each word's two bigram
    ids, both embedded by one table and concatenated); with `shape_vocabulary_size`,
    `"shapes"` [batch, length] (a shape id per word). The features of each word are
    concatenated to its word embedding in that order. Calling the model returns the
    tag potentials [batch, length, num_tags] (logits). `predict` / `predict_on_batch`
    return the tag ids [batch, length] (int32, 0 at padding): the argmax for the
    softmax head, the Viterbi path for the CRF head (see `decode`).

    The model computes its own loss, over real tokens only: token-averaged
    cross-entropy (softmax head) or the CRF negative log-likelihood summed over
    sentences and divided by the number of real tokens (CRF head). Compile it
    without a `loss`. Compiled metrics see the decoded tags (one-hot) and are
    weighted by the mask, so `"sparse_categorical_accuracy"` is the token accuracy.
    `sample_weight`, if given, weighs sentences ([batch]) or, for the softmax head,
    tokens ([batch, length]).

    Args:
        vocabulary_size: int, number of word ids (padding and OOV included).
        num_tags: int, number of tags.
        embedding_dim: int, word embedding size. Default 100.
        cell: str, "lstm", "gru" or "rnn". Default "lstm".
        units: int, recurrent units per direction. Default 100.
        num_layers: int, stacked recurrent layers. Default 1.
        bidirectional: bool, bidirectional recurrent layers. Default True.
        dropout: float in [0, 1), dropout on the embeddings and after each
            recurrent layer. Default 0.0.
        head: str, "softmax" (independent tags) or "crf". Default "softmax".
        char_features: str, "none", "lstm" (char BiLSTM) or "cnn" (char CNN + max
            pooling), concatenated to the word embedding. Default "none".
        char_vocabulary_size: int or None, number of char ids; required with
            `char_features`. Default None.
        char_embedding_dim: int, char embedding size. Default 25.
        char_units: int, char LSTM units per direction or CNN filters. Default 25.
        tag_names: list of str or None, the name of each tag id (for
            `constraint`). Default None.
        constraint: str or None, CRF transition constraint: "BIO", "BIOES" or
            None. Default None.
        embeddings_initializer: initializer of the word embedding (e.g. a
            `keras.initializers.Constant` with pre-trained vectors). Default "uniform".
        embedding_trainable: bool, fine-tune the word embedding. Default True.
        word_dropout: float in [0, 1), share of words fed as the OOV id (1) while
            training, drawn anew for each batch (`WordDropout`). Default 0.0.
        recurrent_dropout: float in [0, 1), variational dropout on the recurrent state
            (disables cuDNN). Default 0.0.
        bigram_vocabulary_size: int or None, number of bigram ids (padding and OOV
            included); None: no `"bigrams"` input. Default None.
        bigram_embedding_dim: int, bigram embedding size (each word gets two: the
            bigram ending at it and the one starting at it). Default 50.
        shape_vocabulary_size: int or None, number of shape ids (padding included);
            None: no `"shapes"` input. Default None.
        shape_embedding_dim: int, shape embedding size. Default 5.
        adversarial: float, adversarial training (elman.models.adversarial): each step
            also trains on the sentences with each word's joined feature vector (word,
            chars, bigrams, shape) moved up the loss gradient by this fraction of the
            sentence's norm. 0 (the default) turns it off.
        lm_weight: float, the weight of a language-model objective beside tagging
            (`elman.models.neighbour_words`, Rei 2017): the first recurrent layer's
            forward states also predict the next word and its backward states the
            previous one (with more layers, "encoder" is that first layer and
            "upper_encoder" the rest). Needs no bigram input (it would show the
            predicted word). 0 (the default) turns it off.
        lm_words: int, classes of that prediction: padding (the sentence's edge), OOV
            and the word ids below it (the most frequent words). Default 2000.
        lm_hidden: int, tanh units before each direction's softmax. Default 50.

    Example:

    ```python
    model = SequenceTagger(vocabulary_size=100, num_tags=5, embedding_dim=16,
                           units=16, head="crf")
    model.compile(optimizer="adam", metrics=["sparse_categorical_accuracy"])
    model.fit(word_ids, tag_ids, epochs=3)
    tags = model.predict(word_ids)  # [batch, length] tag ids
    ```
    """

    def __init__(self, vocabulary_size, num_tags, embedding_dim=100, cell="lstm", units=100,
                 num_layers=1, bidirectional=True, dropout=0.0, head="softmax",
                 char_features="none", char_vocabulary_size=None, char_embedding_dim=25,
                 char_units=25, tag_names=None, constraint=None,
                 embeddings_initializer="uniform", embedding_trainable=True, word_dropout=0.0,
                 recurrent_dropout=0.0, bigram_vocabulary_size=None, bigram_embedding_dim=50,
                 shape_vocabulary_size=None, shape_embedding_dim=5, adversarial=0.0,
                 lm_weight=0.0, lm_words=2000, lm_hidden=50, **kwargs):
        if not adversarial >= 0.0:
            raise ValueError(f"Expected adversarial >= 0. Received: adversarial={adversarial!r}")
        if not lm_weight >= 0.0:
            raise ValueError(f"Expected lm_weight >= 0. Received: lm_weight={lm_weight!r}")
        if lm_weight and bigram_vocabulary_size is not None:
            raise ValueError("Expected no bigram input with lm_weight > 0 (bigrams show the "
                             "predicted word). Received: "
                             f"bigram_vocabulary_size={bigram_vocabulary_size!r}")
        _check_arguments(vocabulary_size, num_tags, embedding_dim, head, char_features,
                         char_vocabulary_size, constraint, dropout, word_dropout,
                         sizes=(("bigram_embedding_dim", bigram_embedding_dim),
                                ("shape_embedding_dim", shape_embedding_dim)),
                         optional_sizes=(("bigram_vocabulary_size", bigram_vocabulary_size),
                                         ("shape_vocabulary_size", shape_vocabulary_size)))

        # === Layers (the CRF is outside the graph: the graph ends in potentials) ===
        # with lm_weight the first layer's states also predict the neighbour words
        encoders = stacked_encoders(dict(cell=cell, units=units, num_layers=num_layers,
                                         bidirectional=bidirectional, dropout=dropout,
                                         recurrent_dropout=recurrent_dropout,
                                         return_sequences=True), lm_weight)
        crf = None
        if head == "crf":
            crf = CRF(num_tags, tag_names=tag_names, constraint=constraint, name="crf")

        # === Functional graph ===
        words = keras.Input(shape=(None,), dtype="int32", name="words")
        ids = words
        if word_dropout:
            ids = WordDropout(word_dropout, name="word_dropout")(words)
        x = keras.layers.Embedding(vocabulary_size, embedding_dim, mask_zero=True,
                                   embeddings_initializer=embeddings_initializer,
                                   trainable=embedding_trainable, name="word_embedding")(ids)
        inputs, extra = {"words": words}, []
        if char_features != "none":
            chars = keras.Input(shape=(None, None), dtype="int32", name="chars")
            extra.append(CharWordFeatures(char_vocabulary_size, method=char_features,
                                          embedding_dim=char_embedding_dim, units=char_units,
                                          name="char_features")(chars))
            inputs["chars"] = chars
        if bigram_vocabulary_size is not None:
            bigrams = keras.Input(shape=(None, 2), dtype="int32", name="bigrams")
            b = keras.layers.Embedding(bigram_vocabulary_size, bigram_embedding_dim,
                                       name="bigram_embedding")(bigrams)
            extra.append(keras.layers.Reshape((-1, 2 * bigram_embedding_dim),
                                              name="bigram_features")(b))
            inputs["bigrams"] = bigrams
        if shape_vocabulary_size is not None:
            shapes = keras.Input(shape=(None,), dtype="int32", name="shapes")
            extra.append(keras.layers.Embedding(shape_vocabulary_size, shape_embedding_dim,
                                                name="shape_embedding")(shapes))
            inputs["shapes"] = shapes
        if extra:
            name = ("word_and_char_features" if list(inputs) == ["words", "chars"]
                    else "word_features")
            x = JoinWordFeatures(name=name)([x, *extra])
        else:
            inputs = words
        if adversarial:  # moves each word's joined vector (word, chars, bigrams, shape)
            x = EmbeddingPerturbation(name="adversarial")(x)
        if dropout:
            x = keras.layers.Dropout(dropout, name="embedding_dropout")(x)
        x = encode_with_objective(encoders, x, words, lm_weight=lm_weight, lm_words=lm_words,
                                  lm_hidden=lm_hidden, vocabulary_size=vocabulary_size)
        potentials = keras.layers.Dense(num_tags, dtype="float32", name="potentials")(x)
        super().__init__(inputs=inputs, outputs=potentials, **kwargs)
        self.crf = crf

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_tags = num_tags
        self.embedding_dim = embedding_dim
        self.cell = cell
        self.units = units
        self.num_layers = num_layers
        self.bidirectional = bidirectional
        self.dropout = dropout
        self.head = head
        self.char_features = char_features
        self.char_vocabulary_size = char_vocabulary_size
        self.char_embedding_dim = char_embedding_dim
        self.char_units = char_units
        self.tag_names = None if tag_names is None else [str(t) for t in tag_names]
        self.constraint = constraint
        self.embeddings_initializer = keras.initializers.serialize(
            keras.initializers.get(embeddings_initializer))
        self.embedding_trainable = embedding_trainable
        self.word_dropout = word_dropout
        self.recurrent_dropout = recurrent_dropout
        self.bigram_vocabulary_size = bigram_vocabulary_size
        self.bigram_embedding_dim = bigram_embedding_dim
        self.shape_vocabulary_size = shape_vocabulary_size
        self.shape_embedding_dim = shape_embedding_dim
        self.adversarial = float(adversarial)
        self.lm_weight = float(lm_weight)
        self.lm_words = lm_words
        self.lm_hidden = lm_hidden

    def decode(self, potentials, mask):
        """Tag ids [batch, length] (int32, 0 at padding) from potentials and mask.

        Args:
            potentials: float tensor [batch, length, num_tags], the model's output.
            mask: bool tensor [batch, length], True for real words.
        """
        if self.head == "crf":
            return self.crf(potentials, mask=mask)
        tags = keras.ops.cast(keras.ops.argmax(potentials, axis=-1), "int32")
        return keras.ops.where(mask, tags, 0)

    def _token_weights(self, mask, sample_weight):
        weights = keras.ops.cast(mask, "float32")
        if sample_weight is not None:
            sample_weight = keras.ops.cast(sample_weight, "float32")
            if len(sample_weight.shape) == 1:
                sample_weight = keras.ops.expand_dims(sample_weight, 1)
            weights = weights * sample_weight
        return weights

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        mask = keras.ops.not_equal(_word_ids(x), 0)
        tags = keras.ops.where(mask, keras.ops.cast(y, "int32"), 0)
        tokens = keras.ops.maximum(keras.ops.sum(keras.ops.cast(mask, "float32")), 1.0)
        if self.head == "crf":
            per_sentence = self.crf.negative_log_likelihood(y_pred, tags, mask)
            if sample_weight is not None:
                if len(sample_weight.shape) != 1:
                    raise ValueError(
                        "Expected sample_weight of shape [batch] with head='crf'. "
                        f"Received: shape {tuple(sample_weight.shape)}"
                    )
                per_sentence = per_sentence * keras.ops.cast(sample_weight, "float32")
            loss = keras.ops.sum(per_sentence) / tokens
        else:
            per_token = keras.losses.sparse_categorical_crossentropy(
                tags, keras.ops.cast(y_pred, "float32"), from_logits=True)
            loss = keras.ops.sum(per_token * self._token_weights(mask, sample_weight)) / tokens
        loss = scale_for_replicas(loss)
        for extra in self.losses:
            loss = loss + keras.ops.sum(keras.ops.cast(extra, "float32"))
        return loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        if getattr(self, "_compile_metrics", True) is None:  # no compiled metrics: no decoding
            return super().compute_metrics(x, y, y_pred, sample_weight=sample_weight)
        mask = keras.ops.not_equal(_word_ids(x), 0)
        decoded = keras.ops.one_hot(self.decode(y_pred, mask), self.num_tags)
        tags = keras.ops.where(mask, keras.ops.cast(y, "int32"), 0)
        weights = self._token_weights(mask, sample_weight)
        # Keras averages [batch, length] weighted values per sentence over the padded
        # length before summing batches; scaling by that length makes the running
        # value the exact token average across batches of different lengths.
        weights = weights * keras.ops.cast(keras.ops.shape(mask)[1], "float32")
        return super().compute_metrics(x, tags, decoded, sample_weight=weights)

    def predict_step(self, data):
        x, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        potentials = self(x, training=False)
        return self.decode(potentials, keras.ops.not_equal(_word_ids(x), 0))

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, weighted_metrics=None,
                **kwargs):
        if loss is not None:
            raise ValueError(
                "Expected no loss: SequenceTagger computes its own (cross-entropy or CRF "
                f"negative log-likelihood). Received: loss={loss!r}"
            )
        # Keras gives sample weights only to `weighted_metrics`; every metric of a tagger
        # must see the token weights (padding excluded), so `metrics` are moved there.
        weighted = list(metrics or []) + list(weighted_metrics or [])
        super().compile(optimizer=optimizer, loss=None, weighted_metrics=weighted or None,
                        **kwargs)

    def compile_from_config(self, config):
        # Keras skips compile() on load when it is overridden; ours only checks `loss`.
        self.compile(**keras.saving.deserialize_keras_object(config))
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def get_config(self):
        return {
            "name": self.name, "trainable": self.trainable,
            "vocabulary_size": self.vocabulary_size, "num_tags": self.num_tags,
            "embedding_dim": self.embedding_dim, "cell": self.cell, "units": self.units,
            "num_layers": self.num_layers, "bidirectional": self.bidirectional,
            "dropout": self.dropout, "head": self.head, "char_features": self.char_features,
            "char_vocabulary_size": self.char_vocabulary_size,
            "char_embedding_dim": self.char_embedding_dim, "char_units": self.char_units,
            "tag_names": self.tag_names, "constraint": self.constraint,
            "embeddings_initializer": self.embeddings_initializer,
            "embedding_trainable": self.embedding_trainable,
            "word_dropout": self.word_dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "bigram_vocabulary_size": self.bigram_vocabulary_size,
            "bigram_embedding_dim": self.bigram_embedding_dim,
            "shape_vocabulary_size": self.shape_vocabulary_size,
            "shape_embedding_dim": self.shape_embedding_dim,
            "adversarial": self.adversarial, "lm_weight": self.lm_weight,
            "lm_words": self.lm_words, "lm_hidden": self.lm_hidden,
        }
