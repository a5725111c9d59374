"""Typed, frozen run configurations: TOML presets, `--set key=value` overrides, saved as TOML.

Every task's configuration is a frozen dataclass built from shared sections (data,
tokenizer, embedding, encoder, train) plus the task's own head section. A preset TOML
file under `pipelines/configs/` sets only what differs from the defaults.
"""

import dataclasses
import json
import tomllib
import typing
from pathlib import Path

from elman.config_ranges import check_range
from elman.errors import UserError
from elman.text.pieces import ALGORITHMS, NORMALIZATIONS

CONFIG_DIR = Path(__file__).parent / "configs"


@dataclasses.dataclass(frozen=True)
class DataConfig:
    """Where the examples come from and how to read them."""

    train: str = ""  # training file, or hub:NAME for a Hugging Face dataset
    validation: str = ""  # validation file; empty: carve `validation_fraction` off train
    test: str = ""  # test file; empty: no test split (the report uses validation)
    format: str = "auto"  # auto (from the extension; a folder: folders), csv, tsv, jsonl,
    # parquet, labeled-lines, folders (one subfolder per class, one text per file)
    text_column: str = "text"  # column holding the input text
    label_column: str = "label"  # column holding the class label
    validation_fraction: float = 0.1  # share of train held out when no validation file
    skip_bad_rows: bool = False  # skip (and count and list) malformed rows instead of failing
    encoding: str = "utf-8"  # the files' text encoding (latin-1 for the MR and SUBJ releases)
    hub_config: str = ""  # configuration name of a hub dataset
    hub_train_split: str = "train"  # hub split used for training
    hub_validation_split: str = "validation"  # hub split used for validation ("" to carve)
    hub_test_split: str = "test"  # hub split used for testing ("" for none)


@dataclasses.dataclass(frozen=True)
class TokenizerConfig:
    """How raw text becomes token ids (the tokenizer is saved inside the model)."""

    level: str = "cjk"  # cjk: Han characters one by one, Latin words whole; word; char;
    # subword: SentencePiece pieces learned on train (vocabulary_size, algorithm)
    lowercase: bool = True  # lower-case before splitting
    punctuation: str = "split"  # split: punctuation marks are tokens; strip: removed; keep
    max_tokens: int = 20000  # vocabulary cap, including padding and OOV
    min_count: int = 1  # tokens seen fewer times in train map to OOV
    max_length: int = 200  # longest token sequence the model sees
    truncation: str = "post"  # post: keep the first max_length tokens; pre: keep the last;
    # both: the first quarter of max_length and the last three quarters (long documents)
    vocabulary_size: int = 8000  # subword level: pieces learned (ids 0-3 included)
    algorithm: str = "unigram"  # subword level: unigram or bpe (SentencePiece)
    character_coverage: float = 1.0  # subword level: share of train's characters kept
    # as pieces (the rarest of the rest map to unknown; 0.9995 suits Chinese)
    strip_markup: bool = False  # replace HTML/XML tags (<br />, <i>) and \n escapes by spaces
    normalization: str = "nmt_nfkc"  # subword level: SentencePiece's rule before splitting;
    # nmt_nfkc and nfkc fold full-width marks (。？！，) to ASCII, identity keeps the text
    # as written (Chinese and Japanese targets); runs of spaces are folded in every rule


@dataclasses.dataclass(frozen=True)
class EmbeddingConfig:
    """Token embedding."""

    dim: int = 128  # embedding size (a pretrained file must match it)
    pretrained: str = ""  # word2vec/GloVe text file; empty: random initialisation
    trainable: bool = True  # fine-tune the embedding during training
    dropout: float = 0.0  # word dropout: share of token vectors zeroed while training
    unk_dropout: float = 0.0  # share of tokens fed as [UNK] while training
    adversarial: float = 0.0  # adversarial training: each step also trains on the word
    # vectors moved up the loss gradient by this fraction of each sentence's norm; 0: off
    virtual_adversarial: float = 0.0  # virtual adversarial training (sentiment): each step
    # also pulls the prediction for the word vectors moved (by this fraction of each
    # sentence's norm) the way that changes it most towards the clean one; 0: off
    train_vectors: str = "none"  # none, skipgram or cbow: start the embedding from word2vec
    # vectors learned on the training texts alone (instead of `pretrained`)
    vector_epochs: int = 10  # train_vectors: word2vec passes over the training texts
    vector_window: int = 5  # train_vectors: context tokens on each side
    vector_max_tokens: int = 100_000_000  # train_vectors: at most this many tokens read in
    # all passes together (fewer passes, or a seeded share of the texts, on a big corpus)
    vector_centre: int = -1  # starting vectors: N >= 0 removes their mean and N leading
    # directions; -1: off
    vector_std: float = 0.0  # starting vectors scaled to this element sd; 0: as they are


