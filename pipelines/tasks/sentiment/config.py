"""The sentiment task's configuration (no TensorFlow import)."""

import dataclasses
import typing

from elman.config import (CharsConfig, DataConfig, EmbeddingConfig, EncoderConfig,
                          TokenizerConfig, TrainConfig)


@dataclasses.dataclass(frozen=True)
class SentimentHeadConfig:
    """The sentiment classifier's head."""

    pooling: str = "last"  # last (final states), max or mean over positions, max-mean
    # (both joined), or attention (a learned weighted mean of the positions)
    attention_units: int = 64  # pooling "attention": size of its tanh scoring layer
    hidden: int = 64  # dense layer size before the softmax; 0 for none
    dropout: float = 0.3  # dropout before the softmax
    label_smoothing: float = 0.0  # ε: the training target gives 1 - ε + ε/C to the gold
    # class and ε/C to each other one (for labels that are sometimes wrong); 0: off
    drop_hardest: float = 0.0  # q: in each training batch the share q of examples with the
    # largest loss count 0 (loss truncation, for labels that are sometimes wrong); 0: off
    rdrop: float = 0.0  # α of R-Drop (Liang et al. 2021): each batch runs twice with two
    # dropout draws, and α times the symmetric KL of the two predictions joins the mean
    # of their losses (one more forward and backward pass a step); 0: off
    lm_weight: float = 0.0  # a language-model objective beside the classifier (Rei 2017):
    # the forward states also predict the next token, the backward ones the previous
    # token, and this weight times that loss joins the loss while training; 0: off. Needs
    # a pooling other than "last" and features.bigrams = false; with stacked layers the
    # first layer's states predict
    lm_words: int = 2000  # classes of that prediction: the most frequent tokens, OOV for
    # the rest, and the text's edge
    lm_hidden: int = 50  # tanh units before each direction's softmax
    rcnn: int = 0  # units of a tanh layer that reads each position's encoder states joined
    # with the token vector the encoder read there, before the pooling (the recurrent CNN
    # of Lai et al. 2015); 0: off. Needs a pooling other than "last"
    mixup: float = 0.0  # α of mixup on the pooled sentence vectors (Zhang et al. 2018, Guo
    # et al. 2019): each training step mixes every sentence's vector and loss with another
    # one of its batch, by a share drawn from Beta(α, α); 0: off
    distill: float = 0.0  # a in (0, 1]: knowledge distillation (Hinton et al. 2015; with
    # teachers of the student's own shape, Furlanello et al. 2018). The run's `ensemble`
    # members are the teachers; one more classifier, the student (seed + ensemble), trains
    # on the targets (1 - a)·label + a·(the teachers' mean probabilities on that training
    # text), and the student alone is the run's model; 0: off
    distill_temperature: float = 1.0  # T > 0: the teachers' mean probabilities are
    # softened as p^(1/T), renormalised, before they are blended; 1: as they are


@dataclasses.dataclass(frozen=True)
class SentimentFeaturesConfig:
    """Extra per-token features joined to the token embedding (`sentiment.features`)."""

    bigrams: bool = False  # embed each token's pair with the next one (t[i], t[i+1]),
    # coded from the ids inside the model: for text read one character at a time
    # (Chinese), whose words are mostly two characters
    bigram_dim: int = 50  # pair embedding size
    bigram_min_count: int = 2  # pairs seen fewer times in train share the OOV vector
    max_bigrams: int = 100000  # pair vocabulary cap, padding and OOV included


@dataclasses.dataclass(frozen=True)
class PretrainConfig:
    """Masked-word pretraining of the embedding and encoder (elman.models.masked_word_pretrainer).

    Before the classifier trains, its embedding and encoder learn to restore hidden
    words of the training texts (labels unused) and of `texts`, if given; the
    validation texts' loss picks the best epoch.
    """

    epochs: int = 0  # maximum pretraining epochs; 0 turns pretraining off
    texts: str = ""  # optional UTF-8 file of unlabelled texts, one per line, read besides
    # the training texts (the vocabulary is still the training data's)
    rate: float = 0.15  # share of words hidden in each sentence
    learning_rate: float = 0.001  # Adam learning rate while pretraining
    batch_size: int = 32  # pretraining batch size
    dropout: float = 0.1  # dropout between and after the encoder's layers while pretraining
    transfer: str = "embedding-encoder"  # what the classifier starts from: the pretrained
    # embedding and encoder, or the embedding alone ("embedding")
    patience: int = 2  # stop after this many epochs without a lower validation loss


@dataclasses.dataclass(frozen=True)
class NoiseConfig:
    """Training labels set aside before training (elman.core.label_noise)."""

    filter: str = "none"  # "confident": set aside the training texts that a linear char
    # n-gram model, fitted on the other folds, confidently reads as another label
    # (confident learning); every such text is listed in the report
    folds: int = 5  # folds of the out-of-fold probabilities (at least 2)
    ngrams: int = 3  # the linear model reads character 1- to n-grams (TF-IDF)
    c: float = 10.0  # its logistic regression's inverse L2 strength


@dataclasses.dataclass(frozen=True)
class SentimentConfig:
    """Everything a sentiment run needs."""

    choices: typing.ClassVar[dict] = {  # allowed values of this task's own string settings
        "head.pooling": ("last", "max", "mean", "max-mean", "attention"),
        "pretrain.transfer": ("embedding-encoder", "embedding"),
        "noise.filter": ("none", "confident"),
    }

    task: str = "sentiment"  # the task name
    ensemble: int = 1  # members trained with seeds seed, seed+1, ...; the model averages them
    data: DataConfig = DataConfig()
    tokenizer: TokenizerConfig = TokenizerConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    chars: CharsConfig = CharsConfig()
    features: SentimentFeaturesConfig = SentimentFeaturesConfig()
    encoder: EncoderConfig = EncoderConfig()
    head: SentimentHeadConfig = SentimentHeadConfig()
    pretrain: PretrainConfig = PretrainConfig()
    noise: NoiseConfig = NoiseConfig()
    train: TrainConfig = TrainConfig()
