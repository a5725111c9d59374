"""The translation task's scores: corpus BLEU and chrF (sacrebleu), exact match, length
ratio, BLEU by source length, and one split decoded and scored."""

import math
import time

from elman.tasks.translation.data import targets


def bleu_tokenizer(eval_cfg, target_lang, references=()):
    """The sacrebleu tokenizer for a target language: zh for Chinese, 13a otherwise.

    Args:
        eval_cfg: TranslationEvalConfig (`bleu_tokenize` other than "auto" wins).
        target_lang: str, the target language code ("" when unknown).
        references: list of str, looked at when the language is unknown (mostly Han: zh).
    """
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


def lowercase(cfg):
    """Scores are case-insensitive when asked, or when the target tokenizer lower-cases
    (the model cannot produce capitals, so case-sensitive BLEU would only measure that)."""
    return bool(cfg.eval.lowercase or cfg.target_tokenizer.lowercase)


def translation_scores(hypotheses, references, hyp_tokens, ref_tokens, tokenize, lowercase):
    """Corpus BLEU and chrF (sacrebleu), exact match and length ratio; sentence BLEU too.

    Exact match compares token sequences (the target tokenizer's split of the reference,
    the decoder's tokens of the hypothesis), so it does not depend on detokenization.

    Args:
        hypotheses, references: lists of str.
        hyp_tokens, ref_tokens: lists of lists of str tokens.
        tokenize: str, the sacrebleu tokenizer.
        lowercase: bool, case-insensitive BLEU and chrF.

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
    if lowercase:
        lower_bleu, lower_chrf = corpus.score, chrf.score
    else:  # the case-insensitive scores too, comparable with lower-cased runs
        lower_bleu = BLEU(tokenize=tokenize, lowercase=True, force=True).corpus_score(
            hypotheses, [references]).score
        lower_chrf = CHRF(lowercase=True).corpus_score(hypotheses, [references]).score
    scores = {
        "bleu": float(corpus.score),
        "chrf": float(chrf.score),
        "bleu_lowercase": float(lower_bleu),
        "chrf_lowercase": float(lower_chrf),
        "cased": not lowercase,
        "exact_match": exact / len(references) if references else 0.0,
        "length_ratio": corpus.sys_len / corpus.ref_len if corpus.ref_len else 0.0,
        "bleu_brevity_penalty": float(corpus.bp),
        "hypothesis_tokens": int(corpus.sys_len),
        "reference_tokens": int(corpus.ref_len),
        "pairs": len(references),
    }
    return scores, per_sentence, corpus.format(signature=bleu.get_signature().format())


def bleu_units(hypotheses, references, tokenize, lowercase):
    """Per sentence pair, sacrebleu's sufficient statistics of corpus BLEU: [hypothesis
    length, reference length, matched n-grams for n = 1..4, hypothesis n-grams for n =
    1..4] (the columns of `intervals.STATISTICS["bleu"]`), read from the public fields of
    a one-pair `corpus_score`; their sums give the corpus's BLEU exactly."""
    from sacrebleu.metrics import BLEU

    bleu = BLEU(tokenize=tokenize, lowercase=lowercase, force=True)
    rows = []
    for hypothesis, reference in zip(hypotheses, references):
        one = bleu.corpus_score([hypothesis], [[reference]])
        rows.append([one.sys_len, one.ref_len, *one.counts, *one.totals])
    return rows


def bleu_interval(hypotheses, references, tokenize, lowercase, resamples=None):
    """Corpus BLEU's bootstrap interval over the sentence pairs (`elman.core.intervals`):
    each resample's BLEU is sacrebleu's BLEU of those pairs, brevity penalty included.
    Returns (the described interval, the per-pair units), or (None, []) for no pairs."""
    from elman.core import intervals

    units = bleu_units(hypotheses, references, tokenize, lowercase)
    interval = intervals.resampled_interval(units, "bleu",
                                            resamples=resamples or intervals.RESAMPLES)
    return intervals.described(interval, "BLEU", "sentence pairs"), units


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


def unknown_share(ids, end_id):
    """The share of decoded rows with the unknown id (1) before their end (or padding).

    Args:
        ids: int array `[batch, T]` of decoded ids.
        end_id: int, the end token's id.
    """
    import numpy as np

    ids = np.asarray(ids)
    if ids.shape[0] == 0:
        return 0.0
    stop = (ids == end_id) | (ids == 0)
    before_end = np.cumsum(stop, axis=1) == 0
    return float(np.mean(np.any((ids == 1) & before_end, axis=1)))


def compare_beams(translator, split, source_ids, cfg, widths):
    """The split decoded greedily and with each beam width: one row of scores per decoder.

    Returns:
        list of {"decoding", "beam_width", "bleu", "chrf", "bleu_lowercase",
        "exact_match", "length_ratio", "unknown_share", "sentences_per_s", "seconds"};
        the first row is greedy (beam_width 0).
    """
    rows = []
    for width in (0, *widths):
        scores = evaluate_split(translator, split, source_ids, cfg, beam_width=width)[0]
        rows.append({"decoding": f"beam {width}" if width else "greedy", "beam_width": width,
                     **{k: scores[k] for k in ("bleu", "chrf", "bleu_lowercase",
                                               "exact_match", "length_ratio",
                                               "unknown_share")},
                     "sentences_per_s": scores["decode_sentences_per_s"],
                     "seconds": scores["pairs"] / scores["decode_sentences_per_s"]
                     if scores["decode_sentences_per_s"] else 0.0})
    return rows


def evaluate_split(translator, split, source_ids, cfg, beam_width=0):
    """Decodes one split and scores it.

    Args:
        translator: a `Translator`.
        split: the Split of pairs.
        source_ids: ragged int ids of the split's sources.
        cfg: TranslationConfig (languages, eval settings).
        beam_width: int, 0 for greedy decoding.

    Returns:
        (scores, rows, buckets, signature, ids).
    """
    from elman.text.tokenize import split_all

    translator.translate_ids(source_ids[:2], beam_width)  # warm-up: tracing is not timed
    started = time.perf_counter()
    ids = translator.translate_ids(source_ids, beam_width)
    seconds = time.perf_counter() - started
    hypotheses = translator.texts(ids)
    hyp_tokens = translator.tokens(ids)
    references = targets(split)
    ref_tokens = split_all(translator.target_tokenizer, references)
    tokenize = bleu_tokenizer(cfg.eval, cfg.data.target_lang, references)
    scores, per_sentence, signature = translation_scores(
        hypotheses, references, hyp_tokens, ref_tokens, tokenize, lowercase(cfg))
    scores["decode_sentences_per_s"] = len(references) / seconds if seconds else 0.0
    scores["unknown_share"] = unknown_share(ids, translator.end_id)
    source_lengths = source_ids.row_lengths().numpy().tolist()
    buckets = bleu_by_length(hypotheses, references, source_lengths, tokenize, lowercase(cfg))
    rows = [{"index": i, "where": p.get("where", ""), "source": p["source"],
             "reference": p["target"], "hypothesis": h, "sentence_bleu": b,
             "exact": ht == rt, "source_tokens": n}
            for i, (p, h, b, ht, rt, n) in enumerate(zip(
                split.items, hypotheses, per_sentence, hyp_tokens, ref_tokens, source_lengths))]
    return scores, rows, buckets, signature, ids
