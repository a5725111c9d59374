"""Sequence tagging (NER, POS): tagged corpus → vocabularies → BiLSTM/GRU tagger → report.

The pipeline reads a tagged corpus (CoNLL columns, CoNLL-U, JSON lines, a Hugging
Face dataset saved with `save_to_disk`, or `hub:NAME`), converts entity tags to
BIO internally, builds word and character vocabularies on the training split
only, trains a `models.SequenceTagger` (softmax or CRF head, optional character
features) with the house training loop, and scores every gold position:
entity-level precision/recall/F1 exactly as `conlleval` computes them, token
accuracy, and per-tag accuracy for free tag sets such as POS. Tags are written
back in the input's scheme (BIO, IOB1 or BIOES).

A run folder holds everything needed to tag new text: `model.keras` (the tagger:
word ids, plus char ids, in; tag potentials out; `predict` gives tag ids; loads
with safe mode on), `words.txt`, `chars.txt`, `tags.txt` (one entry per line,
the line number is the id) and `tagging.json` (input scheme, case settings).
Splitting raw text into words (or Chinese characters) and building the char-id
tensor happen in Python (`Tagger`), so no raw-strings-in model is exported for
this task: a string-in graph would have to reproduce `split_raw_text`'s Unicode
rules in TensorFlow ops, and callers who already have tokens would pay for it.
"""

import dataclasses
import datetime
import json
import os
import random
import time
import weakref
from collections import Counter
from pathlib import Path

from elman import config as config_lib
from elman.config import EncoderConfig, TrainConfig
from elman.errors import UserError
from elman.core import report as rep
from elman.tasks.tagging import schemes as tag_schemes
from elman.core.html import write_text_atomic

TASK = "tagging"
PAD, OOV = "", "[UNK]"
ROOT = Path(__file__).resolve().parents[3]


# ----------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TaggingDataConfig:
    """Where the tagged sentences come from and how to read them."""

    train: str = ""  # file, a folder written by datasets' save_to_disk, or hub:NAME
    validation: str = ""  # same kinds; empty: carve `validation_fraction` off train
    test: str = ""  # same kinds; empty: no test split (the report uses validation)
    format: str = "auto"  # auto (extension; a folder is hf), conll, conllu, jsonl, hf
    tag_column: str = ""  # conll: tag column index (default -1, the last); jsonl/hf: tags key
    tokens_column: str = "tokens"  # jsonl/hf: the key or column holding the token list
    conllu_field: str = "upos"  # CoNLL-U: upos or xpos
    scheme: str = "auto"  # auto (guessed on train), BIO, IOB1, BIOES, none (free tags: POS)
    strict: bool = True  # an ill-formed sequence (I-X after O) is an error
    repair_bio: bool = False  # --repair-bio: read I-X after O as B-X and count it
    validation_fraction: float = 0.1  # share of train held out when no validation is given
    hub_config: str = ""  # configuration name of a hub dataset
    hub_train_split: str = "train"  # split of a dataset dict used for training
    hub_validation_split: str = "validation"  # split used for validation ("" to carve)
    hub_test_split: str = "test"  # split used for testing ("" for none)


@dataclasses.dataclass(frozen=True)
class WordVocabularyConfig:
    """The word vocabulary (built on the training split only)."""

    lowercase: bool = False  # capitalisation matters for NER: keep case by default
    min_count: int = 1  # words seen fewer times in train map to OOV
    max_words: int = 50000  # vocabulary cap, padding and OOV included


@dataclasses.dataclass(frozen=True)
class CharFeaturesConfig:
    """Character-level word features (models.CharWordFeatures)."""

    features: str = "lstm"  # none, lstm (char BiLSTM) or cnn (char CNN + max pooling)
    embedding_dim: int = 25  # char embedding size
    units: int = 25  # char LSTM units per direction, or CNN filters
    max_word_length: int = 20  # chars per word kept (longer words are cut; positions stay)
    lowercase: bool = False  # lower-case before the char lookup


@dataclasses.dataclass(frozen=True)
class TaggingEmbeddingConfig:
    """The word embedding."""

    dim: int = 100  # embedding size (a pretrained file must match it)
    pretrained: str = ""  # word2vec/GloVe text file; empty: random initialisation
    trainable: bool = True  # fine-tune the embedding during training
    word_dropout: float = 0.0  # share of words fed as OOV while training (trains the OOV vector)


@dataclasses.dataclass(frozen=True)
class TaggingHeadConfig:
    """The output layer."""

    type: str = "crf"  # softmax (independent tags) or crf
    constraint: str = "auto"  # CRF only. auto: BIO constraints for entity tags; BIO; none


@dataclasses.dataclass(frozen=True)
class TaggingConfig:
    """Everything a tagging run needs."""

    task: str = "tagging"  # the task name
    data: TaggingDataConfig = TaggingDataConfig()
    vocabulary: WordVocabularyConfig = WordVocabularyConfig()
    chars: CharFeaturesConfig = CharFeaturesConfig()
    embedding: TaggingEmbeddingConfig = TaggingEmbeddingConfig()
    encoder: EncoderConfig = EncoderConfig()
    head: TaggingHeadConfig = TaggingHeadConfig()
    train: TrainConfig = TrainConfig()


config_lib.register(TASK, TaggingConfig, choices={
    "data.format": ("auto", "conll", "conllu", "jsonl", "hf"),
    "data.conllu_field": ("upos", "xpos"),
    "data.scheme": ("auto", "BIO", "IOB2", "IOB1", "BIOES", "IOBES", "none"),
    "chars.features": ("none", "lstm", "cnn"),
    "head.type": ("softmax", "crf"),
    "head.constraint": ("auto", "BIO", "none"),
    "encoder.merge_mode": ("concat",),
})


# ----------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------


@dataclasses.dataclass
class TaggedSplit:
    """The sentences of one split (entity tags in BIO) and what reading them counted."""

    name: str
    sentences: list  # [{"tokens": [...], "tags": [...], "source": "file:line"}]
    source: str
    sha256: str = ""
    stats: dict = dataclasses.field(default_factory=dict)

    @property
    def tokens(self):
        return [s["tokens"] for s in self.sentences]

    @property
    def tags(self):
        return [s["tags"] for s in self.sentences]


def _entity_like(tags):
    return all(t == "O" or (isinstance(t, str) and len(t) > 2 and t[1] == "-" and t[0] in "BIES")
               for t in tags)


def _scheme_option(value):
    return None if value == "none" else value


def _where(source):
    """(path, line) of a sentence's source "file:line" (line None when not a number)."""
    path, _, line = str(source).rpartition(":")
    return (path, int(line)) if line.isdigit() and path else (str(source), None)


def _cli_hint(error):
    """Rewrites the reader's API hint (repair=True) into the command-line words."""
    message = error.message.replace("pass repair=True", "use --repair-bio (data.repair_bio)")
    message = message.replace("scheme='auto' guesses it", "data.scheme = \"auto\" guesses it")
    return UserError(message, path=error.path, line=error.line)


def _format_of(data, path):
    from elman.tasks.tagging import data as tagging_data

    if path.startswith("hub:"):
        return "hub"
    if data.format == "hf" or (data.format == "auto" and Path(path).is_dir()):
        return "hf"
    if data.format != "auto":
        return data.format
    suffix = Path(path).suffix.lower()
    if suffix not in tagging_data.EXTENSIONS:
        if not Path(path).exists():
            raise UserError("file not found", path=path)
        raise UserError(f"cannot tell the format from the extension {suffix!r}; expected one of "
                        f"{', '.join(sorted(tagging_data.EXTENSIONS))} or a dataset folder, "
                        "or set data.format (conll, conllu, jsonl, hf)", path=path)
    return tagging_data.EXTENSIONS[suffix]


