"""The language-model task: CLI smoke run, generation vs the naive oracle, resume, bad input."""

import json
import math

import numpy as np
import pytest

from elman import cli
from elman.errors import UserError
from tests.conftest import run_elman

SUBJECTS = ["the cat", "a dog", "my friend", "the old man"]
VERBS = ["sees", "likes", "finds"]
OBJECTS = ["the ball", "a red box", "the mat"]

TINY = ["--set", "model.embedding_dim=8", "--set", "model.units=16",
        "--set", "train.batch_size=4", "--set", "train.chunk_length=8",
        "--set", "train.epochs=2", "--set", "report.samples=1",
        "--set", "report.sample_length=5"]


def _lines(offset):
    return [f"{SUBJECTS[(i + offset) % 4]} {VERBS[(i * 2 + offset) % 3]} "
            f"{OBJECTS[(i + 2 * offset) % 3]} ." for i in range(40)]


@pytest.fixture
def tiny_text(tmp_path):
    """Tiny word-level train/validation/test files; the test file holds one unseen word."""
    files = {}
    for name, offset, extra in (("train", 0, []), ("validation", 1, []),
                                ("test", 2, ["the zebra sees the mat ."])):
        path = tmp_path / f"{name}.txt"
        path.write_text("\n".join(_lines(offset)[:40 if name == "train" else 8] + extra) + "\n",
                        encoding="utf-8")
        files[name] = path
    return files


def _hand_ids(path, vocabulary):
    """The scored stream by hand: <eol>, then each line's space-separated words and <eol>."""
    index = {token: i for i, token in enumerate(vocabulary)}
    tokens = ["<eol>"]
    for line in path.read_text(encoding="utf-8").splitlines():
        tokens += line.split() + ["<eol>"]
    return np.array([index.get(t, 1) for t in tokens], dtype="int32")


def _hand_text(tokens):
    return "\n".join(" ".join(line.split()) for line in " ".join(tokens).split("<eol>"))


def _check_reading_traces(report, report_dir, run, validation):
    """The report's traces: the plot exists; the first row is the validation line of the
    highest mean surprisal as `trace_file` reads the file, the second a line of the
    others; each row's numbers are what `predictor.trace` gives for its line."""
    from elman.tasks.lm.predictor import LMPredictor
    from tests.report_sections import section_tables

    rows, images = section_tables(report, "Reading traces")
    assert images == ["trace_validation.png"]
    assert (report_dir / "trace_validation.png").stat().st_size > 0
    assert [row[0] for row in rows] == ["highest surprisal", "typical"]
    predictor = LMPredictor(run)
    in_file, line = {}, []  # text → bits per token of each line in the file, state carried
    for step in predictor.trace_file(validation)["steps"]:
        line.append(step)
        if step["token"] == "<eol>":
            text = " ".join(s["token"] for s in line[:-1])
            in_file[text] = sum(s["surprisal_bits"] for s in line) / len(line)
            line = []
    assert float(rows[0][4]) == pytest.approx(max(in_file.values()), abs=1e-3)
    assert float(rows[1][4]) <= float(rows[0][4])
    for (_, text, tokens, alone, file_bits, token, bits, _), trace in zip(
            rows, predictor.trace([row[1] for row in rows])):
        assert float(file_bits) == pytest.approx(in_file[text], abs=1e-3)
        assert int(tokens) == trace["tokens_scored"] == len(text.split()) + 1
        assert float(alone) == pytest.approx(trace["total_bits"] / int(tokens), abs=1e-4)
        top = max(trace["steps"], key=lambda s: s["surprisal_bits"])
        assert (token, float(bits)) == (top["token"], pytest.approx(top["surprisal_bits"],
                                                                    abs=1e-4))


