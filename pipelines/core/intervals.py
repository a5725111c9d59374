"""How precise a score is: a bootstrap interval over the examples of the split scored.

A dev score comes from one finite sample of a kind of text. Drawing that many examples
again, with replacement, many times and scoring each draw shows how far the score moves
with the sample alone (Efron's bootstrap; Koehn 2004 for machine translation). Every
main metric here is a function of sums over independent units (texts, sentences), so a
split is reduced once to a [units, k] array of per-unit counts and each resample only
re-adds its rows: accuracy is Σ correct / Σ 1, entity F1 is 2 Σ correct / (Σ predicted +
Σ gold). The interval is the percentile one, and the draws are seeded, so the same
predictions always give the same interval.

Example:

```python
from elman.core import intervals

units = [[1, 1], [0, 1], [1, 1], [1, 1]]  # per text: correct, counted
intervals.resampled_interval(units, intervals.accuracy_of)  # {"low": ..., "high": ...}
```
"""

from pathlib import Path

import numpy as np

RESAMPLES = 1000
LEVEL = 0.95
CHUNK = 100  # resamples drawn and summed at a time (bounds the memory of one draw)


def accuracy_of(sums):
    """Σ correct / Σ counted from summed [correct, counted] columns (0 when none)."""
    sums = np.asarray(sums, dtype="float64")
    return np.divide(sums[..., 0], sums[..., 1], out=np.zeros(sums.shape[:-1]),
                     where=sums[..., 1] > 0)


def f1_of(sums):
    """Micro F1 = 2 Σ correct / (Σ predicted + Σ gold) from summed [correct, predicted,
    gold] columns: the same value as 2PR / (P + R), and 0 when nothing is predicted or
    gold."""
    sums = np.asarray(sums, dtype="float64")
    total = sums[..., 1] + sums[..., 2]
    return np.divide(2.0 * sums[..., 0], total, out=np.zeros(sums.shape[:-1]), where=total > 0)


def bleu_of(sums):
    """Corpus BLEU (sacrebleu's `BLEU.compute_bleu` with the exponential smoothing its
    `BLEU()` scorer uses) from summed [hypothesis length, reference length, matches for
    n = 1..4, totals for n = 1..4] columns."""
    from sacrebleu.metrics import BLEU

    sums = np.asarray(sums, dtype="float64")
    rows = sums.reshape(-1, sums.shape[-1])
    scores = [BLEU.compute_bleu(correct=[int(v) for v in row[2:6]],
                                total=[int(v) for v in row[6:10]], sys_len=int(row[0]),
                                ref_len=int(row[1]), smooth_method="exp").score
              for row in rows]
    return np.array(scores).reshape(sums.shape[:-1])


# the statistics by name, with the columns of the per-unit counts each one reads
STATISTICS = {"accuracy": (accuracy_of, ("correct", "counted")),
              "f1": (f1_of, ("correct", "predicted", "gold")),
              "bleu": (bleu_of, ("hypothesis_length", "reference_length", "matches_1",
                                 "matches_2", "matches_3", "matches_4", "totals_1",
                                 "totals_2", "totals_3", "totals_4"))}


