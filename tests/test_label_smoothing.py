"""Label smoothing and loss truncation for the sentiment classifier (`head.label_smoothing`,
`head.drop_hardest`): the loss by hand, its saving, and a run that trains with it and
loads in safe mode."""

import math

import numpy as np
import pytest

from elman import cli
from tests.conftest import refused_settings


def _loss(smoothing, labels, probs, drop_hardest=0.0):
    from elman.models.label_smoothing import SmoothedSparseCrossentropy

    loss = SmoothedSparseCrossentropy(smoothing, drop_hardest)
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


def test_dropping_the_hardest_examples_by_hand():
    # gold-class probabilities 1/2, 1/10, 4/5, 3/5: losses ln 2, ln 10, ln 5/4, ln 5/3
    probs = [[0.5, 0.5], [0.9, 0.1], [0.2, 0.8], [0.6, 0.4]]
    labels = [0, 1, 1, 0]
    everything = (math.log(2) + math.log(10) + math.log(5 / 4) + math.log(5 / 3)) / 4
    assert _loss(0.0, labels, probs, 0.0) == pytest.approx(everything, rel=1e-5)
    # q 0.3 of 4 drops floor(1.2) = 1 example, the ln 10 one; the sum is still over 4
    assert _loss(0.0, labels, probs, 0.3) == pytest.approx(
        (math.log(2) + math.log(5 / 4) + math.log(5 / 3)) / 4, rel=1e-5)
    # q 0.5 drops two: ln 10 and ln 2
    assert _loss(0.0, labels, probs, 0.5) == pytest.approx(
        (math.log(5 / 4) + math.log(5 / 3)) / 4, rel=1e-5)
    # q 0.2 of 4 drops floor(0.8) = 0 examples
    assert _loss(0.0, labels, probs, 0.2) == pytest.approx(everything, rel=1e-5)


def test_equal_losses_drop_the_earliest_and_smoothing_applies_first():
    # four equal losses, q 0.6 drops floor(2.4) = 2 of them: half the plain mean is left
    even = [[0.5, 0.5]] * 4
    assert _loss(0.0, [0, 1, 0, 1], even, 0.6) == pytest.approx(math.log(2) / 2, rel=1e-5)
    # with ε 0.5 on two classes the targets are 3/4 and 1/4; for probabilities (1/2, 1/2)
    # every loss is ln 2 again, while (1/4, 3/4) against gold 0 gives
    # -(3/4 ln 1/4 + 1/4 ln 3/4), the larger, so it is the one dropped at q 0.5
    probs = [[0.25, 0.75], [0.5, 0.5]]
    assert _loss(0.5, [0, 0], probs, 0.5) == pytest.approx(math.log(2) / 2, rel=1e-5)
    hard = -(0.75 * math.log(0.25) + 0.25 * math.log(0.75))
    assert _loss(0.5, [0, 0], probs, 0.0) == pytest.approx((hard + math.log(2)) / 2, rel=1e-5)


def test_no_gradient_reaches_a_dropped_example():
    import tensorflow as tf

    from elman.models.label_smoothing import SmoothedSparseCrossentropy

    logits = tf.Variable([[0.0, 0.0], [2.0, -2.0], [-1.0, 1.0]])
    with tf.GradientTape() as tape:
        loss = SmoothedSparseCrossentropy(0.0, 0.34)(tf.constant([0, 1, 1]),
                                                     tf.nn.softmax(logits))
    grad = tape.gradient(loss, logits).numpy()
    # example 1 (gold 1 at probability 1/(1+e^4)) has by far the largest loss: q 0.34 of 3
    # drops exactly it, so its row of the gradient is zero and the others are not
    np.testing.assert_array_equal(grad[1], [0.0, 0.0])
    assert np.abs(grad[0]).sum() > 0 and np.abs(grad[2]).sum() > 0


def test_the_loss_survives_saving():
    import keras

    from elman.models.label_smoothing import SmoothedSparseCrossentropy

    config = keras.saving.serialize_keras_object(SmoothedSparseCrossentropy(0.25, 0.1))
    again = keras.saving.deserialize_keras_object(config, safe_mode=True)
    assert isinstance(again, SmoothedSparseCrossentropy) and again.smoothing == 0.25
    assert again.drop_hardest == 0.1


@pytest.mark.parametrize("name", ["label_smoothing", "drop_hardest"])
@pytest.mark.parametrize("value", ["1.0", "-0.1"])
def test_a_share_outside_0_1_is_one_clear_error(tmp_path, capsys, name, value):
    err = refused_settings(tmp_path, capsys, "sentiment", [f"head.{name}={value}"])
    assert f"head.{name}" in err and "[0, 1)" in err


def test_a_run_trains_with_it_and_its_model_loads_in_safe_mode(tmp_path):
    from elman.core import runs
    from elman.models.label_smoothing import SmoothedSparseCrossentropy

    run = tmp_path / "run"
    args = ["train", "sentiment", "--out", str(run), "--reports", str(tmp_path / "reports"),
            "--set", "head.label_smoothing=0.2", "--set", "head.drop_hardest=0.1",
            "--set", "train.epochs=1",
            "--set", "embedding.dim=8", "--set", "encoder.units=8"]
    assert cli.main(args) == 0
    import keras

    # the training checkpoint is compiled with the loss (what --resume loads) ...
    saved = sorted((run / "checkpoints").glob("epoch-*.keras"))
    compiled = keras.saving.load_model(saved[-1], safe_mode=True)
    assert isinstance(compiled.loss, SmoothedSparseCrossentropy)
    assert compiled.loss.smoothing == pytest.approx(0.2)
    assert compiled.loss.drop_hardest == pytest.approx(0.1)
    assert cli.main(["train", "sentiment", "--out", str(run), "--reports",
                     str(tmp_path / "reports"), "--resume", "--set", "train.epochs=2"]) == 0
    # ... and the exported model, for prediction, takes raw text as before
    model = runs.load_model(run)
    probs = model.predict(np.array(["great food", "cold and late"], dtype=object), verbose=0)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-5)
