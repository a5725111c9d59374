import numpy as np
import pytest

keras = pytest.importorskip("keras")

from elman.models.attention import Attention  # noqa: E402
from elman.models.seq2seq_translator import Seq2SeqTranslator  # noqa: E402

SOURCE = np.array([[5, 6, 7, 8], [3, 4, 0, 0], [9, 0, 0, 0]], np.int32)
TARGET_IN = np.array([[2, 9, 4, 5, 6], [2, 5, 7, 0, 0], [2, 4, 0, 0, 0]], np.int32)
TARGET_OUT = np.array([[9, 4, 5, 6, 3], [5, 7, 3, 0, 0], [4, 3, 0, 0, 0]], np.int32)

CONFIGS = [
    dict(cell="lstm", attention="none"),
    dict(cell="gru", attention="bahdanau"),
    dict(cell="gru", attention="luong", combine="tanh"),
    dict(cell="lstm", attention="luong", num_layers=2, bridge="sum"),
    dict(cell="gru", attention="none", bidirectional=False, num_layers=2),
]


def tiny(**kwargs):
    keras.utils.set_random_seed(0)
    kwargs = {"embedding_dim": 8, "units": 8, **kwargs}
    model = Seq2SeqTranslator(12, 14, **kwargs)
    model((SOURCE, TARGET_IN))
    return model


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_decode_step_matches_teacher_forced_call(config):
    model = tiny(**config)
    logits = np.asarray(model((SOURCE, TARGET_IN)))
    assert logits.shape == (3, 5, 14)
    enc_outputs, enc_mask, states = model.encode(SOURCE)
    assert enc_outputs.shape[-1] == 8 * (2 if model.bidirectional else 1)
    assert len(states) == model.num_layers
    assert all(len(s) == (2 if model.cell == "lstm" else 1) for s in states)
    steps = []
    for t in range(TARGET_IN.shape[1]):
        step = model.decode_step(TARGET_IN[:, t], states, enc_outputs, enc_mask)
        log_probs, states, weights = step
        assert (weights is None) == (model.attention == "none")
        steps.append(np.asarray(log_probs))
    expected = np.asarray(keras.ops.log_softmax(logits, axis=-1))
    real = TARGET_IN != 0  # positions after a sentence's end are not comparable
    np.testing.assert_allclose(np.stack(steps, 1)[real], expected[real], atol=1e-5)


def test_padding_does_not_change_outputs():
    model = tiny(attention="bahdanau")
    padded = np.pad(SOURCE, [(0, 0), (0, 3)])
    np.testing.assert_allclose(
        np.asarray(model((padded, TARGET_IN))), np.asarray(model((SOURCE, TARGET_IN))), atol=1e-6
    )


def test_loss_ignores_padding():
    model = tiny(attention="none")
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
    logits = model((SOURCE, TARGET_IN))
    log_probs = np.asarray(keras.ops.log_softmax(logits, axis=-1))
    picked = np.take_along_axis(log_probs, TARGET_OUT[..., None], axis=-1)[..., 0]
    expected = -picked[TARGET_OUT != 0].mean()
    assert float(loss_fn(TARGET_OUT, logits)) == pytest.approx(expected, rel=1e-5)


