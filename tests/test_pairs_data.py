import json

import pytest

from elman.errors import UserError
from elman.tasks.translation.readers import (filter_pairs, pairs_from_hf_dataset, read_jsonl_pairs,
                                             read_parallel_files, read_tsv_pairs)


def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def test_tsv_tatoeba_columns_reverse_crlf_bom(tmp_path):
    path = write(
        tmp_path, "pairs.tsv",
        "\ufeffHi.\t嗨。\tCC-BY 2.0 (France) Attribution: tatoeba.org #538123\r\n"
        " Run! \t你用跑的。\r\n",
    )
    pairs = read_tsv_pairs(path)
    assert pairs == [
        {"source": "Hi.", "target": "嗨。", "where": f"{path}:1"},
        {"source": "Run!", "target": "你用跑的。", "where": f"{path}:2"},
    ]
    reversed_pairs = read_tsv_pairs(path, reverse=True)
    assert [(p["source"], p["target"]) for p in reversed_pairs] == [
        ("嗨。", "Hi."), ("你用跑的。", "Run!")
    ]


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("a\tb\n\tc\n", 2, "empty source text"),
        ("a\tb\nc\t  \n", 2, "empty target text"),
        ("a\tb\nno tab here\n", 2, "found no tab"),
        ("a\tb\n\nc\td\n", 2, "empty line"),
    ],
)
def test_tsv_bad_rows_raise_with_line_or_are_counted(tmp_path, text, line, message):
    path = write(tmp_path, "bad.tsv", text)
    with pytest.raises(UserError) as error:
        read_tsv_pairs(path)
    assert error.value.path == str(path) and error.value.line == line
    assert message in str(error.value) and f"{path}:{line}" in str(error.value)
    counts = {}
    pairs = read_tsv_pairs(path, skip_bad_rows=True, counts=counts)
    assert [p["source"] for p in pairs][0] == "a"
    assert counts["bad_rows"] == 1
    assert counts["bad_row_examples"][0].startswith(f"{path}:{line}: ")


def test_file_errors(tmp_path):
    with pytest.raises(UserError, match="file not found"):
        read_tsv_pairs(tmp_path / "missing.tsv")
    with pytest.raises(UserError, match="directory"):
        read_jsonl_pairs(tmp_path)
    path = write(tmp_path, "latin1.tsv", "a\tb\ncafé\tx\n", encoding="latin-1")
    with pytest.raises(UserError, match="not valid UTF-8") as error:
        read_tsv_pairs(path)
    assert error.value.line == 2


def test_parallel_files(tmp_path):
    source = write(tmp_path, "train.en", "Hello .\nGood morning .\n")
    target = write(tmp_path, "train.zh", "你好。\n早上好。\n")
    pairs = read_parallel_files(source, target)
    assert pairs[1] == {
        "source": "Good morning .", "target": "早上好。", "where": f"{source}:2"
    }

    short = write(tmp_path, "short.zh", "你好。\n")
    with pytest.raises(UserError) as error:
        read_parallel_files(source, short)
    message = str(error.value)
    assert str(source) in message and str(short) in message
    assert "has 2 lines" in message and "has 1 lines" in message

    holes = write(tmp_path, "holes.zh", "你好。\n\n")
    with pytest.raises(UserError, match="empty target text") as error:
        read_parallel_files(source, holes)
    assert (error.value.path, error.value.line) == (str(holes), 2)
    counts = {}
    assert len(read_parallel_files(source, holes, skip_bad_rows=True, counts=counts)) == 1
    assert counts["bad_rows"] == 1


def test_jsonl_both_formats(tmp_path):
    rows = [
        {"source": "Hi.", "target": "Salut."},
        {"translation": {"en": "Thanks.", "fr": "Merci.", "de": "Danke."}},
    ]
    path = write(tmp_path, "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    pairs = read_jsonl_pairs(path, source_lang="en", target_lang="fr")
    assert [(p["source"], p["target"], p["where"]) for p in pairs] == [
        ("Hi.", "Salut.", f"{path}:1"), ("Thanks.", "Merci.", f"{path}:2")
    ]
    with pytest.raises(UserError, match="pass source_lang and target_lang") as error:
        read_jsonl_pairs(path)
    assert error.value.line == 2
    with pytest.raises(UserError, match="missing key 'zh'"):
        read_jsonl_pairs(path, source_lang="en", target_lang="zh")


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "invalid JSON"),
        ('["a", "b"]', "expected a JSON object"),
        ('{"source": "a"}', "expected keys 'source' and 'target'"),
        ('{"source": "a", "target": 3}', "to be a string"),
        ('{"source": "a", "target": " "}', "empty target text"),
    ],
)
def test_jsonl_bad_rows(tmp_path, line, message):
    path = write(tmp_path, "bad.jsonl", '{"source": "x", "target": "y"}\n' + line + "\n")
    with pytest.raises(UserError, match=message) as error:
        read_jsonl_pairs(path)
    assert error.value.line == 2
    counts = {}
    assert len(read_jsonl_pairs(path, skip_bad_rows=True, counts=counts)) == 1
    assert counts["bad_rows"] == 1


def test_hugging_face_dataset():
    datasets = pytest.importorskip("datasets")
    dataset = datasets.Dataset.from_dict(
        {
            "id": ["0", "1", "2"],
            "translation": [
                {"en": "Hi.", "zh": "嗨。"},
                {"en": "Run.", "zh": "跑。"},
                {"en": "Wait.", "zh": ""},
            ],
        }
    )
    with pytest.raises(UserError, match="row 2: empty target text") as error:
        pairs_from_hf_dataset(dataset, "en", "zh", name="toy/train")
    assert error.value.path == "toy/train"
    counts = {}
    pairs = pairs_from_hf_dataset(dataset, "en", "zh", skip_bad_rows=True, counts=counts)
    assert pairs == [
        {"source": "Hi.", "target": "嗨。", "where": "dataset[0]"},
        {"source": "Run.", "target": "跑。", "where": "dataset[1]"},
    ]
    assert counts == {"bad_rows": 1, "bad_row_examples": ["dataset[2]: row 2: empty target text"]}
    assert pairs_from_hf_dataset(dataset.select([0]), "zh", "en")[0]["source"] == "嗨。"
    with pytest.raises(UserError, match="language 'fr' is not in"):
        pairs_from_hf_dataset(dataset, "en", "fr")
    with pytest.raises(UserError, match="expected a 'translation' column"):
        pairs_from_hf_dataset(dataset.remove_columns("translation"), "en", "zh")


def test_filter_pairs_counts():
    pairs = [
        {"source": "a b", "target": "x"},
        {"source": "a b", "target": "x"},
        {"source": "a b c d", "target": "x"},
        {"source": "a", "target": "x y z"},
        {"source": "a", "target": "x"},
    ]
    kept, counts = filter_pairs(pairs, max_source_len=3, max_target_len=2)
    assert counts == {"too_long": 2, "duplicates": 1}
    assert kept == [pairs[0], pairs[4]]
    kept, counts = filter_pairs(pairs, dedupe=False)
    assert len(kept) == 5 and counts == {"too_long": 0, "duplicates": 0}
    kept, counts = filter_pairs([{"source": "你好吗", "target": "hi"}], max_source_len=2,
                                tokenize=list)
    assert counts["too_long"] == 1
    with pytest.raises(ValueError, match="Expected max_source_len"):
        filter_pairs(pairs, max_source_len=0)
