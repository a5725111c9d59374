"""Bad input, tried as a careless user would: every reader, verb and option type.

Each case asserts exit code 2, exactly one `elman: error:` line, no traceback, and that
nothing was written (or that what existed is unchanged).
"""

import hashlib
import json
import shutil

import pytest

from elman import cli
from tests.conftest import NEGATIVE, POSITIVE, TINY_SETTINGS, write_csv

ROWS = [(t, "positive") for t in POSITIVE] + [(t, "negative") for t in NEGATIVE]


def _snapshot(root):
    """{relative path: SHA-256} of every file under root."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _one_error(capsys, args, *needles):
    code = cli.main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("elman: error:")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------- files the readers get

def _text(name, content, binary=False):
    return name, content, binary


FILES = {  # name → (file name, content, is bytes); `{dir}` is the case's folder
    "empty": _text("e.csv", ""),
    "header-only": _text("h.csv", "text,label\n"),
    "dup-columns": _text("d.csv", "text,text,label\na,b,pos\nc,d,neg\n"),
    "latin1": _text("l.csv", b"text,label\ngood,pos\nna\xefve,neg\n", True),
    "short-row": _text("s.csv", "text,label\ngood,pos\nbad\n"),
    "long-row": _text("x.csv", "text,label\ngood,pos,extra\nbad,neg\n"),
    "empty-text": _text("t.csv", "text,label\ngood,pos\n  ,neg\nbad,neg\n"),
    "no-label": _text("n.csv", "text,label\ngood,pos\nbad,\nfine,pos\n"),
    "mixed-labels": _text("m.csv", "text,label\na,positive\nb,negative\nc,1\nd,positive\n"),
    "one-label": _text("o.csv", "text,label\na,pos\nb,pos\nc,pos\n"),
    "open-quote": _text("q.csv", 'text,label\n"he said great,pos\nbad service,neg\nok,pos\n'),
    "jsonl-not-json": _text("j1.jsonl", '{"text": "a", "label": "p"}\n{text: b}\n'),
    "jsonl-not-object": _text("j2.jsonl", '{"text": "a", "label": "p"}\n[1, 2]\n'),
    "jsonl-missing": _text("j3.jsonl", '{"text": "a", "label": "p"}\n{"text": "b"}\n'),
    "jsonl-number-text": _text("j4.jsonl", '{"text": "a", "label": "p"}\n{"text": 5, '
                                          '"label": "n"}\n'),
    "jsonl-list-label": _text("j5.jsonl", '{"text": "a", "label": "p"}\n{"text": "b", '
                                          '"label": ["n"]}\n'),
    "lines-no-label": _text("ll.txt", "pos good film\nbadfilm\n"),
    "bad-parquet": _text("p.parquet", b"not parquet at all", True),
    "bad-toml": _text("c.toml", "[train\nepochs = 2\n"),
    "other-task-toml": _text("c2.toml", 'task = "tagging"\n'),
    "latin1-toml": _text("c3.toml", b"# caf\xe9\n", True),
    "conll-one-column": _text("a.conll", "Mary B-PER\nvisited\nRome B-LOC\n"),
    "conll-latin1": _text("b.conll", b"Mary B-PER\nna\xefve O\n", True),
    "conll-bad-tag": _text("bt.conll", "".join(
        f"Mary B-PER\nvisited {'B-' if i == 3 else 'O'}\nRome B-LOC\n\n" for i in range(20))),
    "conllu-short": _text("c.conllu", "1\tMary\tMary\tPROPN\n"),
    "tagged-jsonl-mismatch": _text("t.jsonl", '{"tokens": ["a", "b"], "tags": ["O"]}\n'),
    "pairs-one-column": _text("p1.tsv", "hello\n"),
    "pairs-empty-target": _text("p2.tsv", "hello\t\ngood\tbon\n"),
    "lm-empty": _text("e.txt", ""),
    "lm-latin1": _text("l.txt", b"the cat\nna\xefve\n", True),
    "a-file": _text("plain-file", "x"),
    # label columns that cannot be a classifier's labels (issue 15)
    "all-distinct": _text("ad.tsv", "text\tlabel\n" + "".join(
        f"review {i} of the film\tr{i:04d}\n" for i in range(30))),
    "label-is-text": _text("lt.csv", "text,label\n" + "".join(
        f"{'pos' if i % 2 else 'neg'},this is review number {i}\n" for i in range(30))),
    "id-column": _text("id.csv", "id,text,label\n" + "".join(
        f"{i},review {i},{'pos' if i % 2 else 'neg'}\n" for i in range(30))),
    "mostly-unique": _text("mu.csv", "text,label\n" + "".join(
        f"review {i},{'pos' if i < 5 else 'neg' if i < 10 else f'x{i}'}\n"
        for i in range(30))),
    "score-labels": _text("sc.csv", "text,label\n" + "".join(
        f"review {i},{i / 37:.4f}\n" for i in range(1, 31))),
    "unlabelled-lines": _text("ul.txt", "".join(f"word{i} and the rest of line {i}\n"
                                                for i in range(30))),
    "tabs-in-csv": _text("tb.csv", "text\tlabel\ngood\tpos\nbad\tneg\n"),
    "semicolons": _text("sm.csv", "text;label\ngood;pos\nbad;neg\n"),
}


@pytest.fixture
def files(tmp_path):
    made = {}
    for key, (name, content, binary) in FILES.items():
        path = tmp_path / "in" / name
        path.parent.mkdir(exist_ok=True)
        (path.write_bytes if binary else lambda c: path.write_text(c, encoding="utf-8"))(
            content)
        made[key] = path
    made["train"] = write_csv(tmp_path / "in" / "train.csv", ROWS * 2)
    made["odd-test"] = write_csv(tmp_path / "in" / "odd.csv", [("fine", "positive"),
                                                               ("meh", "neutral")])
    return made


TRAIN = [  # (id, task, arguments with {name} for files, needles in the message)
    ("set-zero-units", "sentiment", ["--set", "encoder.units=0"], ["at least 1"]),
    ("set-word-for-int", "sentiment", ["--set", "encoder.units=abc"], ["expects a int"]),
    ("set-dropout-range", "sentiment", ["--set", "encoder.dropout=1.5"], ["[0, 1)"]),
    ("set-zero-lr", "sentiment", ["--set", "train.learning_rate=0"], ["positive"]),
    ("set-infinite-lr", "sentiment", ["--set", "train.learning_rate=inf"], ["finite"]),
    ("set-nan-lr", "sentiment", ["--set", "train.learning_rate=nan"], ["finite"]),
    ("set-negative-patience", "sentiment", ["--set", "train.patience=-1"], ["at least 1"]),
    ("set-negative-minutes", "sentiment", ["--set", "train.max_minutes=-1"], ["at least 0"]),
    ("set-zero-batch", "sentiment", ["--set", "train.batch_size=0"], ["at least 1"]),
    ("set-bad-choice", "sentiment", ["--set", "encoder.cell=lsmt"], ["must be one of"]),
    ("set-bad-level", "sentiment", ["--set", "tokenizer.level=bpe"], ["must be one of"]),
    ("set-unknown-section", "sentiment", ["--set", "nosection.x=1"], ["unknown setting"]),
    ("set-no-equals", "sentiment", ["--set", "train.epochs"], ["key=value"]),
    ("set-float-for-int", "sentiment", ["--set", "train.seed=1.5"], ["expects a int"]),
    ("set-negative-adversarial", "sentiment", ["--set", "embedding.adversarial=-0.1"],
     ["at least 0"]),
    ("set-pretrain-rate", "sentiment", ["--set", "pretrain.rate=1.5"], ["(0, 1)"]),
    ("set-negative-decay", "sentiment", ["--set", "train.weight_decay=-1"], ["at least 0"]),
    ("set-table-for-value", "sentiment", ["--set", "train=3"], ["table of settings"]),
    ("config-missing", "sentiment", ["--config", "{dir}/none.toml"], ["config file not found"]),
    ("config-bad-toml", "sentiment", ["--config", "{bad-toml}"], ["not valid TOML"]),
    ("config-other-task", "sentiment", ["--config", "{other-task-toml}"], ["task 'tagging'"]),
    ("config-latin1", "sentiment", ["--config", "{latin1-toml}"], ["not valid UTF-8"]),
    ("config-unknown-preset", "sentiment", ["--config", "nosuch"], ["no config file or preset"]),
    ("unknown-task", "sentimnt", [], ["unknown task 'sentimnt'"]),
    ("data-missing", "sentiment", ["--data", "{dir}/none.csv"], ["file not found"]),
    ("data-folder", "sentiment", ["--data", "{dir}"],
     ["holds one subfolder per class", "class folders found: none"]),
    ("data-empty", "sentiment", ["--data", "{empty}"], ["file is empty"]),
    ("data-header-only", "sentiment", ["--data", "{header-only}"], ["no usable examples"]),
    ("data-unknown-text-column", "sentiment", ["--data", "{train}", "--text-column", "review"],
     ["unknown text column 'review'"]),
    ("data-unknown-label-column", "sentiment", ["--data", "{train}", "--label-column", "y"],
     ["unknown label column 'y'"]),
    ("data-dup-columns", "sentiment", ["--data", "{dup-columns}"], ["more than once"]),
    ("data-latin1", "sentiment", ["--data", "{latin1}"], ["l.csv:3", "not valid UTF-8"]),
    ("data-short-row", "sentiment", ["--data", "{short-row}"], ["s.csv:3", "expected 2"]),
    ("data-long-row", "sentiment", ["--data", "{long-row}"], ["x.csv:2", "expected 2"]),
    ("data-empty-text", "sentiment", ["--data", "{empty-text}"], ["t.csv:3", "empty text"]),
    ("data-no-label", "sentiment", ["--data", "{no-label}"], ["n.csv:3", "missing label"]),
    ("data-mixed-labels", "sentiment", ["--data", "{mixed-labels}"], ["m.csv:4", "number"]),
    ("data-one-label", "sentiment", ["--data", "{one-label}"], ["only one label"]),
    ("data-open-quote", "sentiment", ["--data", "{open-quote}"], ["q.csv:2", "not closed"]),
    ("jsonl-not-json", "sentiment", ["--data", "{jsonl-not-json}"], [":2", "not valid JSON"]),
    ("jsonl-not-object", "sentiment", ["--data", "{jsonl-not-object}"], [":2", "JSON object"]),
    ("jsonl-missing-field", "sentiment", ["--data", "{jsonl-missing}"], [":2", "missing field"]),
    ("jsonl-number-text", "sentiment", ["--data", "{jsonl-number-text}"], [":2", "not a string"]),
    ("jsonl-list-label", "sentiment", ["--data", "{jsonl-list-label}"], [":2", "single value"]),
    ("lines-no-label", "sentiment", ["--data", "{lines-no-label}"], ["ll.txt:2"]),
    ("data-all-distinct-labels", "sentiment", ["--data", "{all-distinct}"],
     ["ad.tsv:", "every label occurs once: 30 distinct labels in 30 rows", "'label'",
      "--label-column"]),
    ("data-all-distinct-with-validation", "sentiment",
     ["--data", "{all-distinct}", "--validation", "{train}"], ["every label occurs once"]),
    ("data-label-is-text", "sentiment", ["--data", "{label-is-text}"],
     ["lt.csv:", "every label occurs once", "read like text"]),
    ("data-id-as-label", "sentiment", ["--data", "{id-column}", "--label-column", "id"],
     ["id.csv:", "look like ids", "is 'id' the label column"]),
    ("data-mostly-unique-labels", "sentiment", ["--data", "{mostly-unique}"],
     ["mu.csv:", "20 of 30 rows have a label no other row has"]),
    ("data-score-labels", "sentiment", ["--data", "{score-labels}"],
     ["sc.csv:2", "fractional", "30 distinct numbers", "bin them"]),
    ("data-unlabelled-lines", "sentiment", ["--data", "{unlabelled-lines}"],
     ["ul.txt:", "first word is the label"]),
    ("data-tabs-in-csv", "sentiment", ["--data", "{tabs-in-csv}"],
     ["tb.csv:1", "holds tabs", "data.format=tsv"]),
    ("data-semicolons", "sentiment", ["--data", "{semicolons}"],
     ["sm.csv:1", "holds semicolons"]),
    ("bad-parquet", "sentiment", ["--data", "{bad-parquet}"], ["p.parquet"]),
    ("unseen-test-label", "sentiment", ["--data", "{train}", "--test", "{odd-test}"],
     ["odd.csv:3", "never appears"]),
    ("hub-offline", "sentiment", ["--data", "hub:someone/nothing-here"], ["cannot load hub"]),
    ("bad-format", "sentiment", ["--data", "{train}", "--set", "data.format=xml"],
     ["must be one of"]),
    ("validation-missing", "sentiment", ["--data", "{train}", "--validation", "{dir}/v.csv"],
     ["file not found"]),
    ("repair-bio-on-sentiment", "sentiment", ["--data", "{train}", "--repair-bio"],
     ["tagging task only"]),
    ("tagging-one-column", "tagging", ["--data", "{conll-one-column}"], ["a.conll:2"]),
    ("tagging-latin1", "tagging", ["--data", "{conll-latin1}"], ["b.conll:2", "valid UTF-8"]),
    ("tagging-malformed-tag", "tagging", ["--data", "{conll-bad-tag}"],
     ["bt.conll:13", "'B-'", "not an entity tag"]),
    ("tagging-skip-bad-rows", "tagging", ["--data", "{conll-one-column}", "--skip-bad-rows"],
     ["--skip-bad-rows is not available for tagging"]),
    ("tagging-conllu-short", "tagging", ["--data", "{conllu-short}"], ["c.conllu:1"]),
    ("tagging-jsonl-mismatch", "tagging", ["--data", "{tagged-jsonl-mismatch}"], ["t.jsonl:1"]),
    ("tagging-bad-head", "tagging", ["--set", "head.type=hmm"], ["head.type"]),
    ("translation-one-column", "translation", ["--data", "{pairs-one-column}"], ["p1.tsv:1"]),
    ("translation-empty-target", "translation", ["--data", "{pairs-empty-target}"],
     ["p2.tsv:1"]),
    ("translation-bad-attention", "translation", ["--set", "model.attention=dot-product"],
     ["model.attention"]),
    ("lm-empty", "lm", ["--data", "{lm-empty}"], ["e.txt"]),
    ("lm-latin1", "lm", ["--data", "{lm-latin1}"], ["l.txt:2", "not valid UTF-8"]),
    ("lm-bad-level", "lm", ["--set", "text.level=bpe"], ["text.level"]),
    ("out-is-a-file", "sentiment", ["--data", "{train}", "--out", "{a-file}"], ["is a file"]),
    ("reports-is-a-file", "sentiment", ["--data", "{train}", "--reports", "{a-file}"],
     ["is a file"]),
    ("resume-without-out", "sentiment", ["--resume"], ["--resume needs --out"]),
    ("out-empty", "sentiment", ["--data", "{train}", "--out", ""], ["--out is empty"]),
    ("newline-in-data-path", "sentiment", ["--data", "{dir}/a\nb.csv"],
     ["a\\nb.csv: file not found"]),
    ("lm-label-column", "lm", ["--label-column", "tag"],
     ["--label-column does not apply to the lm task"]),
    ("translation-text-column", "translation", ["--text-column", "en"],
     ["--text-column does not apply to the translation task"]),
    ("resume-empty-folder", "sentiment", ["--resume", "--out", "{dir}"], ["nothing to resume"]),
]


@pytest.mark.parametrize("case", TRAIN, ids=[c[0] for c in TRAIN])
def test_train_refuses_bad_input_and_writes_nothing(case, files, tmp_path, capsys):
    _, task, args, needles = case
    names = {**{k: str(v) for k, v in files.items()}, "dir": str(tmp_path / "in")}
    args = [a.format(**names) for a in args]
    before = _snapshot(tmp_path)
    if "--out" not in args and case[0] != "resume-without-out":
        args += ["--out", str(tmp_path / "run")]
    if "--reports" not in args:
        args += ["--reports", str(tmp_path / "reports")]
    _one_error(capsys, ["train", task, *args, *(TINY_SETTINGS if task == "sentiment" else [])],
               *needles)
    assert _snapshot(tmp_path) == before  # nothing written, nothing changed


# ---------------------------------------------------------------- verbs on a saved run

@pytest.fixture(scope="module")
def sentiment_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_input_run")
    train = write_csv(root / "train.csv", ROWS * 3)
    assert cli.main(["train", "sentiment", "--data", str(train), "--validation", str(train),
                     "--test", str(train), "--out", str(root / "run"), "--reports",
                     str(root / "reports"), *TINY_SETTINGS]) == 0
    return root / "run"


RUN_CASES = [  # (id, arguments with {run} and {copy}, needles)
    ("predict-missing-folder", ["predict", "{tmp}/none", "text"], ["run folder not found"]),
    ("predict-not-a-run", ["predict", "{tmp}", "text"], ["not an elman run folder"]),
    ("predict-empty-text", ["predict", "{run}", "  "], ["text 1 is empty"]),
    ("predict-conll-on-sentiment", ["predict", "{run}", "--format", "conll", "a"],
     ["--format conll is for tagging runs"]),
    ("evaluate-missing-data", ["evaluate", "{run}", "--data", "{tmp}/none.csv"],
     ["file not found"]),
    ("evaluate-unknown-label", ["evaluate", "{run}", "--data", "{odd}"], ["not one the model"]),
    ("evaluate-unknown-column", ["evaluate", "{run}", "--text-column", "review"],
     ["unknown text column"]),
    ("translate-on-sentiment", ["translate", "{run}", "a"], ["expected a translation run"]),
    ("generate-on-sentiment", ["generate", "{run}", "--prefix", "a"], ["expected an lm run"]),
    ("train-over-finished-run", ["train", "sentiment", "--data", "{train}", "--out", "{run}"],
     ["holds a finished run", "--overwrite"]),
    ("resume-as-other-task", ["train", "tagging", "--out", "{run}", "--resume"],
     ["belongs to task 'sentiment'"]),
    ("resume-with-other-data", ["train", "sentiment", "--out", "{run}", "--resume", "--data",
                                "{odd}"], ["data.train"]),
    ("resume-with-other-shape", ["train", "sentiment", "--out", "{run}", "--resume", "--set",
                                 "encoder.units=99"], ["encoder.units"]),
    ("resume-with-config", ["train", "sentiment", "--out", "{run}", "--resume", "--config",
                            "zh"], ["--config"]),
    ("truncated-model", ["predict", "{copy}", "a"], ["model.keras is damaged"]),
    ("damaged-run-json", ["predict", "{copy}", "a"], ["run.json is damaged"]),
    ("unfinished-run", ["predict", "{copy}", "a"], ["did not finish", "--resume"]),
    ("diagnose-bad-cell", ["diagnose", "gradients", "--out", "{tmp}/d", "--cells", "lsmt"],
     ["Expected cells"]),
    ("diagnose-length-one", ["diagnose", "gradients", "--out", "{tmp}/d", "--length", "1"],
     ["length"]),
    ("textbook-out-is-file", ["textbook", "--out", "{file}"], ["is a file"]),
    ("textbook-out-empty", ["textbook", "--out", ""], ["--out is empty"]),
    ("diagnose-out-empty", ["diagnose", "gradients", "--out", ""], ["--out is empty"]),
    ("bench-out-empty", ["bench", "--quick", "--out", ""], ["--out is empty"]),
    ("bench-out-is-file", ["bench", "--quick", "--out", "{file}"], ["is a file"]),
    ("resume-and-overwrite", ["train", "sentiment", "--out", "{run}", "--resume",
                              "--overwrite"], ["give one of them"]),
    ("evaluate-test-file-gone", ["evaluate", "{copy}"], ["test file is gone", "--data"]),
    ("serve-port-out-of-range", ["serve", "{run}", "--port", "70000"], ["--port"]),
    ("distributed-no-workers", ["distributed", "--workers", "0", "--", "elman"],
     ["--workers"]),
    ("distributed-logs-unwritable", ["distributed", "--logs", "{file}/logs", "--", "elman"],
     ["--logs", "is a file"]),
]

DAMAGE = {
    "truncated-model": lambda run: (run / "model.keras").write_bytes(
        (run / "model.keras").read_bytes()[:1000]),
    "damaged-run-json": lambda run: (run / "run.json").write_text("{\"task\": ", "utf-8"),
    "unfinished-run": lambda run: (run / "run.json").unlink(),
    "evaluate-test-file-gone": lambda run: (run / "config.json").write_text(
        (run / "config.json").read_text("utf-8").replace("train.csv", "moved.csv"), "utf-8"),
}


@pytest.mark.parametrize("case", RUN_CASES, ids=[c[0] for c in RUN_CASES])
def test_verbs_refuse_bad_input_and_change_nothing(case, sentiment_run, tmp_path, capsys):
    name, args, needles = case
    copy = tmp_path / "copy"
    if name in DAMAGE:
        shutil.copytree(sentiment_run, copy)
        DAMAGE[name](copy)
    (tmp_path / "a-file").write_text("x")
    odd = write_csv(tmp_path / "odd.csv", [("fine", "positive"), ("meh", "neutral")])
    train = write_csv(tmp_path / "train.csv", ROWS)
    args = [a.format(run=sentiment_run, copy=copy, tmp=tmp_path, odd=odd, train=train,
                     file=tmp_path / "a-file") for a in args]
    before_run, before_tmp = _snapshot(sentiment_run), _snapshot(tmp_path)
    _one_error(capsys, args, *needles)
    assert _snapshot(sentiment_run) == before_run
    assert _snapshot(tmp_path) == before_tmp


def test_evaluate_json_prints_json_alone(sentiment_run, capsys):
    assert cli.main(["evaluate", str(sentiment_run), "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["examples"] > 0  # stdout is valid JSON with nothing before it


def test_the_tally_covers_at_least_80_cases():
    assert len(TRAIN) + len(RUN_CASES) >= 80
