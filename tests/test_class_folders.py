"""Labelled texts as folders, one subfolder per class and one text per file (the layout of
aclImdb and of Pang and Lee's polarity corpus): what is read, what is counted and left
out, and the one error for each malformed layout. Expected values come from the files
the tests write, not from the reader."""

import hashlib

import pytest

from elman.core import data as data_stage
from elman.core import folders
from elman.errors import UserError


def _layout(root, classes, unsup=0, loose=()):
    for label, texts in classes.items():
        for k, text in enumerate(texts):
            path = root / label / f"{k}_1.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if unsup:
        (root / "unsup").mkdir()
        for k in range(unsup):
            (root / "unsup" / f"{k}_0.txt").write_text("no label here", encoding="utf-8")
    for name in loose:
        (root / name).write_text("not a review", encoding="utf-8")
    return root


def test_each_subfolder_is_a_class_and_each_file_an_example(tmp_path):
    root = _layout(tmp_path / "train", {"pos": ["  a fine film\n", "warm", "lovely"],
                                        "neg": ["dull", "too long"]},
                   unsup=4, loose=("urls_pos.txt", "labeledBow.feat"))
    (root / ".DS_Store").write_text("x", encoding="utf-8")
    (root / "neg" / ".hidden.txt").write_text("x", encoding="utf-8")
    nested = root / "neg" / "more"
    nested.mkdir()
    (nested / "a.txt").write_text("flat and grey", encoding="utf-8")
    split = data_stage.read_labeled_file(root)
    got = [(e.label, e.text, e.where) for e in split.items]
    assert got == [  # class folders by name, files by name, a nested folder after files
        ("neg", "dull", f"{root}/neg/0_1.txt:1"),
        ("neg", "too long", f"{root}/neg/1_1.txt:1"),
        ("neg", "flat and grey", f"{nested}/a.txt:1"),
        ("pos", "a fine film", f"{root}/pos/0_1.txt:1"),
        ("pos", "warm", f"{root}/pos/1_1.txt:1"),
        ("pos", "lovely", f"{root}/pos/2_1.txt:1"),
    ]
    assert split.counts["folders"] == {"classes": {"neg": 3, "pos": 3},
                                       "skipped_folders": {"unsup": 4},
                                       "loose_files": ["labeledBow.feat", "urls_pos.txt"]}
    assert split.source == str(root) and split.skipped == []
    text = folders.describe("train", split.counts["folders"])
    assert "`neg` (3 files), `pos` (3 files)" in text
    assert "`unsup` (4 files)" in text and "2 files (`labeledBow.feat`, `urls_pos.txt`)" in text


def test_the_digest_covers_names_and_contents(tmp_path):
    root = _layout(tmp_path / "d", {"a": ["one", "two"], "b": ["three"]})
    first = data_stage.read_labeled_file(root).sha256
    assert first == data_stage.read_labeled_file(root).sha256  # the same files, the same

    expected = hashlib.sha256()  # a second computation of the documented recipe
    for rel in ("a/0_1.txt", "a/1_1.txt", "b/0_1.txt"):
        expected.update(rel.encode() + b"\0")
        expected.update(hashlib.sha256((root / rel).read_bytes()).digest())
    assert first == expected.hexdigest()
    (root / "b" / "0_1.txt").write_text("three!", encoding="utf-8")
    assert data_stage.read_labeled_file(root).sha256 != first
    (root / "b" / "0_1.txt").write_text("three", encoding="utf-8")
    (root / "b" / "0_1.txt").rename(root / "b" / "9_1.txt")  # a renamed file counts too
    assert data_stage.read_labeled_file(root).sha256 != first


