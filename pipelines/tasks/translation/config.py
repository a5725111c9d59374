"""The translation task's configuration (no TensorFlow import)."""

import dataclasses
import typing

from elman.config import _CHOICES, TokenizerConfig, TrainConfig

START, END = "<s>", "</s>"  # reserved target tokens: ids 2 and 3
FORMATS = ("auto", "tsv", "parallel", "jsonl", "hub")
_TOKENIZER_CHOICES = {key.split(".", 1)[1]: allowed for key, allowed in _CHOICES.items()
                      if key.startswith("tokenizer.")}  # the shared tokenizer's choices


@dataclasses.dataclass(frozen=True)
class TranslationDataConfig:
    """Where the sentence pairs come from and which of them are kept for training."""

    train: str = ""  # training pairs: a file, SRC_FILE,TGT_FILE (parallel) or hub:NAME
    validation: str = ""  # validation pairs; empty: carve `validation_fraction` off train
    test: str = ""  # test pairs; empty: no test split (the report uses validation)
    format: str = "auto"  # auto (from the name), tsv, parallel, jsonl or hub
    encoding: str = "utf-8"  # the files' text encoding (gb18030 for GBK Chinese files)
    reverse: bool = False  # swap the two positional columns (translate right to left)
    source_lang: str = "en"  # source language code (parallel suffixes, translation keys)
    target_lang: str = "zh"  # target language code (also picks the BLEU tokenizer)
    max_source_len: int = 50  # training pairs with more source tokens are dropped (counted)
    max_target_len: int = 50  # training pairs with more target tokens are dropped (counted)
    dedupe: bool = True  # drop repeated (source, target) training pairs (counted)
    max_train_pairs: int = 0  # keep at most this many training pairs (seeded); 0: all
    validation_fraction: float = 0.05  # share of train held out when no validation file
    skip_bad_rows: bool = False  # skip (and count) malformed rows instead of failing
    hub_config: str = ""  # configuration name of a hub dataset (e.g. "de-en")
    hub_train_split: str = "train"  # hub split used for training
    hub_validation_split: str = "validation"  # hub split used for validation ("" to carve)
    hub_test_split: str = "test"  # hub split used for testing ("" for none)


@dataclasses.dataclass(frozen=True)
class TranslationModelConfig:
    """The encoder–decoder (elman.models.seq2seq_translator.Seq2SeqTranslator)."""

    cell: str = "gru"  # lstm or gru, encoder and decoder
    units: int = 128  # recurrent units (per direction in the encoder) and decoder size
    num_layers: int = 1  # recurrent layers in the encoder and in the decoder
    bidirectional: bool = True  # bidirectional encoder (final states merged by the bridge)
    dropout: float = 0.1  # dropout on embeddings, between layers and before the output
    attention: str = "luong"  # none, bahdanau (additive) or luong (multiplicative)
    bridge: str = "concat"  # how the two encoder directions start the decoder: concat, sum
    combine: str = "residual"  # attention context + decoder output: residual
    # (LayerNorm(y + W c), trains fast) or tanh (Luong's tanh(W [y; c]))
    embedding_dim: int = 64  # size of the source and target embeddings


@dataclasses.dataclass(frozen=True)
class DecodingConfig:
    """How translations are produced (evaluation, `elman translate`, the SavedModel)."""

    beam_width: int = 0  # 0: greedy (compiled batched); k > 0: beam search of width k
    length_penalty: float = 0.6  # GNMT alpha for beam search; 0 ranks by log-probability
    max_len_ratio: float = 2.0  # length cap: ratio * source tokens + offset ...
    max_len_offset: int = 5  # ... (the end token included)
    max_len: int = 200  # ... and never more than this many target tokens
    batch_size: int = 256  # sentences decoded together


@dataclasses.dataclass(frozen=True)
class TranslationEvalConfig:
    """Scoring and the report."""

    bleu_tokenize: str = "auto"  # sacrebleu tokenizer: auto (zh for Chinese, else 13a), ...
    lowercase: bool = False  # case-insensitive BLEU and chrF (always when the target
    # tokenizer lower-cases: such a model cannot produce capitals)
    samples: int = 8  # sample translations shown per kind (best, worst, random)
    heatmaps: int = 3  # attention heatmaps drawn (models with attention only)
    beam_widths: tuple[int, ...] = ()  # the main split decoded again with these beam
    # widths, side by side with greedy in the report (BLEU, chrF, sentences/s); () none


@dataclasses.dataclass(frozen=True)
class SourceTokenizerConfig(TokenizerConfig):
    """The source side's tokenizer (TokenizerConfig with source defaults)."""

    level: str = "word"  # source words (cjk for a Chinese source); subword: learned pieces
    lowercase: bool = False  # case kept (names, sentence starts); true folds it
    max_length: int = 100  # longest source the encoder sees (longer ones are truncated)


@dataclasses.dataclass(frozen=True)
class TargetTokenizerConfig(TokenizerConfig):
    """The target side's tokenizer (TokenizerConfig with target defaults)."""

    level: str = "cjk"  # Chinese characters one by one (word for French, English, ...)
    lowercase: bool = False  # case kept end to end: the translator writes capitals
    max_length: int = 100  # longest target trained on (the end token included)


@dataclasses.dataclass(frozen=True)
class TranslationTrainConfig(TrainConfig):
    """Optimisation for translation (TrainConfig with seq2seq defaults)."""

    epochs: int = 20  # maximum number of epochs
    batch_size: int = 64  # sentence pairs per batch
    learning_rate: float = 0.003  # Adam learning rate
    patience: int = 4  # early stopping: epochs without validation improvement


@dataclasses.dataclass(frozen=True)
class TranslationConfig:
    """Everything a translation run needs."""

    choices: typing.ClassVar[dict] = {  # allowed values of this task's own string settings
        "data.format": FORMATS,
        "model.cell": ("lstm", "gru"),
        "model.attention": ("none", "bahdanau", "luong"),
        "model.bridge": ("concat", "sum"),
        "model.combine": ("residual", "tanh"),
        "eval.bleu_tokenize": ("auto", "13a", "zh", "intl", "char", "none"),
        **{f"{side}.{key}": allowed for side in ("source_tokenizer", "target_tokenizer")
           for key, allowed in _TOKENIZER_CHOICES.items()},
    }

    task: str = "translation"  # the task name
    data: TranslationDataConfig = TranslationDataConfig()
    source_tokenizer: SourceTokenizerConfig = SourceTokenizerConfig()
    target_tokenizer: TargetTokenizerConfig = TargetTokenizerConfig()
    model: TranslationModelConfig = TranslationModelConfig()
    decoding: DecodingConfig = DecodingConfig()
    eval: TranslationEvalConfig = TranslationEvalConfig()
    train: TranslationTrainConfig = TranslationTrainConfig()
