"""The Python API and the CLI are one code path: same predictions, same errors."""

import json

import pytest

import elman
from elman import cli
from tests.conftest import TINY_SETTINGS


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from tests.conftest import NEGATIVE, POSITIVE, write_csv

    tmp = tmp_path_factory.mktemp("api")
    rows = [(t, "positive") for t in POSITIVE] + [(t, "negative") for t in NEGATIVE]
    train = write_csv(tmp / "train.csv", rows * 3)
    test = write_csv(tmp / "test.csv", rows)
    overrides = dict(item.split("=", 1) for item in TINY_SETTINGS[1::2])
    run = elman.train("sentiment", data=str(train), validation=str(test), test=str(test),
                      out=str(tmp / "run"), reports=str(tmp / "reports"),
                      overrides={k: int(v) for k, v in overrides.items()})
    return run


def test_train_returns_the_run_and_its_metrics(tiny_run):
    assert (tiny_run.path / "model.keras").is_file()
    saved = json.loads((tiny_run.report_dir / "metrics.json").read_text())
    assert tiny_run.metrics["scores"] == saved["scores"]
    assert tiny_run.scores["accuracy"] == saved["scores"]["accuracy"]


def test_cli_and_api_give_identical_predictions(tiny_run, capsys):
    texts = ["the food was great", "terrible service", "味道很好"]
    api_out = elman.load(tiny_run.path).predict(texts)
    capsys.readouterr()
    assert cli.main(["predict", str(tiny_run.path), "--format", "json", *texts]) == 0
    cli_out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert cli_out == api_out
    assert [p["text"] for p in api_out] == texts


