import numpy as np
import pytest

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

from elman.models.seq2seq_translator import Seq2SeqTranslator  # noqa: E402
from elman.tasks.translation import decoding  # noqa: E402
from elman.tasks.translation.decoding import (  # noqa: E402
    beam_search_decode, greedy_decode, length_caps)
from elman.bench import reference_decoding  # noqa: E402
from elman.bench.reference_decoding import (  # noqa: E402
    benchmark_decoders, eager_batched_decode, per_sentence_predict_decode,
    reference_stepwise_decode)

START, END = 2, 3  # target ids: 0 pad, 1 OOV, 2 start, 3 end, 4..13 words
SOURCE_VOCAB, TARGET_VOCAB = 12, 14


def toy_pairs(n, seed, max_len=5):
    """Reverse-and-shift task: source words 2..11 -> target words 4..13, reversed."""
    rng = np.random.default_rng(seed)
    source = np.zeros((n, max_len), np.int32)
    target_in = np.zeros((n, max_len + 1), np.int32)
    target_out = np.zeros_like(target_in)
    for i in range(n):
        length = rng.integers(1, max_len + 1)
        words = rng.integers(2, SOURCE_VOCAB, size=length)
        source[i, :length] = words
        target = words[::-1] + 2
        target_in[i, 0] = START
        target_in[i, 1 : length + 1] = target
        target_out[i, :length] = target
        target_out[i, length] = END
    return source, target_in, target_out


def briefly_trained(steps=15, **kwargs):
    """A tiny model after a few eager Adam steps: not uniform, ends sentences early."""
    keras.utils.set_random_seed(0)
    model = Seq2SeqTranslator(
        SOURCE_VOCAB, TARGET_VOCAB, **{"embedding_dim": 8, "units": 8, **kwargs}
    )
    source, target_in, target_out = toy_pairs(32, seed=0)
    optimizer = keras.optimizers.Adam(0.03)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = loss_fn(target_out, model((source, target_in), training=True))
        optimizer.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
    return model


@pytest.fixture(scope="module")
def model():
    return briefly_trained(attention="luong")


@pytest.fixture(scope="module")
def source():
    return toy_pairs(8, seed=3)[0]


def end_positions(ids):
    return [list(row).index(END) if END in row else None for row in ids]


def assert_padded_after_end(ids, caps):
    for row, cap in zip(ids, caps):
        row = list(row)
        length = row.index(END) + 1 if END in row else np.count_nonzero(row)
        assert all(t != 0 for t in row[:length]), row  # padding is never predicted
        assert all(t == 0 for t in row[length:]), row
        assert length <= cap


def test_greedy_equals_reference_and_stops_each_sentence(model, source):
    ids = greedy_decode(model, source, START, END)
    np.testing.assert_array_equal(ids, reference_stepwise_decode(model, source, START, END))
    ends = end_positions(ids)
    assert None not in ends and len(set(ends)) >= 2  # sentences finish at different steps
    assert ids.shape[1] == max(ends) + 1
    assert_padded_after_end(ids, length_caps(source))


@pytest.mark.parametrize(
    "config",
    [
        pytest.param(dict(cell="gru", attention="bahdanau", num_layers=2),
                     marks=pytest.mark.slow),
        dict(cell="lstm", attention="none", bidirectional=False),
    ],
    ids=["gru-bahdanau-2layers", "lstm-none-unidirectional"],
)
def test_greedy_equals_reference_other_configs(config, source):
    other = briefly_trained(steps=5, **config)
    ids = greedy_decode(other, source[:4], START, END)
    np.testing.assert_array_equal(ids, reference_stepwise_decode(other, source[:4], START, END))
    np.testing.assert_array_equal(ids, beam_search_decode(other, source[:4], START, END, 1))


def test_beam_width_one_equals_greedy(model, source):
    greedy = greedy_decode(model, source, START, END)
    for penalty in (0.0, 0.6):
        beam = beam_search_decode(model, source, START, END, beam_width=1, length_penalty=penalty)
        np.testing.assert_array_equal(beam, greedy)


def test_beam_search_output_is_well_formed(model, source):
    caps = length_caps(source, max_len=4)
    ids = beam_search_decode(model, source, START, END, beam_width=4, max_len=4)
    assert ids.shape[0] == len(source) and ids.shape[1] <= 4
    assert_padded_after_end(ids, caps)


@pytest.mark.slow
def test_eager_and_per_sentence_predict_equal_greedy(model, source):
    ids = greedy_decode(model, source, START, END)
    np.testing.assert_array_equal(eager_batched_decode(model, source, START, END), ids)
    few = per_sentence_predict_decode(model, source[:3], START, END)
    np.testing.assert_array_equal(few, ids[:3, : few.shape[1]])
    assert not ids[:3, few.shape[1] :].any()


