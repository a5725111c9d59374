"""The served models: each run loaded once at start, warmed up, and described for the API.

A run folder that is missing, not a run, or whose model fails to load or to predict
one warm-up text is an `elman.UserError` (the CLI prints it as one line, exit code 2).
"""

import dataclasses
import json
from pathlib import Path

from elman.errors import UserError

#: the text each model predicts at start, alone and twice (loads the weights, traces graphs)
WARM_UP_TEXT = "hello world"


@dataclasses.dataclass
class ServedModel:
    """One run behind the API.

    Attributes:
        name: str, the model's name in URLs (the run folder's name).
        run_dir: Path, the run folder.
        task: str, the run's task.
        predictor: the run's `elman.tasks.base.Predictor`.
        info: dict, run.json.
        options: dict {name: `elman.serve.request.OptionSpec`}.
        metrics: dict or None, the main split's scores from the report's metrics.json.
        config: dict or None, the resolved config (config.json).
        loaded: bool, the model is loaded and answered the warm-up text.
    """

    name: str
    run_dir: Path
    task: str
    predictor: object
    info: dict
    options: dict
    metrics: dict = None
    config: dict = None
    loaded: bool = False

    def trace_options(self):
        """{name: OptionSpec} of the options the predictor's `trace` takes (translation:
        beam; language model: top); empty when it has no trace."""
        import inspect

        trace = getattr(self.predictor, "trace", None)
        if not callable(trace):
            return {}
        taken = inspect.signature(trace).parameters
        return {name: spec for name, spec in self.options.items() if name in taken}

    def describe(self, full=False):
        """The model's JSON description (`GET /v1/models[/{name}]`).

        Args:
            full: bool, add the resolved config and the run's whole run.json.
        """
        info = self.info
        out = {"name": self.name, "task": self.task, "run_id": info.get("run_id", self.name),
               "finished": info.get("finished"), "loaded": self.loaded,
               "labels": info.get("labels"),
               "options": {k: v.describe() for k, v in self.options.items()},
               "trace": callable(getattr(self.predictor, "trace", None)),
               "trace_options": sorted(self.trace_options())}
        for key in ("scheme", "level", "source_lang", "target_lang"):
            if key in info:
                out[key] = info[key]
        if "source_lang" in info or "target_lang" in info:
            out["languages"] = [info.get("source_lang"), info.get("target_lang")]
        out["metrics"] = self.metrics
        if full:
            out["run"] = {k: v for k, v in info.items() if k not in ("report_dir", "run_dir")}
            out["config"] = self.config
        return out


def _read_json(path):
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def report_metrics(info, reports_root=None):
    """The main metrics of a run's report: {"split", "main_metric", "scores", ...} or None.

    Looks in run.json's report folder, then in `reports_root/<task>/<run id>/`.

    Args:
        info: dict, the run's run.json.
        reports_root: str, Path or None, the reports folder the server shows.
    """
    places = []
    if info.get("report_dir"):
        places.append(Path(info["report_dir"]))
    if reports_root is not None:
        places.append(Path(reports_root) / info.get("task", "") / info.get("run_id", ""))
    for place in places:
        metrics = _read_json(place / "metrics.json")
        if metrics is not None:
            return {k: metrics[k] for k in ("split", "main_metric", "scores", "finished")
                    if k in metrics}
    return None


def _folder_name(run_dir):
    return run_dir.name if run_dir.name not in ("", ".", "..") else run_dir.resolve().name


def check_runs(run_dirs):
    """Reads every run.json before any model loads: {name: (run_dir, run.json)}.

    A model's name is its run folder's name; runs whose folder names collide (the
    demo runs are all `demo`) are named `<task>-<folder>` instead.

    Args:
        run_dirs: list of str or Path.

    Raises:
        UserError: for no runs, a missing folder, a folder that is not a run or two runs
            that still share a name.
    """
    from elman.core import runs

    if not run_dirs:
        raise UserError("give at least one run folder to serve")
    found = [(Path(run_dir), runs.read_run(run_dir)) for run_dir in run_dirs]
    folders = [_folder_name(run_dir) for run_dir, _ in found]
    out = {}
    for (run_dir, info), folder in zip(found, folders):
        name = folder if folders.count(folder) == 1 else f"{info['task']}-{folder}"
        if name in out:
            raise UserError(f"two {info['task']} runs are named '{folder}' (a model's name "
                            "is its run folder's name); serve one of them", path=run_dir)
        out[name] = (run_dir, info)
    return out


def _first_line(err):
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")


def load_model(name, run_dir, info, reports_root=None):
    """Loads one run's predictor and warms it up (one text, then a batch of two).

    Args:
        name: str, the model's name.
        run_dir: Path, the run folder.
        info: dict, its run.json.
        reports_root: str, Path or None, where to look for its report.

    Raises:
        UserError: when the predictor, its options or its model fail to load or to
            predict the warm-up text.
    """
    from elman import api
    from elman.serve.request import option_specs

    try:
        predictor = api.load(run_dir)
        options = option_specs(predictor)
        defaults = {k: v.default for k, v in options.items() if v.default is not None}
        for size in (1, 2):  # the second shape makes TensorFlow trace a batch-size-free graph
            predictor.predict([WARM_UP_TEXT] * size, **defaults)
    except UserError as err:
        raise UserError(f"the model failed to load: {err}", path=run_dir) from None
    except Exception as err:  # noqa: BLE001 - any load failure is the run's problem
        raise UserError(f"the model failed to load: {_first_line(err)}",
                        path=run_dir) from None
    return ServedModel(name=name, run_dir=Path(run_dir), task=info["task"],
                       predictor=predictor, info=info, options=options,
                       metrics=report_metrics(info, reports_root),
                       config=_read_json(Path(run_dir) / "config.json"), loaded=True)


def load_models(run_dirs, reports_root=None, log=print):
    """Every run loaded and warmed up: {name: ServedModel}, in the order given.

    Args:
        run_dirs: list of str or Path, run folders.
        reports_root: str, Path or None, the reports folder (for each run's metrics).
        log: callable for progress lines.

    Raises:
        UserError: for the first run that cannot be served.
    """
    checked = check_runs(run_dirs)
    models = {}
    for name, (run_dir, info) in checked.items():
        log(f"loading {name} ({info['task']}) from {run_dir}")
        models[name] = load_model(name, run_dir, info, reports_root)
    return models
