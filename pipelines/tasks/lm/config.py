"""The language-model task's configuration (no TensorFlow import) and its range checks."""

import dataclasses
import math
import typing

from elman.errors import UserError
from elman.text.pieces import ALGORITHMS, NORMALIZATIONS


@dataclasses.dataclass(frozen=True)
class LMDataConfig:
    """The text files of a language-model run (plain text, UTF-8 by default)."""

    train: str = ""  # training text file
    validation: str = ""  # validation text file; empty: the last `validation_fraction` of train
    test: str = ""  # test text file; empty: no test split (the report uses validation)
    validation_fraction: float = 0.1  # share of train's lines held out when there is no validation
    encoding: str = "utf-8"  # the files' text encoding (gb18030 for GBK Chinese text)


@dataclasses.dataclass(frozen=True)
class LMTextConfig:
    """How text becomes tokens and the vocabulary."""

    level: str = "word"  # word: words and punctuation marks; character: every character;
    # subword: SentencePiece pieces learned on the training text (vocabulary_size, algorithm)
    lowercase: bool = False  # lower-case the text before tokenizing
    unit: str = "line"  # line: <eol> after each line; paragraph: after each blank-line block
    max_vocabulary: int = 10000  # vocabulary cap, padding and [UNK] included; 0: no cap
    min_count: int = 1  # training tokens seen fewer times become [UNK]
    vocabulary_size: int = 8000  # subword level: pieces learned (4 reserved ids included)
    algorithm: str = "unigram"  # subword level: unigram or bpe (SentencePiece)
    character_coverage: float = 1.0  # subword level: share of the training text's
    # characters kept as pieces (the rarest of the rest become [UNK]; 0.9995 suits Chinese)
    normalization: str = "nmt_nfkc"  # subword level: SentencePiece's rule (nmt_nfkc and
    # nfkc fold full-width marks to ASCII; identity keeps the text as written)


@dataclasses.dataclass(frozen=True)
class LMModelConfig:
    """The network: embedding → stacked LSTM/GRU → logits over the vocabulary."""

    cell: str = "lstm"  # lstm, gru or rnn (SimpleRNN has no cuDNN kernel)
    embedding_dim: int = 128  # token embedding size
    units: int = 256  # recurrent state size of each layer
    num_layers: int = 1  # stacked recurrent layers
    dropout: float = 0.2  # dropout on embeddings, between layers and before the logits


@dataclasses.dataclass(frozen=True)
class LMTrainConfig:
    """Optimisation, truncated BPTT, stopping and reproducibility."""

    epochs: int = 20  # maximum number of epochs
    batch_size: int = 32  # parallel streams the training text is cut into
    chunk_length: int = 35  # K: steps per batch, the truncation length of BPTT
    batch_tokens: int = 0  # must stay 0: every TBPTT batch is already batch_size × chunk_length
    learning_rate: float = 0.002  # Adam learning rate
    clipnorm: float = 1.0  # gradient clipping by global norm; 0 disables it
    weight_decay: float = 0.0  # decoupled weight decay (AdamW style); 0 disables it
    patience: int = 3  # early stopping: epochs without a lower validation perplexity
    eval_batch_size: int = 1  # streams when scoring; 1 carries context through the whole text
    seed: int = 1234  # seeds Python, NumPy and TensorFlow; op determinism is enabled
    strategy: str = "default"  # stateful TBPTT trains on one device: only "default"
    mixed_precision: str = "none"  # none, float16 or bfloat16 (GPUs only)
    threads: int = 0  # CPU intra-op threads; 0: one per core
    max_minutes: float = 0.0  # time budget: no epoch starts that would end past it; 0: none


@dataclasses.dataclass(frozen=True)
class LMReportConfig:
    """The generated samples in the report."""

    samples: int = 3  # prefixes taken from the validation text
    prefix_length: int = 0  # tokens per prefix; 0: 3 words or subwords, or 4 characters
    sample_length: int = 0  # tokens generated per sample; 0: 30 words, 40 subwords or 80
    # characters
    temperature: float = 0.8  # the sampled (non-greedy) samples' temperature


