"""`elman demo`: train every task on the project's toy data and write every report."""

import time
from pathlib import Path

from elman import config as config_lib
from elman import tasks


def parts():
    """The demo's runs in order: (part name, task, preset, run id), from the registry."""
    out = []
    for name in tasks.names():
        for part, preset, run_id in tasks.get(name).demo:
            out.append((part, name, preset, run_id))
    return out


def run_demo(reports_root="reports", runs_root="runs", only=None, log=print):
    """Trains each task's toy presets, then reproduces the textbook cases.

    Args:
        reports_root: str, where reports go (reports/<task>/<run-id>/).
        runs_root: str, where run folders go (runs/<task>/<run-id>/).
        only: list of part names to run (see `parts()`, plus "textbook"), or None for all.
        log: callable for progress messages.

    Returns:
        0 when every part ran.
    """
    from elman.core.run import run

    summary, served = [], []
    for part, task, preset, run_id in parts():
        if only and part not in only:
            continue
        preset_file = config_lib.preset_path(task, preset)
        log(f"== {part}: training on the toy data ({preset_file})")
        cfg = config_lib.load_config(task, preset_file)
        began = time.perf_counter()
        metrics = run(tasks.get(task), cfg, Path(runs_root) / task / run_id,
                      Path(reports_root) / task / run_id, resume=False, log=log)
        main = metrics.get("main_metric", "")
        value = metrics.get("scores", {}).get(main, "")
        summary.append((part, main, value, time.perf_counter() - began,
                        Path(reports_root) / task / run_id / "report.md"))
        served.append(str(Path(runs_root) / task / run_id))
    if not only or "textbook" in only:
        log("== textbook: cases A-G")
        from elman.tasks.textbook import runner as textbook

        began = time.perf_counter()
        record = textbook.run_textbook(Path(reports_root) / "textbook")
        summary.append(("textbook", "flags", len(record.get("flags", [])),
                        time.perf_counter() - began, Path(reports_root) / "textbook/report.md"))
    log("\n== demo summary")
    for part, metric, value, seconds, report in summary:
        shown = f"{value:.4f}" if isinstance(value, float) else str(value)
        log(f"{part:14s} {metric} {shown:>8s}  {seconds:6.1f}s  {report}")
    log(f"index of every run: {Path(reports_root) / 'index.md'}")
    if served:
        log(f"serve these runs (API and web page at http://127.0.0.1:8000/):\n"
            f"  elman serve {' '.join(served)} --reports {reports_root}")
    return 0
