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


def resample_indices(n, resamples, seed):
    """The row indices of each resample, [resamples, n], drawn `CHUNK` resamples at a
    time from one seeded generator (what `resampled_interval` draws)."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, CHUNK):
        yield rng.integers(0, n, size=(min(CHUNK, resamples - start), n))


def resampled_interval(units, statistic, level=LEVEL, resamples=RESAMPLES, seed=0):
    """The percentile bootstrap interval of `statistic` over the rows of `units`.

    Args:
        units: array-like [n, k], one row of counts per independent unit (a text, a
            sentence); the score of a set of units is `statistic` of their column sums.
        statistic: callable, [..., k] sums → [...] scores (`accuracy_of`, `f1_of`).
        level: float in (0, 1), the share of resampled scores inside the interval.
        resamples: int, the number of resamples.
        seed: int, the seed of the draws.

    Returns:
        dict with "low" and "high" (the (1 - level) / 2 and (1 + level) / 2 quantiles of
        the resampled scores), "score" (the statistic of all units), "level",
        "resamples", "units" (n) and "seed"; None when there are no units.
    """
    units = np.asarray(units, dtype="float64")
    if units.ndim != 2 or not len(units):
        return None
    scores = np.concatenate([statistic(units[rows].sum(axis=1))
                             for rows in resample_indices(len(units), resamples, seed)])
    low, high = np.quantile(scores, [(1 - level) / 2, (1 + level) / 2])
    return {"score": float(statistic(units.sum(axis=0))), "low": float(low),
            "high": float(high), "level": level, "resamples": resamples,
            "units": int(len(units)), "seed": seed}


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
