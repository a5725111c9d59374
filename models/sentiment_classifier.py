"""Sentiment classifier: embedding → recurrent encoder → pooling → dense → softmax."""

import keras

from elman.models.adversarial import AdversarialTraining, EmbeddingPerturbation
from elman.models.char_word_features import CharWordFeatures, JoinWordFeatures
from elman.models.masked_pooling import MODES as POOLING_MODES, MaskedPooling
from elman.models.mixup import SentenceMixup
from elman.models.neighbour_words import encode_with_objective, stacked_encoders
from elman.models.serialization import EmbeddingInitializerConfig
from elman.models.token_bigrams import TokenBigrams
from elman.models.word_dropout import WordDropout


@keras.saving.register_keras_serializable(package="elman")
class SentimentClassifier(EmbeddingInitializerConfig, AdversarialTraining, keras.Model):
    """A text classifier over token ids (0 = padding), binary or multi-class.

    Args:
        vocabulary_size: int, number of token ids (padding and OOV included).
        num_classes: int, number of classes (2 or more).
        embedding_dim: int, embedding size. Default 128.
        cell: str, "lstm", "gru" or "rnn". Default "lstm".
        units: int, recurrent units per direction. Default 64.
        num_layers: int, stacked recurrent layers. Default 1.
        bidirectional: bool, bidirectional recurrent layers. Default True.
        dropout: float, dropout between recurrent layers. Default 0.2.
        recurrent_dropout: float, variational dropout on the recurrent state (disables
            cuDNN). Default 0.0.
        merge_mode: str, how directions merge. Default "concat".
        pooling: str, "last" (final states), "max" or "mean" over positions,
            "max-mean" (the two joined), or "attention" (a learned weighted mean,
            models.MaskedPooling). Default "last".
        attention_units: int, the attention pooling's tanh layer size. Default 64.
        hidden: int, dense layer before the softmax (0 for none). Default 64.
        head_dropout: float, dropout before the softmax. Default 0.3.
        embeddings_initializer: initializer for the embedding. Default "uniform".
        embedding_trainable: bool, fine-tune the embedding. Default True.
        word_dropout: float, drops whole token vectors during training. Default 0.0.
        unk_dropout: float, feeds this share of tokens as the OOV id during training,
            so the OOV vector learns to stand for unseen words. Default 0.0.
        char_features: str, "none", "cnn" or "lstm": features computed from each
            token's chars (models.CharWordFeatures) are concatenated to its embedding,
            so unseen words that share spelling with known ones are not all alike.
            The model then takes a dict {"token_ids", "char_ids" [batch, tokens,
            chars]}. Default "none".
        char_vocabulary_size: int, number of char ids (padding and unknown included);
            needed with char features. Default 0.
        char_embedding_dim: int, char embedding size. Default 25.
        char_units: int, CNN filters or char LSTM units per direction. Default 50.
        char_kernel_size: int, CNN window in chars. Default 3.
        adversarial: float, adversarial training on the embeddings
            (elman.models.adversarial): each step also trains on the sentences' word
            vectors moved up the loss gradient by this fraction of their norm. 0
            turns it off. Default 0.0.
        bigram_pairs: list of int or None, the known token-pair codes
            (elman.models.token_bigrams): each token's pair with the next one is
            embedded and joined to its vector (and moved with it by `adversarial`). None
            turns the feature off. Default None.
        bigram_dim: int, the pair embedding size. Default 50.
        virtual_adversarial: float, virtual adversarial training on the same vectors
            (elman.models.adversarial): each step also pulls the prediction for the
            vectors moved this fraction of their norm, the way that changes it most,
            towards the clean prediction. 0 turns it off. Default 0.0.
        rdrop: float, R-Drop (elman.models.adversarial): each step runs the batch twice
            with two dropout draws and adds this weight times the symmetric KL divergence
            of the two predictions to the mean of their losses. 0 turns it off. Default 0.0.
        lm_weight: float, the weight of a language-model objective beside the classifier
            (`elman.models.neighbour_words`, Rei 2017): the encoder's forward states also
            predict the next token and its backward states the previous one (the first
            layer's, when there are more). Needs a pooling other than "last" and no
            bigram pairs. 0 (the default) turns it off.
        lm_words: int, classes of that prediction (padding as the text's edge, OOV, and
            the token ids below it). Default 2000.
        lm_hidden: int, tanh units before each direction's softmax. Default 50.
        rcnn: int, the recurrent-convolutional head of Lai et al. 2015: each position's
            encoder states joined with the token vector the encoder read there go through
            a tanh layer of this many units before the pooling. Needs a pooling other than
            "last". 0 (the default) turns it off.
        mixup: float, α of mixup on the pooled sentence vectors (elman.models.mixup):
            each training step mixes the batch's vectors and their losses with a share
            drawn from Beta(α, α). 0 (the default) turns it off.

    Example:
    >>> model = SentimentClassifier(vocabulary_size=100, num_classes=2, units=8)
    >>> model(keras.ops.ones((3, 5), dtype="int32")).shape
    (3, 2)
    """

    def __init__(self, vocabulary_size, num_classes, embedding_dim=128, cell="lstm", units=64,
                 num_layers=1, bidirectional=True, dropout=0.2, merge_mode="concat",
                 pooling="last", hidden=64, head_dropout=0.3,
                 embeddings_initializer="uniform", embedding_trainable=True, word_dropout=0.0,
                 unk_dropout=0.0, char_features="none", char_vocabulary_size=0,
                 char_embedding_dim=25, char_units=50, char_kernel_size=3,
                 recurrent_dropout=0.0, adversarial=0.0, bigram_pairs=None, bigram_dim=50,
                 virtual_adversarial=0.0, attention_units=64, rdrop=0.0, lm_weight=0.0,
                 lm_words=2000, lm_hidden=50, rcnn=0, mixup=0.0, **kwargs):
        if num_classes < 2:
            raise ValueError(f"Expected num_classes >= 2. Received: num_classes={num_classes}")
        if pooling not in ("last", *POOLING_MODES):
            raise ValueError("Expected pooling to be one of {'last', 'max', 'mean', 'max-mean', "
                             f"'attention'}}. Received: pooling={pooling!r}")
        if char_features not in ("none", "cnn", "lstm"):
            raise ValueError("Expected char_features to be one of {'none', 'cnn', 'lstm'}. "
                             f"Received: char_features={char_features!r}")
        if not adversarial >= 0.0:
            raise ValueError(f"Expected adversarial >= 0. Received: adversarial={adversarial!r}")
        if not virtual_adversarial >= 0.0:
            raise ValueError("Expected virtual_adversarial >= 0. "
                             f"Received: virtual_adversarial={virtual_adversarial!r}")
        if not rdrop >= 0.0:
            raise ValueError(f"Expected rdrop >= 0. Received: rdrop={rdrop!r}")
        if not lm_weight >= 0.0:
            raise ValueError(f"Expected lm_weight >= 0. Received: lm_weight={lm_weight!r}")
        if lm_weight and (pooling == "last" or bigram_pairs is not None):
            raise ValueError("Expected a pooling other than 'last' and no bigram_pairs with "
                             f"lm_weight > 0. Received: pooling={pooling!r}")
        if rcnn < 0 or (rcnn and pooling == "last"):
            raise ValueError("Expected rcnn >= 0, and a pooling other than 'last' with rcnn > 0. "
                             f"Received: rcnn={rcnn!r}, pooling={pooling!r}")
        if not mixup >= 0.0:
            raise ValueError(f"Expected mixup >= 0. Received: mixup={mixup!r}")
        if char_features != "none" and char_vocabulary_size < 3:
            raise ValueError("Expected char_vocabulary_size >= 3 with char features. "
                             f"Received: char_vocabulary_size={char_vocabulary_size!r}")
        ids = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        x = WordDropout(unk_dropout, name="unk_dropout")(ids) if unk_dropout else ids
        x = keras.layers.Embedding(vocabulary_size, embedding_dim, mask_zero=True,
                                   embeddings_initializer=embeddings_initializer,
                                   trainable=embedding_trainable, name="embedding")(x)
        if bigram_pairs is not None:
            pairs = TokenBigrams(vocabulary_size, bigram_pairs, bigram_dim,
                                 name="bigrams")(ids)
            x = JoinWordFeatures(name="word_and_bigrams")([x, pairs])
        if adversarial or virtual_adversarial:  # moves the token (and pair) vectors; char
            # features stay
            x = EmbeddingPerturbation(name="adversarial")(x)
        inputs = ids
        if char_features != "none":
            chars = keras.Input(shape=(None, None), dtype="int32", name="char_ids")
            features = CharWordFeatures(char_vocabulary_size, method=char_features,
                                        embedding_dim=char_embedding_dim, units=char_units,
                                        kernel_size=char_kernel_size,
                                        name="char_features")(chars)
            x = JoinWordFeatures(name="word_and_chars")([x, features])
            inputs = {"token_ids": ids, "char_ids": chars}
        if word_dropout:
            x = keras.layers.Dropout(word_dropout, noise_shape=(None, None, 1),
                                     name="word_dropout")(x)
        tokens = x  # what the encoder reads, joined to its states again with rcnn
        # with lm_weight the first layer's states also predict the neighbour tokens
        encoders = stacked_encoders(dict(cell=cell, units=units, num_layers=num_layers,
                                         bidirectional=bidirectional, dropout=dropout,
                                         merge_mode=merge_mode,
                                         return_sequences=pooling != "last",
                                         recurrent_dropout=recurrent_dropout), lm_weight)
        x = encode_with_objective(encoders, x, ids, lm_weight=lm_weight, lm_words=lm_words,
                                  lm_hidden=lm_hidden, vocabulary_size=vocabulary_size)
        if rcnn:  # each position: tanh(W [states; token vector] + b), then pooled
            x = JoinWordFeatures(name="states_and_tokens")([x, tokens])
            x = keras.layers.Dense(rcnn, activation="tanh", name="rcnn")(x)
        if pooling != "last":
            x = MaskedPooling(pooling, attention_units=attention_units, name="pooling")(x)
        if mixup:  # the sentence vectors, mixed in pairs inside a training step
            x = SentenceMixup(name="mixup")(x)
        if hidden:
            x = keras.layers.Dense(hidden, activation="relu", name="hidden")(x)
        if head_dropout:
            x = keras.layers.Dropout(head_dropout, name="head_dropout")(x)
        probs = keras.layers.Dense(num_classes, activation="softmax", dtype="float32",
                                   name="probabilities")(x)
        super().__init__(inputs=inputs, outputs=probs, **kwargs)
        self.vocabulary_size = vocabulary_size
        self.num_classes = num_classes
        self.embedding_dim = embedding_dim
        self.cell = cell
        self.units = units
        self.num_layers = num_layers
        self.bidirectional = bidirectional
        self.dropout = dropout
        self.merge_mode = merge_mode
        self.pooling = pooling
        self.attention_units = int(attention_units)
        self.hidden = hidden
        self.head_dropout = head_dropout
        self.embeddings_initializer = keras.initializers.serialize(
            keras.initializers.get(embeddings_initializer))
        self.embedding_trainable = embedding_trainable
        self.word_dropout = word_dropout
        self.unk_dropout = unk_dropout
        self.char_features = char_features
        self.char_vocabulary_size = char_vocabulary_size
        self.char_embedding_dim = char_embedding_dim
        self.char_units = char_units
        self.char_kernel_size = char_kernel_size
        self.recurrent_dropout = recurrent_dropout
        self.adversarial = float(adversarial)
        self.virtual_adversarial = float(virtual_adversarial)
        self.rdrop = float(rdrop)
        self.bigram_pairs = None if bigram_pairs is None else [int(c) for c in bigram_pairs]
        self.bigram_dim = bigram_dim
        self.lm_weight = float(lm_weight)
        self.lm_words = lm_words
        self.lm_hidden = lm_hidden
        self.rcnn = int(rcnn)
        self.mixup = float(mixup)

    def get_config(self):
        return {
            "name": self.name, "trainable": self.trainable,
            "vocabulary_size": self.vocabulary_size, "num_classes": self.num_classes,
            "embedding_dim": self.embedding_dim, "cell": self.cell, "units": self.units,
            "num_layers": self.num_layers, "bidirectional": self.bidirectional,
            "dropout": self.dropout, "merge_mode": self.merge_mode, "pooling": self.pooling,
            "attention_units": self.attention_units,
            "hidden": self.hidden, "head_dropout": self.head_dropout,
            "embeddings_initializer": self.embeddings_initializer,
            "embedding_trainable": self.embedding_trainable,
            "word_dropout": self.word_dropout,
            "unk_dropout": self.unk_dropout,
            "char_features": self.char_features,
            "char_vocabulary_size": self.char_vocabulary_size,
            "char_embedding_dim": self.char_embedding_dim,
            "char_units": self.char_units,
            "char_kernel_size": self.char_kernel_size,
            "recurrent_dropout": self.recurrent_dropout,
            "adversarial": self.adversarial,
            "virtual_adversarial": self.virtual_adversarial,
            "rdrop": self.rdrop,
            "bigram_pairs": self.bigram_pairs,
            "bigram_dim": self.bigram_dim, "lm_weight": self.lm_weight,
            "lm_words": self.lm_words, "lm_hidden": self.lm_hidden, "rcnn": self.rcnn,
            "mixup": self.mixup,
        }