@dataclasses.dataclass(frozen=True)
class CharsConfig:
    """Character features of each token (models.CharWordFeatures), joined to its embedding."""

    features: str = "none"  # none, cnn (char CNN + max pooling) or lstm (char BiLSTM)
    embedding_dim: int = 25  # char embedding size
    units: int = 50  # CNN filters, or char LSTM units per direction
    kernel_size: int = 3  # CNN window in chars
    max_word_length: int = 20  # chars kept per token


@dataclasses.dataclass(frozen=True)
class EncoderConfig:
    """The recurrent encoder (elman.models.encoders.RecurrentEncoder)."""

    cell: str = "lstm"  # lstm, gru or rnn
    units: int = 64  # units per direction
    num_layers: int = 1  # stacked recurrent layers
    bidirectional: bool = True  # read left-to-right and right-to-left
    dropout: float = 0.2  # dropout between layers (keeps cuDNN eligibility)
    recurrent_dropout: float = 0.0  # variational dropout on the recurrent state (no cuDNN)
    merge_mode: str = "concat"  # how the two directions combine


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Optimisation, stopping and reproducibility."""

    epochs: int = 10  # maximum number of epochs
    batch_size: int = 32  # global batch size (split across replicas)
    batch_tokens: int = 0  # > 0: batches of similar-length sentences up to this many padded
    # tokens (rows × longest row, global), instead of batch_size examples; 0 disables it
    optimizer: str = "adam"  # adam, or sgd (with momentum, as in the NER literature)
    learning_rate: float = 0.002  # the optimizer's learning rate
    momentum: float = 0.9  # sgd only: momentum of the update (0: plain SGD)
    clipnorm: float = 1.0  # gradient clipping by global norm; 0 disables it
    weight_decay: float = 0.0  # decoupled weight decay (AdamW style); 0 disables it
    lr_decay: float = 1.0  # the learning rate is multiplied by this after every epoch
    ema: float = 0.0  # momentum of an exponential moving average of the weights, which
    # is what validation, the best checkpoint and the saved model use; 0 disables it
    sam: float = 0.0  # ρ of sharpness-aware minimisation (Foret et al. 2021): each step takes
    # the gradient at the weights moved ρ up their gradient; sentiment and tagging; 0: off
    patience: int = 3  # early stopping: epochs without validation improvement
    plateau: float = 0.0  # after an epoch without improvement, put the best epoch's weights
    # back and multiply the learning rate by this (0 < plateau < 1); 0 disables it
    average_best: int = 0  # checkpoint averaging: the returned weights are the mean of the
    # weights of the k best epochs by `monitor`; 0 or 1: the best epoch's weights alone
    monitor: str = "val_loss"  # the quantity early stopping and the best checkpoint watch
    seed: int = 1234  # seeds Python, NumPy and TensorFlow; op determinism is enabled
    bucketing: bool = True  # batch examples of similar length together
    shuffle_buffer: int = 10000  # shuffle buffer size
    strategy: str = "default"  # default, mirrored or multi-worker
    mixed_precision: str = "none"  # none, float16 or bfloat16
    threads: int = 0  # CPU intra-op threads; 0: one per core
    max_minutes: float = 0.0  # time budget: no epoch starts that would end past it; 0: none
    xla: bool = False  # compile the training and validation steps with XLA (one compilation
    # per batch shape: pair it with length_multiple); on the default strategy only
    length_multiple: int = 0  # pad each batch's length (and char width) up to a multiple
    # of this, so few batch shapes occur; 0: 4 with xla, 1 (no extra padding) without
    steps_per_execution: int = 1  # training steps run in one call into TensorFlow (fewer
    # Python round trips a step); > 1 on the default strategy only


_CHOICES = {
    "tokenizer.level": ("cjk", "word", "char", "subword"),
    "tokenizer.algorithm": ALGORITHMS,
    "tokenizer.normalization": NORMALIZATIONS,
    "tokenizer.punctuation": ("split", "strip", "keep"),
    "tokenizer.truncation": ("post", "pre", "both"),
    "embedding.train_vectors": ("none", "skipgram", "cbow"),
    "chars.features": ("none", "cnn", "lstm"),
    "encoder.cell": ("lstm", "gru", "rnn"),
    "encoder.merge_mode": ("concat", "sum", "mul", "ave"),
    "train.strategy": ("default", "mirrored", "multi-worker"),
    "train.optimizer": ("adam", "sgd"),
    "train.mixed_precision": ("none", "float16", "bfloat16"),
    "data.format": ("auto", "csv", "tsv", "jsonl", "parquet", "labeled-lines", "folders"),
}


def _coerce(value, typ, key, source, choices=None):
    if dataclasses.is_dataclass(typ):
        if not isinstance(value, dict):
            raise UserError(f"'{key}' must be a table of settings, got {value!r}", path=source)
        return _from_dict(typ, value, source, prefix=key + ".", choices=choices)
    if typ is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif typ is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif typ is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif typ is str:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
    elif typing.get_origin(typ) is tuple:  # tuple[int, ...] or tuple[str, ...]: a TOML list
        item = typing.get_args(typ)[0]
        if isinstance(value, (list, tuple)) and all(
                isinstance(v, item) and not isinstance(v, bool) for v in value):
            return tuple(value)
        raise UserError(f"'{key}' expects a list of "
                        f"{'integers' if item is int else 'strings'}, got {value!r}", path=source)
    raise UserError(
        f"'{key}' expects a {typ.__name__}, got {value!r}", path=source
    )


def _from_dict(cls, values, source=None, prefix="", choices=None):
    """Builds `cls` from nested dicts, checking names, types, ranges and choices.

    `choices` are the task's own allowed values (its config class's `choices`); they
    take precedence over the shared ones above for the same key.
    """
    choices = getattr(cls, "choices", {}) if choices is None else choices
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in values.items():
        if key not in names:
            raise UserError(
                f"unknown setting '{prefix}{key}'; known settings here: "
                + ", ".join(prefix + n for n in sorted(names)),
                path=source,
            )
        kwargs[key] = _coerce(value, hints[key], prefix + key, source, choices)
        check_range(prefix + key, kwargs[key], source)
        allowed = choices.get(prefix + key, _CHOICES.get(prefix + key))
        if allowed and kwargs[key] not in allowed:
            raise UserError(
                f"'{prefix}{key}' must be one of {', '.join(allowed)}; got {kwargs[key]!r}",
                path=source,
            )
    return cls(**kwargs)


def to_dict(config):
    """Returns the config as nested plain dicts."""
    return dataclasses.asdict(config)


def _deep_merge(base, extra):
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _parse_value(text):
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _read_toml(path):
    path = Path(path)
    if not path.is_file():
        raise UserError("config file not found", path=path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UserError("config file is not valid UTF-8", path=path) from None
    except tomllib.TOMLDecodeError as err:
        raise UserError(f"not valid TOML: {err}", path=path) from None


def preset_path(task, preset="default"):
    """Returns the TOML file of a task's preset (e.g. 'sentiment', 'sst2')."""
    name = task if preset in ("", "default") else f"{task}-{preset}"
    return CONFIG_DIR / f"{name}.toml"


