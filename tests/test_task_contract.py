"""Adding a task touches one package and one registry line: a tiny task, defined here
through the contract alone (elman.tasks.base), trained, evaluated and used through
`elman train`, `elman evaluate` and `elman predict` (docs/adding-a-task.md follows it)."""

import dataclasses
import json

import pytest

from elman import cli, tasks
from elman.config import DataConfig, TokenizerConfig, TrainConfig
from elman.core import data as data_stage
from elman.tasks.base import Fitted, Predictor, ReportParts, Task
from tests.conftest import write_csv


@dataclasses.dataclass(frozen=True)
class LengthConfig:
    """A toy task: is a text 'long' (four words or more) or 'short'?"""

    task: str = "length"
    data: DataConfig = DataConfig()
    tokenizer: TokenizerConfig = TokenizerConfig(level="word", max_length=16)
    train: TrainConfig = TrainConfig(epochs=30, batch_size=8, learning_rate=0.02,
                                     patience=30, monitor="val_loss")


class LengthPredictor(Predictor):
    task = "length"

    def predict(self, texts):
        import tensorflow as tf

        probs = self.model.predict(tf.constant(list(texts)), verbose=0)
        labels = self.info["labels"]
        return [{"text": t, "label": labels[int(p.argmax())]} for t, p in zip(texts, probs)]

    def format_text(self, prediction):
        return f"{prediction['label']}\t{prediction['text']}"


class LengthTask(Task):
    name = "length"
    title = "Length"
    config_class = LengthConfig
    predictor_class = LengthPredictor

    def load_data(self, cfg):
        return data_stage.load_classification_splits(cfg.data, cfg.train.seed)

    def prepare(self, ctx):
        import tensorflow as tf

        from elman.text.tokenize import fit_vocabulary

        tokenizer = fit_vocabulary(ctx.cfg.tokenizer, data_stage.texts(ctx.splits["train"]))
        labels = sorted(set(data_stage.labels(ctx.splits["train"])))
        encoded = {}
        for name, split in ctx.splits.items():
            ids = tokenizer.ragged_ids(tf.constant(data_stage.texts(split)))
            y = tf.constant([labels.index(v) for v in data_stage.labels(split)], tf.int32)
            encoded[name] = (ids, y, ids.row_lengths().numpy())
        return {"tokenizer": tokenizer, "labels": labels, "encoded": encoded}

    def fit(self, ctx):
        import keras

        from elman.core.batching import dataset_from_plan, plan_eval
        from elman.core.train import adam, fit

        tokenizer, labels = ctx.state["tokenizer"], ctx.state["labels"]

        def build_and_compile():
            model = keras.Sequential([
                keras.layers.Embedding(tokenizer.vocabulary_size, 4, mask_zero=True),
                keras.layers.GRU(4), keras.layers.Dense(len(labels), activation="softmax")],
                name="length_classifier")
            model.compile(optimizer=adam(ctx.cfg.train), loss="sparse_categorical_crossentropy",
                          metrics=["accuracy"])
            return model

        x, y, lengths = ctx.state["encoded"]["train"]
        vx, vy, vl = ctx.state["encoded"]["validation"]
        result = fit(build_and_compile, x, y, lengths,
                     dataset_from_plan(vx, vy, plan_eval(vl, 8)), ctx.cfg.train, ctx.run_dir,
                     resume=ctx.resume, strategy=ctx.strategy, log=ctx.log)
        return Fitted(result.model, result)

    def inference_model(self, ctx):
        import keras

        text = keras.Input(shape=(), dtype="string", name="text")
        return keras.Model(text, ctx.fitted.model(ctx.state["tokenizer"](text)))

    def score(self, ctx):
        from elman.core.evaluate import classification_result

        model = self.inference_model(ctx)
        out = {}
        for name in ("validation", "test"):
            if name in ctx.splits:
                texts = data_stage.texts(ctx.splits[name])
                out[name] = classification_result(
                    self.name, name, texts, data_stage.labels(ctx.splits[name]),
                    model.predict(__import__("tensorflow").constant(texts), verbose=0),
                    ctx.state["labels"])
        return out

    def report(self, ctx):
        return ReportParts([f"Accuracy {ctx.main.scores['accuracy']:.3f}."], [],
                           {"labels": ctx.state["labels"]}, {"labels": ctx.state["labels"]})

    def evaluate(self, run_dir, overrides, log=print):
        from elman.core import runs
        from elman.core.evaluate import classification_result

        cfg = runs.read_config(run_dir, self.name)
        split = data_stage.read_labeled_file(overrides.get("data") or cfg.data.test)
        texts = data_stage.texts(split)
        predictor = self.predictor(run_dir)
        import tensorflow as tf

        probs = predictor.model.predict(tf.constant(texts), verbose=0)
        return classification_result(self.name, "evaluation", texts, data_stage.labels(split),
                                     probs, predictor.info["labels"])


WORDS = "red green blue cat dog sun moon tree rock fish".split()


def _rows(n, seed):
    import random

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        k = 1 + (i % 2) * 4 + rng.randrange(2)  # 1-2 words short, 5-6 words long
        rows.append((" ".join(rng.choice(WORDS) for _ in range(k)),
                     "long" if k >= 4 else "short"))
    return rows


@pytest.fixture
def length_task():
    tasks.register("length", LengthConfig, LengthTask)
    yield
    tasks.unregister("length")


def test_a_task_added_through_the_contract_trains_evaluates_and_predicts(
        length_task, tmp_path, capsys):
    train = write_csv(tmp_path / "train.csv", _rows(64, 1))
    test = write_csv(tmp_path / "test.csv", _rows(24, 2))
    run, reports = tmp_path / "run", tmp_path / "reports"
    assert cli.main(["train", "length", "--data", str(train), "--test", str(test),
                     "--out", str(run), "--reports", str(reports)]) == 0
    metrics = json.loads((reports / "length" / "run" / "metrics.json").read_text())
    assert metrics["task"] == "length" and metrics["split"] == "test"
    assert metrics["scores"]["accuracy"] >= 0.9  # word count is easy for a GRU
    for name in ("model.keras", "saved_model", "config.json", "run.json"):
        assert (run / name).exists(), name
    assert (reports / "length" / "run" / "report.html").is_file()
    capsys.readouterr()

    assert cli.main(["evaluate", str(run), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["accuracy"] == pytest.approx(metrics["scores"]["accuracy"])

    assert cli.main(["predict", str(run), "--format", "json", "cat",
                     "red green blue cat dog sun"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [p["label"] for p in lines] == ["short", "long"]


def test_an_unregistered_task_is_one_clear_error(capsys):
    assert cli.main(["train", "length"]) == 2
    assert "unknown task 'length'" in capsys.readouterr().err
