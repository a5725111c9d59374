"""Issue 17's bench rows on tiny inputs: tokenizer speed in the graph (word-level,
SentencePiece unigram and BPE fitted on and timed on the same sentences) and beam
search against greedy decoding. Structural facts only, no timing thresholds."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.bench import tokenizer_speed
from elman.bench.beam_speed import beam_vs_greedy
from elman.config import TokenizerConfig
from elman.models.seq2seq_translator import Seq2SeqTranslator
from elman.tasks.translation.decoding import greedy_decode
from elman.text.tokenize import split_all

SENTENCES = ["The cat sat on the mat.", "Tom doesn't like cold tea, does he?",
             "We met in Paris in 2019; it rained (a lot).", "Where's my book? It's here!",
             "She said: \"come back at 5 o'clock.\"", "I have 3 apples, 2 pears and 1 fig.",
             "  Tom   is  here ", "Can you help me?", "I'm sorry, I forgot.",
             "They didn't go to school today."]


def base():
    return TokenizerConfig(lowercase=False, max_length=10_000, vocabulary_size=120)


@pytest.fixture(scope="module")
def texts():
    return SENTENCES * 7  # 70 sentences: batches of 16 leave a short last one


@pytest.fixture(scope="module")
def speed(texts):
    return tokenizer_speed.tokenizer_speed(texts, base(), batch_size=16, repeats=2,
                                           data="tiny", log=lambda *_: None)


def test_every_tokenizer_saw_the_same_sentences(speed, texts):
    assert speed["sentences"] == len(texts) and speed["repeats"] == 2
    assert speed["batch_size"] == 16 and speed["data"] == "tiny"
    rows = speed["tokenizers"]
    assert list(rows) == list(tokenizer_speed.NAMES)
    for name, row in rows.items():
        assert row["sentences_seen"] == len(texts), name
        assert row["sentences_per_s"] == pytest.approx(len(texts) / row["seconds"])
        assert row["ids_per_s"] == pytest.approx(row["ids"] / row["seconds"])
        assert row["unknown_share"] == 0, name  # fitted on these very sentences


def test_ratios_are_the_quotients_of_the_reported_rates(speed):
    rows = speed["tokenizers"]
    for name in ("subword_unigram", "subword_bpe"):
        assert speed[f"{name}_over_word"] == pytest.approx(
            rows[name]["sentences_per_s"] / rows["word"]["sentences_per_s"])


def test_subword_ids_decode_back_to_the_input(speed, texts):
    for name in ("subword_unigram", "subword_bpe"):
        assert speed["tokenizers"][name]["round_trip_sentences"] == len(texts), name


def test_round_trip_check_can_fail(texts):
    """A character never seen in training maps to the unknown piece: not given back."""
    fitted = tokenizer_speed.fit_tokenizers(base(), texts)
    for name in ("subword_unigram", "subword_bpe"):
        tokenizer = fitted[name][0]
        assert tokenizer_speed.round_trips(tokenizer, ["The cat sat.", "Zebra \u2603"]) == 1


def test_graph_pass_counts_what_eager_tokenization_gives(texts):
    fitted = tokenizer_speed.fit_tokenizers(base(), texts)
    word = fitted["word"][0]
    assert word.level == "word"
    assert fitted["subword_bpe"][0].algorithm == "bpe"
    assert fitted["subword_unigram"][0].algorithm == "unigram"
    for name, (tokenizer, _) in fitted.items():
        sentences, ids, unknown, total = (int(v) for v in
                                          tokenizer_speed.graph_pass(tokenizer, texts, 7)())
        eager = tokenizer.ragged_ids(tf.constant(texts))
        assert sentences == len(texts), name
        assert ids == int(tf.size(eager.flat_values)), name
        assert total == int(tf.reduce_sum(eager.flat_values)), name
        assert unknown == 0
    assert int(tokenizer_speed.graph_pass(word, texts, 7)()[1]) == sum(
        len(row) for row in split_all(word, texts))


def test_table_rows_name_the_three_tokenizers(speed):
    rows = tokenizer_speed.table_rows(speed)
    assert rows[0][0].startswith("[8] tokenizer sentences/s in the graph (70 sentences, ")
    assert "word" in rows[0][1] and "unigram" in rows[0][1] and "bpe" in rows[0][1]
    assert f"{len(SENTENCES) * 7}/{len(SENTENCES) * 7}" in rows[2][1]
    assert tokenizer_speed.table_rows({}) == []


def test_quick_bench_sentences_are_the_toy_english_side():
    texts, data = tokenizer_speed.bench_sentences(quick=True)
    assert data.startswith("en side of data/translation/en-zh/train.tsv")
    assert len(texts) > 100 and all(isinstance(t, str) and t for t in texts)


# ------------------------------------------------------------------ beam vs greedy

START, END, SOURCE_VOCAB, TARGET_VOCAB = 2, 3, 12, 14


@pytest.fixture(scope="module")
def model_and_source():
    """A tiny translator after a few Adam steps (it ends sentences at different lengths)."""
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    source = np.zeros((24, 5), np.int32)
    target_in = np.zeros((24, 6), np.int32)
    target_out = np.zeros_like(target_in)
    for i in range(24):
        n = int(rng.integers(1, 6))
        words = rng.integers(2, SOURCE_VOCAB, size=n)
        source[i, :n] = words
        target_in[i, 0], target_in[i, 1:n + 1] = START, words[::-1] + 2
        target_out[i, :n], target_out[i, n] = words[::-1] + 2, END
    model = Seq2SeqTranslator(SOURCE_VOCAB, TARGET_VOCAB, embedding_dim=8, units=8,
                              attention="luong")
    optimizer = keras.optimizers.Adam(0.03)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
    for _ in range(15):
        with tf.GradientTape() as tape:
            loss = loss_fn(target_out, model((source, target_in), training=True))
        optimizer.apply(tape.gradient(loss, model.trainable_variables),
                        model.trainable_variables)
    return model, source[:11]


def _padded(a, width):
    out = np.zeros([a.shape[0], width], np.int32)
    out[:, :a.shape[1]] = a
    return out


def test_beam_vs_greedy_same_sentences_and_ratios(model_and_source):
    model, source = model_and_source
    result, ids = beam_vs_greedy(model, source, START, END, widths=(1, 3), repeats=2,
                                 batch_size=4, length_penalty=0.6, max_len=6,
                                 return_ids=True)
    assert result["sentences"] == len(source) and result["repeats"] == 2
    assert result["batch_size"] == 4 and result["length_penalty"] == 0.6
    assert set(ids) == {"greedy", "beam 1", "beam 3"}
    assert all(out.shape[0] == len(source) for out in ids.values())
    for k in (1, 3):
        assert result[f"beam_{k}_over_greedy_time"] == pytest.approx(
            result["greedy_sentences_per_s"] / result[f"beam_{k}_sentences_per_s"])
    width = max(ids["greedy"].shape[1], ids["beam 1"].shape[1])
    np.testing.assert_array_equal(_padded(ids["beam 1"], width), _padded(ids["greedy"], width))
    # length-sorted batches of 4, each trimmed to its own padding, come back in input order
    whole = greedy_decode(model, source, START, END, max_len=6)
    width = max(whole.shape[1], ids["greedy"].shape[1])
    np.testing.assert_array_equal(_padded(ids["greedy"], width), _padded(whole, width))
    assert result["greedy_mean_output_tokens"] == pytest.approx(
        np.count_nonzero(whole, axis=1).mean())


def test_beam_vs_greedy_rejects_empty_input(model_and_source):
    model, _ = model_and_source
    with pytest.raises(ValueError, match="non-empty"):
        beam_vs_greedy(model, np.zeros([0, 3], np.int32), START, END)
