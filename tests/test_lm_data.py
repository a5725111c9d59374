"""Tests for the language-model data stage (pipelines/tasks/lm/data.py, vocabulary.py) and
its raw-text splitter (pipelines/text/splitters.py)."""

import numpy as np
import pytest

from elman.errors import UserError
from elman.tasks.lm import data as lm_data
from elman.tasks.lm import vocabulary as lm_vocabulary
from elman.text import splitters


def test_read_text_lines_errors(tmp_path):
    with pytest.raises(UserError, match="not found") as missing:
        lm_data.read_text_lines(tmp_path / "nope.txt")
    assert missing.value.path.endswith("nope.txt")

    bad = tmp_path / "bad.txt"
    bad.write_bytes("ok line\nsecond\nthird \xff here\n".encode("latin-1"))
    with pytest.raises(UserError, match="UTF-8") as not_utf8:
        lm_data.read_text_lines(bad)
    assert not_utf8.value.line == 3
    assert str(not_utf8.value).startswith(f"{bad}:3: ")

    empty = tmp_path / "empty.txt"
    empty.write_text(" \n\n\t\n", encoding="utf-8")
    with pytest.raises(UserError, match="empty"):
        lm_data.read_text_lines(empty)


def test_read_text_lines_bom_and_crlf(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes("\ufeffone\r\ntwo\n".encode("utf-8"))
    assert lm_data.read_text_lines(path) == ["one", "two"]


def test_tokenize_word_character_and_paragraph():
    lines = ["Hello, World! Don't stop.", "", "我 喜欢 深度 学习。"]
    assert splitters.tokenize_lines(lines, lowercase=True) == [
        "hello", ",", "world", "!", "don't", "stop", ".", "<eol>",
        "我", "喜欢", "深度", "学习", "。", "<eol>",
    ]
    assert splitters.tokenize_lines(["ab c", "d"], level="character") == [
        "a", "b", " ", "c", "<eol>", "d", "<eol>",
    ]
    assert splitters.tokenize_lines(["a b", "c", "", "d"], unit="paragraph") == [
        "a", "b", "c", "<eol>", "d", "<eol>",
    ]
    with pytest.raises(ValueError, match="Expected level to be one of"):
        splitters.tokenize_lines(["x"], level="chars")


def test_vocabulary_is_deterministic_and_capped():
    tokens = ["b", "a", "c", "b", "a", "d", "b", "[UNK]", ""]
    vocabulary = lm_vocabulary.build_vocabulary(tokens)
    assert vocabulary == ["", "[UNK]", "b", "a", "c", "d"]  # count desc, then token
    assert lm_vocabulary.build_vocabulary(list(reversed(tokens))) == vocabulary
    assert lm_vocabulary.build_vocabulary(tokens, max_size=4) == ["", "[UNK]", "b", "a"]
    assert lm_vocabulary.build_vocabulary(tokens, min_count=2) == ["", "[UNK]", "b", "a"]
    ids = lm_vocabulary.encode_tokens(["a", "zzz", "d"], vocabulary)
    assert ids.tolist() == [3, 1, 5] and ids.dtype == np.int32
    assert lm_vocabulary.decode_ids(ids, vocabulary) == ["a", "[UNK]", "d"]
    with pytest.raises(ValueError, match="Expected max_size"):
        lm_vocabulary.build_vocabulary(tokens, max_size=2)


def test_tbptt_layout_streams_continue_across_chunks():
    batches = list(lm_data.make_tbptt_dataset(np.arange(1, 14), batch_size=2, chunk_len=4))
    got = [(x.numpy().tolist(), y.numpy().tolist()) for x, y in batches]
    assert got == [
        ([[1, 2, 3, 4], [7, 8, 9, 10]], [[2, 3, 4, 5], [8, 9, 10, 11]]),
        ([[5, 6], [11, 12]], [[6, 7], [12, 13]]),
    ]
    dropped = list(
        lm_data.make_tbptt_dataset(np.arange(1, 14), batch_size=2, chunk_len=4,
                                   drop_remainder=True)
    )
    assert len(dropped) == 1
    with pytest.raises(ValueError, match="batch_size \\+ 1"):
        lm_data.make_tbptt_dataset(np.arange(1, 3), batch_size=2, chunk_len=4)


def test_load_token_stream(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("The cat.\nThe dog!\n", encoding="utf-8")
    tokens = lm_data.load_token_stream(path, lowercase=True)
    assert tokens == ["the", "cat", ".", "<eol>", "the", "dog", "!", "<eol>"]