def _tag_key(data, fmt):
    if fmt == "conll":
        value = data.tag_column or "-1"
        try:
            return int(value)
        except ValueError:
            raise UserError(f"data.tag_column must be a column number for CoNLL files "
                            f"(0 is the token, -1 the last); got {value!r}") from None
    if data.tag_column:
        return data.tag_column
    return "tags" if fmt == "jsonl" else "ner_tags"


def _load_dataset_object(data, path):
    """A datasets.Dataset or DatasetDict from a save_to_disk folder or hub:NAME."""
    import datasets

    if not path.startswith("hub:"):
        if not Path(path).is_dir():
            raise UserError("dataset folder not found (expected a folder written by "
                            "datasets' save_to_disk)", path=path)
        try:
            return datasets.load_from_disk(path)
        except Exception as err:  # FileNotFoundError, ValueError from datasets
            raise UserError(f"not a saved Hugging Face dataset folder: {err}",
                            path=path) from None
    from elman.core.data import hub_offline

    name = path[4:]
    offline = hub_offline()
    try:
        if offline:
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["HF_DATASETS_OFFLINE"] = "1"
        return datasets.load_dataset(name, data.hub_config or None)
    except Exception as err:  # ConnectionError, FileNotFoundError, DatasetNotFoundError
        hint = " You are offline and it is not in the local cache." if offline else ""
        raise UserError(f"cannot load hub dataset '{name}': {type(err).__name__}.{hint} Use "
                        "local files instead: --data train.conll --validation dev.conll "
                        "(CoNLL, CoNLL-U, JSONL, or a save_to_disk folder)") from None


def _read_any(data, source, scheme, stats, split=None, loaded=None, name="train"):
    """Reads one split with the reader its format needs; returns the sentences."""
    from elman.tasks.tagging import data as tagging_data

    fmt = _format_of(data, source)
    repair = data.repair_bio
    try:
        if fmt in ("hf", "hub"):
            dataset = loaded if loaded is not None else _load_dataset_object(data, source)
            if isinstance(dataset, dict) and split is None:
                split = getattr(data, f"hub_{name}_split") or data.hub_train_split
            return tagging_data.read_hf_dataset(
                dataset, split=split, tokens_column=data.tokens_column,
                tags_column=_tag_key(data, fmt), scheme=scheme, strict=data.strict,
                repair=repair, stats=stats)
        if fmt == "conllu":
            return tagging_data.read_conllu(source, field=data.conllu_field, stats=stats)
        if fmt == "jsonl":
            return tagging_data.read_jsonl(source, tokens_key=data.tokens_column,
                                           tags_key=_tag_key(data, fmt), scheme=scheme,
                                           strict=data.strict, repair=repair, stats=stats)
        return tagging_data.read_conll(source, tag_column=_tag_key(data, fmt), scheme=scheme,
                                       strict=data.strict, repair=repair, stats=stats)
    except UserError as err:
        raise _cli_hint(err) from None


def _decide_scheme(data, source, loaded=None, split=None):
    """The input scheme: the configured one, or guessed on the training split.

    Returns None for free tags (POS): CoNLL-U files, `scheme = "none"`, or `auto`
    on a corpus whose tags are not all `O` / `B-`, `I-`, `E-`, `S-` + type.
    """
    if _format_of(data, source) == "conllu":
        return None
    if data.scheme != "auto":
        scheme = _scheme_option(data.scheme)
        return None if scheme is None else tag_schemes.normalize_scheme(scheme)
    raw = _read_any(data, source, None, {}, split=split, loaded=loaded)
    tags = [s["tags"] for s in raw]
    if not all(_entity_like(t) for t in tags):
        return None
    return tag_schemes.detect_scheme(tags)


def _sha256(source):
    from elman.core.data import sha256_of

    path = Path(source)
    return sha256_of(path) if path.is_file() else ""


def _carve(train, fraction, seed):
    if not 0.0 < fraction < 1.0:
        raise UserError(f"data.validation_fraction must be in (0, 1); got {fraction}")
    n = len(train.sentences)
    count = min(max(int(round(n * fraction)), 1), n - 1)
    if n < 2:
        raise UserError("too few training sentences to carve a validation split; give one "
                        "with --validation", path=train.source)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    held = set(order[:count])
    keep = [s for i, s in enumerate(train.sentences) if i not in held]
    val = [s for i, s in enumerate(train.sentences) if i in held]
    return (dataclasses.replace(train, sentences=keep),
            TaggedSplit("validation", val, f"carved from {train.source}", "",
                        {"sentences": len(val), "tokens": sum(len(s["tokens"]) for s in val)}))


def _canonical(sentences, scheme):
    """Entity tags as their conlleval reading in well-formed BIO (strict = false data)."""
    if scheme is None:
        return
    for sentence in sentences:
        sentence["tags"] = tag_schemes.to_bio(sentence["tags"], "BIO")


def load_splits(data, seed=0, scheme=None, for_training=True):
    """Reads train/validation/test from a data config.

    Args:
        data: TaggingDataConfig.
        seed: int, seeds the carving of a validation split.
        scheme: str or None, an explicit scheme to read with ("BIO", "IOB1",
            "BIOES" or "none"); None decides from the config (guessing on train).
        for_training: bool, also require and carve a validation split.

    Returns:
        (dict split name → TaggedSplit, scheme or None for free tags)
    """
    if not data.train:
        raise UserError("no training data: give --data FILE (or a dataset folder, or hub:NAME) "
                        "or set data.train")
    loaded = None
    if _format_of(data, data.train) in ("hf", "hub"):
        loaded = _load_dataset_object(data, data.train)
    if scheme is None:
        scheme = _decide_scheme(data, data.train, loaded)
    elif scheme == "none":
        scheme = None
    splits = {}
    names = ("train", "validation", "test")
    if isinstance(loaded, dict):  # a DatasetDict: splits by name unless files are given
        for name in names:
            wanted = getattr(data, f"hub_{name}_split")
            if name != "train" and (getattr(data, name) or not wanted or wanted not in loaded):
                continue
            if wanted not in loaded:
                raise UserError(f"the dataset has no split '{wanted}'; it has "
                                f"{', '.join(loaded)} (set data.hub_{name}_split)",
                                path=data.train)
            stats = {}
            sentences = _read_any(data, data.train, scheme, stats, split=wanted, loaded=loaded)
            splits[name] = TaggedSplit(name, sentences, f"{data.train}[{wanted}]", "", stats)
    else:
        stats = {}
        sentences = _read_any(data, data.train, scheme, stats, loaded=loaded)
        splits["train"] = TaggedSplit("train", sentences, data.train, _sha256(data.train), stats)
    for name in ("validation", "test"):
        source = getattr(data, name)
        if source:
            stats = {}
            sentences = _read_any(data, source, scheme, stats, name=name)
            splits[name] = TaggedSplit(name, sentences, source, _sha256(source), stats)
    for split in splits.values():
        _canonical(split.sentences, scheme)
        if not split.sentences:
            raise UserError(f"the {split.name} data holds no sentences", path=split.source)
    if for_training and "validation" not in splits:
        splits["train"], splits["validation"] = _carve(splits["train"],
                                                       data.validation_fraction, seed)
    return splits, scheme


