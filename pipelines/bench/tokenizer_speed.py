"""`elman bench`'s tokenizer row (issue 17): how fast raw sentences become ids in the graph.

Three tokenizers, fitted on the same English training sentences and timed side by side
on those same sentences in one process: the word-level `TextTokenizer` (words and
punctuation marks, a vocabulary lookup) and the SentencePiece `SubwordTokenizer`
trained as unigram and as BPE (same requested vocabulary size, same case rule). Each is
timed the way training and the exported model run it: a `tf.function` that drives a
`tf.data` pipeline of batches of raw strings mapped through the tokenizer's
`ragged_ids` and reduced in the graph (sentences, ids, unknown ids, a checksum), so no
batch comes back to Python. One untimed pass first (tracing, lookup tables,
SentencePiece set-up), then the best of `repeats` timed passes.

Reported per tokenizer: sentences/s and ids/s, ids per sentence, the share of unknown
ids, the vocabulary size, the time the fit took, the sentences the timed pass saw and,
for the subword ones, how many sentences their pieces give back exactly (NFKC
normalised text, spaces folded); plus each subword tokenizer's rate over the word
tokenizer's. No TensorFlow import at module level.
"""

import dataclasses
import time
import unicodedata
from pathlib import Path

NAMES = ("word", "subword_unigram", "subword_bpe")
_FULL_PRESET = "tatoeba-fra"  # ../shared/data/tatoeba_fra_eng: its English side


def _resolve(path):
    from elman.bench.timing import ROOT

    path = Path(path)
    return path if path.exists() or path.is_absolute() else ROOT / path


def bench_sentences(quick, skipped=None):
    """The English training sentences of the row and where they come from.

    Full mode: the English side of the tatoeba-fra preset's training file
    (../shared/data/tatoeba_fra_eng/train.tsv) when it is there; otherwise, and in
    quick mode, the English side of the toy pairs (data/translation/en-zh/train.tsv).

    Args:
        quick: bool, the toy sentences.
        skipped: dict or None, gets a line when full mode falls back to the toy data.

    Returns:
        (list of str, str naming the data).
    """
    from elman import config as config_lib
    from elman.tasks.translation import data as pairs

    for preset in (() if quick else (_FULL_PRESET,)) + ("default",):
        cfg = config_lib.load_config("translation", config_lib.preset_path("translation",
                                                                           preset))
        path = _resolve(cfg.data.train)
        if path.is_file():
            split = pairs.read_pair_file(str(path), cfg.data, "train")
            return pairs.sources(split), f"{cfg.data.source_lang} side of {cfg.data.train}"
        if skipped is not None:
            skipped["tokenizers tatoeba"] = (f"{cfg.data.train} not found; the tokenizer row "
                                             "uses the toy sentences")
    raise FileNotFoundError("no translation training data for the tokenizer row")


def base_config(vocabulary_size=None):
    """The shared tokenizer settings: the tatoeba-fra preset's English ones, untruncated.

    Args:
        vocabulary_size: int or None, the subword vocabulary to request; None keeps the
            preset's (a small corpus gets the largest it supports).
    """
    from elman import config as config_lib

    cfg = config_lib.load_config("translation",
                                 config_lib.preset_path("translation", _FULL_PRESET))
    tok = dataclasses.replace(cfg.source_tokenizer, max_length=10_000)  # no truncation
    if vocabulary_size is not None:
        tok = dataclasses.replace(tok, vocabulary_size=vocabulary_size)
    return tok


def fit_tokenizers(base, texts):
    """{name: (tokenizer, fit seconds)} of the three tokenizers, all fitted on `texts`."""
    from elman.text.tokenize import fit_vocabulary

    configs = {"word": dataclasses.replace(base, level="word"),
               "subword_unigram": dataclasses.replace(base, level="subword",
                                                      algorithm="unigram"),
               "subword_bpe": dataclasses.replace(base, level="subword", algorithm="bpe")}
    out = {}
    for name in NAMES:
        began = time.perf_counter()
        tokenizer = fit_vocabulary(configs[name], texts)
        out[name] = (tokenizer, time.perf_counter() - began)
    return out


def graph_pass(tokenizer, texts, batch_size):
    """A `tf.function` running one tf.data pass over `texts` through the tokenizer.

    Returns:
        A callable returning int64 (sentences, ids, unknown ids, sum of the ids).
    """
    import tensorflow as tf

    def counts(batch):
        ids = tokenizer.ragged_ids(batch)
        flat = ids.flat_values
        return (tf.cast(ids.nrows(), tf.int64), tf.size(flat, out_type=tf.int64),
                tf.math.count_nonzero(tf.equal(flat, 1), dtype=tf.int64), tf.reduce_sum(flat))

    dataset = (tf.data.Dataset.from_tensor_slices(tf.constant(texts, tf.string))
               .batch(batch_size).map(counts))
    zero = tf.constant(0, tf.int64)

    @tf.function
    def run():
        return dataset.reduce((zero, zero, zero, zero),
                              lambda total, part: tuple(a + b for a, b in zip(total, part)))

    return run


def normalised(texts, lowercase=False):
    """The texts as subword pieces give them back: NFKC, spaces folded (lower-cased by
    TensorFlow's UTF-8 rule, the layer's own, when the tokenizer lower-cases)."""
    import tensorflow as tf

    texts = [" ".join(unicodedata.normalize("NFKC", t).split()) for t in texts]
    if lowercase and texts:
        texts = [t.decode("utf-8") for t in
                 tf.strings.lower(tf.constant(texts), encoding="utf-8").numpy()]
    return texts


