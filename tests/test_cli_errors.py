"""Bad input: one clear message, exit code 2, no traceback."""

import pytest

from elman import cli
from tests.conftest import TINY_SETTINGS, run_elman, write_csv


def run_in_process(capsys, args):
    code = cli.main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.err


def assert_one_clear_error(code, err, *needles):
    assert code == 2
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("elman: error:")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_missing_file(capsys, tmp_path):
    code, err = run_in_process(capsys, ["train", "sentiment", "--data", tmp_path / "no.csv",
                                        "--out", tmp_path / "run"])
    assert_one_clear_error(code, err, "no.csv", "file not found")


def test_a_presets_own_file_missing_says_where_it_was_looked_for(capsys, tmp_path,
                                                                   monkeypatch):
    """Run from another folder, a preset's relative data path is not there: the error names
    the preset, the folder it was read from and --data; a file the user named is reported
    plainly. The oracle is the path joined here by hand from the folder and the TOML's
    value (the TOML read with tomllib, not elman's config)."""
    import tomllib

    from tests.conftest import ROOT

    work = tmp_path / "elsewhere"
    work.mkdir()
    monkeypatch.chdir(work)
    for task, preset, toml in (("tagging", "ner-en", "tagging-ner-en.toml"),
                               ("sentiment", None, "sentiment.toml")):
        named = tomllib.loads((ROOT / "pipelines" / "configs" / toml).read_text())
        train = named["data"]["train"]
        args = ["train", task, "--out", tmp_path / "run"] + (["--config", preset] if preset
                                                              else [])
        code, err = run_in_process(capsys, args)
        where = (work / train).resolve()
        source = f"the preset '{preset}' of {task}" if preset else f"the default preset of {task}"
        assert_one_clear_error(code, err, f"{where}: not found: data.train = '{train}'",
                               f"comes from {source}", f"({work})", "--data TRAIN")
    mine = tmp_path / "mine.toml"
    mine.write_text('task = "sentiment"\n[data]\ntrain = "mine/train.csv"\n')
    code, err = run_in_process(capsys, ["train", "sentiment", "--config", mine])
    assert_one_clear_error(code, err, "comes from the config file", str(mine))
    code, err = run_in_process(capsys, ["train", "sentiment", "--data", "mine.csv"])
    assert_one_clear_error(code, err, f"{work / 'mine.csv'}: file not found")
    assert "comes from" not in err


def test_unknown_column(capsys, tiny_sentiment, tmp_path):
    code, err = run_in_process(capsys, ["train", "sentiment", "--data", tiny_sentiment["train"],
                                        "--text-column", "review", "--out", tmp_path / "r"])
    assert_one_clear_error(code, err, "train.csv:1", "unknown text column 'review'", "text, label")


def test_empty_file(capsys, tmp_path):
    (tmp_path / "empty.csv").write_text("", encoding="utf-8")
    code, err = run_in_process(capsys, ["train", "sentiment", "--data", tmp_path / "empty.csv"])
    assert_one_clear_error(code, err, "empty.csv", "file is empty")


def test_empty_text(capsys, tmp_path):
    path = write_csv(tmp_path / "t.csv", [("good", "pos"), ("  ", "neg"), ("bad", "neg")])
    code, err = run_in_process(capsys, ["train", "sentiment", "--data", path])
    assert_one_clear_error(code, err, "t.csv:3", "empty text")


def test_label_in_test_never_seen_in_train(capsys, tiny_sentiment, tmp_path):
    test = write_csv(tmp_path / "odd.csv", [("fine", "positive"), ("meh", "neutral")])
    code, err = run_in_process(capsys, ["train", "sentiment", "--data", tiny_sentiment["train"],
                                        "--validation", tiny_sentiment["validation"],
                                        "--test", test])
    assert_one_clear_error(code, err, "odd.csv:3", "label 'neutral' never appears")


def _conll(path, sentences):
    """Writes `token tag` lines, a blank line after each sentence; returns the path."""
    path.write_text("".join("".join(f"{w} {t}\n" for w, t in s) + "\n" for s in sentences),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("entity", [True, False])
def test_a_tag_in_validation_never_seen_in_train_names_the_train_tags(capsys, tmp_path,
                                                                       entity):
    if entity:
        train = [[("Ann", "B-PER"), ("saw", "O"), ("Rome", "B-LOC")],
                 [("Bo", "B-PER"), ("left", "O"), ("New", "B-LOC"), ("York", "I-LOC")]]
        odd, needles = ("Expo", "B-EVENT"), ("entity type 'EVENT'", "train entity types: LOC, PER")
    else:
        train = [[("dogs", "NOUN"), ("run", "VERB")], [("cats", "NOUN"), ("sleep", "VERB")]]
        odd, needles = ("big", "ADJ"), ("tag 'ADJ'", "train tags: NOUN, VERB")
    train_path = _conll(tmp_path / "train.conll", train * 3)
    # the second sentence of dev starts on line 4 (two tokens, a blank line, then it)
    dev = _conll(tmp_path / "dev.conll", [train[1][:2], [train[0][0], odd]])
    code, err = run_in_process(capsys, ["train", "tagging", "--data", train_path,
                                        "--validation", dev, "--out", tmp_path / "r"])
    assert_one_clear_error(code, err, "dev.conll:4", "token 2 of the sentence", *needles)


def test_non_utf8_bytes(capsys, tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"text,label\ngood,pos\nna\xefve,neg\n")
    code, err = run_in_process(capsys, ["train", "sentiment", "--data", path])
    assert_one_clear_error(code, err, "latin.csv:3", "not valid UTF-8")


def test_row_with_a_missing_field(capsys, tmp_path):
    path = tmp_path / "short.csv"
    path.write_text("text,label\ngood,pos\nbad\n", encoding="utf-8")
    code, err = run_in_process(capsys, ["train", "sentiment", "--data", path])
    assert_one_clear_error(code, err, "short.csv:3", "expected 2 fields")


def test_unknown_set_key(capsys, tiny_sentiment):
    code, err = run_in_process(capsys, ["train", "sentiment", "--data", tiny_sentiment["train"],
                                        "--set", "encoder.layers=3"])
    assert_one_clear_error(code, err, "unknown setting 'encoder.layers'")


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_folder_that_is_not_a_run(capsys, tmp_path, command):
    extra = ["some text"] if command == "predict" else []
    code, err = run_in_process(capsys, [command, tmp_path, *extra])
    assert_one_clear_error(code, err, str(tmp_path), "not an elman run folder")


def test_real_process_exit_code_and_no_traceback(tmp_path):
    result = run_elman(["train", "sentiment", "--data", tmp_path / "missing.csv", *TINY_SETTINGS])
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("elman: error:")
    assert "Traceback" not in result.stderr