def test_cli_train_generate_evaluate(tmp_path, tiny_text):
    import keras

    from elman.bench.reference_generation import generate_naive
    from elman.core import runs
    from elman.tasks.lm.predictor import LMPredictor
    from elman.tasks.lm.task import LMTask

    run, reports = tmp_path / "run", tmp_path / "reports"
    done = run_elman(["train", "lm", "--data", tiny_text["train"], "--validation",
                      tiny_text["validation"], "--test", tiny_text["test"], "--out", run,
                      "--reports", reports, *TINY], env={"CI": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    report_dir = reports / "lm" / "run"
    metrics = json.loads((report_dir / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["main_metric"] == "perplexity" and metrics["split"] == "test"
    assert 1.0 < metrics["scores"]["perplexity"] < 1000
    report = (report_dir / "report.md").read_text(encoding="utf-8")
    assert "perplexity" in report and "## Generated samples" in report
    for name in ("report.html", "perplexity.png", "learning_curves.png", "predictions.tsv"):
        assert (report_dir / name).is_file(), name
    _check_reading_traces(report, report_dir, run, tiny_text["validation"])
    csv = (run / "logs" / "training.csv").read_text(encoding="utf-8").splitlines()
    assert csv[0].split(",")[:1] == ["epoch"] and "val_perplexity" in csv[0]
    assert [row.split(",")[0] for row in csv[1:]] == ["1", "2"]

    # `elman generate` (state-carrying) prints what the naive whole-prefix re-run gives.
    done = run_elman(["generate", run, "--prefix", "The cat", "--length", "12"])
    assert done.returncode == 0, done.stderr[-3000:]
    vocabulary = json.loads((run / "vocabulary.json").read_text(encoding="utf-8"))
    model = runs.load_model(run)
    prefix = np.array([vocabulary.index(t) for t in ("<eol>", "the", "cat")], dtype="int32")
    naive = generate_naive(model, prefix, 12)
    assert done.stdout == _hand_text(["the", "cat"] + [vocabulary[i] for i in naive]) + "\n"

    predictor = LMPredictor(run)
    text_a = predictor.generate("a dog", 10, temperature=1.5, seed=3)["text"]
    text_b = predictor.generate("a dog", 10, temperature=1.5, seed=3)["text"]
    assert text_a == text_b and text_a.startswith("a dog ")
    with pytest.raises(UserError, match="--length"):
        predictor.generate("a dog", -1)
    greedy = predictor.generate("The zebra", 12)
    assert greedy["prefix"] == "The zebra" and greedy["unknown"] == ["zebra"]
    assert greedy["text"] == _hand_text(["the", "zebra"] + greedy["tokens"])

    # `elman predict`: the five most likely next tokens, as JSON and as one text line.
    done = run_elman(["predict", run, "--format", "json", "the cat"])
    assert done.returncode == 0, done.stderr[-3000:]
    (prediction,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert prediction["text"] == "the cat" and len(prediction["next"]) == 5
    assert prediction == predictor.predict(["the cat"])[0]
    # by hand: softmax over the ids >= 1 (padding is never next) of the saved model's
    # logits after <eol> the cat, in float64; the five most likely, best first
    logits = keras.ops.convert_to_numpy(model(prefix[None, :]))[0, -1, 1:].astype("float64")
    by_hand = np.exp(logits - logits.max())
    by_hand /= by_hand.sum()
    order = np.argsort(-by_hand, kind="stable")[:5]
    assert [n["token"] for n in prediction["next"]] == [vocabulary[i + 1] for i in order]
    np.testing.assert_allclose([n["probability"] for n in prediction["next"]], by_hand[order],
                               rtol=0, atol=1e-6)
    probabilities = [n["probability"] for n in prediction["next"]]
    assert probabilities == sorted(probabilities, reverse=True) and sum(probabilities) <= 1.0
    assert predictor.format_text(prediction) == "the cat\t" + "  ".join(
        f"{n['token']!r}={n['probability']:.4f}" for n in prediction["next"])
    with pytest.raises(UserError, match="text 2 is empty"):
        predictor.predict(["the cat", "  "])

    # Perplexity on a file equals exp of the mean cross-entropy of one unchunked pass.
    result = LMTask().evaluate(run, {"data": str(tiny_text["test"])}, log=lambda *_: None)
    ids = _hand_ids(tiny_text["test"], vocabulary)
    assert (ids == 1).sum() == 1  # "zebra" is out of vocabulary
    logits = keras.ops.convert_to_numpy(model(ids[None, :-1])).astype("float64")[0]
    log_probs = logits - logits.max(-1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
    nats = -log_probs[np.arange(len(ids) - 1), ids[1:]].mean()
    assert result.scores["tokens"] == len(ids) - 1
    assert result.scores["perplexity"] == pytest.approx(math.exp(nats), rel=1e-4)
    assert metrics["results"]["test"]["perplexity"] == pytest.approx(math.exp(nats), rel=1e-4)


@pytest.mark.slow
def test_resume_after_a_completed_epoch_equals_a_straight_run(tmp_path, tiny_text):
    import keras

    from elman import config as config_lib
    from elman.core.run import run
    from elman.tasks.lm.task import LMTask

    def train(cfg, run_dir, report_dir, resume=False, log=print):
        return run(LMTask(), cfg, run_dir, report_dir, resume=resume, log=log)

    def cfg(epochs):
        sets = [a for a in TINY if a != "--set"] + [f"train.epochs={epochs}",
                                                    "model.dropout=0.3", "report.samples=0"]
        return config_lib.load_config("lm", None, sets, extra={"data": {
            "train": str(tiny_text["train"]), "validation": str(tiny_text["validation"]),
            "test": ""}})

    quiet = dict(log=lambda *_: None)
    train(cfg(1), tmp_path / "resumed", tmp_path / "rep" / "lm" / "a", **quiet)
    resumed = train(cfg(2), tmp_path / "resumed", tmp_path / "rep" / "lm" / "a",
                                   resume=True, **quiet)
    straight = train(cfg(2), tmp_path / "straight",
                                    tmp_path / "rep" / "lm" / "b", **quiet)
    assert len(resumed["history"]["val_perplexity"]) == 2
    assert resumed["history"] == straight["history"]
    a = keras.saving.load_model(tmp_path / "resumed" / "model.keras", safe_mode=True)
    b = keras.saving.load_model(tmp_path / "straight" / "model.keras", safe_mode=True)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)
    with pytest.raises(UserError, match="nothing to resume"):
        train(cfg(2), tmp_path / "fresh", tmp_path / "rep" / "lm" / "c", resume=True, **quiet)


def _one_error(capsys, args):
    code = cli.main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("elman: error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_bad_input_is_one_clear_error(capsys, tmp_path, tiny_text):
    base = ["train", "lm", "--out", tmp_path / "run", "--reports", tmp_path / "rep", *TINY]
    line = _one_error(capsys, base + ["--data", tmp_path / "missing.txt"])
    assert "missing.txt" in line and "not found" in line
    (tmp_path / "empty.txt").write_text(" \n\n", encoding="utf-8")
    line = _one_error(capsys, base + ["--data", tiny_text["train"],
                                      "--validation", tmp_path / "empty.txt"])
    assert "empty.txt" in line and "empty" in line
    (tmp_path / "latin.txt").write_bytes(b"good words\nna\xefve words\n")
    line = _one_error(capsys, base + ["--data", tmp_path / "latin.txt"])
    assert "latin.txt:2" in line and "not valid UTF-8" in line
    line = _one_error(capsys, base + ["--data", tiny_text["train"], "--set", "text.level=char"])
    assert "text.level" in line and "word, character" in line
    line = _one_error(capsys, ["generate", tmp_path, "--prefix", "the"])
    assert "not an elman run folder" in line
    assert not (tmp_path / "run").exists()