def test_caps_per_sentence_and_global(model, source):
    forced = Seq2SeqTranslator.from_config(model.get_config())
    forced((source, source[:, :2]))
    forced.set_weights(model.get_weights())
    bias = np.full([TARGET_VOCAB], -5.0, "float32")
    bias[7] = 5.0  # token 7 always wins: no sentence ever ends
    kernel = forced.output_projection.kernel
    kernel.assign(np.zeros(kernel.shape, "float32"))
    forced.output_projection.bias.assign(bias)

    caps = length_caps(source, max_len_ratio=1.0, max_len_offset=1)
    assert len(set(caps.tolist())) >= 2
    for decode in (greedy_decode, eager_batched_decode):
        ids = decode(forced, source, START, END, max_len_ratio=1.0, max_len_offset=1)
        assert ids.shape[1] == caps.max()
        np.testing.assert_array_equal(np.count_nonzero(ids, axis=1), caps)
    ids = beam_search_decode(forced, source, START, END, 3, max_len_ratio=1.0, max_len_offset=1)
    np.testing.assert_array_equal(np.count_nonzero(ids, axis=1), caps)
    ids = greedy_decode(forced, source, START, END, max_len=2)
    assert ids.shape == (len(source), 2) and (ids == 7).all()
    ids = greedy_decode(forced, source, START, END, max_len=3, max_len_ratio=None)
    assert ids.shape == (len(source), 3)

    bias[END] = 10.0  # now the end token always wins: every sentence stops at once
    forced.output_projection.bias.assign(bias)
    np.testing.assert_array_equal(greedy_decode(forced, source, START, END), [[END]] * len(source))
    np.testing.assert_array_equal(
        beam_search_decode(forced, source, START, END, beam_width=4), [[END]] * len(source)
    )


def test_attention_weights(model, source):
    ids, weights = greedy_decode(model, source, START, END, return_attention=True)
    np.testing.assert_array_equal(ids, greedy_decode(model, source, START, END))
    assert weights.shape == ids.shape + (source.shape[1],)
    live = np.zeros(ids.shape, bool)
    for i, end in enumerate(end_positions(ids)):
        live[i, : end + 1] = True
    np.testing.assert_allclose(weights.sum(-1)[live], 1.0, rtol=1e-5)
    assert (weights.sum(-1)[~live] == 0).all()
    padding = np.broadcast_to((source == 0)[:, None, :], weights.shape)
    assert (weights[padding] == 0).all()
    no_attention = briefly_trained(steps=1, attention="none")
    with pytest.raises(ValueError, match="attention"):
        greedy_decode(no_attention, source, START, END, return_attention=True)


def test_no_retracing(model, source):
    function = decoding._greedy_function(model)
    greedy_decode(model, source, START, END)
    greedy_decode(model, source[:3, :4], START, END)
    greedy_decode(model, np.pad(source, [(0, 2), (0, 3)]), START, END)
    assert function.experimental_get_tracing_count() == 1
    beam = decoding._beam_function(model, 2)
    beam_search_decode(model, source, START, END, beam_width=2)
    beam_search_decode(model, source[:5, :3], START, END, beam_width=2)
    assert beam.experimental_get_tracing_count() == 1


def test_argument_errors(model, source):
    with pytest.raises(ValueError, match="Expected start_id"):
        greedy_decode(model, source, TARGET_VOCAB, END)
    with pytest.raises(ValueError, match="Expected beam_width"):
        beam_search_decode(model, source, START, END, beam_width=TARGET_VOCAB + 1)
    with pytest.raises(ValueError, match="nothing caps the length"):
        greedy_decode(model, source, START, END, max_len_ratio=None)
    with pytest.raises(ValueError, match="2-D"):
        greedy_decode(model, source[0], START, END)
    assert greedy_decode(model, source[:0], START, END).shape == (0, 0)


@pytest.mark.slow
def test_benchmark_decoders(model, source, monkeypatch):
    result = benchmark_decoders(model, source, START, END, repeats=1, per_sentence_limit=2)
    assert result["sentences"] == len(source) and result["per_sentence_sentences"] == 2
    for key in ("compiled_sentences_per_s", "eager_sentences_per_s",
                "per_sentence_predict_sentences_per_s", "compiled_over_per_sentence",
                "compiled_over_eager"):
        assert result[key] > 0
    assert result["machine"]["cpu_count"] >= 1

    def wrong(*args, **kwargs):
        ids = eager_batched_decode(*args, **kwargs)
        ids[-1, 0] = 4 if ids[-1, 0] != 4 else 5
        return ids

    monkeypatch.setattr(reference_decoding, "eager_batched_decode", wrong)
    with pytest.raises(RuntimeError, match="eager_batched_decode disagrees"):
        benchmark_decoders(model, source, START, END, repeats=1, per_sentence_limit=1)


@pytest.mark.slow
def test_trained_model_translates_toy_task():
    keras.utils.set_random_seed(1)
    model = Seq2SeqTranslator(SOURCE_VOCAB, TARGET_VOCAB, embedding_dim=16, units=16,
                              attention="luong")
    model.compile(
        keras.optimizers.Adam(0.02),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0),
    )
    source, target_in, target_out = toy_pairs(512, seed=0)
    model.fit((source, target_in), target_out, batch_size=64, epochs=8, verbose=0)
    test_source, _, test_out = toy_pairs(64, seed=5)
    ids = greedy_decode(model, test_source, START, END)
    exact = (decoding._pad_to(ids, test_out.shape[1]) == test_out).all(axis=1).mean()
    assert exact > 0.5
    beam = beam_search_decode(model, test_source, START, END, beam_width=4)
    exact_beam = (decoding._pad_to(beam, test_out.shape[1]) == test_out).all(axis=1).mean()
    assert exact_beam >= exact - 0.1
