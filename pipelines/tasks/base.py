"""The task contract: what every task supplies to the one run skeleton.

A task is one package under `elman/tasks/<name>/` with a `config.py` (a frozen
dataclass and no TensorFlow import) and a `task.py` holding a `Task` subclass; one
line in `elman/tasks/__init__.py` registers it. The run skeleton
(`elman.core.run.run`) calls the hooks in this order:

    check → load_data → (TensorFlow starts) → prepare → fit → inference_model
    → save (model.keras, atomically) → export → score → report

and writes everything that is the same for every task itself: config.toml/json, the
model files, the reproducibility block, gradient-flow diagnostics, metrics.json,
report.md/html, run.json and the reports index. `predictor` turns a saved run into
raw text in → structured results out, for `elman predict`, `evaluate`, the Python API
and any server; its `trace` shows how the judgment moves token by token.
"""

import dataclasses
from pathlib import Path


@dataclasses.dataclass
class Fitted:
    """What a task's `fit` produced.

    Attributes:
        model: the trained Keras model (token ids in).
        result: `elman.core.train.TrainResult` (history, best epoch, epochs run, ...).
        extra: dict, anything else the task's later hooks need (ensemble members, ...).
    """

    model: object
    result: object
    extra: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class RunContext:
    """Everything one run knows; each hook reads it and returns its own part.

    Attributes:
        cfg: the task's frozen config.
        run_dir, report_dir: Path, where the run and its report go.
        resume: bool, continue an interrupted run.
        log: callable for progress lines.
        splits: dict of split name → `elman.core.split.Split` (from `load_data`).
        strategy: the tf.distribute strategy (from `elman.core.runtime.configure`).
        state: what `prepare` returned (vocabularies, encoded data, ...).
        fitted: what `fit` returned.
        results: dict of split name → `EvalResult` (from `score`).
    """

    cfg: object
    run_dir: Path
    report_dir: Path
    resume: bool = False
    log: object = print
    splits: dict = None
    strategy: object = None
    state: object = None
    fitted: Fitted = None
    results: dict = None

    @property
    def main(self):
        """The result the run is ranked by: test when there is one, else validation."""
        return self.results.get("test", self.results.get("validation"))


@dataclasses.dataclass
class ReportParts:
    """A task's part of the report.

    Attributes:
        summary: list of Markdown blocks shown first (the run in one line, the scores).
        sections: list of Markdown blocks (curves, per-split results, errors, data).
        metrics: dict merged into metrics.json (task-specific keys).
        run_info: dict merged into run.json (what a predictor needs: labels, tags, ...).
        data_files: extra {"split", "source", "sha256"} rows for the reproducibility
            block (beyond the splits').
        examples: the rows of predictions.tsv (default: the main result's examples).
    """

    summary: list
    sections: list
    metrics: dict = dataclasses.field(default_factory=dict)
    run_info: dict = dataclasses.field(default_factory=dict)
    data_files: list = dataclasses.field(default_factory=list)
    examples: list = None


class Predictor:
    """A saved run: raw text in, structured results out (JSON-ready dicts).

    Subclasses set `task` and implement `predict`; `format_text` gives the line
    `elman predict` prints for one result. Every prediction dict holds "truncated":
    None when the model read the whole text, else {"tokens": N, "read": M, "kept":
    "first" or "last"} (the CLI prints a notice on standard error for each such text).
    `trace` (the reading trace, for `elman predict --trace` and servers) and
    `format_trace` are optional: by default a task has no trace.

    Args:
        run_dir: str or Path, the run folder `elman train` wrote.
    """

    task = ""
    #: the options `predict` accepts, for the CLI and servers: name → (type, default) or
    #: (type, default, min, max) with type int, float, bool or str and min/max inclusive
    #: bounds (None: unbounded). `elman serve` passes a request only the options named
    #: here and refuses any other option or a value out of range, e.g.
    #: {"beam": (int, 0, 0, 16)}.
    options = {}

    def __init__(self, run_dir):
        from elman.core import runs

        self.run_dir = Path(run_dir)
        self.info = runs.read_run(self.run_dir, self.task)
        self._model = None

    @property
    def model(self):
        """The run's inference model, loaded once with Keras safe mode on."""
        if self._model is None:
            from elman.core import runs

            self._model = runs.load_model(self.run_dir)
        return self._model

    def predict(self, texts, **options):
        """Returns one JSON-ready dict per text."""
        raise NotImplementedError

    def evaluate(self, data=None, text_column=None, label_column=None, log=print):
        """Scores this run on labelled data (default: its test, else validation file);
        returns the EvalResult, as `elman evaluate` computes it."""
        from elman import tasks

        return tasks.get(self.task).evaluate(
            self.run_dir, {"data": data, "text_column": text_column,
                           "label_column": label_column}, log=log)

    def format_text(self, prediction):
        """The plain-text line `elman predict` prints for one prediction."""
        import json

        return json.dumps(prediction, ensure_ascii=False)

    def trace(self, texts, **options):
        """The reading trace of each text: how the model's judgment moves as it reads.

        One JSON-ready dict per text, with a "steps" list (one entry per token read or
        written; what each holds depends on the task). It takes the options `predict`
        takes (`options`). This is the hook `elman predict --trace` and servers call.

        Raises:
            UserError: the task has no trace (this default).
        """
        from elman.errors import UserError

        raise UserError(f"this task has no trace (a {self.task or 'custom'} run)")

    def format_trace(self, trace):
        """The terminal text `elman predict --trace` prints for one trace (default: JSON)."""
        import json

        return json.dumps(trace, ensure_ascii=False)


