"""The neighbour-word objective beside tagging (`head.lm_weight`, Rei 2017; issue 16).

Oracles: the targets of a small batch worked out by hand; the loss recomputed in NumPy
from the layer's weights, with its own loops over sentences and positions; and the
tagger's training loss taken apart into the tagging loss (an inference-mode call adds
no objective) plus the weight times the NumPy loss.
"""

import re

import numpy as np
import pytest

from elman import cli
from elman import config as config_lib
from elman.errors import UserError
from tests.conftest import ROOT
from tests.test_tagging_task import TINY

WORDS = np.array([[5, 2, 7, 9, 0], [3, 0, 0, 0, 0], [8, 4, 0, 0, 0]], np.int32)


def test_targets_by_hand():
    from elman.models.neighbour_words import neighbour_targets

    following, preceding = neighbour_targets(WORDS, 6)  # ids 6 and up become 1 (OOV)
    # sentence 1 reads 5 2 [7→1] [9→1]; its edges (and the padding) are class 0
    assert np.asarray(following).tolist() == [[2, 1, 1, 0, 0], [0, 0, 0, 0, 0],
                                              [4, 0, 0, 0, 0]]
    assert np.asarray(preceding).tolist() == [[0, 5, 2, 1, 1], [0, 3, 0, 0, 0],
                                              [0, 1, 4, 0, 0]]


def numpy_objective(layer, states, words):
    """The layer's loss from its weights, position by position."""
    units, vocabulary = layer.units, layer.vocabulary_size
    weights = [[np.asarray(v) for v in layer.hidden_layers[d].weights + layer.output_layers[d]
                .weights] for d in range(2 if layer.bidirectional else 1)]
    total = 0.0
    for direction, (w1, b1, w2, b2) in enumerate(weights):
        losses = []
        for s, sentence in enumerate(words):
            real = [int(w) for w in sentence if w != 0]
            for t in range(len(real)):
                neighbour = t + 1 if direction == 0 else t - 1
                word = real[neighbour] if 0 <= neighbour < len(real) else 0
                target = word if word < vocabulary else 1
                half = states[s, t, direction * units:(direction + 1) * units]
                logits = np.tanh(half @ w1 + b1) @ w2 + b2
                top = logits.max()
                log_z = top + np.log(np.exp(logits - top).sum())
                losses.append(log_z - logits[target])
        total += float(np.mean(losses))
    return total


@pytest.mark.parametrize("bidirectional", [True, False])
def test_the_loss_matches_a_numpy_recomputation(bidirectional):
    import keras

    from elman.models.neighbour_words import NeighbourWordObjective

    rng = np.random.default_rng(3)
    units = 4
    width = 2 * units if bidirectional else units
    layer = NeighbourWordObjective(6, units, bidirectional=bidirectional, weight=0.5,
                                   hidden=3)
    states = rng.normal(size=(3, 5, width)).astype("float32")
    layer([states, WORDS])  # builds it
    for variable in layer.weights:  # non-zero biases too
        variable.assign(rng.normal(size=variable.shape).astype("float32"))
    out = layer([states, WORDS], training=False)
    assert layer.losses == [] and np.array_equal(np.asarray(out), states)
    expected = numpy_objective(layer, states, WORDS)
    assert float(layer.objective(states, WORDS)) == pytest.approx(expected, rel=1e-5)
    out = layer([states, WORDS], training=True)
    assert np.array_equal(np.asarray(out), states)
    assert [float(x) for x in layer.losses] == pytest.approx([0.5 * expected], rel=1e-5)
    assert keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(layer)).get_config() == layer.get_config()


def test_the_taggers_training_loss_is_the_tagging_loss_plus_the_weighted_objective():
    import keras

    from elman.models.sequence_tagger import SequenceTagger

    keras.utils.set_random_seed(5)
    model = SequenceTagger(10, 4, embedding_dim=6, units=5, head="crf", lm_weight=0.3,
                           lm_words=6, lm_hidden=4)
    model.compile(optimizer="adam")
    tags = np.array([[1, 2, 0, 3, 0], [2, 0, 0, 0, 0], [1, 1, 0, 0, 0]], np.int32)
    plain = float(model.compute_loss(WORDS, tags, model(WORDS, training=False)))
    trained = float(model.compute_loss(WORDS, tags, model(WORDS, training=True)))
    states = keras.Model(model.inputs[0], model.get_layer("encoder").output)(WORDS)
    objective = numpy_objective(model.get_layer("neighbour_words"), np.asarray(states), WORDS)
    assert objective > 0.5  # untrained: close to log(6) a direction
    assert trained == pytest.approx(plain + 0.3 * objective, rel=1e-5)
    # one training step moves the objective's own weights
    before = [np.asarray(v).copy() for v in model.get_layer("neighbour_words").weights]
    model.fit(WORDS, tags, epochs=1, verbose=0)
    after = model.get_layer("neighbour_words").weights
    assert all(not np.allclose(a, np.asarray(b)) for a, b in zip(before, after))


