"""Independent oracles on whole training runs (slow: each trains tiny models end to end).

- `train --diagnose`: the report's gradient-flow section is the measurement at the run's
  own width and seed; a run without the flag has none.
- `embedding.pretrained` end to end: the coverage line and metrics.json against counts
  made here from the vectors file and the run's vocabulary; with
  `embedding.trainable = false` the saved model's rows are the file's vectors exactly.
- `reports/index.md` after two real runs: the newer run first.
- `train.max_minutes` and `--resume` for tagging and translation: a run stopped by its
  time budget after every epoch and resumed until done ends with exactly the weights of
  an uninterrupted run.
"""

import json
import re

import numpy as np
import pytest

from elman import cli
from tests.conftest import POSITIVE, NEGATIVE, TINY_SETTINGS, write_csv

pytestmark = pytest.mark.slow

GLOVE = {  # token -> vector; "Service" matches "service" only after lower-casing
    "food": [0.5, -1.0, 0.25, 2.0, 0.0, 1.5, -0.5, 0.125],
    "great": [1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0],
    "Service": [0.0, 0.5, 0.0, -0.5, 0.0, 0.5, 0.0, -0.5],
    "rude": [-2.0, 0.0, 2.0, 0.0, -2.0, 0.0, 2.0, 0.0],
    "zebra": [9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0],  # not in the vocabulary
}


@pytest.fixture(scope="module")
def sentiment_runs(tmp_path_factory):
    """Two tiny sentiment runs into one reports folder: the first with --diagnose and
    frozen pretrained vectors, the second plain."""
    root = tmp_path_factory.mktemp("sentiment-runs")
    rows = [(t, "positive") for t in POSITIVE] + [(t, "negative") for t in NEGATIVE]
    train = write_csv(root / "train.csv", rows * 3)
    validation = write_csv(root / "validation.csv", rows)
    vectors = root / "vectors.txt"
    vectors.write_text("".join(f"{token} {' '.join(repr(x) for x in vec)}\n"
                               for token, vec in GLOVE.items()), encoding="utf-8")
    reports = root / "reports"
    common = ["train", "sentiment", "--data", str(train), "--validation", str(validation),
              "--reports", str(reports), *TINY_SETTINGS]
    assert cli.main(common + ["--out", str(root / "first"), "--diagnose", "--set",
                              f'embedding.pretrained="{vectors}"', "--set",
                              "embedding.trainable=false"]) == 0
    assert cli.main(common + ["--out", str(root / "second")]) == 0
    return {"root": root, "reports": reports, "vectors": vectors}


def test_diagnose_adds_the_gradient_flow_of_the_runs_own_width(sentiment_runs):
    """The section equals `gradient_flow` measured at encoder.units = 8 and the run's
    seed 1234, rendered independently here; the plot is a PNG; the run without
    --diagnose has neither.

    Mutations that fail here (tried, core/run.py `_diagnostics`): the width not taken
    from the config (`units=32`); the seed not passed (`seed=cfg.train.seed` → `0`);
    the section not added (`if diagnose:` → `if False:`).
    """
    from elman.core.diagnostics import gradient_flow, gradient_flow_markdown

    first = sentiment_runs["reports"] / "sentiment" / "first"
    md = (first / "report.md").read_text(encoding="utf-8")
    flow = gradient_flow(units=8, seed=1234)
    expected = "## Gradient flow\n\n" + gradient_flow_markdown(
        flow, png_name="gradient_flow.png", heading_level=0)
    assert expected in md
    assert (first / "gradient_flow.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "](gradient_flow.png)" in md
    second = sentiment_runs["reports"] / "sentiment" / "second"
    assert "Gradient flow" not in (second / "report.md").read_text(encoding="utf-8")
    assert not (second / "gradient_flow.png").exists()