def test_a_text_longer_than_the_model_reads_is_marked_and_noticed(tiny_run, capsys):
    long_text = " ".join(["great"] * 250)  # the tokenizer reads 200 tokens (the default)
    texts = ["the food was great", long_text]
    api_out = elman.load(tiny_run.path).predict(texts)
    assert api_out[0]["truncated"] is None
    assert api_out[1]["truncated"] == {"tokens": 250, "read": 200, "kept": "first"}
    capsys.readouterr()
    assert cli.main(["predict", str(tiny_run.path), "--format", "json", *texts]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()] == api_out
    assert err.splitlines() == ["notice: text 2 has 250 tokens; the model reads the first 200"]
    assert cli.main(["predict", str(tiny_run.path), *texts]) == 0
    out, err = capsys.readouterr()
    assert "notice" not in out and len(out.splitlines()) == 2  # stdout: the answers alone
    assert cli.main(["predict", str(tiny_run.path), "--trace", "--format", "json",
                     long_text]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["truncated"]["read"] == 200 and "text 1 has 250 tokens" in err


def test_evaluate_matches_the_cli(tiny_run, capsys):
    result = elman.evaluate(tiny_run.path)
    capsys.readouterr()
    assert cli.main(["evaluate", str(tiny_run.path), "--json"]) == 0
    out = capsys.readouterr().out  # the scores as JSON alone
    assert json.loads(out) == json.loads(
        json.dumps(result.scores, sort_keys=True))


def test_user_errors_carry_the_cli_message(tmp_path, capsys):
    with pytest.raises(elman.UserError) as caught:
        elman.load(tmp_path)
    assert cli.main(["predict", str(tmp_path), "x"]) == 2
    assert capsys.readouterr().err.strip() == f"elman: error: {caught.value}"
    with pytest.raises(elman.UserError, match="unknown task 'nope'"):
        elman.presets("nope")


def test_presets_lists_every_preset_with_its_first_comment():
    presets = elman.presets("sentiment")
    assert set(presets) >= {"default", "zh", "sst2"}
    assert all(isinstance(line, str) and line for line in presets.values())


def test_a_predictor_evaluates_like_the_api(tiny_run):
    assert elman.load(tiny_run.path).evaluate().scores == elman.evaluate(tiny_run.path).scores


TOY = {  # each task's toy preset (data/ of this project), with tiny layers and 1 epoch
    "tagging": {"embedding.dim": 8, "encoder.units": 8, "chars.units": 4,
                "chars.embedding_dim": 4, "train.epochs": 1},
    "translation": {"model.units": 8, "model.embedding_dim": 8, "train.epochs": 1,
                    "eval.heatmaps": 0, "eval.samples": 1},
    "lm": {"model.embedding_dim": 8, "model.units": 8, "train.epochs": 1,
           "report.samples": 1, "report.sample_length": 4},
}
TEXTS = {"tagging": ["Alice visited Paris in May", "北京欢迎你"],
         "translation": ["i like tea", "the students eat fish"],
         "lm": ["the cat sat on", "once upon a"]}


@pytest.mark.parametrize("task", [pytest.param(t, marks=pytest.mark.slow)
                                  if t in ("tagging", "translation") else t
                                  for t in sorted(TOY)])
def test_cli_and_api_agree_for_every_task(task, tmp_path, capsys):
    run = elman.train(task, out=str(tmp_path / "run"), reports=str(tmp_path / "reports"),
                      overrides=TOY[task])
    predictor = elman.load(run.path)
    assert predictor.task == task
    api_out = predictor.predict(TEXTS[task])
    capsys.readouterr()
    assert cli.main(["predict", str(run.path), "--format", "json", *TEXTS[task]]) == 0
    cli_out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert cli_out == api_out and len(api_out) == len(TEXTS[task])
    assert all(p["truncated"] is None for p in api_out)
    # tagging and language models read any length; a translation source is cut at
    # source_tokenizer.max_length (100 by default)
    cut = predictor.predict([" ".join(["the cat"] * 60)])[0]["truncated"]
    assert cut == ({"tokens": 120, "read": 100, "kept": "first"} if task == "translation"
                   else None)
    main = run.metrics["main_metric"]
    assert run.metrics["split"] == "test"  # every toy preset has a test file
    assert elman.evaluate(run.path).scores[main] == pytest.approx(run.scores[main], rel=1e-6)


def test_presets_command_lists_each_presets_first_sentence(tmp_path, monkeypatch, capsys):
    """The oracle is a TOML written here: its first comment sentence, found by hand
    (the ellipsis's dots and `v2.15` do not end it; the full stop does)."""
    from elman import config as config_lib

    (tmp_path / "tagging.toml").write_text(
        '# Toy NER. Second sentence.\ntask = "tagging"\n', encoding="utf-8")
    (tmp_path / "tagging-big.toml").write_text(
        "# English NER (token ... tag per line, UD v2.15): tuned\n# on a corpus. More\n"
        "# words.\n\n# not the header\ntask = \"tagging\"\n", encoding="utf-8")
    (tmp_path / "tagging-other.toml").write_text('task = "sentiment"\n', encoding="utf-8")
    monkeypatch.setattr(config_lib, "CONFIG_DIR", tmp_path)
    expected = {"big": "English NER (token ... tag per line, UD v2.15): tuned on a corpus.",
                "default": "Toy NER."}
    assert elman.presets("tagging") == expected  # the sentiment TOML is not listed
    assert cli.main(["presets", "tagging", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"tagging": expected}
    assert cli.main(["presets", "tagging"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["elman train tagging --config big", "    " + expected["big"],
                     "elman train tagging", "    Toy NER."]
    assert cli.main(["presets", "nope"]) == 2
    assert "unknown task 'nope'" in capsys.readouterr().err


def test_output_into_a_closed_pipe_ends_quietly():
    """`elman presets | head -1`: the reader goes away before elman writes; the exit code
    is a shell's for SIGPIPE and stderr holds no traceback (before: a traceback, code 1,
    or Python's 'Exception ignored' at exit, code 120)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)  # buffered, as a user's shell has it: the write that
    # fails is then the flush, which must happen inside `main`, not at the interpreter's exit
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read
    done = subprocess.run([sys.executable, "-m", "elman.cli", "presets"], stdout=write_end,
                          stderr=subprocess.PIPE, text=True, timeout=120, env=env)
    os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""
