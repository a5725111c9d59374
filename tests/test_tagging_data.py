"""Readers of tagged corpora and the raw-text splitter."""

import dataclasses
import json

import pytest

from elman.errors import UserError
from elman.tasks.tagging.data import read_hf_dataset
from elman.tasks.tagging.json_records import read_jsonl
from elman.tasks.tagging.readers import read_conll, read_conllu, read_tagged_file
from elman.text.splitters import split_raw_text

CONLL = """-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC
call NN I-NP O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER


BRUSSELS NNP B-NP B-LOC
"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _error(function, *args, **kwargs):
    with pytest.raises(UserError) as info:
        function(*args, **kwargs)
    return info.value


def test_conll_columns(tmp_path):
    path = _write(tmp_path, "train.conll", CONLL)
    stats = {}
    sentences = read_tagged_file(path, stats=stats)
    assert sentences == [
        {"tokens": ["EU", "rejects", "German", "call"], "tags": ["B-ORG", "O", "B-MISC", "O"],
         "source": f"{path}:3"},
        {"tokens": ["Peter", "Blackburn"], "tags": ["B-PER", "I-PER"], "source": f"{path}:8"},
        {"tokens": ["BRUSSELS"], "tags": ["B-LOC"], "source": f"{path}:12"},
    ]
    assert stats == {"docstart_lines": 1, "sentences": 3, "tokens": 7, "scheme": "BIO"}
    chunks = read_conll(path, tag_column=2, scheme=None)
    assert chunks[0]["tags"] == ["B-NP", "B-VP", "B-NP", "I-NP"]
    pos = read_conll(path, tag_column=1, scheme=None)
    assert pos[1]["tags"] == ["NNP", "NNP"]


def test_conll_errors(tmp_path):
    path = _write(tmp_path, "bad.conll", "EU NNP B-ORG\nrejects O\n")
    error = _error(read_conll, path)
    assert (error.path, error.line) == (str(path), 2)
    assert "Expected 3 columns like line 1, found 2" in error.message

    path = _write(tmp_path, "bad.conll", "EU B-ORG\n\nPeter X-PER\n")
    error = _error(read_conll, path)
    assert error.line == 3 and "'X-PER' is not a valid BIO tag" in error.message

    path = _write(tmp_path, "bad.conll", "EU B-ORG\n\nthe O\nPeter I-PER\n")
    error = _error(read_conll, path)
    assert error.line == 4 and "'I-PER' after 'O'" in error.message and "repair" in str(error)

    error = _error(read_conll, path, tag_column=3)
    assert error.line == 1 and "tag_column=3" in error.message
    error = _error(read_conll, _write(tmp_path, "one.conll", "EU\nrejects\n"))
    assert "at least 2 columns" in error.message


def test_conll_repair_and_non_strict(tmp_path):
    path = _write(tmp_path, "iob.conll", "the O\nPeter I-PER\nBlack I-PER\nin O\nRome I-LOC\n")
    stats = {}
    sentences = read_conll(path, repair=True, stats=stats)
    assert sentences[0]["tags"] == ["O", "B-PER", "I-PER", "O", "B-LOC"]
    assert stats["repaired_tags"] == 2
    stats = {}
    sentences = read_conll(path, strict=False, stats=stats)
    assert sentences[0]["tags"] == ["O", "I-PER", "I-PER", "O", "I-LOC"]
    assert stats["ill_formed_tags"] == 2
    stats = {}
    assert read_conll(path, scheme="auto", stats=stats)[0]["tags"] == [
        "O", "B-PER", "I-PER", "O", "B-LOC"]
    assert stats["scheme"] == "IOB1" and "repaired_tags" not in stats


def test_conll_other_schemes(tmp_path):
    path = _write(tmp_path, "x.bio", "a I-PER\nb B-PER\nc O\n")
    assert read_conll(path, scheme="IOB1")[0]["tags"] == ["B-PER", "B-PER", "O"]
    path = _write(tmp_path, "x.bio", "a S-PER\nb B-LOC\nc E-LOC\n")
    assert read_conll(path, scheme="BIOES")[0]["tags"] == ["B-PER", "B-LOC", "I-LOC"]
    path = _write(tmp_path, "x.bio", "a B-LOC\nb O\n")
    error = _error(read_conll, path, scheme="BIOES")
    assert error.line == 1 and "'B-LOC' at the start is not valid BIOES" in error.message


def test_chinese_character_per_line(tmp_path):
    text = "我 O\n爱 O\n北 B-LOC\n京 I-LOC\n\u3000 O\n。 O\n\n他 B-PER\n"
    path = _write(tmp_path, "weibo.txt", text)
    sentences = read_tagged_file(path)
    assert sentences[0]["tokens"] == ["我", "爱", "北", "京", "\u3000", "。"]
    assert sentences[0]["tags"] == ["O", "O", "B-LOC", "I-LOC", "O", "O"]
    assert sentences[1] == {"tokens": ["他"], "tags": ["B-PER"], "source": f"{path}:8"}


def test_weibo_word_positions_are_removed(tmp_path):
    # weiboNER_2nd_conll: each character with its place in its segmented word
    text = ("口0\tO\n腔1\tO\n加0\tO\n北0\tB-LOC.NAM\n京1\tI-LOC.NAM\n20\tO\n01\tO\n"
            "\u30000\tO\n\n他0\tB-PER.PRO\n")
    stats = {}
    sentences = read_tagged_file(_write(tmp_path, "weiboNER_2nd_conll.train", text),
                                 scheme="auto", stats=stats)
    assert [s["tokens"] for s in sentences] == [["口", "腔", "加", "北", "京", "2", "0",
                                                 "\u3000"], ["他"]]
    assert sentences[0]["tags"][3:5] == ["B-LOC.NAM", "I-LOC.NAM"]
    assert stats["word_positions_removed"] == 9
    # any token that is not one character and a place in a word keeps the file as it is
    for odd in ("口0 O\n腔2 O\n",  # 2 does not follow 0
                "口1 O\n腔2 O\n",  # a sentence starts inside a word
                "口0 O\nab1 O\n",  # two characters before the number
                "口0 O\n腔 O\n",  # no number
                "EU B-ORG\nrejects O\n"):
        stats = {}
        tokens = read_tagged_file(_write(tmp_path, "odd.txt", odd), stats=stats)[0]["tokens"]
        assert tokens == [line.split()[0] for line in odd.splitlines()]
        assert "word_positions_removed" not in stats


def test_two_columns_tag_first(tmp_path):
    # the MIT Movie corpus's layout: the tag, a tab, the word
    text = "O\twhat\nB-Actor\tsteve\nI-Actor\tmcqueen\nO\tfilms\n\nB-Year\t1980s\n"
    path = _write(tmp_path, "engtrain.bio", text)
    stats = {}
    sentences = read_tagged_file(path, scheme="auto", stats=stats)
    assert sentences[0]["tokens"] == ["what", "steve", "mcqueen", "films"]
    assert sentences[0]["tags"] == ["O", "B-Actor", "I-Actor", "O"]
    assert sentences[1]["tokens"] == ["1980s"] and stats["tags_in_first_column"] == 1
    # an explicit tag column is obeyed; tags in both columns keep the usual order
    assert read_conll(path, tag_column=-1, scheme=None)[0]["tokens"][1] == "B-Actor"
    stats = {}
    both = read_conll(_write(tmp_path, "b.txt", "O O\nB-X B-X\n"), tag_column=None,
                      scheme="auto", stats=stats)
    assert both[0]["tokens"] == ["O", "B-X"] and "tags_in_first_column" not in stats


CONLLU = """# sent_id = 1
# text = I'm here.
1-2\tI'm\t_\t_\t_\t_\t_\t_\t_\t_
1\tI\tI\tPRON\tPRP\t_\t3\tnsubj\t_\t_
2\t'm\tbe\tAUX\tVBP\t_\t3\tcop\t_\t_
3\there\there\tADV\tRB\t_\t0\troot\t_\t_
3.1\tgone\tgo\tVERB\tVBN\t_\t_\t_\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