def test_the_model_refuses_what_would_show_the_predicted_word():
    from elman.models.sequence_tagger import SequenceTagger

    with pytest.raises(ValueError, match="no bigram input"):
        SequenceTagger(10, 3, bigram_vocabulary_size=20, lm_weight=0.1)
    with pytest.raises(ValueError, match="lm_weight >= 0"):
        SequenceTagger(10, 3, lm_weight=-1.0)


@pytest.mark.parametrize("items, needle", [
    (["head.lm_weight=-0.1"], "head.lm_weight must be at least 0; got -0.1"),
    (["head.lm_weight=0.1", "features.bigrams=true"], "head.lm_weight needs "
                                                      "features.bigrams = false"),
    (["head.lm_weight=0.1", "head.lm_words=2"], "head.lm_words must be between 3 and"),
    (["head.lm_weight=0.1", "head.lm_hidden=0"], "head.lm_hidden must be between 1 and"),
])
def test_bad_objective_settings_are_refused(items, needle):
    from elman.tasks.tagging.task import TaggingTask

    with pytest.raises(UserError, match=re.escape(needle)):
        TaggingTask().check(config_lib.load_config("tagging", overrides=items))
    # off (the default), two layers and bigrams are fine, and the objective with two layers
    TaggingTask().check(config_lib.load_config("tagging", overrides=[
        "encoder.num_layers=2", "features.bigrams=true"]))
    TaggingTask().check(config_lib.load_config("tagging", overrides=[
        "encoder.num_layers=2", "head.lm_weight=0.1"]))


def test_a_run_with_the_objective_saves_a_model_that_loads_in_safe_mode(tmp_path):
    import json

    import keras

    import elman

    data = ROOT / "data" / "tagging" / "en"
    run = tmp_path / "run"
    args = ["train", "tagging", "--data", data / "train.conll", "--validation",
            data / "validation.conll", "--out", run, "--reports", tmp_path / "rep", *TINY,
            "--set", "head.lm_weight=0.2", "--set", "head.lm_words=50",
            "--set", "encoder.num_layers=2"]
    assert cli.main([str(a) for a in args]) == 0
    model = keras.saving.load_model(run / "model.keras", safe_mode=True)
    assert model.get_layer("upper_encoder").num_layers == 1  # the split stack comes back
    layer = model.get_layer("neighbour_words")
    assert (layer.weight, layer.vocabulary_size) == (0.2, 50)
    metrics = json.loads((tmp_path / "rep" / "tagging" / "run" / "metrics.json")
                         .read_text(encoding="utf-8"))
    assert "neighbour-word objective 0.2 (at most 50 classes)" in metrics["model"]
    tagged = elman.load(run).predict(["Mary visited Paris"])
    assert len(tagged[0]["tags"]) == 3


@pytest.mark.parametrize("layers", [1, 3])
def test_the_classifiers_training_loss_is_its_loss_plus_the_weighted_objective(layers):
    import keras

    from elman.models.sentiment_classifier import SentimentClassifier

    keras.utils.set_random_seed(7)
    model = SentimentClassifier(10, 2, embedding_dim=6, units=5, dropout=0.0, pooling="max",
                                hidden=0, head_dropout=0.0, lm_weight=0.4, lm_words=7,
                                lm_hidden=3, num_layers=layers)
    # with three layers the objective reads the first ("encoder"); two sit above it
    assert model.get_layer("encoder").num_layers == 1
    assert layers == 1 or model.get_layer("upper_encoder").num_layers == 2
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    labels = np.array([1, 0, 1], np.int32)
    plain = float(model.compute_loss(WORDS, labels, model(WORDS, training=False)))
    trained = float(model.compute_loss(WORDS, labels, model(WORDS, training=True)))
    states = keras.Model(model.inputs[0], model.get_layer("encoder").output)(WORDS)
    objective = numpy_objective(model.get_layer("neighbour_words"), np.asarray(states), WORDS)
    assert trained == pytest.approx(plain + 0.4 * objective, rel=1e-5)
    with pytest.raises(ValueError, match="pooling other than 'last'"):
        SentimentClassifier(10, 2, pooling="last", lm_weight=0.1)
    with pytest.raises(ValueError, match="no bigram_pairs"):
        SentimentClassifier(10, 2, pooling="max", bigram_pairs=[7, 9], lm_weight=0.1)


