"""The one run skeleton: what every `elman train` does, whatever the task.

A task supplies only what differs through the hooks of `elman.tasks.base.Task`; this
module writes the config, the model (atomically), the report with its
reproducibility block, metrics.json, run.json and the reports index.
"""

import datetime
from pathlib import Path

from elman import config as config_lib
from elman.core.intervals import interval_line
from elman.core.split import sha256
from elman.errors import UserError
from elman.tasks.base import RunContext


def learning_curves_section(history, report_dir):
    """The "Learning curves" section (the plot written to `report_dir`)."""
    from elman.core import report as rep

    curves = rep.plot_learning_curves(history, Path(report_dir) / "learning_curves.png")
    return "## Learning curves\n\n" + f"![learning curves]({curves})"


def weights_text(result):
    """What became of the weights besides the best epoch's: `; the weights are the mean of
    epochs …` (`train.average_best`), `; the best weights restored and the learning rate
    lowered after epoch …` (`train.plateau`), or ""."""
    averaged = getattr(result, "averaged_epochs", None)
    text = (f"; the weights are the mean of epochs {', '.join(map(str, averaged))}"
            " (`train.average_best`)") if averaged else ""
    plateaus = getattr(result, "plateaus", None)
    if plateaus:
        text += ("; the best weights restored and the learning rate lowered after epoch"
                 + ("s " if len(plateaus) > 1 else " ")
                 + ", ".join(f"{epoch} (to {rate:.3g})" for epoch, _, rate in plateaus)
                 + " (`train.plateau`)")
    return text


def training_line(result, note=""):
    """`Trained N epochs (best: epoch B, stopped early); T training tokens/s ...`,
    and how the batches were formed."""
    cut = getattr(result, "cut_epoch", None)
    cut_text = (f", epoch {cut['epoch']} stopped by the time budget after {cut['batches']}"
                + (f" of {cut['of']}" if cut.get("of") else "") + " batches") if cut else ""
    return (f"Trained {result.epochs_run} epochs (best: epoch {result.best_epoch}"
            f"{', stopped early' if result.stopped_early else ''}{cut_text}"
            f"{weights_text(result)}); "
            f"{result.tokens_per_second:,.0f} training tokens/s in this process{note}."
            + _batching_text(getattr(result, "batching", None)))


def _batching(train_cfg):
    """How training batches are formed (run.json, the reproducibility block)."""
    from elman.core.batching import describe_batching  # TensorFlow is loaded by then

    return describe_batching(train_cfg)


def _batching_text(info):
    """` Batches: ...` for the training line ("" when unknown)."""
    if not info or "batches_per_epoch" not in info:
        return ""
    rule = (f"token budget of {info['batch_tokens']:,} padded tokens (`train.batch_tokens`)"
            if info["mode"] == "tokens" else f"{info['batch_size']} examples each")
    multiple = info.get("length_multiple", 1)
    padding = (f" Lengths padded up to a multiple of {multiple} (`train.length_multiple`)."
               if multiple > 1 else "")
    xla = " Steps compiled with XLA (`train.xla`)." if info.get("xla") else ""
    calls = info.get("steps_per_execution", 1)
    if calls > 1:
        xla += f" {calls} steps a call (`train.steps_per_execution`)."
    return (f" Batches: {rule}; {info['batches_per_epoch']:,} an epoch, "
            f"{info['mean_examples_per_batch']:.1f} examples and "
            f"{info['mean_real_tokens_per_batch']:,.0f} real tokens a batch on average."
            + padding + xla)


def train_metrics(result):
    """The metrics.json keys every trained run has, from a TrainResult."""
    batching = {"batching": result.batching} if getattr(result, "batching", None) else {}
    cut = getattr(result, "cut_epoch", None)
    averaged = getattr(result, "averaged_epochs", None)
    plateaus = getattr(result, "plateaus", None)
    return {"history": result.history, "best_epoch": result.best_epoch,
            "epochs_run": result.epochs_run, **({"cut_epoch": cut} if cut else {}),
            **({"averaged_epochs": list(averaged)} if averaged else {}),
            **({"plateaus": [dict(zip(("epoch", "restored_epoch", "learning_rate"), p))
                             for p in plateaus]} if plateaus else {}),
            "train_tokens_per_second": result.tokens_per_second, **batching}


def _diagnostics(cfg, report_dir):
    from elman.core.diagnostics import gradient_flow, gradient_flow_markdown, plot_gradient_flow

    # the width of the task's recurrent layers: `encoder` (sentiment, tagging) or `model`
    sizes = getattr(cfg, "encoder", None) or getattr(cfg, "model", None)
    flow = gradient_flow(units=getattr(sizes, "units", 32), seed=cfg.train.seed)
    plot_gradient_flow(flow, Path(report_dir) / "gradient_flow.png")
    return "## Gradient flow\n\n" + gradient_flow_markdown(
        flow, png_name="gradient_flow.png", heading_level=0)


