"""Run folders: `runs/<task>/<run-id>/` holds everything needed to reuse a run.

`run.json` marks a folder as a run (task, id, report folder, label names, ...),
`config.toml`/`config.json` hold the resolved config, `vocabulary.txt` the tokens (a
subword run's learned tokenizer is in `tokenizer.json`),
`model.keras` the inference model (raw strings in) and `saved_model/` its export.
"""

import datetime
import json
from pathlib import Path

from elman.errors import UserError
from elman.core.html import write_text_atomic

RUN_FILE = "run.json"


def new_run_id():
    """A sortable run id from the current time."""
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def resolve_dirs(task, out=None, reports_root="reports", runs_root="runs"):
    """Returns (run_dir, report_dir, run_id) for a new or resumed run."""
    run_dir = Path(out) if out else Path(runs_root) / task / new_run_id()
    run_id = run_dir.name
    return run_dir, Path(reports_root) / task / run_id, run_id


def check_writable(path, flag):
    """Refuses a folder that cannot be written (before any work starts): a file in its
    place or on its way, or a folder this user may not write to."""
    import tempfile

    if not str(path).strip():
        raise UserError(f"{flag} is empty; expected a folder path")
    path = Path(path)
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise UserError(f"{flag}: {probe} is a file, not a folder", path=path)
    try:  # the real test: make (and remove) a folder there
        Path(tempfile.mkdtemp(prefix=".elman-write-test-", dir=probe)).rmdir()
    except OSError as err:
        raise UserError(f"{flag}: cannot write under {probe} ({err.strerror})",
                        path=path) from None


def write_run_file(run_dir, info):
    """Writes run.json (sorted keys) atomically."""
    write_text_atomic(Path(run_dir) / RUN_FILE, json.dumps(info, indent=1, sort_keys=True) + "\n")


def read_run(run_dir, task=None):
    """Reads a run folder's run.json; a folder that is not a run is a UserError."""
    run_dir = Path(run_dir)
    path = run_dir / RUN_FILE
    if not run_dir.is_dir():
        raise UserError("run folder not found", path=run_dir)
    if not path.is_file():
        if (run_dir / "config.json").is_file():
            raise UserError("this run did not finish (no run.json yet): continue it with "
                            "`elman train TASK --out RUN --resume`", path=run_dir)
        raise UserError("not an elman run folder (no run.json); expected the folder that "
                        "`elman train` wrote, e.g. runs/sentiment/<run-id>", path=run_dir)
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UserError(f"run.json is damaged: {err}", path=path) from None
    if not isinstance(info, dict) or "task" not in info:
        raise UserError("run.json has no task", path=path)
    if task is not None and info["task"] != task:
        raise UserError(f"this is a {info['task']} run; expected a {task} run", path=run_dir)
    if not (run_dir / "model.keras").is_file():
        raise UserError("the run has no model.keras: training did not finish (use "
                        "`elman train ... --resume` to complete it)", path=run_dir)
    return info


def load_model(run_dir):
    """Loads a run's inference model with Keras safe mode on (no code from the file).

    The file's SHA-256 is checked against the one run.json recorded when it was saved;
    a changed or truncated model.keras is a UserError, never a traceback.
    """
    import keras

    from elman import models
    from elman.core.split import sha256
    import elman.text.subword  # noqa: F401  (registers SubwordTokenizer)
    import elman.text.tokenize  # noqa: F401  (registers the tokenizer)

    models.import_all()  # registers elman's layers
    path = Path(run_dir) / "model.keras"
    info = json.loads((Path(run_dir) / RUN_FILE).read_text(encoding="utf-8"))
    recorded = info.get("model_sha256")
    if recorded and sha256(path) != recorded:
        raise UserError("model.keras is damaged: its SHA-256 differs from the one recorded "
                        "when it was saved; train the run again or restore the file", path=path)
    try:
        return keras.saving.load_model(path, safe_mode=True)
    except (OSError, ValueError, KeyError, EOFError) as err:
        raise UserError(f"model.keras cannot be loaded ({type(err).__name__}); the file is "
                        "damaged or from an incompatible version: train the run again",
                        path=path) from None


def write_config(run_dir, cfg):
    """Writes the resolved config as config.toml (to read) and config.json (to reload)."""
    from elman import config as config_lib

    write_text_atomic(Path(run_dir) / "config.toml", config_lib.dumps_toml(cfg))
    write_text_atomic(Path(run_dir) / "config.json",
                      json.dumps(config_lib.to_dict(cfg), indent=1, sort_keys=True))


def read_config(run_dir, task):
    """The run's saved config (config.json) as the task's config dataclass."""
    from elman import config as config_lib

    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise UserError("the run has no config.json", path=run_dir)
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UserError(f"config.json is damaged: {err}", path=path) from None
    return config_lib.config_from_dict(task, values)


def save_model(model, run_dir, name="model.keras"):
    """Saves a Keras model through a temporary file, so a crash leaves no half file."""
    path = Path(run_dir) / name
    tmp = path.with_name(path.stem + ".tmp.keras")
    try:
        model.save(tmp)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def replace_folder(target, write):
    """Writes a folder aside (`write(tmp)`), then swaps it in place of `target`.

    A stale `.tmp` folder from an interrupted export is removed first; `target` is
    replaced only once the new folder is complete.

    Returns:
        Path, `target`.
    """
    import shutil

    target = Path(target)
    tmp = Path(str(target) + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    write(tmp)
    if target.exists():
        shutil.rmtree(target)
    tmp.rename(target)
    return target


def export_saved_model(model, run_dir, name="saved_model"):
    """Exports a raw-strings-in SavedModel (for TensorFlow Serving), replacing an old one."""
    return replace_folder(Path(run_dir) / name, lambda tmp: model.export(
        str(tmp), format="tf_saved_model", verbose=False))
