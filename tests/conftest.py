"""Shared test helpers: tiny data files and a CLI runner."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]

POSITIVE = ["the food was great", "a lovely warm place", "great service and tasty food",
            "i loved it", "the staff were kind", "味道很好", "服务很好", "非常喜欢",
            "the service was slow, but the food was great", "not bad at all"]
NEGATIVE = ["the food was cold", "a dirty and noisy place", "terrible service",
            "i hated it", "the staff were rude", "味道很差", "服务太慢", "很不喜欢",
            "the food was great, but the service was terrible", "not good"]


def write_csv(path, rows, header=("text", "label")):
    """Writes rows as CSV with the csv module; returns the path."""
    import csv

    path = Path(path)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def tiny_sentiment(tmp_path):
    """Train/validation/test CSVs of a tiny two-class sentiment set."""
    rows = [(t, "positive") for t in POSITIVE] + [(t, "negative") for t in NEGATIVE]
    return {
        "train": write_csv(tmp_path / "train.csv", rows * 3),
        "validation": write_csv(tmp_path / "validation.csv", rows),
        "test": write_csv(tmp_path / "test.csv", rows),
    }


TINY_SETTINGS = ["--set", "embedding.dim=8", "--set", "encoder.units=8", "--set",
                 "head.hidden=8", "--set", "train.batch_size=8", "--set", "train.epochs=2"]


def run_elman(args, cwd=None, env=None, timeout=300, stdin=None):
    """Runs `elman` in a fresh process; returns the CompletedProcess."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "elman.cli", *map(str, args)],
                          cwd=cwd or ROOT, env=full_env, capture_output=True, text=True,
                          timeout=timeout, input=stdin)


def train_tiny_sentiment(tmp_path, tiny_sentiment, name, *settings, resume=False):
    """Trains a tiny sentiment run through the CLI; returns its run folder."""
    from elman import cli

    run = tmp_path / name
    args = ["train", "sentiment", "--data", str(tiny_sentiment["train"]),
            "--validation", str(tiny_sentiment["validation"]), "--out", str(run),
            "--reports", str(tmp_path / "reports"), *TINY_SETTINGS, *settings]
    assert cli.main(args + (["--resume"] if resume else [])) == 0
    return run


def refused_settings(tmp_path, capsys, task, sets):
    """Runs `elman train TASK --set ...` expecting one clear error (exit 2, no traceback);
    returns what it wrote to stderr."""
    from elman import cli

    args = ["train", task, "--out", str(tmp_path / "run")]
    for item in sets:
        args += ["--set", item]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err