def _write_report(task, ctx, parts, diagnose):
    from elman.core import report as rep
    from elman.core import runtime

    cfg, main = ctx.cfg, ctx.main
    data_files = [{"split": n, "source": s.source, "sha256": s.sha256}
                  for n, s in ctx.splits.items()] + list(parts.data_files)
    device = runtime.device_summary(cfg.train, ctx.strategy)
    device["batching"] = ", ".join(f"{k} {v}" for k, v in _batching(cfg.train).items())
    repro_md, repro = rep.reproducibility(config_lib.dumps_toml(cfg), data_files,
                                          cfg.train.seed, device)
    interval = main.extra.get("interval")  # the main score's bootstrap interval, if any
    body = "\n\n".join(parts.summary + ([interval_line(interval, main.split)] if interval
                                          else []) + parts.sections)
    if diagnose:
        body += "\n\n" + _diagnostics(cfg, ctx.report_dir)
    body += "\n\n" + repro_md
    finished = datetime.datetime.now().isoformat(timespec="seconds")
    metrics = {"task": task.name, "run_id": ctx.run_dir.name, "run_dir": str(ctx.run_dir),
               "finished": finished, "split": main.split, "main_metric": main.main_metric,
               "scores": main.scores, "reproducibility": repro, **parts.metrics}
    units = main.extra.get("interval_units")
    if interval and units is not None and interval.get("statistic"):  # for elman compare
        from elman.core import intervals

        intervals.write_units(Path(ctx.report_dir) / intervals.UNITS_FILE, units,
                              interval["statistic"])
        interval = {**interval, "units_file": intervals.UNITS_FILE}
    if interval:
        metrics["interval"] = interval
    examples = main.examples if parts.examples is None else parts.examples
    rep.write_report(ctx.report_dir, f"{task.title} report — {ctx.run_dir.name}", body,
                     metrics, examples, index=False)
    return metrics, finished


def _staging(report_dir):
    """The hidden folder a report is written into before it is renamed into place."""
    return report_dir.parent / f".{report_dir.name}.tmp"


def _publish(staging, report_dir):
    """Renames the finished report into place, so a report folder is complete or absent."""
    import shutil

    from elman.core import report as rep

    old = report_dir.parent / f".{report_dir.name}.old"
    if old.exists():
        shutil.rmtree(old)
    if report_dir.exists():
        report_dir.rename(old)
    staging.rename(report_dir)
    if old.exists():
        shutil.rmtree(old)
    rep.update_index(report_dir.parent.parent)


def clean_stale_files(run_dir, report_dir):
    """Removes what an interrupted run left half-written: temporary model and weights
    files, atomic-write leftovers and a report folder that was never published."""
    import shutil

    for folder in (run_dir, run_dir / "checkpoints"):
        if folder.is_dir():
            for path in folder.iterdir():
                if path.is_file() and (".tmp." in path.name or path.name.endswith(".tmp")):
                    path.unlink(missing_ok=True)
    for path in (_staging(report_dir), report_dir.parent / f".{report_dir.name}.old"):
        if path.exists():
            shutil.rmtree(path)


def run(task, cfg, run_dir, report_dir, resume=False, diagnose=False, log=print):
    """Trains, saves, scores and reports one run of `task`.

    Args:
        task: an `elman.tasks.base.Task`.
        cfg: the task's frozen config.
        run_dir: str or Path, the run folder (model, vocabularies, checkpoints).
        report_dir: str or Path, the report folder.
        resume: bool, continue from the run folder's last committed epoch.
        diagnose: bool, add the gradient-flow section to the report.
        log: callable for progress lines.

    Returns:
        metrics.json's dict, or None when a time budget stopped the run before a
        model existed (run again with `resume=True`).
    """
    from elman.core import runs

    task.check(cfg)
    if resume and not (Path(run_dir) / "config.json").is_file():
        raise UserError("nothing to resume: no config.json in the run folder (start it "
                        "without --resume)", path=run_dir)
    ctx = RunContext(cfg=cfg, run_dir=Path(run_dir), report_dir=Path(report_dir),
                     resume=resume, log=log)
    clean_stale_files(ctx.run_dir, ctx.report_dir)
    ctx.splits = task.load_data(cfg)  # fail fast, before TensorFlow loads
    if resume:  # no intact commit to resume from: refused before anything is written
        from elman.core.checkpoints import read_state

        read_state(ctx.run_dir)
    from elman.core import runtime

    ctx.strategy = runtime.configure(cfg.train, log)
    ctx.run_dir.mkdir(parents=True, exist_ok=True)
    ctx.state = task.prepare(ctx)
    runs.write_config(ctx.run_dir, cfg)
    ctx.fitted = task.fit(ctx)
    if ctx.fitted is None:
        return None
    model = task.inference_model(ctx)
    model_file = runs.save_model(model, ctx.run_dir)
    task.export(ctx, model)
    ctx.results = task.score(ctx)
    final_report = ctx.report_dir
    ctx.report_dir = _staging(final_report)  # the task's plots and files go there too
    ctx.report_dir.mkdir(parents=True)
    parts = task.report(ctx)
    metrics, finished = _write_report(task, ctx, parts, diagnose)
    _publish(ctx.report_dir, final_report)
    ctx.report_dir = final_report
    runs.write_run_file(ctx.run_dir, {"task": task.name, "run_id": ctx.run_dir.name,
                                      "report_dir": str(ctx.report_dir),
                                      "finished": finished,
                                      "model_sha256": sha256(model_file),
                                      "batching": _batching(cfg.train),
                                      **parts.run_info})
    log(task.headline(ctx.main) + f"  report: {ctx.report_dir / 'report.md'}")
    return metrics