def load_config(task, config_file=None, overrides=(), extra=None):
    """Builds a task's config: defaults ← preset or `config_file` ← `extra` ← `overrides`.

    Args:
        task: str, a registered task name.
        config_file: str or None, a TOML file; None uses the task's default preset.
        overrides: iterable of "section.key=value" strings (values parsed as TOML,
            falling back to plain strings).
        extra: dict or None, nested settings applied before the overrides (used for
            command-line flags such as --data).

    Returns:
        The frozen config dataclass of the task.
    """
    from elman import tasks

    cls = tasks.config_class(task)
    source = Path(config_file) if config_file else preset_path(task)
    values = _read_toml(source) if (config_file or source.is_file()) else {}
    values.pop("preset", None)
    if values.get("task", task) != task:
        raise UserError(f"this config is for task '{values['task']}', not '{task}'", path=source)
    values = _deep_merge(values, extra or {})
    config = _from_dict(cls, values, source)
    for item in overrides:
        if "=" not in item:
            raise UserError(f"--set expects key=value, got {item!r}")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        nested = _parse_value(raw.strip())
        for part in reversed(parts):
            nested = {part: nested}
        config = _from_dict(cls, _deep_merge(to_dict(config), nested), "--set")
    check_memory(config, "--set" if overrides else source)
    _check_batching(config, "--set" if overrides else source)
    _check_plateau(config, "--set" if overrides else source)
    if getattr(getattr(config, "train", None), "sam", 0.0) and task not in SAM_TASKS:
        raise UserError(f"train.sam is available for {' and '.join(SAM_TASKS)} only (their "
                        f"models' training step applies it), not for {task}; leave it at 0",
                        path="--set" if overrides else source)
    return config


SAM_TASKS = ("sentiment", "tagging")  # models with elman.models.adversarial's step