def round_trips(tokenizer, texts, batch_size=4096):
    """How many texts the subword tokenizer's ids give back exactly (see `normalised`)."""
    import tensorflow as tf

    from elman.text.subword import detokenize_pieces

    vocabulary = tf.constant(tokenizer.get_vocabulary())
    same = 0
    for start in range(0, len(texts), batch_size):
        part = texts[start:start + batch_size]
        ids = tokenizer.ragged_ids(tf.constant(part))
        back = detokenize_pieces(tf.gather(vocabulary, ids)).numpy()
        same += sum(b.decode("utf-8") == t
                    for b, t in zip(back, normalised(part, tokenizer.lowercase)))
    return same


def tokenizer_speed(texts, base=None, batch_size=512, repeats=3, data="", log=print):
    """Fits the three tokenizers on `texts` and times each on `texts` in the graph.

    Args:
        texts: list of str, the sentences (fitted on and timed on).
        base: TokenizerConfig or None, the shared settings (`base_config()` when None).
        batch_size: int, sentences per tf.data batch. Default 512.
        repeats: int, timed passes after the warm-up pass (the best is kept). Default 3.
        data: str, where the sentences come from (recorded).
        log: callable for progress lines.

    Returns:
        dict: sentences, batch_size, repeats, timing, data, requested_vocabulary_size,
        lowercase, tokenizers {name: {...}} and the ratios `subword_unigram_over_word`
        and `subword_bpe_over_word` (sentences/s over the word tokenizer's).
    """
    if not texts:
        raise ValueError("Expected sentences to tokenize. Received none.")
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"Expected repeats to be a positive int. Received: {repeats!r}")
    base = base or base_config()
    fitted = fit_tokenizers(base, texts)
    runs = {name: graph_pass(tok, texts, batch_size) for name, (tok, _) in fitted.items()}
    for run in runs.values():
        run()  # warm-up: tracing and set-up are not timed
    best = {name: float("inf") for name in NAMES}
    totals = {}
    for _ in range(repeats):  # interleaved: a slow moment of the machine hits all three
        for name in NAMES:
            began = time.perf_counter()
            totals[name] = [int(v) for v in runs[name]()]
            best[name] = min(best[name], time.perf_counter() - began)
    rows = {}
    for name in NAMES:
        tokenizer, fit_seconds = fitted[name]
        sentences, ids, unknown, _ = totals[name]
        rows[name] = {
            "vocabulary": tokenizer.vocabulary_size, "fit_seconds": fit_seconds,
            "sentences_seen": sentences, "ids": ids, "ids_per_sentence": ids / sentences,
            "unknown_share": unknown / ids if ids else 0.0, "seconds": best[name],
            "sentences_per_s": sentences / best[name], "ids_per_s": ids / best[name],
        }
        if name != "word":
            rows[name]["round_trip_sentences"] = round_trips(tokenizer, texts)
    word = rows["word"]["sentences_per_s"]
    result = {
        "data": data, "sentences": len(texts), "batch_size": batch_size, "repeats": repeats,
        "timing": f"best of {repeats} tf.data passes in a tf.function, after one untimed "
                  "pass",
        "requested_vocabulary_size": base.vocabulary_size, "lowercase": base.lowercase,
        "tokenizers": rows,
        "subword_unigram_over_word": rows["subword_unigram"]["sentences_per_s"] / word,
        "subword_bpe_over_word": rows["subword_bpe"]["sentences_per_s"] / word,
    }
    log("[8] tokenizers in the graph: " + ", ".join(
        f"{name} {rows[name]['sentences_per_s']:,.0f} sentences/s" for name in NAMES))
    return result


def bench_section(quick, skipped=None, log=print):
    """The row as `elman bench` runs it: the data of `bench_sentences`, best of 3."""
    texts, data = bench_sentences(quick, skipped)
    log(f"[8] tokenizer speed on {len(texts)} sentences ({data}) ...")
    return tokenizer_speed(texts, base_config(), batch_size=512, repeats=3, data=data, log=log)


def table_rows(result):
    """(name, value) rows for `elman bench`'s terminal table."""
    if not result:
        return []
    rows, t = [], result["tokenizers"]
    word = t["word"]["sentences_per_s"]
    rows.append((f"[8] tokenizer sentences/s in the graph ({result['sentences']} sentences, "
                 f"batch {result['batch_size']}, best of {result['repeats']})",
                 f"word {word:,.0f} | unigram {t['subword_unigram']['sentences_per_s']:,.0f} "
                 f"({result['subword_unigram_over_word']:.2f}x word) | bpe "
                 f"{t['subword_bpe']['sentences_per_s']:,.0f} "
                 f"({result['subword_bpe_over_word']:.2f}x word)"))
    rows.append(("[8] tokenizer ids per sentence, vocabulary",
                 ", ".join(f"{n} {t[n]['ids_per_sentence']:.2f} ({t[n]['vocabulary']} ids)"
                           for n in NAMES) + f"; data: {result['data']}"))
    rows.append(("[8] subword sentences given back exactly",
                 ", ".join(f"{n} {t[n]['round_trip_sentences']}/{t[n]['sentences_seen']}"
                           for n in NAMES[1:])))
    return rows