class Task:
    """The contract every task implements. Hooks take the `RunContext`.

    Class attributes:
        name: str, the registry name (`elman train NAME`).
        title: str, used in report titles ("Sentiment report — <run>").
        config_class: the task's frozen config dataclass.
        predictor_class: the task's `Predictor` subclass.
    """

    name = ""
    title = ""
    config_class = None
    predictor_class = Predictor
    #: the data settings that --text-column and --label-column set
    column_settings = ("text_column", "label_column")
    #: data flags this task refuses: flag → the message
    refused_flags = {"repair_bio": "--repair-bio applies to the tagging task only"}
    #: the demo runs: (part name, preset, run id)
    demo = ()

    def check(self, cfg):
        """Rules that involve more than one setting; raise UserError. Default: none."""

    def load_data(self, cfg):
        """Reads and validates the splits (before TensorFlow loads): {name: Split}."""
        raise NotImplementedError

    def prepare(self, ctx):
        """Fits vocabularies on train (or reloads them on resume) and writes them to the
        run folder; returns the task's state (the run folder exists)."""
        raise NotImplementedError

    def fit(self, ctx):
        """Trains; returns a `Fitted`, or None when a time budget stopped the run before
        a model exists (`--resume` continues it)."""
        raise NotImplementedError

    def inference_model(self, ctx):
        """The model saved as model.keras: raw strings in."""
        raise NotImplementedError

    def export(self, ctx, model):
        """Writes saved_model/ (raw strings in) next to model.keras. Default: Keras export."""
        from elman.core import runs

        runs.export_saved_model(model, ctx.run_dir)

    def score(self, ctx):
        """Scores validation and test: {split name: EvalResult}."""
        raise NotImplementedError

    def report(self, ctx):
        """The task's part of the report: a `ReportParts`."""
        raise NotImplementedError

    def headline(self, result):
        """The one line logged at the end of a run (and of `evaluate`)."""
        main = result.main_metric
        return f"{result.split} {main} {result.scores[main]:.4f}"

    def predictor(self, run_dir):
        """The run's `Predictor`."""
        return self.predictor_class(run_dir)

    def evaluate(self, run_dir, overrides, log=print):
        """Scores a saved run on labelled data; returns an EvalResult."""
        raise NotImplementedError

    @staticmethod
    def evaluation_file(cfg, overrides, what):
        """The file `evaluate` reads: --data, else the run's test, else its validation file.

        Args:
            cfg: the run's saved config.
            overrides: dict from the CLI or API ("data" may be None).
            what: str, what the file holds, for the message ("a labelled file").
        """
        from elman.errors import UserError

        path = overrides.get("data") or cfg.data.test or cfg.data.validation
        if not path:
            raise UserError(f"give {what} to evaluate on with --data FILE")
        if not overrides.get("data") and not str(path).startswith("hub:") \
                and not Path(path).exists():  # moved or deleted since the run trained
            raise UserError(f"the run's {'test' if path == cfg.data.test else 'validation'} "
                            f"file is gone; give {what} with --data FILE", path=path)
        return path

    def benchmark(self, quick=False, log=print):
        """A dict of measurements for `elman bench` (speed ratios measured side by side in
        one process). Default: the task has no benchmark of its own."""
        return {}