@pytest.mark.parametrize("items, needle", [
    (["head.pooling=last", "head.lm_weight=0.1"], "head.lm_weight needs a state per word"),
    (["head.pooling=max", "head.lm_weight=0.1", "features.bigrams=true"],
     "head.lm_weight needs features.bigrams = false"),
    (["head.pooling=max", "head.lm_weight=-1"], "head.lm_weight must be at least 0"),
    (["head.pooling=max", "head.lm_weight=0.1", "encoder.merge_mode=ave"],
     "head.lm_weight needs encoder.merge_mode = \"concat\""),
])
def test_bad_sentiment_objective_settings_are_refused(items, needle):
    from elman.tasks.sentiment.task import SentimentTask

    with pytest.raises(UserError, match=re.escape(needle)):
        SentimentTask().check(config_lib.load_config("sentiment", overrides=items))


def test_a_sentiment_run_with_the_objective_reports_it_and_loads_in_safe_mode(tmp_path):
    import keras

    data = ROOT / "data" / "sentiment" / "en"
    args = ["train", "sentiment", "--data", data / "train.csv", "--validation",
            data / "validation.csv", "--out", tmp_path / "run", "--reports", tmp_path / "rep",
            "--set", "train.epochs=1", "--set", "encoder.units=8", "--set", "embedding.dim=8",
            "--set", "head.pooling=max", "--set", "head.lm_weight=0.2"]
    assert cli.main([str(a) for a in args]) == 0
    report = (tmp_path / "rep" / "sentiment" / "run" / "report.md").read_text(encoding="utf-8")
    assert "neighbour-word objective 0.2 (at most 2,000 classes)" in report
    model = keras.saving.load_model(tmp_path / "run" / "model.keras", safe_mode=True)
    classifier = model.get_layer("sentiment_classifier")
    layer = classifier.get_layer("neighbour_words")
    assert layer.weight == 0.2
    assert layer.vocabulary_size == min(2000, classifier.vocabulary_size)


def _stacked_tagger(lm_weight):
    from elman.models.sequence_tagger import SequenceTagger

    return SequenceTagger(10, 4, embedding_dim=6, units=5, num_layers=2, dropout=0.0,
                          head="crf", lm_weight=lm_weight, lm_words=6, lm_hidden=4)


def test_with_two_layers_the_objective_reads_the_first_which_cannot_see_the_word():
    import keras

    keras.utils.set_random_seed(11)
    model = _stacked_tagger(0.3)
    assert model.get_layer("encoder").num_layers == 1
    assert model.get_layer("upper_encoder").num_layers == 1
    first = keras.Model(model.inputs[0], model.get_layer("encoder").output)
    upper = keras.Model(model.inputs[0], model.get_layer("upper_encoder").output)
    changed = WORDS.copy()
    changed[0, 2] = 3  # the third word of the first sentence
    a, b = np.asarray(first(WORDS)), np.asarray(first(changed))
    # forward states before the word and backward states after it have not read it
    assert np.array_equal(a[0, :2, :5], b[0, :2, :5])
    assert np.array_equal(a[0, 3:4, 5:], b[0, 3:4, 5:])
    assert not np.allclose(a[0, 1:2, 5:], b[0, 1:2, 5:])  # the backward state has
    # the second layer's forward states before the word have read it (through the first
    # layer's backward half): why the objective may not sit there
    assert not np.allclose(np.asarray(upper(WORDS))[0, :2, :5],
                           np.asarray(upper(changed))[0, :2, :5])
    # the training loss is the tagging loss plus the weight times the first layer's loss
    model.compile(optimizer="adam")
    tags = np.array([[1, 2, 0, 3, 0], [2, 0, 0, 0, 0], [1, 1, 0, 0, 0]], np.int32)
    plain = float(model.compute_loss(WORDS, tags, model(WORDS, training=False)))
    trained = float(model.compute_loss(WORDS, tags, model(WORDS, training=True)))
    objective = numpy_objective(model.get_layer("neighbour_words"), a, WORDS)
    assert trained == pytest.approx(plain + 0.3 * objective, rel=1e-5)


def test_the_split_stack_tags_as_one_encoder_of_as_many_layers_with_its_weights():
    import keras

    keras.utils.set_random_seed(12)
    split, whole = _stacked_tagger(0.3), _stacked_tagger(0.0)
    assert [layer.name for layer in whole.layers if "encoder" in layer.name] == ["encoder"]
    assert whole.get_layer("encoder").num_layers == 2
    objective = {id(v) for v in split.get_layer("neighbour_words").weights}
    kept = [v for v in split.weights if id(v) not in objective]
    assert [tuple(v.shape) for v in kept] == [tuple(v.shape) for v in whole.weights]
    for source, target in zip(kept, whole.weights):
        target.assign(source)
    assert np.allclose(np.asarray(split(WORDS)), np.asarray(whole(WORDS)), atol=1e-6)