def resample_indices(n, resamples, seed):
    """The row indices of each resample, [resamples, n], drawn `CHUNK` resamples at a
    time from one seeded generator (what `resampled_interval` draws)."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, CHUNK):
        yield rng.integers(0, n, size=(min(CHUNK, resamples - start), n))


def _statistic(statistic):
    return STATISTICS[statistic][0] if isinstance(statistic, str) else statistic


def resampled_interval(units, statistic, level=LEVEL, resamples=RESAMPLES, seed=0):
    """The percentile bootstrap interval of `statistic` over the rows of `units`.

    Args:
        units: array-like [n, k], one row of counts per independent unit (a text, a
            sentence); the score of a set of units is `statistic` of their column sums.
        statistic: a name in `STATISTICS` ("accuracy", "f1", "bleu") or a callable,
            [..., k] sums → [...] scores.
        level: float in (0, 1), the share of resampled scores inside the interval.
        resamples: int, the number of resamples.
        seed: int, the seed of the draws.

    Returns:
        dict with "low" and "high" (the (1 - level) / 2 and (1 + level) / 2 quantiles of
        the resampled scores), "score" (the statistic of all units), "level",
        "resamples", "units" (n), "seed" and, for a named statistic, "statistic"; None
        when there are no units.
    """
    units = np.asarray(units, dtype="float64")
    if units.ndim != 2 or not len(units):
        return None
    function = _statistic(statistic)
    scores = np.concatenate([function(units[rows].sum(axis=1))
                             for rows in resample_indices(len(units), resamples, seed)])
    low, high = np.quantile(scores, [(1 - level) / 2, (1 + level) / 2])
    named = {"statistic": statistic} if isinstance(statistic, str) else {}
    return {"score": float(function(units.sum(axis=0))), "low": float(low),
            "high": float(high), "level": level, "resamples": resamples,
            "units": int(len(units)), "seed": seed, **named}


def paired_difference(units_a, units_b, statistic, level=LEVEL, resamples=RESAMPLES, seed=0):
    """How run B's score differs from run A's on the same units, resampled in pairs.

    Each resample draws the same units for both runs (Koehn 2004's paired bootstrap), so
    what the two runs share cancels out and only where they differ moves the difference.

    Args:
        units_a, units_b: array-like [n, k], the two runs' per-unit counts, row i of
            both for the same unit.
        statistic: as for `resampled_interval`.

    Returns:
        dict with "a", "b" (the two scores), "difference" (b - a), "low" and "high" (the
        difference's percentile interval), "b_better" (the share of resamples where B
        scores higher), "ties" (where they score the same), "level", "resamples",
        "units" and "seed".
    """
    a, b = (np.asarray(u, dtype="float64") for u in (units_a, units_b))
    if a.shape != b.shape or a.ndim != 2 or not len(a):
        raise ValueError(f"Expected two [n, k] count arrays of one shape. Received: "
                         f"{a.shape} and {b.shape}")
    function = _statistic(statistic)
    differences = np.concatenate([function(b[rows].sum(axis=1)) - function(a[rows].sum(axis=1))
                                  for rows in resample_indices(len(a), resamples, seed)])
    low, high = np.quantile(differences, [(1 - level) / 2, (1 + level) / 2])
    score_a, score_b = float(function(a.sum(axis=0))), float(function(b.sum(axis=0)))
    return {"a": score_a, "b": score_b, "difference": score_b - score_a, "low": float(low),
            "high": float(high), "b_better": float(np.mean(differences > 0)),
            "ties": float(np.mean(differences == 0)), "level": level,
            "resamples": resamples, "units": int(len(a)), "seed": seed}


UNITS_FILE = "scored_units.tsv"


def write_units(path, units, statistic):
    """Writes the per-unit counts behind a score as TSV, headed by the statistic's
    columns (so `elman compare` can resample two runs in pairs), atomically."""
    from elman.core.html import write_text_atomic

    columns = STATISTICS[statistic][1]
    lines = ["\t".join(columns)] + ["\t".join(str(int(v)) for v in row) for row in units]
    write_text_atomic(path, "\n".join(lines) + "\n")


def read_units(path, statistic):
    """The [n, k] counts of a `write_units` file; a UserError naming the file and line
    for a header or row that is not what `statistic` reads."""
    from elman.errors import UserError

    columns = STATISTICS[statistic][1]
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if not lines or tuple(lines[0].split("\t")) != columns:
        raise UserError(f"expected the header {' '.join(columns)} (the counts of "
                        f"{statistic})", path=path, line=1)
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(columns) or not all(f.isdigit() for f in fields):
            raise UserError(f"expected {len(columns)} counts (whole numbers, tab-separated)",
                            path=path, line=number)
        rows.append([int(f) for f in fields])
    return np.array(rows, dtype="float64").reshape(-1, len(columns))


def described(interval, metric, unit):
    """The interval with the metric's name and the unit resampled ("texts", ...) added,
    as EvalResult.extra["interval"] holds it (None stays None)."""
    return None if interval is None else {**interval, "metric": metric, "unit": unit}


def interval_line(interval, split):
    """One report sentence saying what the interval (from `described`) is and what it
    means; "" for None."""
    if not interval:
        return ""
    metric, unit = interval["metric"], interval["unit"]
    digits = 4 if abs(interval["score"]) <= 1 else 2  # fractions, or BLEU's 0-100
    return (f"**How precise:** drawing the {interval['units']:,} {split} {unit} again with "
            f"replacement {interval['resamples']:,} times (a seeded bootstrap) puts {metric} "
            f"between **{interval['low']:.{digits}f}** and **{interval['high']:.{digits}f}** in "
            f"{interval['level']:.0%} of the draws: that much of the score is down to which "
            f"{unit} the split happens to hold, and another sample of this kind and size "
            f"would likely score within about that range. (Two runs scored on this same "
            f"split share their {unit}, so their difference is a paired question, not "
            f"answered by this interval.)")
