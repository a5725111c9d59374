"""scripts/prediction_agreement.py on three hand-made runs of four examples."""

import importlib.util
from fractions import Fraction

import pytest

from elman.core.report import write_predictions
from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location(
    "prediction_agreement", ROOT / "scripts" / "prediction_agreement.py")
agreement_script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agreement_script)

TEXTS = ['good "food"', "slow\tdelivery", "ok", "cold"]  # a quote and a tab, as written
GOLD = [1, 0, 1, 0]
P1 = {"a": [0.9, 0.6, 0.4, 0.2], "b": [0.8, 0.3, 0.45, 0.7], "c": [0.7, 0.2, 0.9, 0.8]}


def _write(folder, p1):
    rows = [{"text": t, "gold": g, "predicted": int(p > 0.5), "p_0": 1 - p, "p_1": p}
            for t, g, p in zip(TEXTS, GOLD, p1)]
    folder.mkdir()
    write_predictions(folder / "predictions.tsv", rows)
    return folder


def test_accuracies_the_average_and_the_agreement_by_hand(tmp_path, capsys):
    folders = [_write(tmp_path / name, p) for name, p in P1.items()]
    result = agreement_script.agreement([agreement_script.read_predictions(f) for f in folders])
    # a: right, wrong, wrong, right; b: right, right, wrong, wrong; c: right, right, right, wrong
    assert result["accuracies"] == [Fraction(2, 4), Fraction(2, 4), Fraction(3, 4)]
    # mean p_1: 0.8, 0.3667, 0.5833, 0.5667 → 1, 0, 1, 1: three of four right
    assert result["averaged"] == Fraction(3, 4)
    # wrong counts per example: 0, 1, 2, 2
    assert (result["wrong_by_all"], result["wrong_by_none"], result["wrong_by_some"]) == (0, 1, 3)
    assert agreement_script.main([str(f) for f in folders]) == 0
    assert "averaged probabilities: 75.00% of 4" in capsys.readouterr().out


def test_runs_of_other_examples_are_refused(tmp_path):
    first = _write(tmp_path / "a", P1["a"])
    other = tmp_path / "b"
    other.mkdir()
    write_predictions(other / "predictions.tsv", [{"text": "x", "gold": 1, "predicted": 1,
                                                   "p_0": 0.1, "p_1": 0.9}])
    runs = [agreement_script.read_predictions(f) for f in (first, other)]
    with pytest.raises(SystemExit, match="not of the same examples"):
        agreement_script.agreement(runs)
