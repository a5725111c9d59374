"""`elman compare REPORT_A REPORT_B`: whether run B's score is above run A's beyond what
the scored examples alone explain, by a paired bootstrap over the units both reports
scored (`intervals.paired_difference` on their `scored_units.tsv`)."""

import json
from pathlib import Path

from elman.core import intervals
from elman.errors import UserError


def report_folder(folder):
    """The report folder itself, or a run folder's report (its run.json names it)."""
    folder = Path(folder)
    run_file = folder / "run.json"
    if not (folder / "metrics.json").is_file() and run_file.is_file():
        try:
            named = json.loads(run_file.read_text(encoding="utf-8")).get("report_dir")
        except json.JSONDecodeError as err:
            raise UserError(f"not valid JSON ({err.msg})", path=run_file,
                            line=err.lineno) from None
        if named:
            return Path(named)
    return folder


def _read(report):
    """(metrics.json's dict, the per-unit counts) of one report folder."""
    path = Path(report) / "metrics.json"
    if not path.is_file():
        raise UserError("not a report folder: no metrics.json in it", path=report)
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"not valid JSON ({err.msg})", path=path, line=err.lineno) from None
    interval = metrics.get("interval") or {}
    if not interval.get("units_file") or interval.get("statistic") not in intervals.STATISTICS:
        raise UserError("this report holds no per-unit counts of its score (reports "
                        "written before 2026-12-04 have none): train the run again",
                        path=report)
    units_path = Path(report) / interval["units_file"]
    if not units_path.is_file():
        raise UserError(f"{interval['units_file']} is missing from the report folder",
                        path=report)
    return metrics, intervals.read_units(units_path, interval["statistic"])


def _scored_file(metrics):
    """The SHA-256 of the file the report's main split came from ("" when unknown)."""
    files = (metrics.get("reproducibility") or {}).get("data_files") or []
    return next((f.get("sha256") or "" for f in files if f.get("split") == metrics["split"]),
                "")


def compare_reports(report_a, report_b, resamples=intervals.RESAMPLES, seed=0):
    """The paired comparison of two reports of runs scored on the same split (a run
    folder stands for its report).

    Returns:
        `intervals.paired_difference`'s dict plus "metric", "unit", "split" and the two
        folders; a UserError when the reports scored different statistics, splits or
        files, or different numbers of units.
    """
    report_a, report_b = report_folder(report_a), report_folder(report_b)
    (ma, ua), (mb, ub) = _read(report_a), _read(report_b)
    ia, ib = ma["interval"], mb["interval"]
    if (ia["statistic"], ma["split"]) != (ib["statistic"], mb["split"]):
        raise UserError(f"the reports scored different things: {ia['metric']} on "
                        f"{ma['split']} against {ib['metric']} on {mb['split']}")
    sha_a, sha_b = _scored_file(ma), _scored_file(mb)
    if sha_a and sha_b and sha_a != sha_b:
        raise UserError(f"the reports scored different {ma['split']} files (SHA-256 "
                        f"{sha_a[:12]}… against {sha_b[:12]}…): a paired comparison needs "
                        f"the same examples")
    if ua.shape != ub.shape:
        raise UserError(f"the reports scored {len(ua):,} and {len(ub):,} {ia['unit']}: a "
                        f"paired comparison needs the same examples")
    result = intervals.paired_difference(ua, ub, ia["statistic"], resamples=resamples,
                                         seed=seed)
    return {**result, "metric": ia["metric"], "unit": ia["unit"], "split": ma["split"],
            "report_a": str(report_a), "report_b": str(report_b)}


def comparison_lines(result):
    """The comparison as the terminal prints it."""
    digits = 4 if max(abs(result["a"]), abs(result["b"])) <= 1 else 2
    metric, level = result["metric"], f"{result['level']:.0%}"
    return [
        f"A  {result['report_a']}: {metric} {result['a']:.{digits}f}",
        f"B  {result['report_b']}: {metric} {result['b']:.{digits}f}",
        f"B - A: {result['difference']:+.{digits}f}; {level} paired bootstrap interval "
        f"{result['low']:+.{digits}f} to {result['high']:+.{digits}f} over the "
        f"{result['units']:,} {result['split']} {result['unit']} ({result['resamples']:,} "
        f"resamples, the same {result['unit']} drawn for both runs)",
        f"B scores higher in {result['b_better']:.1%} of the resamples, the same in "
        f"{result['ties']:.1%}" + _verdict(result),
    ]


def _verdict(result):
    """What the interval of the difference says."""
    if result["ties"] == 1.0:
        return ": the two runs score the same on every resample"
    if result["low"] > 0 or result["high"] < 0:
        return f": the difference holds beyond the {result['unit']} drawn"
    return f": the {result['unit']} drawn alone could give either order"