1\tYes\tyes\tINTJ\tUH\t_\t0\troot\t_\t_
"""


def test_conllu(tmp_path):
    path = _write(tmp_path, "ud.conllu", CONLLU)
    stats = {}
    sentences = read_tagged_file(path, stats=stats)
    assert sentences[0] == {"tokens": ["I", "'m", "here", "."],
                            "tags": ["PRON", "AUX", "ADV", "PUNCT"], "source": f"{path}:4"}
    assert sentences[1]["source"] == f"{path}:10"
    assert stats == {"comment_lines": 2, "multiword_tokens": 1, "empty_nodes": 1,
                     "sentences": 2, "tokens": 5, "scheme": None}
    assert read_conllu(path, field="xpos")[0]["tags"] == ["PRP", "VBP", "RB", "."]
    bad = _write(tmp_path, "bad.conllu", "1\tI\tI\tPRON\n")
    assert "Expected 10 tab-separated columns" in _error(read_conllu, bad).message
    bad = _write(tmp_path, "bad.conllu", "1\tI\tI\t_\tPRP\t_\t0\troot\t_\t_\n")
    error = _error(read_conllu, bad)
    assert error.line == 1 and "no UPOS" in error.message


def test_jsonl(tmp_path):
    records = [{"words": ["Peter", "runs"], "labels": ["B-PER", "O"]},
               {"words": ["Rome"], "labels": ["B-LOC"]}]
    path = _write(tmp_path, "d.jsonl", "\n".join(json.dumps(r) for r in records) + "\n\n")
    sentences = read_tagged_file(path, tokens_key="words", tags_key="labels")
    assert [s["tokens"] for s in sentences] == [["Peter", "runs"], ["Rome"]]
    assert sentences[1]["source"] == f"{path}:2"

    array = _write(tmp_path, "d.json", "[\n" + ",\n".join(
        json.dumps({"tokens": r["words"], "tags": r["labels"]}) for r in records) + "\n]\n")
    assert [s["source"] for s in read_tagged_file(array)] == [f"{array}:2", f"{array}:3"]

    cases = [
        ('{"tokens": [], "tags": []}', "Empty sentence"),
        ('{"tokens": ["a", "b"], "tags": ["O"]}', "2 tokens but 1 tags"),
        ('{"tokens": ["a"]}', "Missing key 'tags'"),
        ('{"tokens": ["a"], "tags": ["Q-PER"]}', "'Q-PER' is not a valid BIO tag"),
        ('{"tokens": ["a"], "tags": ["O"]', "Invalid JSON"),
        ('["a"]', "Expected a JSON object"),
    ]
    for line, message in cases:
        bad = _write(tmp_path, "bad.jsonl", '{"tokens": ["ok"], "tags": ["O"]}\n' + line + "\n")
        error = _error(read_jsonl, bad)
        assert error.line == 2 and message in error.message, (line, error)


def test_file_errors(tmp_path):
    error = _error(read_tagged_file, tmp_path / "missing.conll")
    assert "file not found" in str(error) and error.path.endswith("missing.conll")
    path = tmp_path / "latin1.conll"
    path.write_bytes("caf\u00e9 O\n".encode("utf-8") + b"na\xefve O\n")
    error = _error(read_tagged_file, path)
    assert error.line == 2 and "not valid UTF-8 (byte 0xef, byte 3 of the line)" in error.message
    error = _error(read_tagged_file, _write(tmp_path, "data.csv", "a,O\n"))
    assert "Cannot tell the format" in error.message
    assert read_tagged_file(_write(tmp_path, "data.csv", "a O\n"), format="conll")[0][
        "tags"] == ["O"]


def test_hugging_face_dataset():
    datasets = pytest.importorskip("datasets")
    names = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    features = datasets.Features({
        "tokens": datasets.Sequence(datasets.Value("string")),
        "ner_tags": datasets.Sequence(datasets.ClassLabel(names=names)),
    })
    train = datasets.Dataset.from_dict(
        {"tokens": [["Peter", "Black", "in", "Rome"], ["Hi"]], "ner_tags": [[1, 2, 0, 3], [0]]},
        features=features, split="train")
    corpus = datasets.DatasetDict({"train": train})
    sentences = read_hf_dataset(corpus, split="train")
    assert sentences[0] == {"tokens": ["Peter", "Black", "in", "Rome"],
                            "tags": ["B-PER", "I-PER", "O", "B-LOC"],
                            "source": "dataset[train]:0"}
    assert sentences[1]["tags"] == ["O"]
    assert "Expected split to be one of ['train']" in _error(read_hf_dataset, corpus).message
    error = _error(read_hf_dataset, train, tags_column="labels")
    assert "Column 'labels' not found" in error.message

    strings = datasets.Dataset.from_dict({"words": [["a", "b"]], "tags": [["O", "I-X"]]})
    stats = {}
    sentences = read_hf_dataset(strings, tokens_column="words", tags_column="tags",
                                repair=True, stats=stats)
    assert sentences[0]["tags"] == ["O", "B-X"] and stats["repaired_tags"] == 1
    error = _error(read_hf_dataset, strings, tokens_column="words", tags_column="tags")
    assert error.path == "dataset[all]:0" and "(token 2)" in error.message


def test_split_raw_text():
    assert split_raw_text("Alice visited the U.S. in 2019, then 3.5 days in New York-based Acme!") \
        == ["Alice", "visited", "the", "U.S.", "in", "2019", ",", "then", "3.5", "days", "in",
            "New", "York-based", "Acme", "!"]
    assert split_raw_text("我爱北京天安门。") == ["我", "爱", "北", "京", "天", "安", "门", "。"]
    assert split_raw_text("我在Google工作了3年，很开心！") == [
        "我", "在", "Google", "工", "作", "了", "3", "年", "，", "很", "开", "心", "！"]
    assert split_raw_text("don't (really)") == ["don't", "(", "really", ")"]
    assert split_raw_text("  ") == []


def test_parquet_files_with_class_label_names(tmp_path):
    # the layout of WikiANN's Parquet files on the hub: tokens, integer ner_tags whose
    # ClassLabel names datasets keeps in the file's schema
    datasets = pytest.importorskip("datasets")
    from elman.tasks.tagging.config import TaggingDataConfig
    from elman.tasks.tagging.data import load_splits

    names = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
    features = datasets.Features({
        "tokens": datasets.Sequence(datasets.Value("string")),
        "ner_tags": datasets.Sequence(datasets.ClassLabel(names=names)),
        "langs": datasets.Sequence(datasets.Value("string"))})
    rows = {"train": ([["Anna", "Berg", "left", "Oslo"], ["Nordic", "Rail"]],
                      [[1, 2, 0, 5], [3, 4]]),
            "dev": ([["Oslo", "grew"]], [[5, 0]])}
    for name, (tokens, tags) in rows.items():
        datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags,
                                    "langs": [["en"] * len(t) for t in tokens]},
                                   features=features).to_parquet(str(tmp_path / f"{name}.parquet"))
    splits, _ = load_splits(TaggingDataConfig(train=str(tmp_path / "train.parquet"),
                                              validation=str(tmp_path / "dev.parquet")))
    assert [s["tags"] for s in splits["train"].items] == [["B-PER", "I-PER", "O", "B-LOC"],
                                                          ["B-ORG", "I-ORG"]]
    assert splits["validation"].items[0] == {"tokens": ["Oslo", "grew"], "tags": ["B-LOC", "O"],
                                             "source": f"{tmp_path / 'dev.parquet'}[row]:0"}
    (tmp_path / "bad.parquet").write_text("not parquet", encoding="utf-8")
    with pytest.raises(UserError, match="cannot read Parquet") as caught:
        load_splits(TaggingDataConfig(train=str(tmp_path / "bad.parquet")))
    assert caught.value.path.endswith("bad.parquet")


def test_integer_tags_take_the_names_given(tmp_path):
    # `Dataset.to_json` keeps tags as ids and drops the ClassLabel names
    from elman.config import load_config
    from elman.tasks.tagging.config import TaggingDataConfig
    from elman.tasks.tagging.data import load_splits

    names = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC")
    path = _write(tmp_path, "train.jsonl",
                  '{"tokens": ["Anna", "Berg", "in", "Oslo"], "ner_tags": [1, 2, 0, 3]}\n'
                  '{"tokens": ["Hi"], "ner_tags": [0]}\n')
    data = TaggingDataConfig(train=str(path), tag_column="ner_tags")
    error = _error(load_splits, data)
    assert (error.path, error.line) == (str(path), 1) and "data.tag_names" in error.message
    splits, _ = load_splits(dataclasses.replace(data, tag_names=names))
    read = sorted(splits["train"].items + splits["validation"].items,
                  key=lambda s: s["source"])  # 10% of train carved off for validation
    assert [s["tags"] for s in read] == [["B-PER", "I-PER", "O", "B-LOC"], ["O"]]
    error = _error(load_splits, dataclasses.replace(data, tag_names=names[:3]))
    assert "Tag id 3 is not one of the 3 names in data.tag_names" in error.message

    datasets = pytest.importorskip("datasets")  # Parquet written without ClassLabel names
    datasets.Dataset.from_dict({"tokens": [["Oslo", "grew"]], "ner_tags": [[3, 0]]}) \
        .to_parquet(str(tmp_path / "p.parquet"))
    one = str(tmp_path / "p.parquet")
    parquet = TaggingDataConfig(train=one, validation=one, tag_names=names)
    assert load_splits(parquet)[0]["train"].items[0]["tags"] == ["B-LOC", "O"]
    assert "data.tag_names" in _error(
        load_splits, TaggingDataConfig(train=one, validation=one)).message

    # the setting as the command line gives it
    cfg = load_config("tagging", None, ['data.tag_names=["O", "B-PER"]'])
    assert cfg.data.tag_names == ("O", "B-PER")
    with pytest.raises(UserError, match="expects a list of strings"):
        load_config("tagging", None, ["data.tag_names=[1, 2]"])