def test_malformed_layouts_give_one_clear_error(tmp_path):
    one = _layout(tmp_path / "one", {"pos": ["good"]}, unsup=1, loose=("notes.txt",))
    with pytest.raises(UserError) as err:
        data_stage.read_labeled_file(one)
    assert "class folders found: pos" in str(err.value) and "unsup" in str(err.value)
    assert "notes.txt" in str(err.value)

    empty = _layout(tmp_path / "empty", {"pos": ["good"]})
    (empty / "neg").mkdir()
    with pytest.raises(UserError, match="holds no files") as err:
        data_stage.read_labeled_file(empty)
    assert str(empty / "neg") in str(err.value)

    blank = _layout(tmp_path / "blank", {"pos": ["good", "  \n"], "neg": ["bad"]})
    with pytest.raises(UserError, match="empty text") as err:
        data_stage.read_labeled_file(blank)
    assert "pos/1_1.txt:1" in str(err.value)
    split = data_stage.read_labeled_file(blank, skip_bad_rows=True)
    assert [e.text for e in split.items] == ["bad", "good"]
    assert split.skipped == [(f"{blank}/pos/1_1.txt:1", "empty text")]

    latin = _layout(tmp_path / "latin", {"pos": ["good"], "neg": ["bad"]})
    (latin / "neg" / "1_1.txt").write_bytes(b"line one\nna\xefve\n")
    with pytest.raises(UserError, match="not valid UTF-8") as err:
        data_stage.read_labeled_file(latin)
    assert "neg/1_1.txt:2" in str(err.value)  # the line of the bad byte

    with pytest.raises(UserError, match="found a folder"):
        data_stage.read_labeled_file(latin, fmt="csv")
    csv_file = tmp_path / "x.csv"
    csv_file.write_text("text,label\nhi,pos\n", encoding="utf-8")
    with pytest.raises(UserError, match="expected a folder"):
        data_stage.read_labeled_file(csv_file, fmt="folders")


def test_a_folder_of_files_alone_is_one_class_per_file_one_text_per_line(tmp_path):
    # the MR release: rt-polarity.pos and rt-polarity.neg, one sentence a line, Latin-1
    root = tmp_path / "rt-polaritydata"
    root.mkdir()
    (root / "rt-polarity.pos").write_bytes("a warm , clever caf\xe9 comedy\n\nfunny\n"
                                           .encode("latin-1"))
    (root / "rt-polarity.neg").write_bytes(b"flat\ndull and long\n")
    with pytest.raises(UserError, match="not valid UTF-8") as err:
        data_stage.read_labeled_file(root)
    assert "rt-polarity.pos:1" in str(err.value) and "data.encoding" in str(err.value)
    split = data_stage.read_labeled_file(root, encoding="latin-1")
    assert [(e.label, e.text, e.where) for e in split.items] == [
        ("neg", "flat", f"{root}/rt-polarity.neg:1"),
        ("neg", "dull and long", f"{root}/rt-polarity.neg:2"),
        ("pos", "a warm , clever caf\u00e9 comedy", f"{root}/rt-polarity.pos:1"),
        ("pos", "funny", f"{root}/rt-polarity.pos:3"),  # the blank line is no row
    ]
    counts = split.counts["folders"]
    assert counts["classes"] == {"neg": 2, "pos": 2}
    assert counts["class_files"] == {"neg": "rt-polarity.neg", "pos": "rt-polarity.pos"}
    assert folders.describe("train", counts) == (
        "The train folder was read as one class per file, one text per line: `neg` "
        "(rt-polarity.neg, 2 texts), `pos` (rt-polarity.pos, 2 texts).")
    with pytest.raises(UserError, match="unknown text encoding 'latin-9x'"):
        data_stage.read_labeled_file(root, encoding="latin-9x")

    subj = tmp_path / "subj"  # SUBJ: the files share their last extension, not their name
    subj.mkdir()
    (subj / "quote.tok.gt9.5000").write_text("i think so\n", encoding="utf-8")
    (subj / "plot.tok.gt9.5000").write_text("he leaves town\n", encoding="utf-8")
    assert data_stage.labels(data_stage.read_labeled_file(subj)) == ["plot.tok.gt9",
                                                                      "quote.tok.gt9"]
    splits = tmp_path / "splits"  # data files of another layout are never classes
    splits.mkdir()
    for name in ("train.csv", "dev.csv"):
        (splits / name).write_text("text,label\ngood,pos\n", encoding="utf-8")
    with pytest.raises(UserError, match="class folders found: none"):
        data_stage.read_labeled_file(splits)
