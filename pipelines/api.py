"""elman's public Python API: `train`, `load`, `presets`, `evaluate` (the CLI is a thin
layer over these; both raise `elman.UserError` with the same message)."""

import dataclasses
import json
import os
import re
import tomllib
from pathlib import Path

from elman.errors import UserError


@dataclasses.dataclass
class Run:
    """A finished (or budget-stopped) training run.

    Attributes:
        path: Path, the run folder (model, vocabularies, checkpoints).
        report_dir: Path, the report folder.
        metrics: dict, metrics.json's content; None when a time budget stopped the run
            before a model existed (train again with `resume=True`).
    """

    path: Path
    report_dir: Path
    metrics: dict

    @property
    def scores(self):
        """The main split's scores ({} when the run has no model yet)."""
        return (self.metrics or {}).get("scores", {})


def quiet_tensorflow():
    """Hides TensorFlow's C++ start-up lines (before TensorFlow is imported)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


def config_file(task, value):
    """A config argument as a path: a TOML file, or the file of a preset name."""
    from elman import config as config_lib
    from elman import tasks

    if not value:
        return None
    path = Path(value)
    if path.is_file() or path.suffix == ".toml" or "/" in str(value):
        return path
    name = "default" if value == task else value.removeprefix(task + "-")
    preset = config_lib.preset_path(task, name)  # the file's stem names it too: sentiment-sst2
    if not preset.is_file():
        names = ", ".join(presets(task))
        other = [t for t in tasks.names()
                 if t != task and value.removeprefix(t + "-") in presets(t)]
        hint = f" ('{value}' is a preset of {' and '.join(other)})" if other else ""
        raise UserError(f"no config file or preset named '{value}' for task {task}{hint}; "
                        f"its presets: {names}")
    return preset


def data_settings(task, data=None, validation=None, test=None, text_column=None,
                  label_column=None, skip_bad_rows=False, repair_bio=False):
    """The nested `data` settings that the data arguments stand for, for one task."""
    from elman import tasks

    task_class = type(tasks.get(task))
    text_key, label_key = task_class.column_settings
    out = {}
    for value, key in ((data, "train"), (validation, "validation"), (test, "test"),
                       (text_column, text_key), (label_column, label_key)):
        if value:
            out[key] = str(value)
    if "train" in out:  # a new training file replaces the preset's toy validation/test too
        out.setdefault("validation", "")
        out.setdefault("test", "")
    for flag, on in (("skip_bad_rows", skip_bad_rows), ("repair_bio", repair_bio)):
        if on:
            if flag in task_class.refused_flags:
                raise UserError(task_class.refused_flags[flag])
            out[flag] = True
    _refuse_unused_flags(task, task_class, [
        ("--text-column", text_key, text_column), ("--label-column", label_key, label_column),
        ("--skip-bad-rows", "skip_bad_rows", skip_bad_rows),
        ("--repair-bio", "repair_bio", repair_bio)])
    return out


def _refuse_unused_flags(task, task_class, flags):
    """Refuses a data flag given for a task whose data has no setting for it (the lm has
    no label column): (flag, setting, value) each."""
    known = {f.name for f in dataclasses.fields(task_class.config_class().data)}
    for flag, key, value in flags:
        if value and key not in known:
            raise UserError(f"{flag} does not apply to the {task} task (its data has no "
                            f"'{key}' setting)")


#: the settings `--resume` may change: how long the run goes on, not what it is
RESUMABLE = ("train.epochs", "train.max_minutes", "train.threads")

#: config settings that hold file paths, stored resolved (absolute) in a run's config
PATH_SETTINGS = ("data.train", "data.validation", "data.test", "pretrain.texts",
                 "embedding.pretrained")


def _get(cfg, key):
    value = cfg
    for part in key.split("."):
        value = getattr(value, part, None)
    return value


def _saved_values(task, run_dir):
    if run_dir is None:
        raise UserError("--resume needs --out RUN_DIR (the run folder to continue)")
    saved = Path(run_dir) / "config.json"
    if not saved.is_file():
        raise UserError("nothing to resume: no config.json in the run folder", path=run_dir)
    try:
        values = json.loads(saved.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UserError(f"config.json is damaged: {err}", path=saved) from None
    if values.get("task", task) != task:
        raise UserError(f"this run folder belongs to task '{values['task']}', not '{task}': "
                        f"resume it with `elman train {values['task']} --out {run_dir} "
                        "--resume`", path=run_dir)
    return values


def _resume_config(task, run_dir, overrides, data):
    """The saved config with the allowed changes; a UserError names any other change."""
    from elman import config as config_lib

    cfg = config_lib.config_from_dict(task, _saved_values(task, run_dir))
    changed = []
    for key, value in data_settings(task, **data).items():
        saved = _get(cfg, f"data.{key}")
        if key in ("train", "validation", "test"):
            if value and _resolved(value) != _resolved(saved):
                changed.append(f"data.{key}")
        elif value != saved:
            changed.append(f"data.{key}")
    allowed = []
    for item in overrides:
        new = config_lib.load_config(task, None, [item], extra=config_lib.to_dict(cfg))
        key = item.split("=", 1)[0].strip()
        if key in RESUMABLE:
            allowed.append(item)
        elif _get(new, key) != _get(cfg, key):
            changed.append(key)
    if changed:
        raise UserError(
            "--resume continues the run as it was configured; these arguments would change "
            f"what it is: {', '.join(changed)} (on resume only {', '.join(RESUMABLE)} may "
            "change; give another --out for a new run)", path=run_dir)
    if allowed:
        cfg = config_lib.load_config(task, None, allowed, extra=config_lib.to_dict(cfg))
    return cfg


def _resolved(value):
    """A file path setting as an absolute path (hub names and empty values unchanged)."""
    if not value or str(value).startswith("hub:"):
        return value
    return str(Path(value).expanduser().resolve())


def resolve_paths(task, cfg):
    """The config with its data paths made absolute, so the run works from any folder."""
    from elman import config as config_lib

    values = config_lib.to_dict(cfg)
    for key in PATH_SETTINGS:
        section, _, name = key.partition(".")
        if name in values.get(section, {}) and values[section][name]:
            values[section][name] = _resolved(values[section][name])
    return config_lib.config_from_dict(task, values)


def _check_out(run_dir, overwrite):
    """Refuses to train over an existing run unless asked to; clears it when asked."""
    import shutil

    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise UserError("--out is an existing file; expected a run folder", path=run_dir)
    holds_run = (run_dir / "run.json").is_file() or (run_dir / "config.json").is_file()
    if holds_run and not overwrite:
        what = "a finished run" if (run_dir / "run.json").is_file() else "an unfinished run"
        raise UserError(f"this folder holds {what}; continue it with --resume, replace it "
                        "with --overwrite, or give another --out", path=run_dir)
    if holds_run:
        shutil.rmtree(run_dir)


def _override_list(overrides):
    if isinstance(overrides, dict):
        return [f"{k}={json.dumps(v) if isinstance(v, str) else _toml_value(v)}"
                for k, v in overrides.items()]
    return list(overrides or [])


def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def build_config(task, config=None, overrides=(), resume_dir=None, **data):
    """The run's config: preset or TOML file ← data arguments ← `section.key=value` overrides
    (on resume: the run's saved config ← the overrides `--resume` allows)."""
    from elman import config as config_lib

    overrides = _override_list(overrides)
    if resume_dir is not None:
        if config:
            raise UserError("--resume continues the run with its saved config; --config "
                            "would change it (give another --out for a new run)")
        return _resume_config(task, resume_dir, overrides, data)
    extra = {}
    settings = data_settings(task, **data)
    if settings:
        extra["data"] = settings
    return config_lib.load_config(task, config_file(task, config), overrides, extra=extra)


def _check_preset_files(task, config, cfg):
    """A data file that the preset or config file names (not the user), missing: says where
    it was looked for and how to give one's own, rather than only that it is not found."""
    preset = build_config(task, config)
    for key in ("train", "validation", "test"):
        value = getattr(cfg.data, key, "")
        if (not value or value != getattr(preset.data, key, "") or value.startswith("hub:")
                or Path(value).expanduser().exists()):
            continue
        source = (f"the config file {config}" if config and Path(config).is_file() else
                  f"the preset '{config}' of {task}" if config else
                  f"the default preset of {task}")
        raise UserError(
            f"not found: data.{key} = '{value}' comes from {source}, and a relative path is "
            f"read from the folder elman runs in ({Path.cwd()}); run elman where that file "
            "is, or give your own files: --data TRAIN --validation DEV",
            path=Path(value).expanduser().resolve())


def train(task, config=None, data=None, validation=None, test=None, out=None, overrides=None,
          resume=False, reports="reports", diagnose=False, log=print, overwrite=False,
          **options):
    """Trains a model of `task` and writes its run folder and report.

    Args:
        task: str, "sentiment", "tagging", "translation" or "lm" (see `elman.tasks`).
        config: str or None, a TOML file or a preset name ("sst2", "zh"); None: the
            task's default preset.
        data, validation, test: str or None, data files (or "hub:NAME" for data);
            `data` replaces the preset's files.
        out: str or None, the run folder (default runs/TASK/<time>).
        overrides: dict {"encoder.units": 128} or list of "key=value" strings.
        resume: bool, continue the interrupted run in `out` (only train.epochs,
            train.max_minutes and train.threads may change).
        overwrite: bool, replace a run already in `out` (otherwise that is a UserError).
        reports: str, the reports root (the report goes to reports/TASK/<run-id>/).
        diagnose: bool, add gradient-flow diagnostics to the report.
        log: callable for progress lines.
        **options: text_column, label_column, skip_bad_rows, repair_bio, strategy,
            mixed_precision (the CLI's flags of the same names).

    Returns:
        A `Run` (path, report_dir, metrics).

    Raises:
        elman.UserError: for a bad file, setting or value (the CLI prints its message).

    Example:
        >>> run = elman.train("sentiment", out="runs/sentiment/mine")
        >>> run.scores["accuracy"]
    """
    from elman import tasks
    from elman.core import runs
    from elman.core.run import run as run_task

    train_options = {k: v for k in ("strategy", "mixed_precision")
                     if (v := options.pop(k, None))}
    unknown = set(options) - {"text_column", "label_column", "skip_bad_rows", "repair_bio"}
    if unknown:
        raise TypeError(f"train() got unexpected arguments: {', '.join(sorted(unknown))}")
    overrides = _override_list(overrides) + [
        f"train.{k}={json.dumps(v)}" for k, v in train_options.items()]
    if resume:
        if out is None:
            raise UserError("--resume needs --out RUN_DIR (the run folder to continue)")
        if overwrite:
            raise UserError("--resume continues the run in --out and --overwrite replaces "
                            "it; give one of them")
        cfg = build_config(task, config, overrides, resume_dir=out, data=data,
                           validation=validation, test=test, **options)
    else:
        cfg = build_config(task, config, overrides, data=data, validation=validation,
                           test=test, **options)
        _check_preset_files(task, config, cfg)
        cfg = resolve_paths(task, cfg)
        if (data and not str(data).startswith("hub:") and not validation
                and not cfg.data.validation):
            preset = build_config(task, config, overrides)
            if preset.data.validation:
                log(f"notice: --data replaces the preset's data files, so validation is "
                    f"carved from {data} (data.validation_fraction = "
                    f"{cfg.data.validation_fraction:g}), not read from "
                    f"{preset.data.validation}; give --validation FILE to score on a file")
    run_dir, report_dir, _ = runs.resolve_dirs(task, out, reports)
    runs.check_writable(run_dir, "--out")
    runs.check_writable(report_dir, "--reports")
    if not resume:
        _check_out(run_dir, overwrite)
    cleanup = None
    if cfg.train.strategy == "multi-worker":  # only the chief writes the real folders
        from elman.core.distributed import worker_dirs

        run_dir, report_dir, cleanup = worker_dirs(run_dir, report_dir, resume=resume)
    quiet_tensorflow()
    try:
        metrics = run_task(tasks.get(task), cfg, run_dir, report_dir, resume=resume,
                           diagnose=diagnose, log=log)
    finally:
        if cleanup is not None:
            cleanup()
    return Run(Path(run_dir), Path(report_dir), metrics)


def run_task_name(run_dir):
    """The task a run folder belongs to (from its run.json)."""
    from elman.core import runs

    path = Path(run_dir)
    if not path.is_dir():
        raise UserError("run folder not found", path=path)
    return runs.read_run(path)["task"]


def load(run_dir):
    """The predictor of a saved run: `.predict(texts)` gives what `elman predict --format
    json` prints, one dict per text.

    Example:
        >>> elman.load("runs/sentiment/demo").predict(["a fine film"])[0]["label"]
    """
    from elman import tasks

    quiet_tensorflow()
    return tasks.get(run_task_name(run_dir)).predictor(run_dir)


def evaluate(run_dir, data=None, text_column=None, label_column=None, log=print):
    """Scores a saved run on labelled data (default: its test, else validation file);
    returns the `EvalResult` (`.scores`, `.per_class`, `.examples`)."""
    from elman import tasks

    name = run_task_name(run_dir)
    task = tasks.get(name)
    text_key, label_key = type(task).column_settings
    _refuse_unused_flags(name, type(task), [("--text-column", text_key, text_column),
                                            ("--label-column", label_key, label_column)])
    quiet_tensorflow()
    return task.evaluate(run_dir, {"data": data, "text_column": text_column,
                                   "label_column": label_column}, log=log)


def presets(task):
    """The presets of `task`: {name: its description} (its TOML's first sentence)."""
    from elman import config as config_lib
    from elman import tasks

    tasks.config_class(task)  # an unknown task is a UserError
    out = {}
    for path in sorted(config_lib.CONFIG_DIR.glob("*.toml")):
        stem = path.stem
        if stem == task:
            name = "default"
        elif stem.startswith(task + "-"):
            name = stem[len(task) + 1:]
        else:
            continue
        try:
            values = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError:
            continue
        if values.get("task", task) != task:
            continue
        out[name] = _description(path)
    return out


_SENTENCE_END = re.compile(r"(?<![.\s])\.(?=\s|$)")  # a full stop, not an ellipsis's dots


def _description(path):
    """The first sentence of the comment block that opens the file (its lines joined)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    text = " ".join(part for part in lines if part)
    end = _SENTENCE_END.search(text)
    return text[:end.start() + 1] if end else text