def _check_batching(config, source=None):
    """Token-budget batches sort by length: they need train.bucketing on."""
    train = getattr(config, "train", None)
    if getattr(train, "batch_tokens", 0) and not getattr(train, "bucketing", True):
        raise UserError("train.batch_tokens batches sentences of similar length together; "
                        "it needs train.bucketing = true", path=source)
    if getattr(train, "strategy", "default") != "default":
        if getattr(train, "xla", False):
            raise UserError("train.xla compiles the step on one device; it needs "
                            "train.strategy = \"default\"", path=source)
        if getattr(train, "steps_per_execution", 1) > 1:
            raise UserError("train.steps_per_execution > 1 needs "
                            "train.strategy = \"default\"", path=source)


def _check_plateau(config, source=None):
    """train.plateau sets the optimizer's rate itself and restores the best weights: not
    with a decay schedule, an EMA of the weights, or several workers."""
    train = getattr(config, "train", None)
    if not getattr(train, "plateau", 0.0):
        return
    clashes = (("lr_decay", train.lr_decay != 1.0, "both set the learning rate"),
               ("ema", train.ema > 0.0, "the best weights it restores are the averaged ones"),
               ("strategy", train.strategy == "multi-worker", "workers do not share checkpoints"))
    for key, clash, why in clashes:
        if clash:
            raise UserError(f"train.plateau cannot be combined with train.{key} = "
                            f"{getattr(train, key)!r}: {why}; leave one of them off",
                            path=source)


def check_adversarial_strategy(config):
    """Adversarial training runs in the model's own train_step, which the multi-worker
    loop (elman.core.multi_worker) does not call: refused there, before any data is read."""
    for section, key in (("embedding", "adversarial"), ("embedding", "virtual_adversarial"),
                         ("head", "rdrop"), ("head", "mixup")):
        if (getattr(getattr(config, section, None), key, 0.0)
                and config.train.strategy == "multi-worker"):
            raise UserError(f"{section}.{key} is not available with train.strategy "
                            "'multi-worker': that strategy's training loop does not run the "
                            "model's adversarial step; use 'mirrored' or 'default'")
    if getattr(config.train, "sam", 0.0) and config.train.strategy == "multi-worker":
        raise UserError("train.sam is not available with train.strategy 'multi-worker': that "
                        "strategy's training loop does not run the model's own step; use "
                        "'mirrored' or 'default'")


def length_multiple(train_cfg):
    """The multiple batch lengths are padded up to: `train.length_multiple`, or 4 with
    `train.xla` and 1 without when it is 0."""
    chosen = int(getattr(train_cfg, "length_multiple", 0) or 0)
    if chosen:
        return chosen
    return 4 if getattr(train_cfg, "xla", False) else 1


def _recurrent_parameters(config):
    """A lower bound on the recurrent weights a config asks for (LSTM/GRU/RNN stacks)."""
    for name in ("encoder", "model"):
        section = getattr(config, name, None)
        units = getattr(section, "units", None)
        if units is None:
            continue
        layers = getattr(section, "num_layers", 1)
        directions = 2 if getattr(section, "bidirectional", False) else 1
        gates = {"lstm": 4, "gru": 3}.get(getattr(section, "cell", "lstm"), 1)
        width = getattr(getattr(config, "embedding", None), "dim", None) or getattr(
            section, "embedding_dim", units)
        total = 0
        for layer in range(layers):
            inputs = width if layer == 0 else units * directions
            total += directions * gates * units * (inputs + units + 1)
        return total
    return 0


def check_memory(config, source=None):
    """Refuses a model whose recurrent weights alone (with their gradients and the two
    Adam moments: 16 bytes a weight) exceed this machine's memory, with the estimate."""
    import os

    weights = _recurrent_parameters(config)
    needed = 16 * weights
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return
    if needed > memory:
        raise UserError(f"this model needs at least {weights:,} recurrent weights, about "
                        f"{needed / 2**30:,.1f} GiB to train, and this machine has "
                        f"{memory / 2**30:,.1f} GiB; choose smaller units or fewer layers",
                        path=source)


def config_from_dict(task, values):
    """Rebuilds a saved config (e.g. a run folder's config.json)."""
    from elman import tasks

    return _from_dict(tasks.config_class(task), values)


def dumps_toml(config):
    """Serialises a config as TOML (sections as tables)."""
    flat, tables = [], []
    for key, value in to_dict(config).items():
        if isinstance(value, dict):
            lines = [f"[{key}]"] + [f"{k} = {json.dumps(v)}" for k, v in value.items()]
            tables.append("\n".join(lines))
        else:
            flat.append(f"{key} = {json.dumps(value)}")
    return "\n".join(flat) + "\n\n" + "\n\n".join(tables) + "\n"
