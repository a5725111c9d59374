import json
import time

import pytest

from elman.config import DataConfig
from elman.errors import UserError
from elman.core import data


def test_csv_rows_keep_their_line_numbers_even_with_quoted_newlines(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text('text,label\n"two\nlines",pos\nplain,neg\n', encoding="utf-8")
    split = data.read_labeled_file(path)
    assert [e.text for e in split.items] == ["two\nlines", "plain"]
    assert [e.where.rsplit(":", 1)[1] for e in split.items] == ["2", "4"]
    assert len(split.sha256) == 64


def test_tsv_jsonl_parquet_and_labeled_lines(tmp_path):
    import pandas

    (tmp_path / "a.tsv").write_text("label\ttext\npos\tgood\nneg\tbad\n", encoding="utf-8")
    (tmp_path / "a.jsonl").write_text('{"text": "good", "label": "pos"}\n\n'
                                      '{"text": "bad", "label": "neg"}\n', encoding="utf-8")
    pandas.DataFrame({"text": ["good", "bad"], "label": ["pos", "neg"]}).to_parquet(
        tmp_path / "a.parquet")
    (tmp_path / "a.txt").write_text("pos good\nneg bad  \n", encoding="utf-8")
    for name in ("a.tsv", "a.jsonl", "a.parquet", "a.txt"):
        split = data.read_labeled_file(tmp_path / name)
        assert [(e.text, e.label) for e in split.items] == [("good", "pos"), ("bad", "neg")]


@pytest.mark.parametrize("content, needle, line", [
    ("text,label\ngood,pos\n,neg\n", "empty text", 3),
    ("text,label\ngood,pos\nbad\n", "expected 2 fields", 3),
    ("text,label\ngood,pos\nbad,\n", "missing label", 3),
])
def test_malformed_rows_fail_with_file_and_line(tmp_path, content, needle, line):
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UserError, match=needle) as info:
        data.read_labeled_file(path)
    assert info.value.line == line and info.value.path == str(path)


