"""Masked-word pretraining of an embedding and recurrent encoder on unlabelled sentences.

A bidirectional stack cannot be trained as a left-to-right language model (its
backward half reads the word it would predict), so the encoder is trained to restore
hidden words instead: a random share of each sentence's words is hidden (most become
the OOV id, some a random word, some stay), and the encoder's output at each hidden
position predicts the original word. The layers named "embedding" and "encoder" have
the same shapes as a SentimentClassifier's with the same settings, so their weights
carry over (`transfer_weights`).
"""

import keras

from elman.models.encoders import RecurrentEncoder
from elman.models.serialization import EmbeddingInitializerConfig


@keras.saving.register_keras_serializable(package="elman")
class HideWords(keras.layers.Layer):
    """Hides a random share of the words; returns (ids to read, hidden-position mask).

    Active in training and in evaluation alike (the pretraining validation loss needs
    hidden words too); every call draws new positions from the layer's seed generator.
    Of the hidden words, `replace_share` become `oov_id`, `random_share` become a
    random word id in [2, vocabulary_size) and the rest stay as they are. Padding
    (id 0) is never hidden.

    Args:
        rate: float in (0, 1), the share of words hidden. Default 0.15.
        vocabulary_size: int, number of word ids (for the random replacements).
        oov_id: int, the id most hidden words become. Default 1.
        replace_share: float, share of hidden words fed as `oov_id`. Default 0.8.
        random_share: float, share fed as a random word. Default 0.1.
        seed: int or None, seeds the draws. Default None.
    """

    def __init__(self, rate=0.15, vocabulary_size=3, oov_id=1, replace_share=0.8,
                 random_share=0.1, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0.0 < float(rate) < 1.0:
            raise ValueError(f"Expected rate to be in (0, 1). Received: rate={rate!r}")
        if not (0.0 <= replace_share and 0.0 <= random_share
                and replace_share + random_share <= 1.0):
            raise ValueError("Expected replace_share, random_share >= 0 with a sum <= 1. "
                             f"Received: {replace_share!r}, {random_share!r}")
        if vocabulary_size < 3:
            raise ValueError(f"Expected vocabulary_size >= 3. Received: {vocabulary_size!r}")
        self.rate = float(rate)
        self.vocabulary_size = int(vocabulary_size)
        self.oov_id = int(oov_id)
        self.replace_share = float(replace_share)
        self.random_share = float(random_share)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, ids):
        ids = keras.ops.cast(ids, "int32")
        shape = keras.ops.shape(ids)
        hide = keras.random.uniform(shape, seed=self.seed_generator) < self.rate
        hide = keras.ops.logical_and(hide, keras.ops.not_equal(ids, 0))
        how = keras.random.uniform(shape, seed=self.seed_generator)
        random_ids = keras.random.randint(shape, 2, self.vocabulary_size,
                                          seed=self.seed_generator, dtype="int32")
        replaced = keras.ops.where(how < self.replace_share, self.oov_id,
                                   keras.ops.where(how < self.replace_share + self.random_share,
                                                   random_ids, ids))
        return keras.ops.where(hide, replaced, ids), keras.ops.cast(hide, "float32")

    def compute_output_spec(self, ids):
        return (keras.KerasTensor(ids.shape, dtype="int32"),
                keras.KerasTensor(ids.shape, dtype="float32"))

    def get_config(self):
        config = super().get_config()
        config.update(rate=self.rate, vocabulary_size=self.vocabulary_size,
                      oov_id=self.oov_id, replace_share=self.replace_share,
                      random_share=self.random_share, seed=self.seed)
        return config


