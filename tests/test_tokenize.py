import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.config import TokenizerConfig
from elman.text.tokenize import (CharIds, TextTokenizer, fit_char_ids, fit_vocabulary, split_all,
                                 token_stats)


def split(text, **kwargs):
    return split_all(TextTokenizer(**kwargs), [text])[0]


def test_cjk_level_splits_han_characters_and_keeps_latin_words():
    assert split("服务慢，但味道很好") == ["服", "务", "慢", "，", "但", "味", "道", "很", "好"]
    assert split("我用iPhone 15拍照!") == ["我", "用", "iphone", "15", "拍", "照", "!"]


def test_word_and_char_levels_and_punctuation_modes():
    text = "The food, I don't know!"
    assert split(text, level="word") == ["the", "food", ",", "i", "don't", "know", "!"]
    assert split(text, level="word", punctuation="strip") == ["the", "food", "i", "don't", "know"]
    assert split(text, level="word", punctuation="keep", lowercase=False) == [
        "The", "food,", "I", "don't", "know!"]
    assert split("ab  c", level="char") == ["a", "b", " ", "c"]
    assert split("很好。", level="word", punctuation="strip") == ["很好"]  # full-width too


def test_unicode_spaces_separate_and_never_become_tokens():
    # French typography: no-break (U+00A0), narrow no-break (U+202F) and thin (U+2009)
    # spaces before ! ? : ; — and an ideographic space (U+3000) in Chinese text.
    text = "Santé\u202f! Vraiment\u00a0? Oui\u2009: non"
    for punctuation in ("split", "strip", "keep"):
        tokens = split(text, level="word", punctuation=punctuation)
        assert not [t for t in tokens if not t.strip()], tokens
    assert split(text, level="word") == ["santé", "!", "vraiment", "?", "oui", ":", "non"]
    assert split("好\u3000吃", level="cjk") == ["好", "吃"]
    assert split("a\u00a0b", level="char") == ["a", " ", "b"]


def test_ids_padding_oov_and_truncation_policies():
    vocab = ["a", "b", "c", "d"]  # ids 2..5
    post = TextTokenizer(vocabulary=vocab, level="word", max_length=3)
    pre = TextTokenizer(vocabulary=vocab, level="word", max_length=3, truncation="pre")
    texts = tf.constant(["a b c d", "zzz b"])
    assert post(texts).numpy().tolist() == [[2, 3, 4], [1, 3, 0]]
    assert pre(texts).numpy().tolist() == [[3, 4, 5], [1, 3, 0]]


def test_both_truncation_keeps_the_head_quarter_and_the_tail():
    vocab = [str(i) for i in range(20)]  # token "i" has id i + 2
    tok = TextTokenizer(vocabulary=vocab, level="word", max_length=8, truncation="both")
    texts = [" ".join(str(i) for i in range(n)) for n in (13, 8, 3, 9)]
    # by hand: max_length 8 → the first 2 (8 // 4) and the last 6 tokens of a longer text
    expected = [[0, 1, 7, 8, 9, 10, 11, 12], list(range(8)), [0, 1, 2], [0, 1, 3, 4, 5, 6, 7, 8]]
    got = tok.ragged_ids(tf.constant(texts)).to_list()
    assert got == [[i + 2 for i in row] for row in expected]
    assert tok.truncation_info(texts) == [
        {"tokens": 13, "read": 8, "kept": "first 2 and last 6 of the"}, None, None,
        {"tokens": 9, "read": 8, "kept": "first 2 and last 6 of the"}]
    one = TextTokenizer(vocabulary=vocab, level="word", max_length=1, truncation="both")
    assert one.ragged_ids(tf.constant(["0 1 2"])).to_list() == [[4]]  # head 0: the last
    assert TokenizerConfig(truncation="both").truncation == "both"


def test_strip_markup_removes_tags_and_nothing_else():
    text = "Great film.<br /><br />The <i>end</i> is 3 < 4 and <3 it"
    # by hand: each tag becomes a space; "<" followed by a space or a digit is text
    assert split(text, level="word", punctuation="keep", lowercase=False,
                 strip_markup=True) == ["Great", "film.", "The", "end", "is", "3", "<", "4",
                                        "and", "<3", "it"]
    assert "br" in split(text, level="word")  # off by default: tags are text
    cfg = TokenizerConfig(level="word", strip_markup=True, max_tokens=100)
    tok = fit_vocabulary(cfg, [text])
    assert "br" not in tok.get_vocabulary() and "i" not in tok.get_vocabulary()
    again = TextTokenizer.from_config(tok.get_config())
    assert again.strip_markup and (again(tf.constant([text])).numpy() ==
                                   tok(tf.constant([text])).numpy()).all()
    chars = fit_char_ids(cfg, [text], max_word_length=5)
    assert chars(tf.constant([text])).shape[1] == tok(tf.constant([text])).shape[1]
    assert "<" in chars.chars and "/" not in chars.chars  # "</i>" and "<br />" are gone


def test_strip_markup_reads_escaped_line_breaks_as_spaces():
    # the Yelp/Amazon polarity CSVs write a review's line breaks as the characters \ and n
    text = r"Great pasta.\nThe staff\r\nwere kind \o/"
    # by hand: each \n and \r becomes a space; any other backslash stays text
    assert split(text, level="word", punctuation="split", lowercase=True,
                 strip_markup=True) == ["great", "pasta", ".", "the", "staff", "were", "kind",
                                        "\\", "o", "/"]
    assert "nthe" in split(text, level="word", lowercase=True)  # off: "\" then "nThe"