def test_skip_bad_rows_counts_and_lists_them(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("text,label\ngood,pos\n,neg\nbad\nfine,neg\n", encoding="utf-8")
    split = data.read_labeled_file(path, skip_bad_rows=True)
    assert [e.text for e in split.items] == ["good", "fine"]
    assert [w for w, _ in split.skipped] == [f"{path}:3", f"{path}:4"]


def test_non_utf8_reports_the_line(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("text,label\ngood,pos\ncaf\xe9,neg\n".encode("latin-1"))
    with pytest.raises(UserError, match="not valid UTF-8") as info:
        data.read_labeled_file(path)
    assert info.value.line == 3


def test_unknown_column_names_the_columns(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("comments,label\ngood,pos\n", encoding="utf-8")
    with pytest.raises(UserError, match="unknown text column 'text'.*comments, label"):
        data.read_labeled_file(path)
    split = data.read_labeled_file(path, text_column="comments")
    assert data.texts(split) == ["good"] and split.counts == {}


@pytest.mark.parametrize("header, rows, text, label, found", [
    # SophonPlus's Chinese review sets: label first, the text under `review`
    ("label,review", "1,很好吃\n0,太慢了\n", ["很好吃", "太慢了"], ["1", "0"],
     {"text": "review"}),
    # GLUE's SST-2 layout
    ("sentence\tlabel", "a fine film\t1\ndull\t0\n", ["a fine film", "dull"], ["1", "0"],
     {"text": "sentence"}),
    # both defaults missing
    ("sentiment,content", "pos,great\nneg,awful\n", ["great", "awful"], ["pos", "neg"],
     {"text": "content", "label": "sentiment"}),
])
def test_a_missing_default_column_is_found_among_the_usual_names(tmp_path, header, rows,
                                                                  text, label, found):
    path = tmp_path / ("a.tsv" if "\t" in header else "a.csv")
    path.write_text(header + "\n" + rows, encoding="utf-8")
    split = data.read_labeled_file(path)
    assert data.texts(split) == text and data.labels(split) == label
    assert split.counts == {"columns_found": found}


def test_a_file_without_a_header_reads_its_first_line_as_a_row(tmp_path):
    # the Yelp polarity layout: no header, "2","review text"
    path = tmp_path / "polarity.csv"
    review = "The pasta was cold and the waiter never came back to our table again"
    path.write_text(f'"2","{review}"\n"1","Awful."\n', encoding="utf-8")
    split = data.read_labeled_file(path)
    assert data.texts(split) == [review, "Awful."] and data.labels(split) == ["2", "1"]
    assert [e.where for e in split.items] == [f"{path}:1", f"{path}:2"]
    assert split.counts == {"headerless": {"label": 1, "text": [2]}}
    # Amazon polarity and AG News: label, title, text; the title and text are joined
    amazon = tmp_path / "amazon.csv"
    amazon.write_text('"2","Great CD","My lovely Pat has one of the great voices"\n'
                      '"1","Broken","It stopped after a day"\n"1","","No title here"\n',
                      encoding="utf-8")
    split = data.read_labeled_file(amazon)
    assert data.texts(split) == ["Great CD My lovely Pat has one of the great voices",
                                 "Broken It stopped after a day", "No title here"]
    assert split.counts == {"headerless": {"label": 1, "text": [2, 3]}}
    # the label last, in a TSV
    tsv = tmp_path / "mr.tsv"
    tsv.write_text("a gentle , funny film\t1\nflat and dull\t0\n", encoding="utf-8")
    split = data.read_labeled_file(tsv)
    assert data.labels(split) == ["1", "0"] and split.counts["headerless"]["label"] == 2
    # with a column named, the first line stays a header: the error names the columns
    with pytest.raises(UserError) as caught:
        data.read_labeled_file(path, text_column="review")
    message = str(caught.value)
    assert caught.value.line == 1 and "reads as a data row, not a header" in message
    assert "2, The pasta was cold and the waiter nev..." in message  # cut to 40 chars


def test_column_finding_records_only_what_it_found_and_never_guesses_between_two(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"review": "good", "label": "pos"}\n', encoding="utf-8")
    assert data.read_labeled_file(path).counts == {"columns_found": {"text": "review"}}
    two = tmp_path / "two.csv"  # `review` and `sentence` both there: no guess, the error
    two.write_text("review,sentence,label\ngood,fine,pos\n", encoding="utf-8")
    with pytest.raises(UserError, match="unknown text column 'text'"):
        data.read_labeled_file(two)
    given = tmp_path / "given.csv"  # a column named by the user is never replaced
    given.write_text("review,label\ngood,pos\n", encoding="utf-8")
    with pytest.raises(UserError, match="unknown text column 'body_text'"):
        data.read_labeled_file(given, text_column="body_text")


def test_empty_and_missing_files(tmp_path):
    (tmp_path / "empty.csv").write_text("\n\n", encoding="utf-8")
    with pytest.raises(UserError, match="file is empty"):
        data.read_labeled_file(tmp_path / "empty.csv")
    with pytest.raises(UserError, match="file not found"):
        data.read_labeled_file(tmp_path / "nope.csv")
    (tmp_path / "header.csv").write_text("text,label\n", encoding="utf-8")
    with pytest.raises(UserError, match="no usable examples"):
        data.read_labeled_file(tmp_path / "header.csv")


def test_carved_validation_is_stratified_seeded_and_disjoint(tmp_path):
    rows = "".join(f"t{i},{'pos' if i % 4 else 'neg'}\n" for i in range(40))
    path = tmp_path / "a.csv"
    path.write_text("text,label\n" + rows, encoding="utf-8")
    cfg = DataConfig(train=str(path), validation_fraction=0.25)
    one = data.load_classification_splits(cfg, seed=3)
    two = data.load_classification_splits(cfg, seed=3)
    assert data.texts(one["validation"]) == data.texts(two["validation"])
    assert sorted(data.labels(one["validation"])) == ["neg"] * 2 + ["pos"] * 8  # 10 neg, 30 pos
    assert not set(data.texts(one["validation"])) & set(data.texts(one["train"]))
    assert len(data.texts(one["train"])) + len(data.texts(one["validation"])) == 40


def test_label_columns_that_cannot_be_labels_are_refused_and_others_kept(tmp_path):
    def load(rows):
        path = tmp_path / "l.csv"
        path.write_text("text,label\n" + "".join(f"t{i},{label}\n"
                                                 for i, label in enumerate(rows)), "utf-8")
        return data.load_classification_splits(DataConfig(train=str(path)), seed=0)

    with pytest.raises(UserError, match="every label occurs once: 3 distinct labels in 3"):
        load(["a", "b", "c"])
    with pytest.raises(UserError, match="label '0.5000' is a fractional number") as info:
        load([f"{i / 2:.4f}" for i in range(1, 25)])
    assert info.value.line == 2
    # kept: ten classes of three rows, half-point ratings, 1.0-style integer classes
    assert len(load([f"c{i % 10}" for i in range(30)])["train"]) > 0
    assert len(load([str(1 + (i % 9) / 2) for i in range(36)])["train"]) > 0
    assert len(load([f"{i % 12}.0" for i in range(36)])["train"]) > 0


def test_label_unseen_in_train_is_an_error(tmp_path):
    (tmp_path / "tr.csv").write_text("text,label\na,pos\nb,neg\n", encoding="utf-8")
    (tmp_path / "te.csv").write_text("text,label\nc,pos\nd,neutral\n", encoding="utf-8")
    cfg = DataConfig(train=str(tmp_path / "tr.csv"), validation=str(tmp_path / "tr.csv"),
                     test=str(tmp_path / "te.csv"))
    with pytest.raises(UserError, match="label 'neutral' never appears") as info:
        data.load_classification_splits(cfg, seed=0)
    assert info.value.line == 3


def test_offline_hub_name_fails_fast_and_names_local_files(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    began = time.perf_counter()
    with pytest.raises(UserError, match="Use local files instead"):
        data.load_classification_splits(DataConfig(train="hub:surely/not-cached-xyz"), seed=0)
    assert time.perf_counter() - began < 20  # no network retries


def test_hub_dataset_class_labels_are_mapped_to_names(monkeypatch):
    import datasets

    features = datasets.Features({"sentence": datasets.Value("string"),
                                  "label": datasets.ClassLabel(names=["neg", "pos"])})
    built = datasets.DatasetDict({
        "train": datasets.Dataset.from_dict({"sentence": ["good", "bad", "fine", "awful"],
                                             "label": [1, 0, 1, 0]}, features=features),
        "validation": datasets.Dataset.from_dict({"sentence": ["nice"], "label": [1]},
                                                 features=features)})
    calls = []
    monkeypatch.setattr(datasets, "load_dataset",
                        lambda name, config=None: calls.append((name, config)) or built)
    cfg = DataConfig(train="hub:someone/reviews", text_column="sentence", hub_test_split="")
    splits = data.load_classification_splits(cfg, seed=0)
    assert calls == [("someone/reviews", None)]
    assert data.labels(splits["train"]) == ["pos", "neg", "pos", "neg"]
    assert data.texts(splits["validation"]) == ["nice"]
    assert data.labels(splits["validation"]) == ["pos"]
    assert splits["train"].items[1].where == "hub:someone/reviews[train]:2"


@pytest.mark.parametrize("validation, notice", [(None, True), ("given", False)])
def test_data_argument_says_when_validation_is_carved_instead_of_the_presets(
        tmp_path, monkeypatch, validation, notice):
    """--data replaces the preset's files: the run says that its validation is now carved
    from the training file, unless --validation names one."""
    import elman
    from elman.core import run as run_module

    seen = {}
    monkeypatch.setattr(run_module, "run", lambda task, cfg, *args, **kwargs:
                        seen.setdefault("cfg", cfg) and {})
    path = tmp_path / "train.csv"
    path.write_text("text,label\n" + "".join(f"t{i},{'a' if i % 2 else 'b'}\n"
                                            for i in range(20)), encoding="utf-8")
    lines = []
    elman.train("sentiment", data=str(path), out=str(tmp_path / "run"),
                validation=str(path) if validation else None,
                reports=str(tmp_path / "reports"), log=lines.append)
    said = [line for line in lines if line.startswith("notice: --data replaces")]
    assert bool(said) == notice
    if notice:  # the default preset's validation file is named, and the share carved
        assert "data/sentiment/en/validation.csv" in said[0] and "= 0.1)" in said[0]
        assert seen["cfg"].data.validation == ""
