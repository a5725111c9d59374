"""Translation: sentence pairs → source/target tokenizers → Seq2SeqTranslator → BLEU report.

`train` reads the pairs (TSV, two aligned files, JSONL or a Hugging Face dataset),
filters and de-duplicates the training pairs (counted in the report), fits one
tokenizer per side on train only (the target one with the reserved start and end
tokens), trains `elman.models.seq2seq_translator.Seq2SeqTranslator` with teacher forcing
and the house training loop, exports the run (the model, the tokenizers and a
SavedModel that maps a batch of source strings to translated strings), decodes the
evaluation splits with the compiled batched decoders and writes the report: corpus
BLEU and chrF (sacrebleu), exact match, length ratio, BLEU by source length, sample
translations, attention heatmaps and learning curves.

A run folder holds everything `translate_cli` and `evaluate` need:
`model.keras` (the Seq2SeqTranslator, ids in, ids out), `tokenizers.json` (both
tokenizers' settings and vocabularies, the start/end tokens, the decoding settings),
`source_vocabulary.txt`/`target_vocabulary.txt`, `config.toml`/`config.json`,
`saved_model/` (strings in, strings out) and `run.json`.
"""

import dataclasses
import datetime
import json
import math
import random
import sys
import time
from pathlib import Path

from elman import config as config_lib
from elman.config import TokenizerConfig, TrainConfig
from elman.errors import UserError
from elman.core import report as rep
from elman.core.html import write_text_atomic

TASK = "translation"
START, END = "<s>", "</s>"  # reserved target tokens: ids 2 and 3
FORMATS = ("auto", "tsv", "parallel", "jsonl", "hub")


# --------------------------------------------------------------------------- config


@dataclasses.dataclass(frozen=True)
class TranslationDataConfig:
    """Where the sentence pairs come from and which of them are kept for training."""

    train: str = ""  # training pairs: a file, SRC_FILE,TGT_FILE (parallel) or hub:NAME
    validation: str = ""  # validation pairs; empty: carve `validation_fraction` off train
    test: str = ""  # test pairs; empty: no test split (the report uses validation)
    format: str = "auto"  # auto (from the name), tsv, parallel, jsonl or hub
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


@dataclasses.dataclass(frozen=True)
class SourceTokenizerConfig(TokenizerConfig):
    """The source side's tokenizer (TokenizerConfig with source defaults)."""

    level: str = "word"  # source words (cjk for a Chinese source)
    max_length: int = 100  # longest source the encoder sees (longer ones are truncated)


@dataclasses.dataclass(frozen=True)
class TargetTokenizerConfig(TokenizerConfig):
    """The target side's tokenizer (TokenizerConfig with target defaults)."""

    level: str = "cjk"  # Chinese characters one by one (word for French, English, ...)
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

    task: str = "translation"  # the task name
    data: TranslationDataConfig = TranslationDataConfig()
    source_tokenizer: SourceTokenizerConfig = SourceTokenizerConfig()
    target_tokenizer: TargetTokenizerConfig = TargetTokenizerConfig()
    model: TranslationModelConfig = TranslationModelConfig()
    decoding: DecodingConfig = DecodingConfig()
    eval: TranslationEvalConfig = TranslationEvalConfig()
    train: TranslationTrainConfig = TranslationTrainConfig()


_TOKENIZER_CHOICES = {"level": ("cjk", "word", "char"),
                      "punctuation": ("split", "strip", "keep"),
                      "truncation": ("post", "pre")}
config_lib.register(TASK, TranslationConfig, choices={
    "data.format": FORMATS,
    "model.cell": ("lstm", "gru"),
    "model.attention": ("none", "bahdanau", "luong"),
    "model.bridge": ("concat", "sum"),
    "model.combine": ("residual", "tanh"),
    "eval.bleu_tokenize": ("auto", "13a", "zh", "intl", "char", "none"),
    **{f"{side}.{key}": allowed for side in ("source_tokenizer", "target_tokenizer")
       for key, allowed in _TOKENIZER_CHOICES.items()},
})


# ----------------------------------------------------------------------------- data


@dataclasses.dataclass
class PairSplit:
    """The pairs of one split and what reading and filtering did to them."""

    name: str
    pairs: list  # {"source", "target", "where"} dicts
    source: str  # file(s) or hub name, for the report
    sha256: str = ""
    counts: dict = dataclasses.field(default_factory=dict)  # read, bad_rows, too_long, ...

    @property
    def sources(self):
        return [p["source"] for p in self.pairs]

    @property
    def targets(self):
        return [p["target"] for p in self.pairs]


