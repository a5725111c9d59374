"""Files in another text encoding (`data.encoding`, every task): GBK releases of Chinese
corpora and Latin-1 files read as written, and a file in the wrong one is one error
naming the file, the line and the setting that reads it."""

import json

import pytest

from elman.core.encodings import decode, guess_encoding
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


def test_the_encoding_error_names_the_likely_encoding():
    chinese = "送餐快，味道也很好，下次还点这家\n太慢了，菜都凉了\n".encode("gb18030")
    assert guess_encoding(chinese) == "gb18030"
    # Latin-1 with accents: GB18030 would read `ïv` as one Chinese character, but a
    # stray one among Latin letters is not Chinese text
    latin = "a na\u00efve film, tr\u00e8s dr\u00f4le\n".encode("latin-1")
    assert latin.decode("gb18030") == "a na\u98d7e film, tr\u9463 dr\u9b3ae\n"  # it reads
    assert guess_encoding(latin) == "cp1252"
    with pytest.raises(UserError, match="it reads as gb18030: --set data.encoding=gb18030"):
        decode("x.csv", chinese)
    assert decode("x.csv", chinese, "gb18030").startswith("送餐快")
    assert guess_encoding(b"\x81\x81\x8d\x8f\x90\x9d\x81") is None  # neither reads


def test_translation_pairs_take_the_encoding(tmp_path):
    from elman.tasks.translation.config import TranslationDataConfig
    from elman.tasks.translation.data import load_splits as load_pairs

    pairs = [("I am busy.", "我很忙。"), ("Thank you.", "谢谢你。")]
    tsv = tmp_path / "cmn.tsv"
    tsv.write_bytes("".join(f"{en}\t{zh}\n" for en, zh in pairs).encode("gb18030"))
    with pytest.raises(UserError, match=r"cmn\.tsv:1.*--set data\.encoding=gb18030"):
        load_pairs(TranslationDataConfig(train=str(tsv)), seed=0)
    read = load_pairs(TranslationDataConfig(train=str(tsv), encoding="gb18030"), seed=0)
    assert [(p["source"], p["target"]) for p in read["train"].items] == pairs
    english, chinese = tmp_path / "news.en", tmp_path / "news.zh"  # two aligned files
    english.write_text("".join(en + "\n" for en, _ in pairs), encoding="utf-8")
    chinese.write_bytes("".join(zh + "\n" for _, zh in pairs).encode("gb18030"))
    with pytest.raises(UserError, match=r"news\.zh:1"):
        load_pairs(TranslationDataConfig(train=f"{english},{chinese}"), seed=0)


def test_language_model_text_takes_the_encoding(tmp_path):
    from elman.tasks.lm.data import read_text_lines

    path = tmp_path / "fr.txt"
    path.write_bytes("le caf\u00e9\r\nla gar\u00e7onne\n".encode("latin-1"))
    with pytest.raises(UserError, match=r"fr\.txt:1.*--set data\.encoding=cp1252"):
        read_text_lines(path)
    assert read_text_lines(path, "latin-1") == ["le caf\u00e9", "la gar\u00e7onne"]
