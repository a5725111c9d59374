"""elman's fused Adam/SGD against Keras' own update and a NumPy Adam (the oracles)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.models.fused_optimizers import FusedAdam, FusedSGD

SHAPES = [(11, 4), (4,)]  # an embedding-like matrix and a bias


def _gradients(step, sparse):
    rng = np.random.default_rng(100 + step)
    dense = [rng.normal(size=s).astype("float32") for s in SHAPES]
    if not sparse:
        return [tf.constant(g) for g in dense]
    rows = tf.constant([1, 5, 5, 9])  # a repeated row, as a batch with a word twice
    values = tf.constant(rng.normal(size=(4, 4)).astype("float32"))
    return [tf.IndexedSlices(values, rows, tf.constant(SHAPES[0])),
            tf.constant(dense[1])]


def _train(optimizer, sparse, steps=6, densify=False):
    rng = np.random.default_rng(0)
    weights = [keras.Variable(rng.normal(size=s).astype("float32")) for s in SHAPES]
    optimizer.build(weights)
    apply = tf.function(lambda grads: optimizer.apply(grads, weights))
    for step in range(steps):
        grads = _gradients(step, sparse)
        apply([tf.convert_to_tensor(g) for g in grads] if densify else grads)
    return [w.numpy() for w in weights]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("options", [
    {}, {"global_clipnorm": 0.5}, {"weight_decay": 0.01},
    {"use_ema": True, "ema_momentum": 0.9}])
def test_fused_adam_matches_keras_adam(sparse, options):
    """Keras' Adam gets the embedding gradient made dense (duplicate rows summed): given
    the sparse one it squares each occurrence, not their sum, for v (its `square` works
    on the slices), which is not Adam's update for a word seen twice in a batch. Keras'
    global clipping measures sparse gradients the same way (each occurrence apart),
    before either update runs, so with clipping both get the dense gradient."""
    schedule = keras.optimizers.schedules.ExponentialDecay(0.01, 2, 0.5, staircase=True)
    ours = _train(FusedAdam(schedule, **options), sparse,
                  densify="global_clipnorm" in options)
    theirs = _train(keras.optimizers.Adam(schedule, **options), sparse, densify=True)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_fused_adam_one_step_by_hand():
    """Step 1 from the Adam paper's formulas in NumPy (lr 0.1, default betas)."""
    w0 = np.random.default_rng(0).normal(size=SHAPES[0]).astype("float64")
    g = _gradients(0, False)[0].numpy().astype("float64")
    m = 0.1 * g
    v = 0.001 * g * g
    alpha = 0.1 * np.sqrt(1 - 0.999) / (1 - 0.9)
    expected = w0 - alpha * m / (np.sqrt(v) + 1e-7)
    weight = keras.Variable(w0.astype("float32"))
    optimizer = FusedAdam(0.1)
    optimizer.build([weight])
    optimizer.apply([tf.constant(g.astype("float32"))], [weight])
    np.testing.assert_allclose(weight.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("sparse", [False, True])
def test_fused_sgd_matches_keras_sgd(momentum, sparse):
    ours = _train(FusedSGD(0.05, momentum=momentum), sparse)
    theirs = _train(keras.optimizers.SGD(0.05, momentum=momentum), sparse)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_a_compiled_model_saves_and_resumes_with_its_slots(tmp_path):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=FusedAdam(0.01), loss="mse")
    x, y = np.ones((8, 3), "float32"), np.zeros((8, 2), "float32")
    model.fit(x, y, epochs=2, verbose=0)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras", safe_mode=True)
    assert isinstance(loaded.optimizer, FusedAdam)
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _fit_embedding_model(optimizer_factory, strategy=None, epochs=2):
    """A word-averaging classifier fitted on fixed batches (words repeat within a
    sentence, and most rows are absent from any one batch); its final weights."""
    import contextlib

    rng = np.random.default_rng(0)
    x = rng.integers(1, 30, size=(48, 6)).astype("int32")
    y = rng.integers(0, 2, size=48).astype("int32")
    with strategy.scope() if strategy else contextlib.nullcontext():
        keras.utils.set_random_seed(4)
        model = keras.Sequential([keras.Input((6,), dtype="int32"),
                                  keras.layers.Embedding(40, 5),
                                  keras.layers.GlobalAveragePooling1D(),
                                  keras.layers.Dense(2)])
        model.compile(optimizer_factory(),
                      keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0)
    return model.get_weights()


def test_under_a_strategy_sparse_gradients_get_the_same_update():
    """Under a tf.distribute strategy the Keras update runs instead of the fused kernel;
    the embedding's sparse gradient is made dense for it too, so a mirrored run takes the
    same steps as a single-device one."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    mirrored = _fit_embedding_model(lambda: FusedAdam(0.01), strategy)
    single = _fit_embedding_model(lambda: FusedAdam(0.01))
    for a, b in zip(mirrored, single):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # the check can tell: Keras' own Adam (given the slices) ends elsewhere
    keras_sparse = _fit_embedding_model(lambda: keras.optimizers.Adam(0.01))
    assert np.abs(keras_sparse[0] - single[0]).max() > 1e-3
