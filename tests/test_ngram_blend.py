"""scripts/ngram_blend.py: the blend and accuracy by hand, the linear model on a toy set."""

import importlib.util
from fractions import Fraction

import pytest

from elman.core.report import write_predictions
from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location("ngram_blend", ROOT / "scripts" / "ngram_blend.py")
blend_script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(blend_script)


def test_blend_and_accuracy_by_hand():
    run = {"0": [0.25, 0.5, 0.75], "1": [0.75, 0.5, 0.25]}
    linear = {"0": [0.75, 1.0, 0.25], "1": [0.25, 0.0, 0.75]}
    mixed = blend_script.blend(run, linear, 0.5)
    # (0.25 + 0.75) / 2, (0.5 + 1) / 2, (0.75 + 0.25) / 2
    assert mixed == {"0": [0.5, 0.75, 0.5], "1": [0.5, 0.25, 0.5]}
    gold = ["1", "0", "1"]
    # predicted "1", a tie read as "0", "0": right, right, wrong
    assert blend_script.accuracy(run, gold) == Fraction(2, 3)
    # ties read as "0", "0", a tie read as "0": wrong, right, wrong
    assert blend_script.accuracy(mixed, gold) == Fraction(1, 3)
    assert blend_script.accuracy(blend_script.blend(run, linear, 0.0), gold) == Fraction(2, 3)
    assert blend_script.accuracy(linear, gold) == Fraction(2, 3)  # "0", "0", "1"
    with pytest.raises(SystemExit, match="same labels"):
        blend_script.blend(run, {"0": [1.0], "2": [0.0]}, 0.5)


def test_the_linear_model_separates_a_toy_set_and_main_prints_it(tmp_path, capsys):
    train = tmp_path / "train.csv"
    train.write_text("label,text\n" + "".join(
        f"1,好吃{i}\n0,太慢{i}\n" for i in range(6)), encoding="utf-8")
    texts, gold = ["好吃", "太慢了"], ["1", "0"]
    probs = blend_script.linear_probabilities(*blend_script.read_training(train), texts)
    assert probs["1"][0] > 0.5 > probs["1"][1]  # the label's own characters decide
    folder = tmp_path / "run"
    folder.mkdir()
    write_predictions(folder / "predictions.tsv", [
        {"text": t, "gold": g, "predicted": 0, "p_0": 0.9, "p_1": 0.1}
        for t, g in zip(texts, gold)])
    assert blend_script.main([str(train), str(folder), "--weights", "0,1"]) == 0
    out = capsys.readouterr().out
    assert "linear char 1-3-grams: 100.00% of 2" in out
    assert "50.00%" in out and "w=0: 50.00%  w=1: 100.00%" in out


def test_a_training_file_without_the_columns_is_refused(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("sentiment,review\n1,good\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="columns label,text"):
        blend_script.read_training(bad)