@dataclasses.dataclass(frozen=True)
class LMConfig:
    """Everything a language-model run needs."""

    choices: typing.ClassVar[dict] = {  # allowed values of this task's own string settings
        "text.level": ("word", "character", "subword"),
        "text.algorithm": ALGORITHMS,
        "text.normalization": NORMALIZATIONS,
        "text.unit": ("line", "paragraph"),
        "model.cell": ("lstm", "gru", "rnn"),
        "train.mixed_precision": ("none", "float16", "bfloat16"),
    }

    task: str = "lm"  # the task name
    data: LMDataConfig = LMDataConfig()
    text: LMTextConfig = LMTextConfig()
    model: LMModelConfig = LMModelConfig()
    train: LMTrainConfig = LMTrainConfig()
    report: LMReportConfig = LMReportConfig()


def _check_minimums(cfg):
    for key, value, minimum in (
        ("model.embedding_dim", cfg.model.embedding_dim, 1),
        ("model.units", cfg.model.units, 1),
        ("model.num_layers", cfg.model.num_layers, 1),
        ("train.epochs", cfg.train.epochs, 1),
        ("train.batch_size", cfg.train.batch_size, 1),
        ("train.chunk_length", cfg.train.chunk_length, 1),
        ("train.patience", cfg.train.patience, 1),
        ("train.eval_batch_size", cfg.train.eval_batch_size, 1),
        ("text.min_count", cfg.text.min_count, 1),
        ("text.max_vocabulary", cfg.text.max_vocabulary, 0),
        ("report.samples", cfg.report.samples, 0),
        ("report.prefix_length", cfg.report.prefix_length, 0),
        ("report.sample_length", cfg.report.sample_length, 0),
    ):
        if value < minimum:
            raise UserError(f"'{key}' must be at least {minimum}; got {value}")


def check_config(cfg):
    """Range checks the types alone do not give; UserError names the setting.

    Args:
        cfg: LMConfig.
    """
    _check_minimums(cfg)
    if 0 < cfg.text.max_vocabulary < 3:
        raise UserError("'text.max_vocabulary' must be 0 (no cap) or at least 3 (padding, "
                        f"[UNK] and one token); got {cfg.text.max_vocabulary}")
    if cfg.train.batch_tokens:
        raise UserError("train.batch_tokens is not available for the language model: it "
                        "trains on fixed streams of train.batch_size × train.chunk_length "
                        "tokens with no padding; set those instead")
    if cfg.train.strategy != "default":
        raise UserError(f"train.strategy {cfg.train.strategy!r}: stateful truncated-BPTT "
                        "training carries its state on one device; use the default strategy")
    if not 0.0 <= cfg.model.dropout < 1.0:
        raise UserError(f"'model.dropout' must be in [0, 1); got {cfg.model.dropout}")
    if not cfg.train.learning_rate > 0:
        raise UserError(f"'train.learning_rate' must be > 0; got {cfg.train.learning_rate}")
    if cfg.train.weight_decay < 0 or cfg.train.max_minutes < 0:
        raise UserError("'train.weight_decay' and 'train.max_minutes' must be >= 0 (0 disables "
                        f"them); got {cfg.train.weight_decay} and {cfg.train.max_minutes}")
    if cfg.train.clipnorm < 0:
        raise UserError(f"'train.clipnorm' must be >= 0 (0 disables it); got "
                        f"{cfg.train.clipnorm}")
    if not (math.isfinite(cfg.report.temperature) and cfg.report.temperature > 0):
        raise UserError(f"'report.temperature' must be > 0; got {cfg.report.temperature}")
    if not 0.0 < cfg.data.validation_fraction < 1.0:
        raise UserError("'data.validation_fraction' must be between 0 and 1; got "
                        f"{cfg.data.validation_fraction}")
