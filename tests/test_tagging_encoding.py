"""Tagged corpora in another text encoding (`data.encoding`): GBK releases of Chinese NER
corpora and Latin-1 CoNLL files read as written, and a file in the wrong one is one error
naming the file, the line and the setting that reads it."""

import json

import pytest

from elman.core.folders import guess_encoding
from elman.errors import UserError
from elman.tasks.tagging.config import TaggingDataConfig
from elman.tasks.tagging.data import load_splits
from elman.tasks.tagging.json_records import read_jsonl
from elman.tasks.tagging.readers import read_conll, read_conllu, sniff_format

SENTENCES = [("张三在北京工作", ["B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O", "O"]),
             ("李四去上海了", ["B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O"])]


def _char_lines(sentences):
    return "".join("".join(f"{c} {t}\n" for c, t in zip(text, tags)) + "\n"
                   for text, tags in sentences)


def test_a_gbk_conll_file_reads_with_its_encoding_and_is_refused_without_it(tmp_path):
    path = tmp_path / "train.char.bmes"
    path.write_bytes(_char_lines(SENTENCES).encode("gb18030"))
    with pytest.raises(UserError) as error:
        read_conll(path)
    message = str(error.value)
    assert "train.char.bmes:1" in message  # the first character is already GBK
    assert "--set data.encoding=gb18030" in message
    sentences = read_conll(path, encoding="gb18030")
    assert [("".join(s["tokens"]), s["tags"]) for s in sentences] == SENTENCES


def test_the_error_names_the_first_line_that_is_not_utf8(tmp_path):
    path = tmp_path / "eng.train"  # no extension: the format is sniffed first
    path.write_bytes(b"Mary B-PER\nvisited O\n\nna\xefve O\nRome B-LOC\n")
    assert sniff_format(path) == "conll"
    with pytest.raises(UserError, match=r"eng\.train:4.*--set data\.encoding=cp1252"):
        load_splits(TaggingDataConfig(train=str(path), validation=str(path)))
    splits, scheme = load_splits(TaggingDataConfig(train=str(path), validation=str(path),
                                                   encoding="latin-1"))
    assert scheme == "BIO"
    assert [s["tokens"] for s in splits["train"].items] == [["Mary", "visited"],
                                                            ["na\u00efve", "Rome"]]


def test_jsonl_and_conllu_files_take_the_encoding_too(tmp_path):
    records = [{"text": text, "label": tags} for text, tags in SENTENCES]
    jsonl = tmp_path / "train.jsonl"
    jsonl.write_bytes("\n".join(json.dumps(r, ensure_ascii=False) for r in records)
                      .encode("gb18030"))
    read = read_jsonl(jsonl, guess_keys=True, scheme="auto", encoding="gb18030")
    assert [("".join(s["tokens"]), s["tags"]) for s in read] == SENTENCES
    conllu = tmp_path / "fr.conllu"
    conllu.write_bytes("1\tcaf\u00e9\tcaf\u00e9\tNOUN\t_\t_\t0\troot\t_\t_\n\n"
                       .encode("latin-1"))
    with pytest.raises(UserError, match="fr.conllu:1"):
        read_conllu(conllu)
    assert read_conllu(conllu, encoding="latin-1")[0]["tokens"] == ["caf\u00e9"]


def test_an_unknown_encoding_is_named(tmp_path):
    path = tmp_path / "a.conll"
    path.write_text("Mary B-PER\n", encoding="utf-8")
    with pytest.raises(UserError, match="unknown text encoding 'gbk2'"):
        load_splits(TaggingDataConfig(train=str(path), validation=str(path), encoding="gbk2"))
    plain = tmp_path / "b"  # sniffing a file without an extension names it too
    plain.write_text("Mary B-PER\n", encoding="utf-8")
    with pytest.raises(UserError, match="unknown text encoding 'gbk2'"):
        load_splits(TaggingDataConfig(train=str(plain), validation=str(plain),
                                      encoding="gbk2"))


def test_a_character_per_line_file_is_guessed_as_chinese_though_its_tags_are_latin():
    # six characters among thirty-odd tag letters: the characters are few, but none of
    # them sits inside a Latin word, as the stray ones of misread Latin-1 text do
    resume = "张 B-NAME\n三 E-NAME\n是 O\n工 B-TITLE\n程 M-TITLE\n师 E-TITLE\n\n"
    assert guess_encoding(resume.encode("gb18030")) == "gb18030"
    french = "Le B-ORG\nna\u00efve O\ngar\u00e7on O\n\n".encode("latin-1")
    assert guess_encoding(french) == "cp1252"
