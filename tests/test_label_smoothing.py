"""Label smoothing for the sentiment classifier (`head.label_smoothing`): the loss by
hand, its saving, and a run that trains with it and loads in safe mode."""

import math

import numpy as np
import pytest

from elman import cli
from tests.conftest import refused_settings


def _loss(smoothing, labels, probs):
    from elman.models.label_smoothing import SmoothedSparseCrossentropy

    loss = SmoothedSparseCrossentropy(smoothing)
    return float(loss(np.array(labels), np.array(probs, dtype="float32")))


def test_the_loss_by_hand():
    probs = [[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]]
    # ε 0.3, three classes: targets 0.8 / 0.1 / 0.1, so each example's loss is
    # -(0.8 ln 1/2 + 0.1 ln 1/4 + 0.1 ln 1/4) = 0.8 ln 2 + 0.4 ln 2 = 1.2 ln 2
    assert _loss(0.3, [0, 2], probs) == pytest.approx(1.2 * math.log(2), rel=1e-5)
    # ε 0: the plain cross-entropy, -ln 1/2 for both
    assert _loss(0.0, [0, 2], probs) == pytest.approx(math.log(2), rel=1e-5)
    # gold class 1 of the first: targets 0.1 / 0.8 / 0.1 → 0.1 ln 2 + 0.8·2 ln 2 + 0.1·2 ln 2
    assert _loss(0.3, [[1]], probs[:1]) == pytest.approx(1.9 * math.log(2), rel=1e-5)


def test_the_loss_survives_saving():
    import keras

    from elman.models.label_smoothing import SmoothedSparseCrossentropy

    config = keras.saving.serialize_keras_object(SmoothedSparseCrossentropy(0.25))
    again = keras.saving.deserialize_keras_object(config, safe_mode=True)
    assert isinstance(again, SmoothedSparseCrossentropy) and again.smoothing == 0.25


@pytest.mark.parametrize("value", ["1.0", "-0.1"])
def test_a_smoothing_outside_0_1_is_one_clear_error(tmp_path, capsys, value):
    err = refused_settings(tmp_path, capsys, "sentiment", [f"head.label_smoothing={value}"])
    assert "head.label_smoothing" in err and "[0, 1)" in err


def test_a_run_trains_with_it_and_its_model_loads_in_safe_mode(tmp_path):
    from elman.core import runs
    from elman.models.label_smoothing import SmoothedSparseCrossentropy

    run = tmp_path / "run"
    args = ["train", "sentiment", "--out", str(run), "--reports", str(tmp_path / "reports"),
            "--set", "head.label_smoothing=0.2", "--set", "train.epochs=1",
            "--set", "embedding.dim=8", "--set", "encoder.units=8"]
    assert cli.main(args) == 0
    import keras

    # the training checkpoint is compiled with the loss (what --resume loads) ...
    saved = sorted((run / "checkpoints").glob("epoch-*.keras"))
    compiled = keras.saving.load_model(saved[-1], safe_mode=True)
    assert isinstance(compiled.loss, SmoothedSparseCrossentropy)
    assert compiled.loss.smoothing == pytest.approx(0.2)
    assert cli.main(["train", "sentiment", "--out", str(run), "--reports",
                     str(tmp_path / "reports"), "--resume", "--set", "train.epochs=2"]) == 0
    # ... and the exported model, for prediction, takes raw text as before
    model = runs.load_model(run)
    probs = model.predict(np.array(["great food", "cold and late"], dtype=object), verbose=0)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-5)