def test_truncation_is_counted():
    tok = TextTokenizer(vocabulary=["a"], level="word", max_length=2)
    stats = token_stats(tok, ["a a a a", "a", "b b b"])
    # lengths 4, 1, 3 → kept 2, 1, 2; cut examples 2, cut tokens 2 + 1
    assert (stats.tokens, stats.kept_tokens) == (8, 5)
    assert (stats.truncated_examples, stats.truncated_tokens) == (2, 3)
    assert stats.oov_tokens == 2 and stats.oov_rate == pytest.approx(2 / 5)


def test_truncation_info_says_which_texts_are_cut_and_what_is_read():
    post = TextTokenizer(vocabulary=["a"], level="word", max_length=2)
    pre = TextTokenizer(vocabulary=["a"], level="word", max_length=2, truncation="pre")
    texts = ["a a a a", "a", "b b", "x, y"]  # 4, 1, 2 and 3 tokens (the comma is one)
    assert post.truncation_info(texts) == [{"tokens": 4, "read": 2, "kept": "first"}, None,
                                           None, {"tokens": 3, "read": 2, "kept": "first"}]
    assert pre.truncation_info(texts)[0] == {"tokens": 4, "read": 2, "kept": "last"}
    assert post.truncation_info([]) == []


def test_vocabulary_is_fitted_on_given_texts_only_and_ordered_deterministically():
    cfg = TokenizerConfig(level="word", max_tokens=5, min_count=1)
    tok = fit_vocabulary(cfg, ["b a", "c b", "a d", "b"])
    # counts: b 3, a 2, c 1, d 1 → b, a then ties alphabetically; cap 5 - 2 = 3 tokens
    assert tok.get_vocabulary() == ["", "[UNK]", "b", "a", "c"]
    cfg2 = TokenizerConfig(level="word", min_count=2)
    assert fit_vocabulary(cfg2, ["b a", "c b", "a d", "b"]).vocabulary == ["b", "a"]


def test_never_returns_zero_positions():
    tok = TextTokenizer(vocabulary=["a"], level="word")
    assert tok(tf.constant(["", "!!"])).shape[1] >= 1


def _saved_and_reloaded(layer, tmp_path):
    """(model, reloaded model): raw strings through `layer`, saved, loaded in safe mode."""
    text = keras.Input(shape=(), dtype="string")
    model = keras.Model(text, layer(text))
    model.save(tmp_path / "m.keras")
    return model, keras.saving.load_model(tmp_path / "m.keras", safe_mode=True)


def test_saved_inside_a_model_and_reloaded_in_safe_mode(tmp_path):
    tok = TextTokenizer(vocabulary=["服", "务", "good"], max_length=4)
    model, again = _saved_and_reloaded(tok, tmp_path)
    x = tf.constant(["服务 good bad", "服"])
    np.testing.assert_array_equal(model(x), again(x))
    assert again.layers[-1].get_config()["vocabulary"] == ["服", "务", "good"]


def test_invalid_arguments():
    with pytest.raises(ValueError, match="Expected level to be one of"):
        TextTokenizer(level="words")
    with pytest.raises(ValueError, match="Expected truncation"):
        TextTokenizer(truncation="middle")


@pytest.mark.parametrize("truncation", ["post", "pre", "both"])
def test_char_ids_align_with_the_word_ids(truncation):
    texts = ["Très bien, merci!", "服务慢 but ok", "a", "unbelievably good"]
    words = TextTokenizer(vocabulary=["bien", "ok"], level="cjk", max_length=3,
                          truncation=truncation)
    layer = CharIds(chars=["b", "i", "e", "n", "服", "o"], max_word_length=4, level="cjk",
                    max_length=3, truncation=truncation)
    got = layer(tf.constant(texts)).numpy()
    word_ids = words(tf.constant(texts)).numpy()
    # oracle: hand-split tokens (lower-cased, punctuation split, Han one by one), cut to
    # three tokens from the kept end, each cut to four chars, looked up by hand
    tokens = [["très", "bien", ",", "merci", "!"], ["服", "务", "慢", "but", "ok"], ["a"],
              ["unbelievably", "good"]]
    # both: max_length 3 keeps 3 // 4 = 0 head tokens, so the last three, as "pre"
    tokens = [t[:3] if truncation == "post" else t[-3:] for t in tokens]
    index = {c: i for i, c in enumerate(["", "[UNK]", "b", "i", "e", "n", "服", "o"])}
    assert got.shape == (4, 3, 4)
    for row, sentence in enumerate(tokens):
        for pos in range(3):
            token = sentence[pos] if pos < len(sentence) else ""
            expected = [index.get(c, 1) for c in token[:4]] + [0] * (4 - len(token[:4]))
            assert got[row, pos].tolist() == expected, (row, pos)
            assert (word_ids[row, pos] == 0) == (token == "")  # same padding positions


def test_char_ids_fit_on_training_tokens_and_reload_in_safe_mode(tmp_path):
    cfg = TokenizerConfig(level="word", punctuation="strip")
    layer = fit_char_ids(cfg, ["abb, b", "c"], max_word_length=2)
    # counts within the first two chars of each token: b 2, a 1, c 1 (the third b is cut)
    assert layer.chars == ["b", "a", "c"] and layer.vocabulary_size == 5
    assert layer(tf.constant([""])).numpy().tolist() == [[[0]]]  # never zero positions
    model, loaded = _saved_and_reloaded(layer, tmp_path)
    sample = tf.constant(["abc ba", "cab"])
    np.testing.assert_array_equal(loaded(sample), model(sample))
    assert loaded(sample).numpy().tolist() == [[[3, 2], [2, 3]], [[4, 3], [0, 0]]]
    with pytest.raises(ValueError, match="chars"):
        CharIds(chars=[])