# ----------------------------------------------------------------------------
# Vocabularies
# ----------------------------------------------------------------------------


def _usable(token):
    # Vocabulary files hold one entry per line: an entry with a line break cannot be
    # written, so such a token (possible only in JSON input) stays out (maps to OOV).
    return "\n" not in token and "\r" not in token


@dataclasses.dataclass
class Vocabularies:
    """Word, char and tag ids of a run, and how tokens are normalised before lookup."""

    words: list  # id → word; 0 padding, 1 OOV
    chars: list  # id → char; 0 padding, 1 OOV
    tags: list  # id → tag (entity tags in BIO)
    scheme: str  # the input scheme ("BIO", "IOB1", "BIOES"), or "none" for free tags
    lowercase: bool = False
    char_lowercase: bool = False
    max_word_length: int = 20

    def __post_init__(self):
        self._word_index = {w: i for i, w in enumerate(self.words)}
        self._char_index = {c: i for i, c in enumerate(self.chars)}
        self._tag_index = {t: i for i, t in enumerate(self.tags)}

    @property
    def entity(self):
        """bool, whether the tags are entity tags (BIO inside) or free labels."""
        return self.scheme != "none"

    def word_id(self, token):
        return self._word_index.get(token.lower() if self.lowercase else token, 1)

    def char_ids(self, token):
        text = token.lower() if self.char_lowercase else token
        return [self._char_index.get(c, 1) for c in text[: self.max_word_length]]

    def tag_id(self, tag):
        return self._tag_index[tag]

    def save(self, run_dir):
        run_dir = Path(run_dir)
        for name in ("words", "chars", "tags"):
            write_text_atomic(run_dir / f"{name}.txt", "\n".join(getattr(self, name)) + "\n")
        settings = {"scheme": self.scheme, "lowercase": self.lowercase,
                    "char_lowercase": self.char_lowercase,
                    "max_word_length": self.max_word_length, "format": 1}
        write_text_atomic(run_dir / "tagging.json", json.dumps(settings, indent=1,
                                                               sort_keys=True) + "\n")

    @classmethod
    def load(cls, run_dir):
        run_dir = Path(run_dir)
        try:
            settings = json.loads((run_dir / "tagging.json").read_text(encoding="utf-8"))
            lists = {name: (run_dir / f"{name}.txt").read_text(encoding="utf-8")
                     .split("\n")[:-1] for name in ("words", "chars", "tags")}
        except (OSError, ValueError) as err:
            raise UserError(f"the run's vocabulary files are missing or damaged ({err}); "
                            "expected words.txt, chars.txt, tags.txt and tagging.json",
                            path=run_dir) from None
        return cls(lists["words"], lists["chars"], lists["tags"], settings["scheme"],
                   settings["lowercase"], settings["char_lowercase"],
                   settings["max_word_length"])


def tag_list(train_tags, entity):
    """The tag set: `O` + B-/I- of each type seen in train (entity), or sorted labels."""
    seen = {t for tags in train_tags for t in tags}
    if not entity:
        return sorted(seen)
    types = sorted({t[2:] for t in seen if t != "O"})
    return ["O"] + [f"{p}-{t}" for t in types for p in "BI"]


def build_vocabularies(cfg, train_sentences, scheme):
    """Builds the word, char and tag vocabularies on the training sentences only."""
    words = Counter()
    chars = Counter()
    for sentence in train_sentences:
        for token in sentence["tokens"]:
            words[token.lower() if cfg.vocabulary.lowercase else token] += 1
            chars.update((token.lower() if cfg.chars.lowercase else token)
                         [: cfg.chars.max_word_length])
    ranked = sorted((w for w, n in words.items()
                     if n >= cfg.vocabulary.min_count and _usable(w)),
                    key=lambda w: (-words[w], w))
    ranked = ranked[: max(cfg.vocabulary.max_words - 2, 0)]
    char_list = sorted((c for c in chars if _usable(c)), key=lambda c: (-chars[c], c))
    tags = tag_list([s["tags"] for s in train_sentences], scheme is not None)
    return Vocabularies([PAD, OOV] + ranked, [PAD, OOV] + char_list, tags,
                        scheme or "none", cfg.vocabulary.lowercase, cfg.chars.lowercase,
                        cfg.chars.max_word_length), words


def check_known_tags(splits, vocab):
    """Validation/test tags the training split never had are an error (file:line)."""
    known = set(vocab.tags)
    for name in ("validation", "test"):
        split = splits.get(name)
        if split is None:
            continue
        for sentence in split.sentences:
            for position, tag in enumerate(sentence["tags"]):
                if tag not in known:
                    path, line = _where(sentence["source"])
                    shown = tag[2:] if vocab.entity else tag
                    what = "entity type" if vocab.entity else "tag"
                    raise UserError(f"{what} '{shown}' (token {position + 1} of the sentence "
                                    f"starting here) never appears in the training "
                                    f"data ({name} split), so the model cannot learn it",
                                    path=path, line=line)


# ----------------------------------------------------------------------------
# Encoding
# ----------------------------------------------------------------------------


def encode(vocab, token_lists, with_chars, tag_lists=None):
    """Ragged id tensors of sentences.

    Args:
        vocab: Vocabularies.
        token_lists: list of lists of str.
        with_chars: bool, add the char ids [sentences, words, chars].
        tag_lists: list of lists of str (BIO for entity tags), or None.

    Returns:
        (features, targets or None, lengths): features is the ragged word ids, or
        with chars a dict {"words", "chars"}.
    """
    import numpy as np
    import tensorflow as tf

    lengths = np.array([len(t) for t in token_lists], np.int64)
    flat = [vocab.word_id(tok) for tokens in token_lists for tok in tokens]
    words = tf.RaggedTensor.from_row_lengths(np.asarray(flat, np.int32), lengths)
    features = words
    if with_chars:
        char_rows = [vocab.char_ids(tok) for tokens in token_lists for tok in tokens]
        char_lengths = np.array([len(r) for r in char_rows], np.int64)
        values = np.fromiter((c for row in char_rows for c in row), np.int32,
                             count=int(char_lengths.sum()))
        chars = tf.RaggedTensor.from_nested_row_lengths(values, [lengths, char_lengths])
        features = {"words": words, "chars": chars}
    targets = None
    if tag_lists is not None:
        ids = np.asarray([vocab.tag_id(t) for tags in tag_lists for t in tags], np.int32)
        targets = tf.RaggedTensor.from_row_lengths(ids, lengths)
    return features, targets, lengths


_TAGGING_FUNCTIONS = {}  # (id(model), with chars) → (weak reference to the model, function)


def _tagging_function(model, features):
    """A compiled step that tags one padded batch, traced once for any batch shape.

    `model.predict_on_batch` traces again for each new batch shape (length-sorted
    batches all differ); this function has a shape-free input signature instead.
    """
    import tensorflow as tf

    key = (id(model), isinstance(features, dict))
    cached = _TAGGING_FUNCTIONS.get(key)
    if cached is not None and cached[0]() is model:
        return cached[1]
    words = tf.TensorSpec((None, None), tf.int32, name="words")
    if isinstance(features, dict):
        spec = {"words": words, "chars": tf.TensorSpec((None, None, None), tf.int32,
                                                       name="chars")}
    else:
        spec = words
    function = tf.function(lambda x: model.predict_step((x,)), input_signature=[spec],
                           reduce_retracing=True)
    _TAGGING_FUNCTIONS[key] = (weakref.ref(model), function)
    return function