def detect_format(path, fmt="auto"):
    """The pair format of `path`: tsv, parallel, jsonl or hub."""
    if fmt not in FORMATS:
        raise UserError(f"data.format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    if fmt != "auto":
        return fmt
    text = str(path)
    if text.startswith("hub:"):
        return "hub"
    if "," in text:
        return "parallel"
    if text.lower().endswith((".jsonl", ".json")):
        return "jsonl"
    return "tsv"


def _parallel_paths(path, data):
    """`SRC,TGT` or a prefix `P` (files `P.<source_lang>` and `P.<target_lang>`)."""
    text = str(path)
    if "," in text:
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 2 or not all(parts):
            raise UserError("expected two aligned files as SOURCE_FILE,TARGET_FILE", path=text)
        first, second = parts
    else:
        first, second = f"{text}.{data.source_lang}", f"{text}.{data.target_lang}"
        return first, second  # named by language: reverse is already in the codes
    return (second, first) if data.reverse else (first, second)


def _sha256(paths):
    from elman.core.data import sha256_of

    return " ".join(sha256_of(p) for p in paths)


def _jsonl_is_positional(path):
    """True when the first row uses source/target keys (reverse swaps them)."""
    from elman.tasks.translation.data import _read_lines

    for line in _read_lines(path):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                return True
            return not (isinstance(row, dict) and "translation" in row)
    return True


def _check_aligned(source_path, target_path):
    """Two aligned files must have as many lines; names the first line without a partner."""
    from elman.tasks.translation.data import _read_lines

    counts = {p: len(_read_lines(p)) for p in (source_path, target_path)}
    if counts[source_path] != counts[target_path]:
        longer, shorter = sorted((source_path, target_path), key=lambda p: -counts[p])
        raise UserError(
            f"line {counts[shorter] + 1} has no partner: {longer} has {counts[longer]} lines "
            f"but {shorter} has {counts[shorter]}; the two files must be aligned line by line",
            path=longer, line=counts[shorter] + 1)


def read_pair_file(path, data, name):
    """Reads one split of pairs from a file (or two aligned files) as a PairSplit."""
    from elman.tasks.translation import data as pairs_data

    fmt = detect_format(path, data.format)
    counts = {}
    kwargs = {"skip_bad_rows": data.skip_bad_rows, "counts": counts}
    if fmt == "hub":
        raise UserError("hub datasets are read with data.train = \"hub:NAME\"", path=path)
    if fmt == "tsv":
        pairs = pairs_data.read_tsv_pairs(path, reverse=data.reverse, **kwargs)
        files = [path]
    elif fmt == "parallel":
        files = list(_parallel_paths(path, data))
        _check_aligned(*files)
        pairs = pairs_data.read_parallel_files(files[0], files[1], **kwargs)
    else:
        files = [path]
        pairs = pairs_data.read_jsonl_pairs(path, data.source_lang, data.target_lang, **kwargs)
        if data.reverse and _jsonl_is_positional(path):
            pairs = [dict(p, source=p["target"], target=p["source"]) for p in pairs]
    counts = {"read": len(pairs) + counts.get("bad_rows", 0),
              "bad_rows": counts.get("bad_rows", 0),
              "bad_row_examples": counts.get("bad_row_examples", [])}
    return PairSplit(name, pairs, ",".join(map(str, files)), _sha256(files), counts)


def _load_hub(data):
    import os

    from elman.tasks.translation import data as pairs_data
    from elman.core.data import hub_offline

    name = data.train[4:]
    offline = hub_offline()
    try:
        import datasets

        if offline:
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["HF_DATASETS_OFFLINE"] = "1"
        loaded = datasets.load_dataset(name, data.hub_config or None)
    except Exception as err:  # noqa: BLE001  (ConnectionError, DatasetNotFoundError, ...)
        hint = " You are offline and it is not in the local cache." if offline else ""
        raise UserError(f"cannot load hub dataset '{name}': {type(err).__name__}.{hint} Use "
                        "local files instead: --data train.tsv --validation dev.tsv") from None
    out = {}
    for ours, theirs in (("train", data.hub_train_split),
                         ("validation", data.hub_validation_split),
                         ("test", data.hub_test_split)):
        if not theirs:
            continue
        if theirs not in loaded:
            if ours == "train":
                raise UserError(f"hub dataset '{name}' has no split '{theirs}'; "
                                f"it has {', '.join(loaded)}")
            continue
        counts = {}
        pairs = pairs_data.pairs_from_hf_dataset(
            loaded[theirs], data.source_lang, data.target_lang, name=f"hub:{name}[{theirs}]",
            skip_bad_rows=data.skip_bad_rows, counts=counts)
        out[ours] = PairSplit(ours, pairs, f"hub:{name}[{theirs}]", "", {
            "read": len(pairs) + counts.get("bad_rows", 0),
            "bad_rows": counts.get("bad_rows", 0),
            "bad_row_examples": counts.get("bad_row_examples", [])})
    return out


def load_splits(data, seed):
    """Reads train/validation/test pairs from a data config (fails fast, before TensorFlow).

    Returns:
        dict of split name → PairSplit ("train", "validation" and, when given, "test").
    """
    if not data.train:
        raise UserError("no training data: give --data FILE (or hub:NAME) or set data.train")
    if data.max_train_pairs < 0 or not 0.0 < data.validation_fraction < 1.0:
        raise UserError("data.max_train_pairs must be >= 0 and data.validation_fraction in (0, 1)")
    for name in ("max_source_len", "max_target_len"):
        if getattr(data, name) < 1:
            raise UserError(f"data.{name} must be a positive number of tokens")
    if detect_format(data.train, data.format) == "hub":
        splits = _load_hub(data)
    else:
        splits = {"train": read_pair_file(data.train, data, "train")}
        for name in ("validation", "test"):
            path = getattr(data, name)
            if path:
                splits[name] = read_pair_file(path, data, name)
    for split in splits.values():
        if not split.pairs:
            raise UserError(f"the {split.name} split holds no sentence pairs", path=split.source)
    return splits


def _carve(train, fraction, seed):
    """Holds out a seeded share of the training pairs as the validation split."""
    indices = list(range(len(train.pairs)))
    random.Random(seed).shuffle(indices)
    count = min(max(round(len(indices) * fraction), 1), len(indices) - 1)
    if count < 1:
        raise UserError("too few training pairs to carve a validation split; give one with "
                        "--validation", path=train.source)
    held = set(indices[:count])
    validation = PairSplit("validation", [p for i, p in enumerate(train.pairs) if i in held],
                           f"carved from {train.source}", "", {"read": count, "bad_rows": 0})
    train.pairs = [p for i, p in enumerate(train.pairs) if i not in held]
    return validation


def filter_train(train, source_lengths, target_lengths, data, seed):
    """Drops too-long (and, optionally, repeated) training pairs; counts both in place."""
    from elman.tasks.translation.data import filter_pairs

    kept, too_long, empty = [], 0, 0
    for pair, n_source, n_target in zip(train.pairs, source_lengths, target_lengths):
        if n_source == 0 or n_target == 0:
            empty += 1
        elif n_source > data.max_source_len or n_target > data.max_target_len:
            too_long += 1
        else:
            kept.append(pair)
    kept, dropped = filter_pairs(kept, dedupe=data.dedupe)
    capped = 0
    if data.max_train_pairs and len(kept) > data.max_train_pairs:
        order = sorted(random.Random(seed).sample(range(len(kept)), data.max_train_pairs))
        capped = len(kept) - len(order)
        kept = [kept[i] for i in order]
    train.pairs = kept
    train.counts.update(too_long=too_long, empty_after_tokenizing=empty,
                        duplicates=dropped["duplicates"], over_max_train_pairs=capped)


# ------------------------------------------------------------------- strings ↔ ids


def _join_rule(level, lang=""):
    """How target tokens become text: (separator, [(RE2 pattern, replacement), ...]).

    Word level glues word-internal hyphens and typographic apostrophes (peut-être, l’a),
    closing marks to the word before them (`vieux .` → `vieux.`) and opening marks to the
    word after them. French (`lang` fr…) keeps its space before ! ? ; : and », and after «.
    """
    if level == "char":
        return "", []
    if level == "cjk":  # no spaces around Han/kana/Hangul and full-width punctuation
        han = r"[\p{Han}\x{3040}-\x{30ff}\x{ac00}-\x{d7af}\x{3000}-\x{303f}\x{ff00}-\x{ffef}]"
        return " ", [(f" ?({han}) ?", r"\1")]
    french = (lang or "").lower().startswith("fr")
    closing, opening = (r".,)\]}…", r"(\[{¿¡") if french else (r".,!?;:)\]}%…»", r"(\[{¿¡«")
    return " ", [(r"([\p{L}\p{N}]) ([-’]) ", r"\1\2"),
                 (f" ([{closing}])", r"\1"), (f"([{opening}]) ", r"\1")]


def ids_to_tokens(ids, vocabulary, start_id, end_id):
    """Decoded ids `[batch, T]` → ragged string tokens, cut at the first end or padding.

    A start token in the output (never expected) is dropped. Runs in graph or eager mode.
    """
    import tensorflow as tf

    ids = tf.cast(ids, tf.int32)
    stop = tf.logical_or(tf.equal(ids, end_id), tf.equal(ids, 0))
    before_end = tf.equal(tf.cumsum(tf.cast(stop, tf.int32), axis=1), 0)
    keep = tf.logical_and(before_end, tf.not_equal(ids, start_id))
    return tf.gather(tf.constant(vocabulary), tf.ragged.boolean_mask(ids, keep))


def tokens_to_text(tokens, level, lang=""):
    """Ragged string tokens → one string per row, joined by the target level's rule."""
    import tensorflow as tf

    separator, rules = _join_rule(level, lang)
    text = tf.strings.reduce_join(tokens, axis=1, separator=separator)
    for pattern, replacement in rules:
        text = tf.strings.regex_replace(text, pattern, replacement)
    return text


def _caps_graph(source_ids, decoding):
    """`decoding.length_caps` in TensorFlow ops (the same float32 arithmetic)."""
    import tensorflow as tf

    lengths = tf.cast(tf.math.count_nonzero(source_ids, axis=1), tf.float32)
    caps = tf.cast(tf.math.ceil(tf.constant(decoding["max_len_ratio"], tf.float32) * lengths),
                   tf.int32) + decoding["max_len_offset"]
    if decoding.get("max_len"):
        caps = tf.minimum(caps, decoding["max_len"])
    return tf.maximum(caps, 1)


class Translator:
    """A trained run in memory: tokenizers + Seq2SeqTranslator + decoders, strings in and out.

    Args:
        model: a built Seq2SeqTranslator.
        source_tokenizer: TextTokenizer of the source side.
        target_tokenizer: TextTokenizer of the target side (START and END reserved).
        decoding: dict with max_len_ratio, max_len_offset, max_len, batch_size,
            length_penalty.
        target_lang: str, the target language code (detokenization rules). Default "".
    """

    def __init__(self, model, source_tokenizer, target_tokenizer, decoding, target_lang=""):
        self.model = model
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.decoding = dict(decoding)
        vocabulary = target_tokenizer.get_vocabulary()
        self.vocabulary = vocabulary
        self.start_id, self.end_id = vocabulary.index(START), vocabulary.index(END)
        self.level = target_tokenizer.level
        self.target_lang = target_lang

    @classmethod
    def from_run(cls, run_dir):
        """Loads a finished run folder (model.keras + tokenizers.json)."""
        from elman.core import runs
        from elman.text.tokenize import TextTokenizer

        run_dir = Path(run_dir)
        run_info = runs.read_run(run_dir, TASK)
        path = run_dir / "tokenizers.json"
        if not path.is_file():
            raise UserError("the run has no tokenizers.json", path=run_dir)
        info = json.loads(path.read_text(encoding="utf-8"))
        model = runs.load_model(run_dir)
        return cls(model, TextTokenizer.from_config(info["source"]),
                   TextTokenizer.from_config(info["target"]), info["decoding"],
                   run_info.get("target_lang", ""))

    def _caps_kwargs(self):
        d = self.decoding
        return {"max_len": d.get("max_len") or None, "max_len_ratio": d["max_len_ratio"],
                "max_len_offset": d["max_len_offset"]}

    def decode_ids(self, source_ids, beam_width=0, return_attention=False):
        """Padded source ids `[batch, S]` → decoded ids `[batch, T]` (numpy)."""
        from elman.tasks.translation.decoding import beam_search_decode, greedy_decode

        if beam_width and beam_width > 0:
            return beam_search_decode(self.model, source_ids, self.start_id, self.end_id,
                                      beam_width=beam_width,
                                      length_penalty=self.decoding["length_penalty"],
                                      **self._caps_kwargs())
        return greedy_decode(self.model, source_ids, self.start_id, self.end_id,
                             return_attention=return_attention, **self._caps_kwargs())

    def tokens(self, ids):
        """Decoded ids → list of lists of str target tokens."""
        ragged = ids_to_tokens(ids, self.vocabulary, self.start_id, self.end_id)
        return [[t.decode("utf-8") for t in row] for row in ragged.to_list()]

    def texts(self, ids):
        """Decoded ids → list of str translations."""
        ragged = ids_to_tokens(ids, self.vocabulary, self.start_id, self.end_id)
        return [t.decode("utf-8") for t in tokens_to_text(ragged, self.level, self.target_lang).numpy()]

    def translate_ids(self, source_ragged, beam_width=0, batch_size=None):
        """Decodes ragged source ids in length-sorted batches; returns padded ids per row."""
        import numpy as np
        import tensorflow as tf

        from elman.core.batching import plan_eval

        lengths = source_ragged.row_lengths().numpy()
        rows = [None] * len(lengths)
        for batch in plan_eval(lengths, batch_size or self.decoding["batch_size"]):
            dense = tf.gather(source_ragged, batch).to_tensor(default_value=0).numpy()
            if dense.shape[1] == 0:
                dense = np.zeros([len(batch), 1], np.int64)
            ids = self.decode_ids(dense, beam_width)
            for i, row in zip(batch, ids):
                rows[i] = row
        width = max((len(r) for r in rows), default=0)
        out = np.zeros([len(rows), width], np.int32)
        for i, row in enumerate(rows):
            out[i, :len(row)] = row
        return out

    def translate(self, texts, beam_width=0):
        """Raw source strings → translated strings (batched, order kept)."""
        source = ragged_ids(self.source_tokenizer, list(texts))
        return self.texts(self.translate_ids(source, beam_width))

    def serving_function(self):
        """A graph function: 1-D string tensor of sources → 1-D string tensor of translations.

        Tokenizes with the source TextTokenizer, decodes with the compiled greedy loop
        of `decoding.greedy_decode` (same caps) and detokenizes with `tokens_to_text`.
        """
        import tensorflow as tf

        from elman.tasks.translation.decoding import _greedy_function

        greedy = _greedy_function(self.model)
        decoding, vocabulary, level = self.decoding, self.vocabulary, self.level
        lang = self.target_lang
        start_id, end_id, tokenizer = self.start_id, self.end_id, self.source_tokenizer

        def serve(texts):
            source = tf.cast(tokenizer(texts), tf.int32)
            ids = greedy(source, _caps_graph(source, decoding), tf.constant(start_id),
                         tf.constant(end_id))
            return tokens_to_text(ids_to_tokens(ids, vocabulary, start_id, end_id), level, lang)

        return serve

    def export(self, path):
        """Writes a SavedModel whose `serve` signature maps source strings to translations."""
        import keras
        import tensorflow as tf

        archive = keras.export.ExportArchive()
        if not self.source_tokenizer.built:
            self.source_tokenizer.build()
        archive.track(self.model)
        archive.track(self.source_tokenizer)
        archive.add_endpoint("serve", self.serving_function(),
                             input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
        archive.write_out(str(path), verbose=False)


def ragged_ids(tokenizer, texts):
    """Texts → ragged int64 ids with the tokenizer (tokenized inside tf.data, in chunks)."""
    import tensorflow as tf

    if not texts:
        return tf.ragged.constant([], dtype=tf.int64, ragged_rank=1)
    ds = tf.data.Dataset.from_tensor_slices(tf.constant(texts, dtype=tf.string))
    parts = list(ds.batch(4096).map(tokenizer.ragged_ids))
    return tf.concat(parts, axis=0) if len(parts) > 1 else parts[0]


def _shift(ids, start_id, end_id):
    """Target ids → (decoder input: start + ids, decoder output: ids + end)."""
    import tensorflow as tf

    n = ids.nrows()
    ones = tf.ones([n], tf.int64)
    start = tf.RaggedTensor.from_row_lengths(tf.fill([n], tf.constant(start_id, tf.int64)), ones)
    end = tf.RaggedTensor.from_row_lengths(tf.fill([n], tf.constant(end_id, tf.int64)), ones)
    return tf.concat([start, ids], axis=1), tf.concat([ids, end], axis=1)


# -------------------------------------------------------------------------- metrics


def bleu_tokenizer(eval_cfg, target_lang, references=()):
    """The sacrebleu tokenizer for a target language: zh for Chinese, 13a otherwise."""
    if eval_cfg.bleu_tokenize != "auto":
        return eval_cfg.bleu_tokenize
    lang = (target_lang or "").lower()
    if lang.split("-")[0].split("_")[0] in ("zh", "cmn", "yue", "wuu"):
        return "zh"
    if lang.split("-")[0] in ("ja", "ko", "th"):
        return "char"
    if not lang:
        import re

        han = sum(bool(re.search(r"[\u4e00-\u9fff]", r)) for r in references)
        if references and han > len(references) / 2:
            return "zh"
    return "13a"


def translation_scores(hypotheses, references, hyp_tokens, ref_tokens, tokenize, lowercase):
    """Corpus BLEU and chrF (sacrebleu), exact match and length ratio; sentence BLEU too.

    Exact match compares token sequences (the target tokenizer's split of the reference,
    the decoder's tokens of the hypothesis), so it does not depend on detokenization.

    Returns:
        (scores dict, list of sentence BLEU scores, the sacrebleu result line with its
        signature).
    """
    from sacrebleu.metrics import BLEU, CHRF

    bleu = BLEU(tokenize=tokenize, lowercase=lowercase, force=True)
    corpus = bleu.corpus_score(hypotheses, [references])
    chrf = CHRF(lowercase=lowercase).corpus_score(hypotheses, [references])
    sentence = BLEU(tokenize=tokenize, lowercase=lowercase, effective_order=True, force=True)
    per_sentence = [sentence.sentence_score(h, [r]).score
                    for h, r in zip(hypotheses, references)]
    exact = sum(h == r for h, r in zip(hyp_tokens, ref_tokens))
    scores = {
        "bleu": float(corpus.score),
        "chrf": float(chrf.score),
        "exact_match": exact / len(references) if references else 0.0,
        "length_ratio": corpus.sys_len / corpus.ref_len if corpus.ref_len else 0.0,
        "bleu_brevity_penalty": float(corpus.bp),
        "hypothesis_tokens": int(corpus.sys_len),
        "reference_tokens": int(corpus.ref_len),
        "pairs": len(references),
    }
    return scores, per_sentence, corpus.format(signature=bleu.get_signature().format())


def length_buckets(lengths, max_buckets=6):
    """Contiguous source-length buckets [(low, high), ...], the last one open-ended."""
    import numpy as np

    lengths = np.asarray(lengths)
    if lengths.size == 0:
        return []
    low, high = int(lengths.min()), int(np.percentile(lengths, 95))
    width = max(1, math.ceil((high - low + 1) / max_buckets))
    edges, start = [], low
    while start <= high:
        edges.append((start, start + width - 1))
        start += width
    if int(lengths.max()) > edges[-1][1]:
        edges[-1] = (edges[-1][0], int(lengths.max()))
    return edges


def bleu_by_length(hypotheses, references, source_lengths, tokenize, lowercase):
    """Corpus BLEU per source-length bucket: list of {bucket, low, high, pairs, bleu}."""
    from sacrebleu.metrics import BLEU

    bleu = BLEU(tokenize=tokenize, lowercase=lowercase, force=True)
    rows = []
    for low, high in length_buckets(source_lengths):
        idx = [i for i, n in enumerate(source_lengths) if low <= n <= high]
        if not idx:
            continue
        score = bleu.corpus_score([hypotheses[i] for i in idx], [[references[i] for i in idx]])
        rows.append({"bucket": f"{low}" if low == high else f"{low}-{high}", "low": low,
                     "high": high, "pairs": len(idx), "bleu": float(score.score)})
    return rows


def masked_token_accuracy():
    """A metric: token accuracy over real target positions (id 0 ignored).

    Stateful, and it ignores `sample_weight`: the mask comes from the targets, so the
    value is the same whether or not Keras passes the decoder's padding mask (it does
    without attention, not with it). The class is registered for checkpoint reloads.
    """
    import keras

    registered = keras.saving.get_registered_object("elman>MaskedTokenAccuracy")
    if registered is not None:
        return registered()

    @keras.saving.register_keras_serializable(package="elman")
    class MaskedTokenAccuracy(keras.metrics.Metric):
        def __init__(self, name="masked_token_accuracy", **kwargs):
            super().__init__(name=name, **kwargs)
            self.hits = self.add_variable(shape=(), initializer="zeros", name="hits")
            self.count = self.add_variable(shape=(), initializer="zeros", name="count")

        def update_state(self, y_true, y_pred, sample_weight=None):
            ops = keras.ops
            y_true = ops.cast(y_true, "int32")
            mask = ops.cast(ops.not_equal(y_true, 0), "float32")
            predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
            hits = ops.cast(ops.equal(predicted, y_true), "float32")
            self.hits.assign_add(ops.sum(hits * mask))
            self.count.assign_add(ops.sum(mask))

        def result(self):
            return self.hits / keras.ops.maximum(self.count, 1.0)

        def reset_state(self):
            self.hits.assign(0.0)
            self.count.assign(0.0)

    return MaskedTokenAccuracy()


def compile_translator(model, train_cfg):
    """Compiles a Seq2SeqTranslator: Adam, masked cross-entropy on logits, token accuracy."""
    import keras

    from elman.core.train import adam
    model.compile(
        optimizer=adam(train_cfg),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0),
        metrics=[masked_token_accuracy()])
    return model


# --------------------------------------------------------------------------- report


def _glyph_font():
    """A test `token -> bool`: can matplotlib's default sans-serif font draw it?"""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    path = font_manager.findfont(font_manager.FontProperties(family=["sans-serif"]))
    font = FT2Font(path)
    return lambda token: all(font.get_char_index(ord(c)) for c in token if not c.isspace())


def plot_attention(weights, source_tokens, output_tokens, path, title):
    """Heatmap of one sentence's attention (rows: output tokens); returns (file, legend).

    Tokens the plotting font cannot draw (e.g. Chinese without a CJK font) are shown as
    numbers, and the legend maps the numbers back to tokens.
    """
    plt = rep._pyplot()
    covered = _glyph_font()
    legend = []

    def labels(tokens, prefix):
        out = []
        for i, token in enumerate(tokens, start=1):
            if covered(token):
                out.append(token)
            else:
                out.append(f"{prefix}{i}")
                legend.append(f"{prefix}{i} = {token}")
        return out

    rows, cols = len(output_tokens), len(source_tokens)
    fig, ax = plt.subplots(figsize=(max(3.0, 0.5 * cols + 1.5), max(2.5, 0.4 * rows + 1.2)))
    ax.imshow(weights[:rows, :cols], cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(cols), labels(source_tokens, "s"), rotation=60, ha="right")
    ax.set_yticks(range(rows), labels(output_tokens, "t"))
    ax.set_xlabel("source")
    ax.set_ylabel("output")
    ax.set_title(title if covered(title) else "(source not drawable in this font)", fontsize=9)
    return rep._save(fig, path), legend


def _samples(rows, count, seed):
    """Best, worst and random sample rows by sentence BLEU (ties: longer source first)."""
    if not rows:
        return {}
    order = sorted(range(len(rows)), key=lambda i: (-rows[i]["sentence_bleu"],
                                                    -len(rows[i]["source"]), i))
    worst = sorted(range(len(rows)), key=lambda i: (rows[i]["sentence_bleu"],
                                                    -len(rows[i]["source"]), i))
    rng = random.Random(seed)
    pick = sorted(rng.sample(range(len(rows)), min(count, len(rows))))
    return {"best": [rows[i] for i in order[:count]],
            "worst": [rows[i] for i in worst[:count]],
            "random": [rows[i] for i in pick]}


def _sample_tables(samples):
    md = []
    for kind in ("best", "worst", "random"):
        md.append(f"**{kind.capitalize()}** (by sentence BLEU):")
        md.append(rep.md_table(["source", "reference", "translation", "sentence BLEU"],
                               [(r["source"][:200], r["reference"][:200],
                                 r["hypothesis"][:200], round(r["sentence_bleu"], 1))
                                for r in samples.get(kind, [])]))
    return md


def _data_section(splits, stats):
    rows = []
    for name, split in splits.items():
        c = split.counts
        s_src, s_tgt = stats[name]
        rows.append((name, c.get("read", len(split.pairs)), c.get("bad_rows", 0),
                     c.get("too_long", "-"), c.get("duplicates", "-"),
                     c.get("empty_after_tokenizing", "-"), len(split.pairs),
                     f"{s_src.mean_length:.1f} / {s_src.max_length}",
                     f"{s_tgt.mean_length:.1f} / {s_tgt.max_length}",
                     f"{100 * s_src.oov_rate:.2f}% / {100 * s_tgt.oov_rate:.2f}%",
                     f"{s_src.truncated_examples} / {s_tgt.truncated_examples}"))
    md = ["## Data",
          rep.md_table(["split", "pairs read", "bad rows skipped", "too long", "duplicates",
                        "empty after tokenizing", "pairs used",
                        "source tokens mean / max", "target tokens mean / max",
                        "OOV source / target", "truncated source / target"], rows),
          ("Length filtering and de-duplication apply to the training split only; the "
           "evaluation splits are scored whole (sources longer than the source tokenizer's "
           "`max_length` are truncated).")]
    for name, split in splits.items():
        examples = split.counts.get("bad_row_examples") or []
        if examples:
            md.append(f"Skipped rows in {name} (`--skip-bad-rows`), first {len(examples)}:")
            md.append("\n".join(f"- `{e}`" for e in examples))
    return "\n\n".join(md)


# ---------------------------------------------------------------------------- train


def _lowercase(cfg):
    """Scores are case-insensitive when asked, or when the target tokenizer lower-cases
    (the model cannot produce capitals, so case-sensitive BLEU would only measure that)."""
    return bool(cfg.eval.lowercase or cfg.target_tokenizer.lowercase)


def _evaluate_split(translator, split, source_ids, cfg, beam_width=0):
    """Decodes one split and scores it; returns (scores, rows, buckets, signature, ids)."""
    from elman.text.tokenize import split_all

    translator.translate_ids(source_ids[:2], beam_width)  # warm-up: tracing is not timed
    started = time.perf_counter()
    ids = translator.translate_ids(source_ids, beam_width)
    seconds = time.perf_counter() - started
    hypotheses = translator.texts(ids)
    hyp_tokens = translator.tokens(ids)
    references = split.targets
    ref_tokens = split_all(translator.target_tokenizer, references)
    tokenize = bleu_tokenizer(cfg.eval, cfg.data.target_lang, references)
    scores, per_sentence, signature = translation_scores(
        hypotheses, references, hyp_tokens, ref_tokens, tokenize, _lowercase(cfg))
    scores["decode_sentences_per_s"] = len(references) / seconds if seconds else 0.0
    source_lengths = source_ids.row_lengths().numpy().tolist()
    buckets = bleu_by_length(hypotheses, references, source_lengths, tokenize,
                             _lowercase(cfg))
    rows = [{"index": i, "where": p.get("where", ""), "source": p["source"],
             "reference": p["target"], "hypothesis": h, "sentence_bleu": b,
             "exact": ht == rt, "source_tokens": n}
            for i, (p, h, b, ht, rt, n) in enumerate(zip(
                split.pairs, hypotheses, per_sentence, hyp_tokens, ref_tokens, source_lengths))]
    return scores, rows, buckets, signature, ids


def train(cfg, run_dir, report_dir, resume=False, log=print, diagnose=False):
    """Trains, exports, evaluates and reports one translation run; returns metrics.json's dict."""
    splits = load_splits(cfg.data, cfg.train.seed)  # fail fast, before TensorFlow
    import numpy as np

    from elman.models.seq2seq_translator import Seq2SeqTranslator
    from elman.core import runs
    from elman.core import runtime
    from elman.core.batching import dataset_from_plan, plan_eval
    from elman.text.tokenize import TextTokenizer, fit_vocabulary, split_all, token_stats, tokenizer_from_config
    from elman.core.train import fit

    run_dir, report_dir = Path(run_dir), Path(report_dir)
    strategy = runtime.configure(cfg.train, log)

    # Length filter and de-duplication of the training pairs (token counts, no vocabulary).
    train_split = splits["train"]
    counter_src = tokenizer_from_config(cfg.source_tokenizer)
    counter_tgt = tokenizer_from_config(cfg.target_tokenizer)
    filter_train(train_split, [len(t) for t in split_all(counter_src, train_split.sources)],
                 [len(t) for t in split_all(counter_tgt, train_split.targets)],
                 cfg.data, cfg.train.seed)
    if "validation" not in splits:
        splits["validation"] = _carve(train_split, cfg.data.validation_fraction, cfg.train.seed)
        splits = {k: splits[k] for k in ("train", "validation", "test") if k in splits}
    if len(train_split.pairs) == 0:
        raise UserError("no training pairs left after length filtering; raise "
                        "data.max_source_len / data.max_target_len", path=train_split.source)
    log("pairs: " + ", ".join(f"{n} {len(s.pairs)}" for n, s in splits.items())
        + f" (train: {train_split.counts.get('too_long', 0)} too long, "
        f"{train_split.counts.get('duplicates', 0)} duplicates dropped)")

    # Tokenizers, fitted on train only; the target one reserves the start and end tokens.
    tok_file = run_dir / "tokenizers.json"
    if resume and tok_file.is_file():
        saved = json.loads(tok_file.read_text(encoding="utf-8"))
        source_tok = TextTokenizer.from_config(saved["source"])
        target_tok = TextTokenizer.from_config(saved["target"])
    else:
        source_tok = fit_vocabulary(cfg.source_tokenizer, train_split.sources)
        target_tok = fit_vocabulary(cfg.target_tokenizer, train_split.targets,
                                    reserved=(START, END))
    start_id, end_id = target_tok.get_vocabulary().index(START), target_tok.get_vocabulary(
    ).index(END)
    decoding = {"max_len_ratio": cfg.decoding.max_len_ratio,
                "max_len_offset": cfg.decoding.max_len_offset, "max_len": cfg.decoding.max_len,
                "batch_size": cfg.decoding.batch_size,
                "length_penalty": cfg.decoding.length_penalty}
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(tok_file, json.dumps(
        {"source": source_tok.get_config(), "target": target_tok.get_config(),
         "start": START, "end": END, "decoding": decoding}, indent=1, sort_keys=True,
        ensure_ascii=False) + "\n")
    write_text_atomic(run_dir / "source_vocabulary.txt",
                      "\n".join(source_tok.get_vocabulary()) + "\n")
    write_text_atomic(run_dir / "target_vocabulary.txt",
                      "\n".join(target_tok.get_vocabulary()) + "\n")
    write_text_atomic(run_dir / "config.toml", config_lib.dumps_toml(cfg))
    write_text_atomic(run_dir / "config.json",
                      json.dumps(config_lib.to_dict(cfg), indent=1, sort_keys=True))
    log(f"vocabularies: source {source_tok.vocabulary_size}, target "
        f"{target_tok.vocabulary_size} ids")

    stats, encoded = {}, {}
    for name, split in splits.items():
        stats[name] = (token_stats(source_tok, split.sources),
                       token_stats(target_tok, split.targets))
        src = ragged_ids(source_tok, split.sources)
        tgt = ragged_ids(target_tok, split.targets)
        if target_tok.max_length > 1:
            tgt = tgt[:, : target_tok.max_length - 1]  # room for the start/end token
        tgt_in, tgt_out = _shift(tgt, start_id, end_id)
        lengths = np.maximum(src.row_lengths().numpy(), tgt_out.row_lengths().numpy())
        encoded[name] = (src, tgt_in, tgt_out, lengths)

    masked_token_accuracy()  # registers the metric class before a resume reloads it

    def build_and_compile():
        m = cfg.model
        return compile_translator(Seq2SeqTranslator(
            source_tok.vocabulary_size, target_tok.vocabulary_size,
            embedding_dim=m.embedding_dim, units=m.units, cell=m.cell, num_layers=m.num_layers,
            bidirectional=m.bidirectional, dropout=m.dropout, attention=m.attention,
            bridge=m.bridge, combine=m.combine, name="seq2seq_translator"), cfg.train)

    v_src, v_in, v_out, v_len = encoded["validation"]
    validation = dataset_from_plan((v_src, v_in), v_out, plan_eval(v_len, cfg.train.batch_size))
    t_src, t_in, t_out, t_len = encoded["train"]
    cpu_began = time.process_time()  # all threads of this process: CPU-seconds of training
    result = fit(build_and_compile, (t_src, t_in), t_out, t_len, validation, cfg.train, run_dir,
                 resume=resume, strategy=strategy, log=log)
    cpu_seconds = time.process_time() - cpu_began
    trained = result.model
    log(f"training: {result.epochs_run} epochs, {result.seconds / 60:.1f} min wall, "
        f"{cpu_seconds / 60:.1f} CPU-min in this process")

    # Export: a clean (uncompiled) copy of the model, the tokenizers, the SavedModel.
    model = Seq2SeqTranslator.from_config(trained.get_config())
    model((np.ones([1, 2], np.int32), np.ones([1, 2], np.int32)))
    model.set_weights(trained.get_weights())
    tmp = run_dir / "model.tmp.keras"
    model.save(tmp)
    tmp.replace(run_dir / "model.keras")
    translator = Translator(model, source_tok, target_tok, decoding, cfg.data.target_lang)
    saved = run_dir / "saved_model"
    translator.export(str(saved) + ".tmp")
    if saved.exists():
        import shutil

        shutil.rmtree(saved)
    Path(str(saved) + ".tmp").rename(saved)
    log(f"exported {run_dir / 'model.keras'} and {saved}")

    # Evaluation: decode the evaluation splits, score, collect samples.
    report_dir.mkdir(parents=True, exist_ok=True)
    results, md_results = {}, []
    for name in ("validation", "test"):
        if name not in splits:
            continue
        scores, rows, buckets, signature, _ = _evaluate_split(
            translator, splits[name], encoded[name][0], cfg, beam_width=cfg.decoding.beam_width)
        results[name] = {"scores": scores, "rows": rows, "buckets": buckets,
                         "signature": signature}
        log(f"{name}: BLEU {scores['bleu']:.2f}  chrF {scores['chrf']:.2f}  exact match "
            f"{scores['exact_match']:.4f}  length ratio {scores['length_ratio']:.3f}")
    main_name = "test" if "test" in results else "validation"
    main = results[main_name]

    for name, r in results.items():
        s = r["scores"]
        d = cfg.decoding
        how = (f"beam search, width {d.beam_width}, length penalty {d.length_penalty:g}"
               if d.beam_width else "greedy")
        md = [f"## {name.capitalize()} results",
              (f"Decoding: {how}; caps: {d.max_len_ratio:g} × source tokens + "
               f"{d.max_len_offset}, at most {d.max_len}."),
              rep.md_table(["metric", "value"], [
                  ("BLEU", s["bleu"]), ("chrF", s["chrf"]), ("exact match", s["exact_match"]),
                  ("length ratio (hyp / ref tokens)", s["length_ratio"]),
                  ("BLEU brevity penalty", s["bleu_brevity_penalty"]), ("pairs", s["pairs"]),
                  ("decoded sentences/s", round(s["decode_sentences_per_s"], 1))]),
              f"sacrebleu: `{r['signature']}`"]
        if r["buckets"]:
            png = rep.plot_bars([b["bucket"] for b in r["buckets"]],
                                {"BLEU": [b["bleu"] for b in r["buckets"]]},
                                report_dir / f"bleu_by_length_{name}.png",
                                f"BLEU by source length ({name})", ylabel="BLEU")
            md += ["### BLEU by source length (tokens)", f"![BLEU by source length]({png})",
                   rep.md_table(["source tokens", "pairs", "BLEU"],
                                [(b["bucket"], b["pairs"], b["bleu"]) for b in r["buckets"]])]
        if name == main_name:
            r["samples"] = _samples(r["rows"], cfg.eval.samples, cfg.train.seed)
            md += ["### Sample translations"] + _sample_tables(r["samples"])
        md_results.append("\n\n".join(md))

    heat_md = []
    if cfg.model.attention != "none" and cfg.eval.heatmaps > 0:
        picks = (main.get("samples", {}).get("random") or main["rows"])[:cfg.eval.heatmaps]
        src_ids = encoded[main_name][0]
        heat_md.append("## Attention")
        heat_md.append("Where the decoder looked (greedy decoding; rows: output tokens, "
                       "columns: source tokens; each row sums to 1).")
        for k, row in enumerate(picks):
            i = row["index"]
            ids = src_ids[i:i + 1].to_tensor().numpy()
            out, weights = translator.decode_ids(ids, return_attention=True)
            out_tokens = translator.tokens(out)[0]
            shown = out_tokens + ([END] if end_id in out[0].tolist() else [])
            source_tokens = split_all(source_tok, [row["source"]])[0][:ids.shape[1]]
            png, legend = plot_attention(weights[0], source_tokens, shown,
                                         report_dir / f"attention_{k + 1}.png",
                                         row["source"][:80])
            heat_md.append(f"![attention {k + 1}]({png})")
            if legend:
                heat_md.append("Labels: " + " · ".join(legend))

    curves = rep.plot_learning_curves(result.history, report_dir / "learning_curves.png")
    data_files = [{"split": n, "source": s.source, "sha256": s.sha256}
                  for n, s in splits.items()]
    device = runtime.device_summary(cfg.train, strategy)
    repro_md, repro = rep.reproducibility(config_lib.dumps_toml(cfg), data_files,
                                          cfg.train.seed, device)
    m = cfg.model
    direction = f"{cfg.data.source_lang or 'source'} → {cfg.data.target_lang or 'target'}"
    summary = [
        (f"Run `{run_dir}` · task **translation** ({direction}) · model: "
        f"{m.num_layers}×{'Bi' if m.bidirectional else ''}{m.cell.upper()}({m.units}) encoder, "
        f"{m.cell.upper()}({m.units}) decoder, attention {m.attention}, embeddings "
        f"{m.embedding_dim}, {model.count_params():,} parameters · vocabularies: source "
        f"{source_tok.vocabulary_size} ({source_tok.level}), target "
        f"{target_tok.vocabulary_size} ({target_tok.level})."),
        rep.md_table(["split", "BLEU", "chrF", "exact match", "length ratio", "pairs"],
                     [(n, r["scores"]["bleu"], r["scores"]["chrf"], r["scores"]["exact_match"],
                       r["scores"]["length_ratio"], r["scores"]["pairs"])
                      for n, r in results.items()]),
        (f"Trained {result.epochs_run} epochs in {result.seconds / 60:.1f} min "
        f"({cpu_seconds / 60:.1f} CPU-min) in this process "
        f"(best: epoch {result.best_epoch}{', stopped early' if result.stopped_early else ''});"
        f" {result.tokens_per_second:,.0f} training tokens/s. BLEU and chrF: sacrebleu, "
        f"tokenizer `{bleu_tokenizer(cfg.eval, cfg.data.target_lang, splits[main_name].targets)}`"
        f", {'lower-cased' if _lowercase(cfg) else 'case-sensitive'}, one reference."),
    ]
    body = "\n\n".join(summary + ["## Learning curves", f"![learning curves]({curves})"]
                       + md_results + heat_md + [_data_section(splits, stats), repro_md])
    finished = datetime.datetime.now().isoformat(timespec="seconds")
    metrics = {
        "task": TASK, "run_id": run_dir.name, "run_dir": str(run_dir), "finished": finished,
        "split": main_name, "main_metric": "bleu", "scores": main["scores"],
        "results": {n: {"scores": r["scores"], "bleu_by_length": r["buckets"],
                        "sacrebleu_signature": r["signature"]} for n, r in results.items()},
        "history": result.history, "best_epoch": result.best_epoch,
        "epochs_run": result.epochs_run, "train_seconds": result.seconds,
        "train_cpu_seconds": cpu_seconds,
        "train_tokens_per_second": result.tokens_per_second,
        "parameters": int(model.count_params()),
        "vocabulary": {"source": source_tok.vocabulary_size,
                       "target": target_tok.vocabulary_size},
        "data": {n: {"pairs": len(s.pairs), "counts": s.counts,
                     "source_tokens": vars(stats[n][0]) | {"oov_rate": stats[n][0].oov_rate},
                     "target_tokens": vars(stats[n][1]) | {"oov_rate": stats[n][1].oov_rate}}
                 for n, s in splits.items()},
        "reproducibility": repro,
    }
    predictions = [{k: r[k] for k in ("where", "source", "reference", "hypothesis",
                                      "sentence_bleu", "exact")} for r in main["rows"]]
    rep.write_report(report_dir, f"Translation report — {run_dir.name}", body, metrics,
                     predictions)
    runs.write_run_file(run_dir, {"task": TASK, "run_id": run_dir.name,
                                  "report_dir": str(report_dir), "finished": finished,
                                  "source_lang": cfg.data.source_lang,
                                  "target_lang": cfg.data.target_lang})
    log(f"{main_name} BLEU {main['scores']['bleu']:.2f}  exact match "
        f"{main['scores']['exact_match']:.4f}  report: {report_dir / 'report.md'}")
    return metrics


# --------------------------------------------------------------- translate, evaluate


def translate(run_dir, texts, beam_width=0):
    """Translates raw source strings with a saved run; returns a list of str."""
    for i, text in enumerate(texts, start=1):
        if not text.strip():
            raise UserError(f"text {i} is empty; expected a sentence to translate")
    if beam_width < 0:
        raise UserError(f"--beam must be 0 (greedy) or a positive width; got {beam_width}")
    translator = Translator.from_run(run_dir)
    if beam_width > translator.model.target_vocab_size:
        raise UserError(f"--beam {beam_width} is larger than the target vocabulary")
    return translator.translate(texts, beam_width)


def translate_cli(run_dir, texts, args):
    """`elman translate RUN [texts...] [--beam K]`: one translation per input line."""
    out = translate(run_dir, texts, int(getattr(args, "beam", 0) or 0))
    sys.stdout.write("".join(line.replace("\n", " ") + "\n" for line in out))
    sys.stdout.flush()
    return 0


def predict_cli(run_dir, texts, args):
    """`elman predict RUN ...` on a translation run translates (greedy)."""
    out = translate(run_dir, texts)
    for text, translation in zip(texts, out):
        if getattr(args, "format", "text") == "json":
            print(json.dumps({"text": text, "translation": translation}, ensure_ascii=False))
        else:
            print(translation)
    return 0


def evaluate(run_dir, cfg_overrides, report_root=None, log=print):
    """Scores a saved run on a file of pairs; returns an EvalResult (main metric: BLEU)."""
    from elman.core import runs
    from elman.core.evaluate import EvalResult

    runs.read_run(run_dir, TASK)
    saved = json.loads((Path(run_dir) / "config.json").read_text(encoding="utf-8"))
    cfg = config_lib.config_from_dict(TASK, saved)
    path = cfg_overrides.get("data") or cfg.data.test or cfg.data.validation
    if not path:
        raise UserError("give a file of sentence pairs to evaluate on with --data FILE")
    if detect_format(path, cfg.data.format) == "hub":
        raise UserError("evaluate reads local files; give --data FILE")
    split = read_pair_file(path, cfg.data, "evaluation")
    if not split.pairs:
        raise UserError("the file holds no sentence pairs", path=path)
    translator = Translator.from_run(run_dir)
    source_ids = ragged_ids(translator.source_tokenizer, split.sources)
    scores, rows, buckets, signature, _ = _evaluate_split(
        translator, split, source_ids, cfg, beam_width=cfg.decoding.beam_width)
    log(f"{path}: BLEU {scores['bleu']:.2f}  chrF {scores['chrf']:.2f}  exact match "
        f"{scores['exact_match']:.4f}  ({scores['pairs']} pairs)")
    return EvalResult(TASK, "evaluation", "bleu", scores, per_class=buckets,
                      examples=rows, extra={"sacrebleu_signature": signature})


# -------------------------------------------------------------------------- benchmark


def _bench_run(quick, log):
    """A trained run folder for the decoder benchmark: the tatoeba run, the demo, or a new one."""
    root = Path(__file__).resolve().parents[3]
    candidates = [] if quick else [root / "runs" / "translation" / "tatoeba-fra"]
    candidates.append(root / "runs" / "translation" / "demo")
    for run in candidates:
        if (run / "run.json").is_file() and (run / "model.keras").is_file():
            return run
    import tempfile

    run = Path(tempfile.mkdtemp(prefix="elman-bench-translation-"))
    cfg = config_lib.load_config(TASK, None, ["train.epochs=6"] if quick else [])
    log(f"training the toy translator for the benchmark in {run}")
    train(cfg, run / "run", run / "reports" / "translation" / "bench", log=log)
    return run / "run"


def benchmark(quick=False, log=print):
    """Compiled batched greedy vs eager batched loop vs per-sentence `model.predict` loop.

    Decodes the same sentences with the three decoders (identical outputs are required:
    `benchmark_decoders` raises otherwise) and returns sentences/s of each and the
    ratios, with the targets (≥ 200× over the per-sentence loop, ≥ 4× over eager).
    quick: the toy model (the demo run, or a short toy training), 256 toy test sentences.
    Otherwise the tatoeba-fra run when there is one (runs/translation/tatoeba-fra),
    1024 dev sentences.
    """
    import numpy as np

    from elman.tasks.translation.decoding import benchmark_decoders

    run = _bench_run(quick, log)
    translator = Translator.from_run(run)
    cfg = config_lib.config_from_dict(
        TASK, json.loads((run / "config.json").read_text(encoding="utf-8")))
    path = cfg.data.test or cfg.data.validation or cfg.data.train
    if not Path(path).exists() and (Path(__file__).resolve().parents[3] / path).exists():
        path = str(Path(__file__).resolve().parents[3] / path)  # presets are repo-relative
    split = read_pair_file(path, cfg.data, "bench")
    n = 256 if quick else 1024
    sources = split.sources[:n]
    source = ragged_ids(translator.source_tokenizer, sources).to_tensor().numpy()
    result = benchmark_decoders(translator.model, source, translator.start_id, translator.end_id,
                                repeats=2 if quick else 3, per_sentence_limit=8 if quick else 16,
                                **translator._caps_kwargs())
    result.update({
        "task": TASK, "run": str(run), "data": str(path),
        "targets": {"compiled_over_per_sentence": 200.0, "compiled_over_eager": 4.0},
        "meets_targets": bool(result["compiled_over_per_sentence"] >= 200.0
                              and result["compiled_over_eager"] >= 4.0),
        "identical_outputs": True,
        "mean_source_tokens": float(np.count_nonzero(source, axis=1).mean()),
    })
    log(f"translation decoders on {result['sentences']} sentences: compiled "
        f"{result['compiled_sentences_per_s']:.0f}/s, eager "
        f"{result['eager_sentences_per_s']:.1f}/s, per-sentence predict "
        f"{result['per_sentence_predict_sentences_per_s']:.2f}/s → "
        f"{result['compiled_over_per_sentence']:.0f}× and "
        f"{result['compiled_over_eager']:.1f}×")
    return result