def test_fit_reduces_loss():
    model = tiny(attention="luong", dropout=0.1)
    model.compile(
        keras.optimizers.Adam(0.05),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0),
        run_eagerly=True,  # no tracing: faster for a handful of steps
    )
    history = model.fit((SOURCE, TARGET_IN), TARGET_OUT, epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


@pytest.mark.parametrize("attention", ["none", "luong"])
def test_save_load_round_trip(tmp_path, attention):
    model = tiny(attention=attention, cell="gru", dropout=0.2)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert isinstance(loaded, Seq2SeqTranslator)
    assert loaded.get_config() == model.get_config()
    np.testing.assert_array_equal(
        np.asarray(loaded((SOURCE, TARGET_IN))), np.asarray(model((SOURCE, TARGET_IN)))
    )
    before = model.decode_step(TARGET_IN[:, 0], model.encode(SOURCE)[2], *model.encode(SOURCE)[:2])
    after = loaded.decode_step(
        TARGET_IN[:, 0], loaded.encode(SOURCE)[2], *loaded.encode(SOURCE)[:2]
    )
    np.testing.assert_array_equal(np.asarray(before[0]), np.asarray(after[0]))


def test_config_round_trip_and_named_layers():
    model = tiny(cell="gru", attention="bahdanau", num_layers=2, bridge="sum", dropout=0.25)
    config = model.get_config()
    for key, value in dict(
        source_vocab_size=12, target_vocab_size=14, embedding_dim=8, units=8, cell="gru",
        num_layers=2, bidirectional=True, dropout=0.25, attention="bahdanau", bridge="sum",
    ).items():
        assert config[key] == value
    assert Seq2SeqTranslator.from_config(config).get_config() == config
    for name in ("source_embedding", "target_embedding", "output_projection", "attention",
                 "attention_combine", "encoder_bidirectional_1", "decoder_gru_1"):
        assert model.get_layer(name) is not None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(cell="lsmt"), "Expected cell to be one of"),
        (dict(attention="dot"), "Expected attention to be one of"),
        (dict(bridge="mean"), "Expected bridge to be one of"),
        (dict(units=0), "Expected units to be a positive int"),
        (dict(dropout=1.0), "Expected dropout to be a float in [0, 1)"),
        (dict(bidirectional="yes"), "Expected bidirectional to be a bool"),
    ],
)
def test_invalid_arguments(kwargs, message):
    with pytest.raises(ValueError) as error:
        Seq2SeqTranslator(12, 14, **kwargs)
    assert message in str(error.value)
    assert "Received:" in str(error.value)


def test_attention_layer_masks_padding_and_round_trips():
    layer = Attention(4, score="bahdanau", name="attention")
    values = np.random.default_rng(0).normal(size=(2, 3, 6)).astype("float32")
    mask = np.array([[True, True, False], [True, False, False]])
    context, weights = layer(np.ones((2, 5, 4), "float32"), values, values_mask=mask)
    assert tuple(context.shape) == (2, 5, 6)
    weights = np.asarray(weights)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
    assert (weights[~np.broadcast_to(mask[:, None, :], weights.shape)] == 0).all()
    clone = Attention.from_config(layer.get_config())
    assert (clone.units, clone.score) == (4, "bahdanau")
    with pytest.raises(ValueError, match="Expected score to be one of"):
        Attention(4, score="general")


def test_luong_score_and_residual_combine_against_numpy():
    """The Luong score, the context and the residual combine, recomputed in numpy."""
    model = tiny(cell="gru", attention="luong", combine="residual")
    rng = np.random.default_rng(3)
    y = rng.normal(size=(2, 8)).astype("float32")
    enc = rng.normal(size=(2, 4, 16)).astype("float32")
    mask = np.array([[True, True, True, False], [True, True, False, False]])
    out, weights = model._attend(y, enc, mask)
    w_k = np.asarray(model.get_layer("attention").key_projection.kernel)
    scores = np.einsum("bu,bsu->bs", y, enc @ w_k) / np.sqrt(8)
    scores = np.where(mask, scores, -np.inf)
    expected_w = np.exp(scores - scores.max(-1, keepdims=True))
    expected_w /= expected_w.sum(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(weights), expected_w, rtol=1e-5, atol=1e-7)
    context = np.einsum("bs,bsd->bd", expected_w, enc)
    pre = y + context @ np.asarray(model.get_layer("attention_combine").kernel)
    norm = model.get_layer("attention_norm")
    mean, var = pre.mean(-1, keepdims=True), pre.var(-1, keepdims=True)
    expected = (pre - mean) / np.sqrt(var + norm.epsilon) * np.asarray(norm.gamma) + np.asarray(
        norm.beta)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-5)


def test_tanh_combine_against_numpy():
    model = tiny(cell="gru", attention="bahdanau", combine="tanh")
    rng = np.random.default_rng(4)
    y = rng.normal(size=(2, 8)).astype("float32")
    enc = rng.normal(size=(2, 3, 16)).astype("float32")
    out, weights = model._attend(y, enc, np.ones((2, 3), bool))
    context = np.einsum("bs,bsd->bd", np.asarray(weights), enc)
    dense = model.get_layer("attention_combine")
    expected = np.tanh(np.concatenate([y, context], -1) @ np.asarray(dense.kernel)
                       + np.asarray(dense.bias))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Expected combine to be one of"):
        tiny(combine="gated")