def predict_tag_ids(model, features, lengths, batch_size=256):
    """Tag ids of every sentence (list of int arrays), in length-sorted batches.

    Args:
        model: a SequenceTagger.
        features: ragged word ids, or a dict {"words", "chars"} of ragged ids (see
            `encode`).
        lengths: array of int, the number of words of each sentence.
        batch_size: int, sentences per batch. Default 256.
    """
    import numpy as np

    from elman.core.batching import dataset_from_plan, plan_eval

    plan = plan_eval(lengths, batch_size)
    out = [None] * len(lengths)
    step = _tagging_function(model, features)
    for indices, batch in zip(plan, dataset_from_plan(features, None, plan)):
        ids = np.asarray(step(batch))
        for row, index in enumerate(indices):
            out[index] = ids[row, : lengths[index]]
    return out


# ----------------------------------------------------------------------------
# Model
# ----------------------------------------------------------------------------


def _constraint(cfg, vocab):
    if cfg.head.type != "crf" or cfg.head.constraint == "none":
        return None
    if cfg.head.constraint == "BIO" and not vocab.entity:
        raise UserError("head.constraint = \"BIO\" needs entity tags (O, B-X, I-X); these "
                        "tags are free labels: use head.constraint = \"auto\" or \"none\"")
    return "BIO" if vocab.entity else None