@keras.saving.register_keras_serializable(package="elman")
class MaskedWordPretrainer(EmbeddingInitializerConfig, keras.Model):
    """Embedding → recurrent encoder → dense over the vocabulary, trained on hidden words.

    Takes padded token ids [batch, tokens] (0 = padding); outputs the word logits at
    every position and the hidden-position mask. Train with `model.fit(x)` (no
    targets): the loss is the cross-entropy of the original words at the hidden
    positions only, averaged over them.

    Args:
        vocabulary_size: int, number of token ids (padding and OOV included).
        embedding_dim: int, embedding size. Default 128.
        cell, units, num_layers, bidirectional, merge_mode: the RecurrentEncoder's
            settings (as the classifier that will use it).
        dropout: float, dropout between the encoder's layers and on its output.
            Default 0.2.
        rate: float, the share of words hidden. Default 0.15.
        embeddings_initializer: initializer for the embedding. Default "uniform".
        embedding_trainable: bool, train the embedding too (False keeps pretrained
            vectors as they are). Default True.
        seed: int or None, seeds the hidden positions. Default None.

    Example:
    >>> model = MaskedWordPretrainer(vocabulary_size=50, units=8, embedding_dim=8)
    >>> logits, hidden = model(keras.ops.ones((3, 5), dtype="int32"))
    >>> logits.shape, hidden.shape
    ((3, 5, 50), (3, 5))
    """

    def __init__(self, vocabulary_size, embedding_dim=128, cell="lstm", units=64,
                 num_layers=1, bidirectional=True, dropout=0.2, merge_mode="concat", rate=0.15,
                 embeddings_initializer="uniform", embedding_trainable=True, seed=None,
                 **kwargs):
        ids = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        seen, hidden = HideWords(rate, vocabulary_size, seed=seed, name="hide_words")(ids)
        x = keras.layers.Embedding(vocabulary_size, embedding_dim, mask_zero=True,
                                   embeddings_initializer=embeddings_initializer,
                                   trainable=embedding_trainable, name="embedding")(seen)
        x = RecurrentEncoder(cell=cell, units=units, num_layers=num_layers,
                             bidirectional=bidirectional, dropout=dropout,
                             merge_mode=merge_mode, return_sequences=True, name="encoder")(x)
        if dropout:
            x = keras.layers.Dropout(dropout, name="output_dropout")(x)
        logits = keras.layers.Dense(vocabulary_size, dtype="float32", name="word_logits")(x)
        super().__init__(inputs=ids, outputs=[logits, hidden], **kwargs)
        self.settings = {  # the constructor's arguments, for get_config
            "vocabulary_size": vocabulary_size, "embedding_dim": embedding_dim, "cell": cell,
            "units": units, "num_layers": num_layers, "bidirectional": bidirectional,
            "dropout": dropout, "merge_mode": merge_mode, "rate": rate,
            "embedding_trainable": embedding_trainable, "seed": seed,
            "embeddings_initializer": keras.initializers.serialize(
                keras.initializers.get(embeddings_initializer))}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        logits, hidden = y_pred
        ce = keras.losses.sparse_categorical_crossentropy(
            keras.ops.cast(x, "int32"), logits, from_logits=True)
        return keras.ops.sum(ce * hidden) / keras.ops.maximum(keras.ops.sum(hidden), 1.0)

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, **self.settings}


TRANSFERRED = ("embedding", "encoder")


def transfer_weights(pretrainer, model, layers=TRANSFERRED):
    """Copies pretrained weights into `model`'s same-named layers.

    Args:
        pretrainer: a trained MaskedWordPretrainer.
        model: a model with layers of the same names and shapes.
        layers: names of the layers to copy. Default ("embedding", "encoder").

    Raises:
        ValueError: when a layer is missing or its weights differ in shape.
    """
    for name in layers:
        source = pretrainer.get_layer(name).get_weights()
        target = model.get_layer(name)
        shapes = [tuple(w.shape) for w in target.get_weights()]
        if [tuple(w.shape) for w in source] != shapes:
            raise ValueError(f"layer {name!r}: pretrained weights {[w.shape for w in source]} "
                             f"do not fit {shapes}")
        target.set_weights(source)