def test_pretrained_vectors_end_to_end(sentiment_runs):
    """Coverage counted here: the vocabulary tokens (ids >= 2) found in the file as they
    are, plus those found only after lower-casing; the report line and metrics.json say
    the same, and the frozen embedding of the saved model holds the file's vectors.

    Mutations that fail here (tried): the covered rows written one id off
    (`matrix[wanted[token]]` → `matrix[wanted[token] - 1]`, core/embed.py); the
    lower-cased matches not counted (`len(exact | by_lower)` → `len(exact)`,
    core/embed.py); the pretrained matrix not used (`initializer =
    keras.initializers.Constant(matrix)` → `"uniform"`, tasks/sentiment/task.py); the
    embedding trained although frozen (`embedding_trainable=cfg.embedding.trainable` →
    `True`, tasks/sentiment/model.py).
    """
    from elman.core import runs

    run = sentiment_runs["root"] / "first"
    vocabulary = (run / "vocabulary.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert vocabulary[:2] == ["", "[UNK]"]
    tokens = vocabulary[2:]
    exact = [t for t in tokens if t in GLOVE]
    lowered = [t for t in tokens if t not in GLOVE and t in {k.lower() for k in GLOVE}]
    assert (sorted(exact), lowered) == (["food", "great", "rude"], ["service"])
    found = len(exact) + len(lowered)
    line = (f"Pretrained vectors `{sentiment_runs['vectors']}` cover {found} of "
            f"{len(tokens)} vocabulary tokens ({100 * found / len(tokens):.1f}%; "
            f"{len(lowered)} only after lower-casing).")
    report = sentiment_runs["reports"] / "sentiment" / "first"
    assert line in (report / "report.md").read_text(encoding="utf-8")
    metrics = json.loads((report / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["embedding_coverage"] == {
        "path": str(sentiment_runs["vectors"]), "found": found, "vocabulary": len(tokens),
        "found_lowercased": len(lowered), "share": found / len(tokens), "learned": False}

    model = runs.load_model(run)
    embeddings = [w for w in model.weights if w.path.endswith("embedding/embeddings")]
    assert len(embeddings) == 1
    matrix = np.asarray(embeddings[0].numpy(), "float64")
    assert matrix.shape == (len(vocabulary), 8)
    for token in exact + lowered:
        vector = GLOVE[token] if token in GLOVE else GLOVE[token.capitalize()]
        np.testing.assert_array_equal(matrix[vocabulary.index(token)], vector, err_msg=token)
    assert not (matrix[0] != 0).any()  # padding row is zero


def test_reports_index_lists_the_newer_of_two_real_runs_first(sentiment_runs):
    """Mutation that fails here (tried, core/report.py `update_index`): `reverse=True`
    dropped from the sort."""
    reports = sentiment_runs["reports"]
    finished = {name: json.loads((reports / "sentiment" / name / "metrics.json").read_text(
        encoding="utf-8"))["finished"] for name in ("first", "second")}
    assert finished["second"] > finished["first"]
    text = (reports / "index.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((sentiment/[^/]+)/report\.md\)", text)
    assert links == ["sentiment/second", "sentiment/first"]


# ------------------------------------------------- time budget and resume, two tasks

def _weights(path):
    import keras

    from elman import models

    models.import_all()
    import elman.text.tokenize  # noqa: F401

    model = keras.saving.load_model(path, safe_mode=True)
    out = [(v.path, v.numpy()) for v in model.weights
           if not v.path.endswith("seed_generator_state")]
    if getattr(model, "optimizer", None) is not None:
        out += [(v.path, v.numpy()) for v in model.optimizer.variables]
    return out


def _budget_then_resume(capsys, args, run_dir, epochs):
    """Trains with a time budget that ends the run after every epoch, resuming until all
    `epochs` are done; returns the log of every invocation."""
    budget = ["--set", "train.max_minutes=0.000001"]
    logs = []
    assert cli.main(args + ["--out", str(run_dir)] + budget) == 0
    logs.append(capsys.readouterr().out)
    for _ in range(epochs - 1):
        assert cli.main(args + ["--out", str(run_dir), "--resume"]) == 0
        logs.append(capsys.readouterr().out)
    return logs


def _assert_same_training(straight, resumed, epochs):
    last = f"checkpoints/epoch-{epochs:03d}.keras"
    for a, b in ((straight / last, resumed / last),
                 (straight / "model.keras", resumed / "model.keras")):
        wa, wb = _weights(a), _weights(b)
        assert len(wa) == len(wb) > 5
        for (name, x), (other, y) in zip(wa, wb):
            # in one process, Keras numbers repeated names (adam_2/..., adam_3/...)
            assert re.sub(r"_\d+/", "/", name) == re.sub(r"_\d+/", "/", other)
            np.testing.assert_array_equal(x, y, err_msg=name)
    states = [json.loads((d / "checkpoints" / "state.json").read_text(encoding="utf-8"))
              for d in (straight, resumed)]
    assert states[0]["history"] == states[1]["history"]
    assert states[1]["epoch"] == epochs


def _check_budget_logs(logs, epochs):
    for epoch, log in enumerate(logs, start=1):
        if epoch > 1:
            assert f"resuming after epoch {epoch - 1}" in log
        if epoch < epochs:
            assert (f"stopped after epoch {epoch}: the next epoch would pass "
                    "train.max_minutes=1e-06 (--resume continues)") in log
        else:
            assert "stopped after epoch" not in log


def test_tagging_time_budget_and_resume_equal_a_straight_run(tmp_path, capsys):
    """Two epochs in one go, or one epoch per invocation (each stopped by
    train.max_minutes, then --resume): the same weights, optimizer state and history.

    Mutations that fail here (tried, core/train.py): the time-budget check in
    `EpochCommitter.on_epoch_end` disabled (`if self.max_seconds and ...` → `if False`);
    the dropout seed states not restored on resume (the `variable.assign(value)` loop
    in `restore_checkpoint` skipped).
    """
    straight_then_resumed_tagging(tmp_path, capsys)


def straight_then_resumed_tagging(tmp_path, capsys, *settings):
    """Trains a tiny tagger for two epochs in one go and one epoch per invocation (with
    `--set` `settings`), checks both end alike; returns the straight run's log."""
    from tests.test_tagging_task import TINY, make_sentences, write_conll

    train = write_conll(tmp_path / "train.conll", make_sentences(30, 1))
    validation = write_conll(tmp_path / "validation.conll", make_sentences(8, 2))
    epochs = 2
    args = ["train", "tagging", "--data", str(train), "--validation", str(validation),
            "--reports", str(tmp_path / "reports"), *TINY, "--set", f"train.epochs={epochs}",
            "--set", "train.patience=99", "--set", "encoder.dropout=0.3"]
    for setting in settings:
        args += ["--set", setting]
    assert cli.main(args + ["--out", str(tmp_path / "straight")]) == 0
    log = capsys.readouterr().out
    logs = _budget_then_resume(capsys, args, tmp_path / "resumed", epochs)
    _check_budget_logs(logs, epochs)
    _assert_same_training(tmp_path / "straight", tmp_path / "resumed", epochs)
    return log


def test_translation_time_budget_and_resume_equal_a_straight_run(tmp_path, capsys):
    """As for tagging, on the tiny translation pairs (model dropout on, so the restored
    dropout seeds matter).

    Mutations that fail here (tried, core/train.py): as for tagging.
    """
    from tests.test_translation_task import TINY, tiny_pairs, write_tsv

    pairs = tiny_pairs()
    train = write_tsv(tmp_path / "train.tsv", pairs)
    validation = write_tsv(tmp_path / "validation.tsv", pairs[::4])
    epochs = 2
    args = ["train", "translation", "--data", str(train), "--validation", str(validation),
            "--reports", str(tmp_path / "reports"), *TINY, "--set", f"train.epochs={epochs}",
            "--set", "train.patience=99", "--set", "model.dropout=0.2"]
    assert cli.main(args + ["--out", str(tmp_path / "straight")]) == 0
    capsys.readouterr()
    logs = _budget_then_resume(capsys, args, tmp_path / "resumed", epochs)
    _check_budget_logs(logs, epochs)
    _assert_same_training(tmp_path / "straight", tmp_path / "resumed", epochs)