def build_model(cfg, vocab):
    """A compiled SequenceTagger for the config and vocabularies."""
    import keras

    from elman.models.sequence_tagger import SequenceTagger

    chars = cfg.chars.features
    model = SequenceTagger(
        len(vocab.words), len(vocab.tags), embedding_dim=cfg.embedding.dim,
        cell=cfg.encoder.cell, units=cfg.encoder.units, num_layers=cfg.encoder.num_layers,
        bidirectional=cfg.encoder.bidirectional, dropout=cfg.encoder.dropout,
        recurrent_dropout=cfg.encoder.recurrent_dropout,
        head=cfg.head.type, char_features=chars,
        char_vocabulary_size=len(vocab.chars) if chars != "none" else None,
        char_embedding_dim=cfg.chars.embedding_dim, char_units=cfg.chars.units,
        tag_names=vocab.tags, constraint=_constraint(cfg, vocab),
        embedding_trainable=cfg.embedding.trainable, word_dropout=cfg.embedding.word_dropout,
        name="sequence_tagger")
    from elman.core.train import adam
    model.compile(
        optimizer=adam(cfg.train),
        metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
    return model


def describe_model(cfg, params=None):
    enc = cfg.encoder
    chars = "no char features" if cfg.chars.features == "none" else (
        f"char {'BiLSTM' if cfg.chars.features == 'lstm' else 'CNN'}({cfg.chars.units})")
    text = (f"word embedding {cfg.embedding.dim} + {chars} → {enc.num_layers}×"
            f"{'Bi' if enc.bidirectional else ''}{enc.cell.upper()}({enc.units}) → "
            f"{cfg.head.type.upper() if cfg.head.type == 'crf' else 'softmax'}")
    return text + (f", {params:,} parameters" if params is not None else "")


# ----------------------------------------------------------------------------
# Tagging with a saved run
# ----------------------------------------------------------------------------


class Tagger:
    """A saved run, ready to tag: `Tagger(run_dir).tag([["Apple", "opened", ...]])`.

    Args:
        run_dir: str or Path, the run folder (model.keras and the vocabulary files).
    """

    def __init__(self, run_dir):
        from elman.core import runs

        runs.read_run(run_dir, TASK)
        self.run_dir = Path(run_dir)
        self.vocab = Vocabularies.load(run_dir)
        self.model = runs.load_model(run_dir)
        self.with_chars = self.model.char_features != "none"

    def tag_internal(self, token_lists, batch_size=256):
        """Tags (BIO for entity tags) of each sentence."""
        features, _, lengths = encode(self.vocab, token_lists, self.with_chars)
        ids = predict_tag_ids(self.model, features, lengths, batch_size)
        return [[self.vocab.tags[i] for i in row] for row in ids]

    def tag(self, token_lists, batch_size=256):
        """Tags of each sentence in the run's input scheme (BIO, IOB1, BIOES or free)."""
        return [to_output(tags, self.vocab.scheme)
                for tags in self.tag_internal(token_lists, batch_size)]


def to_output(bio_tags, scheme):
    """BIO tags → the input's scheme (free tags are returned unchanged)."""
    if scheme == "none":
        return list(bio_tags)
    return tag_schemes.from_bio(list(bio_tags), scheme)


def _is_cjk(text):
    return any("\u2e80" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff" or "\uff00" <= c <= "\uffef"
               or "\U00020000" <= c <= "\U0002ffff" for c in text)


def join_tokens(tokens):
    """Tokens as text: spaces between words, none between CJK characters."""
    out = ""
    for i, token in enumerate(tokens):
        if i and not (_is_cjk(tokens[i - 1][-1:]) and _is_cjk(token[:1])):
            out += " "
        out += token
    return out


def _offsets(text, tokens):
    offsets, cursor = [], 0
    for token in tokens:
        start = text.find(token, cursor)
        if start < 0:
            return None
        offsets.append((start, start + len(token)))
        cursor = start + len(token)
    return offsets


def entities_of(tokens, bio_tags, text=None):
    """Entities as dicts {type, start, end (exclusive, tokens), text}."""
    offsets = _offsets(text, tokens) if text is not None else None
    out = []
    for type_, start, end in tag_schemes.bio_spans(bio_tags):
        if offsets:
            surface = text[offsets[start][0]: offsets[end - 1][1]]
        else:
            surface = join_tokens(tokens[start:end])
        out.append({"type": type_, "start": start, "end": end, "text": surface})
    return out


def predict(run_dir, texts):
    """Tags raw texts with a saved run.

    Returns:
        list of dicts {"text", "tokens", "tags" (the input's scheme), "entities"}.
    """
    from elman.tasks.tagging.data import split_raw_text

    token_lists = []
    for i, text in enumerate(texts, start=1):
        tokens = split_raw_text(text)
        if not tokens:
            raise UserError(f"text {i} is empty; expected some text to tag")
        token_lists.append(tokens)
    tagger = Tagger(run_dir)
    internal = tagger.tag_internal(token_lists)
    out = []
    for text, tokens, tags in zip(texts, token_lists, internal):
        out.append({"text": text, "tokens": tokens, "tags": to_output(tags, tagger.vocab.scheme),
                    "entities": entities_of(tokens, tags, text) if tagger.vocab.entity else []})
    return out


def predict_cli(run_dir, texts, args):
    """`elman predict RUN TEXT...`: tokens with their tags and the grouped entities."""
    results = predict(run_dir, texts)
    entity = Vocabularies.load(run_dir).entity
    fmt = getattr(args, "format", "text")
    for number, result in enumerate(results):
        if fmt == "json":
            print(json.dumps(result, ensure_ascii=False))
        elif fmt == "conll":
            if number:
                print()
            for token, tag in zip(result["tokens"], result["tags"]):
                print(f"{token}\t{tag}")
        else:
            print(" ".join(f"{tok}/{tag}" for tok, tag in zip(result["tokens"], result["tags"])))
            for entity in result["entities"]:
                where = (f"token {entity['end']}" if entity["end"] - entity["start"] == 1
                         else f"tokens {entity['start'] + 1}-{entity['end']}")
                print(f"  {entity['type']}\t{entity['text']}\t({where})")
            if not result["entities"] and entity:
                print("  (no entities)")
    return 0


# ----------------------------------------------------------------------------
# Scoring
# ----------------------------------------------------------------------------


def _tag_order(tags):
    def key(tag):
        if tag == "O":
            return ("", 0)
        if _entity_like([tag]):
            return (tag[2:], "BIES".index(tag[0]) + 1)
        return (tag, 0)

    return sorted(tags, key=key)


def _free_scores(gold, predicted):
    support, right, confusion, predicted_counts = Counter(), Counter(), {}, Counter()
    for gold_tags, predicted_tags in zip(gold, predicted):
        for position, tag in enumerate(gold_tags):
            guess = predicted_tags[position] if position < len(predicted_tags) else None
            support[tag] += 1
            right[tag] += guess == tag
            predicted_counts[guess] += 1
            confusion.setdefault(tag, Counter())[guess] += 1
    tokens = sum(support.values())
    per_tag = []
    for tag in sorted(support, key=lambda t: (-support[t], t)):
        precision = right[tag] / predicted_counts[tag] if predicted_counts[tag] else 0.0
        recall = right[tag] / support[tag]
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_tag.append({"class": tag, "accuracy": recall, "precision": precision,
                        "recall": recall, "f1": f1, "support": support[tag],
                        "predicted": predicted_counts[tag]})
    scores = {"token_accuracy": sum(right.values()) / tokens if tokens else 0.0,
              "tokens": tokens, "correct_tokens": sum(right.values()),
              "sentences": len(gold)}
    return scores, per_tag, {k: dict(v) for k, v in confusion.items()}


def score_split(split_name, sentences, predicted_bio, scheme):
    """Scores predictions of one split (every gold position) → EvalResult.

    Args:
        split_name: str.
        sentences: list of {"tokens", "tags" (BIO for entity tags), "source"}.
        predicted_bio: list of lists of str, predicted tags (BIO for entity tags).
        scheme: str, the input scheme ("BIO", "IOB1", "BIOES") or "none".
    """
    from elman.core.evaluate import EvalResult
    from elman.tasks.tagging.metrics import entity_errors, evaluate_tagging

    tokens = [s["tokens"] for s in sentences]
    gold = [to_output(s["tags"], scheme) for s in sentences]
    predicted = [to_output(p, scheme) for p in predicted_bio]
    extra = {"gold": gold, "predicted": predicted, "tokens": tokens}
    if scheme == "none":
        scores, per_class, confusion = _free_scores(gold, predicted)
        main = "token_accuracy"
    else:
        result = evaluate_tagging(gold, predicted)
        d = result.as_dict()
        scores = {"f1": d["f1"], "precision": d["precision"], "recall": d["recall"],
                  "token_accuracy": d["token_accuracy"], "tokens": d["tokens"],
                  "correct_tokens": d["correct_tokens"], "sentences": d["sentences"],
                  "gold_entities": d["gold_entities"],
                  "predicted_entities": d["predicted_entities"],
                  "correct_entities": d["correct_entities"]}
        per_class = [{"class": t, "precision": v["precision"], "recall": v["recall"],
                      "f1": v["f1"], "support": v["gold"], "predicted": v["predicted"],
                      "correct": v["correct"]} for t, v in d["per_type"].items()]
        confusion = {g: {str(p): n for p, n in row.items()} for g, row in
                     result.confusion.items()}
        extra["errors"] = entity_errors(gold, predicted, tokens)
        extra["fraction"] = {"f1": str(result.f1), "precision": str(result.precision),
                             "recall": str(result.recall),
                             "token_accuracy": str(result.token_accuracy)}
        main = "f1"
    labels = _tag_order({t for tags in gold + predicted for t in tags})
    index = {t: i for i, t in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for g, row in confusion.items():
        for p, n in row.items():
            if p in index:
                matrix[index[g]][index[p]] += n
    extra.update(labels=labels, confusion=matrix)
    examples = []
    for sentence, g, p in zip(sentences, gold, predicted):
        wrong = sum(a != b for a, b in zip(g, p))
        examples.append({"where": sentence["source"], "sentence": join_tokens(sentence["tokens"]),
                         "gold": " ".join(g), "predicted": " ".join(p), "wrong_tags": wrong,
                         "correct": wrong == 0})
    return EvalResult(TASK, split_name, main, scores, per_class, examples, extra)


# ----------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------

ERROR_KINDS = (("missed", "missed (gold entity, nothing predicted over it)"),
               ("spurious", "spurious (predicted, no gold entity there)"),
               ("wrong_type", "wrong type (same span, other type)"),
               ("wrong_boundary", "wrong boundary (overlapping span, other first/last token)"))
SHOWN_ERRORS = 15


def _entity_text(entity, tokens):
    return f"{join_tokens(tokens[entity['start']:entity['end']])} [{entity['type']}]"


def error_rows(result, sentences):
    """Every entity error of a result as rows (kind, where, gold, predicted, sentence)."""
    rows = []
    for entry in result.extra.get("errors", []):
        tokens = sentences[entry["sentence"]]["tokens"]
        where = sentences[entry["sentence"]]["source"]
        text = join_tokens(tokens)
        for kind, _ in ERROR_KINDS:
            for item in entry[kind]:
                if kind == "missed":
                    gold, pred = _entity_text(item, tokens), "-"
                elif kind == "spurious":
                    gold, pred = "-", _entity_text(item, tokens)
                else:
                    gold = _entity_text(item["gold"], tokens)
                    pred = _entity_text(item["predicted"], tokens)
                rows.append({"kind": kind, "where": where, "gold": gold, "predicted": pred,
                             "sentence": text})
    return rows


def _errors_section(result, sentences, report_dir):
    md = ["### Entity errors"]
    rows = error_rows(result, sentences)
    counts = Counter(r["kind"] for r in rows)
    md.append(rep.md_table(["kind", "count"], [(label, counts[k]) for k, label in ERROR_KINDS]))
    for kind, label in ERROR_KINDS:
        chosen = [r for r in rows if r["kind"] == kind][:SHOWN_ERRORS]
        if not chosen:
            continue
        md.append(f"**{label}**" + (f" — first {SHOWN_ERRORS} of {counts[kind]}"
                                    if counts[kind] > SHOWN_ERRORS else ""))
        md.append(rep.md_table(["gold", "predicted", "sentence", "where"],
                               [(r["gold"], r["predicted"], r["sentence"][:200], r["where"])
                                for r in chosen]))
    rep.write_predictions(report_dir / f"errors_{result.split}.tsv", rows)
    md.append(f"Every error: `errors_{result.split}.tsv`.")
    return "\n\n".join(md)


def _confusions_section(result, sentences):
    pairs = Counter()
    example = {}
    for sentence, g, p in zip(sentences, result.extra["gold"], result.extra["predicted"]):
        for position, (a, b) in enumerate(zip(g, p)):
            if a != b:
                pairs[(a, b)] += 1
                example.setdefault((a, b), (sentence, position))
    rows = []
    for (a, b), n in pairs.most_common(SHOWN_ERRORS):
        sentence, position = example[(a, b)]
        tokens = list(sentence["tokens"])
        tokens[position] = f"**{tokens[position]}**"
        rows.append((a, b, n, join_tokens(tokens)[:200], sentence["source"]))
    return "\n\n".join(["### Most frequent tag errors",
                        rep.md_table(["gold", "predicted", "count", "example", "where"], rows)
                        if rows else "(none)"])


def _result_section(result, sentences, report_dir):
    s = result.scores
    md = [f"## {result.split.capitalize()} results"]
    if result.main_metric == "f1":
        md.append(rep.md_table(
            ["precision", "recall", "F1", "token accuracy", "gold entities",
             "predicted entities", "correct", "sentences", "tokens"],
            [(s["precision"], s["recall"], s["f1"], s["token_accuracy"], s["gold_entities"],
              s["predicted_entities"], s["correct_entities"], s["sentences"], s["tokens"])]))
        md.append("Entity scores as `conlleval` computes them (micro over entities; an entity "
                  "is right when type, first and last token match), over every gold position.")
        md.append("### Per type")
        md.append(rep.md_table(["type", "precision", "recall", "F1", "gold", "predicted",
                                "correct"],
                               [(r["class"], r["precision"], r["recall"], r["f1"], r["support"],
                                 r["predicted"], r["correct"]) for r in result.per_class]))
        if result.per_class:
            png = rep.plot_bars([r["class"] for r in result.per_class],
                                {"precision": [r["precision"] for r in result.per_class],
                                 "recall": [r["recall"] for r in result.per_class],
                                 "F1": [r["f1"] for r in result.per_class]},
                                report_dir / f"per_type_{result.split}.png",
                                f"Per-type scores, {result.split}")
            md.append(f"![per-type scores]({png})")
    else:
        md.append(rep.md_table(["token accuracy", "correct", "tokens", "sentences"],
                               [(s["token_accuracy"], s["correct_tokens"], s["tokens"],
                                 s["sentences"])]))
        md.append("### Per tag")
        md.append(rep.md_table(["tag", "accuracy (recall)", "precision", "F1", "support",
                                "predicted"],
                               [(r["class"], r["accuracy"], r["precision"], r["f1"],
                                 r["support"], r["predicted"]) for r in result.per_class]))
    png = rep.plot_confusion(result.extra["confusion"], result.extra["labels"],
                             report_dir / f"confusion_{result.split}.png",
                             f"Tag confusion, {result.split} (rows: gold)")
    md.append(f"![tag confusion matrix]({png})")
    return "\n\n".join(md)


def write_conll(path, result):
    """Writes `token gold predicted` lines (conlleval's input) in the input's scheme."""
    lines = []
    for tokens, gold, pred in zip(result.extra["tokens"], result.extra["gold"],
                                  result.extra["predicted"]):
        lines.extend(f"{t} {g} {p}" for t, g, p in zip(tokens, gold, pred))
        lines.append("")
    write_text_atomic(path, "\n".join(lines) + ("\n" if lines else ""))


def data_summary(splits, vocab, counts, coverage):
    """The data section: sizes, OOV rates, repaired/ill-formed tags, skipped lines."""
    rows, data = [], {}
    for name, split in splits.items():
        tokens = [t for s in split.sentences for t in s["tokens"]]
        oov = sum(vocab.word_id(t) == 1 for t in tokens)
        entity_tokens = [t for s in split.sentences for t, g in zip(s["tokens"], s["tags"])
                         if g != "O"] if vocab.entity else []
        entity_oov = sum(vocab.word_id(t) == 1 for t in entity_tokens)
        st = split.stats
        skipped = {k: st.get(k, 0) for k in ("docstart_lines", "comment_lines",
                                             "multiword_tokens", "empty_nodes") if st.get(k)}
        info = {"sentences": len(split.sentences), "tokens": len(tokens),
                "oov_tokens": oov, "oov_rate": oov / len(tokens) if tokens else 0.0,
                "entity_tokens": len(entity_tokens),
                "entity_oov_rate": entity_oov / len(entity_tokens) if entity_tokens else 0.0,
                "repaired_tags": st.get("repaired_tags", 0),
                "ill_formed_tags": st.get("ill_formed_tags", 0), "skipped": skipped,
                "source": split.source, "scheme_read": st.get("scheme")}
        if vocab.entity:
            info["entities"] = dict(sorted(Counter(
                e[0] for s in split.sentences for e in tag_schemes.bio_spans(s["tags"])).items()))
        data[name] = info
        skipped_text = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in skipped.items()) or "0"
        if vocab.entity:
            rows.append((name, info["sentences"], info["tokens"],
                         ", ".join(f"{k} {v}" for k, v in info["entities"].items()) or "-",
                         f"{100 * info['oov_rate']:.2f}%", f"{100 * info['entity_oov_rate']:.2f}%",
                         info["repaired_tags"], info["ill_formed_tags"], skipped_text))
        else:
            rows.append((name, info["sentences"], info["tokens"],
                         f"{100 * info['oov_rate']:.2f}%", skipped_text))
    headers = (["split", "sentences", "tokens", "entities", "OOV rate", "OOV in entities",
                "repaired tags", "ill-formed tags (read as conlleval)", "skipped lines"]
               if vocab.entity else ["split", "sentences", "tokens", "OOV rate",
                                     "skipped lines (not words)"])
    kind = (f"entity tags, {vocab.scheme} in the files, BIO inside" if vocab.entity
            else "free labels")
    md = ["## Data",
          rep.md_table(headers, rows),
          f"Vocabulary (train only): {len(vocab.words) - 2:,} words "
          f"({'lower-cased' if vocab.lowercase else 'case kept'}; {sum(counts.values()):,} "
          f"train tokens, {len(counts):,} distinct), {len(vocab.chars) - 2:,} characters, "
          f"{len(vocab.tags)} tags ({kind}). OOV: tokens whose word is not in the vocabulary."]
    if any(i["repaired_tags"] for i in data.values()):
        md.append("Repaired tags: with `--repair-bio`, each `I-X` that did not continue an "
                  "entity of type X was read as `B-X` (the entities `conlleval` reads are "
                  "unchanged).")
    if coverage is not None:
        md.append(f"Pretrained vectors `{coverage.path}` cover {coverage.found:,} of "
                  f"{coverage.vocabulary:,} vocabulary words ({100 * coverage.share:.1f}%; "
                  f"{coverage.found_lowercased:,} only after lower-casing).")
    return "\n\n".join(md), data


# ----------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------


def _check_config(cfg):
    if cfg.encoder.merge_mode != "concat":
        raise UserError("the tagger concatenates the two directions: encoder.merge_mode must "
                        "be \"concat\"")
    if not 0.0 <= cfg.embedding.word_dropout < 1.0:
        raise UserError(f"embedding.word_dropout must be in [0, 1); got "
                        f"{cfg.embedding.word_dropout}")
    if not 0.0 <= cfg.encoder.dropout < 1.0:
        raise UserError(f"encoder.dropout must be in [0, 1); got {cfg.encoder.dropout}")
    for key, value in (("chars.max_word_length", cfg.chars.max_word_length),
                       ("vocabulary.min_count", cfg.vocabulary.min_count),
                       ("vocabulary.max_words", cfg.vocabulary.max_words)):
        if value < 1:
            raise UserError(f"{key} must be at least 1; got {value}")
    if cfg.head.type != "crf" and cfg.head.constraint == "BIO":
        raise UserError("head.constraint applies to the CRF head only (head.type = \"crf\")")


def train(cfg, run_dir, report_dir, resume=False, log=print, diagnose=False):
    """Trains, evaluates, saves and reports one tagging run; returns metrics.json's dict."""
    _check_config(cfg)
    splits, scheme = load_splits(cfg.data, cfg.train.seed)  # fail fast, before TensorFlow
    from elman.core import runtime
    from elman.core import runs
    from elman.core.batching import dataset_from_plan, plan_eval
    from elman.core.train import fit

    run_dir, report_dir = Path(run_dir), Path(report_dir)
    vocab, counts = build_vocabularies(cfg, splits["train"].sentences, scheme)
    if resume and (run_dir / "tagging.json").is_file():
        vocab = Vocabularies.load(run_dir)
    if len(vocab.tags) < 2:
        raise UserError(f"the training data has only one tag ({vocab.tags[0]}); need at least "
                        "two", path=splits["train"].source)
    check_known_tags(splits, vocab)
    strategy = runtime.configure(cfg.train, log)
    run_dir.mkdir(parents=True, exist_ok=True)
    vocab.save(run_dir)
    write_text_atomic(run_dir / "config.toml", config_lib.dumps_toml(cfg))
    write_text_atomic(run_dir / "config.json",
                      json.dumps(config_lib.to_dict(cfg), indent=1, sort_keys=True))
    with_chars = cfg.chars.features != "none"
    encoded = {}
    for name, split in splits.items():
        encoded[name] = encode(vocab, split.tokens, with_chars, split.tags)
    coverage = matrix = None
    if cfg.embedding.pretrained:
        from elman.core.embed import read_pretrained

        matrix, coverage = read_pretrained(cfg.embedding.pretrained, vocab.words,
                                           cfg.embedding.dim, cfg.train.seed)
        log(f"pretrained vectors cover {coverage.found} of {coverage.vocabulary} words "
            f"({100 * coverage.share:.1f}%)")

    def build_and_compile():
        model = build_model(cfg, vocab)
        if matrix is not None:
            model.get_layer("word_embedding").embeddings.assign(matrix)
        return model

    val_x, val_y, val_len = encoded["validation"]
    validation = dataset_from_plan(val_x, val_y, plan_eval(val_len, max(cfg.train.batch_size,
                                                                        64)))
    x, y, lengths = encoded["train"]
    result = fit(build_and_compile, x, y, lengths, validation, cfg.train, run_dir,
                 resume=resume, strategy=strategy, log=log)
    model = result.model
    tmp = run_dir / "model.tmp.keras"
    model.save(tmp)
    tmp.replace(run_dir / "model.keras")

    results = {}
    for name in ("validation", "test"):
        if name in splits:
            features, _, lens = encoded[name]
            ids = predict_tag_ids(model, features, lens)
            predicted = [[vocab.tags[i] for i in row] for row in ids]
            results[name] = score_split(name, splits[name].sentences, predicted, vocab.scheme)
    main = results.get("test", results["validation"])

    report_dir.mkdir(parents=True, exist_ok=True)
    curves = rep.plot_learning_curves(result.history, report_dir / "learning_curves.png")
    data_md, data_info = data_summary(splits, vocab, counts, coverage)
    data_files = [{"split": n, "source": s.source, "sha256": s.sha256} for n, s in splits.items()]
    device = runtime.device_summary(cfg.train, strategy)
    repro_md, repro = rep.reproducibility(config_lib.dumps_toml(cfg), data_files,
                                          cfg.train.seed, device)
    entity = vocab.entity
    tagset = (f"entity types {', '.join(sorted({t[2:] for t in vocab.tags if t != 'O'}))} "
              f"({vocab.scheme} in the files)" if entity else f"{len(vocab.tags)} tags")
    headers = (["split", "precision", "recall", "F1", "token accuracy"] if entity
               else ["split", "token accuracy"])
    table = [((r.split, r.scores["precision"], r.scores["recall"], r.scores["f1"],
               r.scores["token_accuracy"]) if entity else (r.split, r.scores["token_accuracy"]))
             for r in results.values()]
    summary = [
        f"Run `{run_dir}` · task **tagging** · {tagset} · model: "
        f"{describe_model(cfg, model.count_params())}.",
        rep.md_table(headers, table),
        f"Trained {result.epochs_run} epochs (best: epoch {result.best_epoch}"
        f"{', stopped early' if result.stopped_early else ''}); "
        f"{result.tokens_per_second:,.0f} training tokens/s in this process (`elman bench` "
        "compares speeds).",
    ]
    sections = ["## Learning curves", f"![learning curves]({curves})"]
    for r in results.values():
        sections.append(_result_section(r, splits[r.split].sentences, report_dir))
        write_conll(report_dir / f"predictions_{r.split}.conll", r)
    sections.append(f"## Errors ({main.split})")
    if entity:
        sections.append(_errors_section(main, splits[main.split].sentences, report_dir))
    sections.append(_confusions_section(main, splits[main.split].sentences))
    sections.append("`predictions_<split>.conll` hold `token gold predicted` lines in the "
                    f"input's scheme ({vocab.scheme if entity else 'free tags'}), ready for "
                    "`conlleval`; `predictions.tsv` has one row per sentence.")
    body = "\n\n".join(summary + sections + [data_md])
    if diagnose:
        from elman.core.diagnostics import gradient_flow, gradient_flow_markdown, plot_gradient_flow

        flow = gradient_flow(units=cfg.encoder.units, seed=cfg.train.seed)
        plot_gradient_flow(flow, report_dir / "gradient_flow.png")
        body += "\n\n## Gradient flow\n\n" + gradient_flow_markdown(flow)
    body += "\n\n" + repro_md
    finished = datetime.datetime.now().isoformat(timespec="seconds")
    metrics = {
        "task": TASK, "run_id": run_dir.name, "run_dir": str(run_dir), "finished": finished,
        "split": main.split, "main_metric": main.main_metric, "scores": main.scores,
        "results": {n: {"scores": r.scores, "per_class": r.per_class,
                        "labels": r.extra["labels"], "confusion": r.extra["confusion"],
                        "exact": r.extra.get("fraction"),
                        "error_counts": dict(Counter(e["kind"] for e in error_rows(
                            r, splits[n].sentences))) if entity else None}
                    for n, r in results.items()},
        "tags": vocab.tags, "scheme": vocab.scheme, "entity_tags": entity,
        "model": describe_model(cfg, model.count_params()),
        "history": result.history, "best_epoch": result.best_epoch,
        "epochs_run": result.epochs_run, "train_tokens_per_second": result.tokens_per_second,
        "data": data_info,
        "embedding_coverage": None if coverage is None else vars(coverage) | {
            "share": coverage.share},
        "reproducibility": repro,
    }
    rep.write_report(report_dir, f"Tagging report — {run_dir.name}", body, metrics,
                     main.examples)
    runs.write_run_file(run_dir, {"task": TASK, "run_id": run_dir.name,
                                  "report_dir": str(report_dir), "labels": vocab.tags,
                                  "scheme": vocab.scheme, "finished": finished})
    if entity:
        log(f"{main.split} F1 {main.scores['f1']:.4f}  precision {main.scores['precision']:.4f}  "
            f"recall {main.scores['recall']:.4f}  token accuracy "
            f"{main.scores['token_accuracy']:.4f}  report: {report_dir / 'report.md'}")
    else:
        log(f"{main.split} token accuracy {main.scores['token_accuracy']:.4f}  "
            f"report: {report_dir / 'report.md'}")
    return metrics


def evaluate(run_dir, cfg_overrides, report_root=None, log=print):
    """Scores a saved run on a tagged file (default: the run's test, else validation file).

    `cfg_overrides` may hold "data" (a file or dataset folder) and "label_column"
    (the tag column or key). Tags the model never saw are scored, not refused.
    Returns the EvalResult.
    """
    from elman.core import runs

    runs.read_run(run_dir, TASK)
    saved = json.loads((Path(run_dir) / "config.json").read_text(encoding="utf-8"))
    cfg = config_lib.config_from_dict(TASK, saved)
    path = cfg_overrides.get("data") or cfg.data.test or cfg.data.validation
    if not path:
        raise UserError("give a tagged file to evaluate on with --data FILE")
    # a dataset dict (folder or hub) is scored on its test split, else its validation split
    data = dataclasses.replace(cfg.data, train=path, validation="", test="",
                               hub_train_split=cfg.data.hub_test_split
                               or cfg.data.hub_validation_split,
                               hub_validation_split="", hub_test_split="")
    if cfg_overrides.get("label_column"):
        data = dataclasses.replace(data, tag_column=str(cfg_overrides["label_column"]))
    if cfg_overrides.get("text_column"):
        data = dataclasses.replace(data, tokens_column=str(cfg_overrides["text_column"]))
    tagger = Tagger(run_dir)
    splits, _ = load_splits(data, scheme=tagger.vocab.scheme, for_training=False)
    split = splits["train"]
    predicted = tagger.tag_internal(split.tokens)
    result = score_split("evaluation", split.sentences, predicted, tagger.vocab.scheme)
    s = result.scores
    if tagger.vocab.entity:
        log(f"{path}: F1 {s['f1']:.4f}  precision {s['precision']:.4f}  recall "
            f"{s['recall']:.4f}  token accuracy {s['token_accuracy']:.4f}  "
            f"({s['sentences']} sentences)")
    else:
        log(f"{path}: token accuracy {s['token_accuracy']:.4f}  ({s['sentences']} sentences)")
    return result


# ----------------------------------------------------------------------------
# Benchmark
# ----------------------------------------------------------------------------


def _bench_one(cfg, splits, scheme, head, train_steps, log):
    import keras

    from elman.core.batching import dataset_from_plan, plan_epoch

    cfg = config_lib.load_config(TASK, None, [f"head.type={head}"], extra=config_lib.to_dict(cfg))
    keras.utils.set_random_seed(cfg.train.seed)
    vocab, _ = build_vocabularies(cfg, splits["train"].sentences, scheme)
    with_chars = cfg.chars.features != "none"
    x, y, lengths = encode(vocab, splits["train"].tokens, with_chars, splits["train"].tags)
    model = build_model(cfg, vocab)
    plan = plan_epoch(lengths, cfg.train.batch_size, cfg.train.seed, 0, cfg.train.bucketing)
    steps = min(train_steps, len(plan))
    # the same tf.data pipeline and fit() as real training; a short fit first traces
    model.fit(dataset_from_plan(x, y, plan[:3]), epochs=1, shuffle=False, verbose=0)
    timed = dataset_from_plan(x, y, plan[:steps])
    began = time.perf_counter()
    model.fit(timed, epochs=1, shuffle=False, verbose=0)
    train_seconds = time.perf_counter() - began
    tokens = int(sum(lengths[i].sum() for i in plan[:steps]))
    val = splits["validation"]
    repeat = max(1, 400 // len(val.sentences))  # at least ~400 sentences per timing
    features, _, val_lengths = encode(vocab, val.tokens * repeat, with_chars)
    predict_tag_ids(model, features, val_lengths)  # warm-up (tracing)
    timings = []
    for _ in range(3):
        began = time.perf_counter()
        predict_tag_ids(model, features, val_lengths)
        timings.append(time.perf_counter() - began)
    tag_seconds = min(timings)
    row = {"head": head, "char_features": cfg.chars.features,
           "model": describe_model(cfg, model.count_params()),
           "train_tokens_per_second": tokens / train_seconds,
           "train_tokens_timed": tokens, "train_batch_size": cfg.train.batch_size,
           "tag_sentences_per_second": len(val_lengths) / tag_seconds,
           "tag_sentences_timed": len(val_lengths), "tag_batch_size": 256}
    log(f"  {head:7s} train {row['train_tokens_per_second']:9,.0f} tokens/s   "
        f"tag {row['tag_sentences_per_second']:8,.0f} sentences/s")
    return row


def benchmark(quick=False, log=print):
    """Training tokens/s and tagging sentences/s, softmax vs CRF, side by side.

    Each data set is timed with both heads in one process with the same settings
    (the preset's, only `head.type` differs): one `fit` epoch over the same batches
    (after a short traced warm-up fit), and tagging the validation set (repeated to
    at least ~400 sentences; batches of 256) after a warm-up pass, best of three.

    Args:
        quick: bool, the toy English data only; otherwise also UD English EWT
            (../shared/data/ud_english_ewt, skipped with a note when missing).
        log: callable for progress lines.

    Returns:
        dict with "machine" and "datasets": name → {"rows": [one per head],
        "crf_over_softmax": {"train": ratio, "tag": ratio}} (or {"skipped": why}).
    """
    from elman.core import runtime

    presets = [("toy-en", "default", 40)]
    if not quick:
        presets.append(("ud-ewt-upos", "ud-pos", 60))
    out = {"quick": quick, "datasets": {}}
    for name, preset, steps in presets:
        cfg = config_lib.load_config(TASK, config_lib.preset_path(TASK, preset))
        cfg = dataclasses.replace(cfg, data=dataclasses.replace(
            cfg.data, train=str(ROOT / cfg.data.train) if not Path(cfg.data.train).is_absolute()
            else cfg.data.train,
            validation=str(ROOT / cfg.data.validation) if cfg.data.validation else "",
            test=""))
        if not Path(cfg.data.train).exists():
            out["datasets"][name] = {"skipped": f"{cfg.data.train} not found"}
            log(f"{name}: skipped ({cfg.data.train} not found)")
            continue
        runtime.configure(cfg.train, log)
        splits, scheme = load_splits(cfg.data, cfg.train.seed)
        log(f"{name}: {len(splits['train'].sentences)} train sentences, "
            f"{len(splits['validation'].sentences)} tagged")
        rows = [_bench_one(cfg, splits, scheme, head, steps, log) for head in ("softmax", "crf")]
        ratio = {"train": rows[1]["train_tokens_per_second"] / rows[0]["train_tokens_per_second"],
                 "tag": rows[1]["tag_sentences_per_second"] / rows[0]["tag_sentences_per_second"]}
        log(f"  CRF / softmax: training {ratio['train']:.2f}×, tagging {ratio['tag']:.2f}×")
        out["datasets"][name] = {"rows": rows, "crf_over_softmax": ratio}
        out["machine"] = runtime.device_summary(cfg.train)
    return out


def benchmark_markdown(result):
    """The benchmark result as a Markdown table."""
    rows = []
    for name, entry in result["datasets"].items():
        if "skipped" in entry:
            rows.append((name, "-", entry["skipped"], "-", "-"))
            continue
        for row in entry["rows"]:
            rows.append((name, row["head"], row["model"], f"{row['train_tokens_per_second']:,.0f}",
                         f"{row['tag_sentences_per_second']:,.0f}"))
    machine = result.get("machine", {})
    return (rep.md_table(["data", "head", "model", "training tokens/s", "tagging sentences/s"],
                         rows)
            + f"\n\nMachine: {machine.get('device', '?')}, {machine.get('cpu_count', '?')} CPUs, "
              f"{machine.get('intra_op_threads', '?')} intra-op threads.")
