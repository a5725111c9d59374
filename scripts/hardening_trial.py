#!/usr/bin/env python
"""A fresh trial of careless-user cases against the `elman` command line (issue 15).

Trains a tiny run of every task in a temporary folder, then runs each case in a fresh
process, as a user would type it, and judges it:

- a bad-input case passes when it exits with code 2, prints exactly one `elman: error:`
  line (and nothing else but TensorFlow's start-up log and argparse's usage), shows no
  traceback and no raw control character, names what the case expects, and leaves every
  file in the folder as it was;
- a case that must work passes when it exits with 0 and its output is what the manual
  says (one output line per input line, escaped control characters, truncation notices).

Prints a tally and, for each failing case, the command that reproduces it (the folder
is then kept). About 6 minutes on 2 CPU cores.

    .venv/bin/python scripts/hardening_trial.py [--keep] [--only WORD] [--list]
"""

import argparse
import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ELMAN = [sys.executable, "-m", "elman.cli"]
#: TensorFlow's C++ start-up log, which TF_CPP_MIN_LOG_LEVEL does not silence
NOISE = re.compile(r"^(WARNING: All log messages before absl|[IWEF]\d{4} \d\d:)")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
POSITIVE = ["the food was great", "a lovely warm place", "great service and tasty food",
            "i loved it", "the staff were kind", "味道很好", "not bad at all"]
NEGATIVE = ["the food was cold", "a dirty and noisy place", "terrible service",
            "i hated it", "the staff were rude", "味道很差", "not good"]


@dataclasses.dataclass
class Case:
    """One careless-user case.

    Attributes:
        name: str, unique.
        kind: str, the issue-15 kind it belongs to.
        argv: list of str, the arguments after `elman` ({placeholders}: see `names`).
        needles: tuple of str the error line must hold (error cases).
        stdin: str, bytes or None, standard input.
        check: callable(result) → None or the reason it failed; set for cases that
            must work (exit code 0).
        prepare: callable(folder) run before the case (damage a copy of a run, ...).
    """

    name: str
    kind: str
    argv: list
    needles: tuple = ()
    stdin: object = None
    check: object = None
    prepare: object = None


# ---------------------------------------------------------------- the tiny runs

def _csv(rows, header="text,label"):
    return header + "\n" + "".join(f"{t},{l}\n" for t, l in rows)


def write_inputs(folder):
    """The data files the runs and the cases read: {name: path}."""
    rows = [(t, "positive") for t in POSITIVE] + [(t, "negative") for t in NEGATIVE]
    lines = {
        "train.csv": _csv(rows * 3), "valid.csv": _csv(rows), "other.csv": _csv(rows[::2]),
        "all-distinct.tsv": "text\tlabel\n" + "".join(f"review {i} of the film\tr{i:04d}\n"
                                                     for i in range(40)),
        "scores.csv": _csv((f"review {i}", f"{i / 41:.4f}") for i in range(1, 41)),
        "tab-header.csv": "text\tlabel\ngood\tpos\nbad\tneg\n",
        "ragged.tsv": "text\tlabel\ngood\tpos\nbad\tneg\textra\n",
        "array.json": json.dumps([{"text": "a", "label": "p"}, {"text": "b", "label": "n"}]),
        "null-label.jsonl": '{"text": "a", "label": "p"}\n{"text": "b", "label": null}\n',
        "docstart.conll": "-DOCSTART- -X- O O\n\n-DOCSTART- -X- O O\n",
        "no-tab.tsv": "i like tea    我喜欢茶\n",
        "a-file": "x",
    }
    (folder / "in").mkdir()
    paths = {}
    for name, text in lines.items():
        paths[name] = folder / "in" / name
        paths[name].write_text(text, encoding="utf-8")
    paths["utf16.csv"] = folder / "in" / "utf16.csv"
    paths["utf16.csv"].write_bytes("text,label\ngood,pos\nbad,neg\n".encode("utf-16"))
    paths["gzip.txt"] = folder / "in" / "gzip.txt"
    paths["gzip.txt"].write_bytes(b"\x1f\x8b\x08\x00binary\x00\xff\xfe")
    for name, source, count in (("tag-train.conll", "tagging/en/train.conll", 400),
                                ("tag-valid.conll", "tagging/en/validation.conll", 80),
                                ("tr-train.tsv", "translation/en-zh/train.tsv", 200),
                                ("tr-valid.tsv", "translation/en-zh/validation.tsv", 40),
                                ("lm-train.txt", "lm/en.txt", 30),
                                ("lm-valid.txt", "lm/en_valid.txt", 8)):
        head = (ROOT / "data" / source).read_text(encoding="utf-8").splitlines()[:count]
        paths[name] = folder / "in" / name
        paths[name].write_text("\n".join(head) + "\n", encoding="utf-8")
    return paths


def train_runs(folder, paths):
    """Trains one tiny run per task (1 epoch, a few units); returns {task: run folder}."""
    p = {k: str(v) for k, v in paths.items()}
    plans = {
        "sentiment": (p["train.csv"], p["valid.csv"], [
            "embedding.dim=8", "encoder.units=8", "head.hidden=8", "train.batch_size=8",
            "tokenizer.max_length=12"], ["--test", p["valid.csv"]]),
        "lm": (p["lm-train.txt"], p["lm-valid.txt"], [
            "model.embedding_dim=8", "model.units=8", "report.samples=1",
            "report.sample_length=4"], []),
        "translation": (p["tr-train.tsv"], p["tr-valid.tsv"], [
            "model.units=8", "model.embedding_dim=8", "eval.heatmaps=0", "eval.samples=1"],
            []),
        "tagging": (p["tag-train.conll"], p["tag-valid.conll"], [
            "embedding.dim=8", "encoder.units=8", "chars.units=4", "chars.embedding_dim=4"],
            []),
    }
    runs = {}
    for task, (train, valid, settings, extra) in plans.items():
        runs[task] = folder / "runs" / task
        argv = ["train", task, "--data", train, "--validation", valid, "--out",
                str(runs[task]), "--reports", str(folder / "reports"), *extra,
                "--set", "train.epochs=1"]
        for setting in settings:
            argv += ["--set", setting]
        began = time.perf_counter()
        result = run_elman(argv, cwd=folder)
        if result.returncode != 0:
            sys.exit(f"training the tiny {task} run failed:\n{result.stderr[-3000:]}")
        print(f"trained the tiny {task} run in {time.perf_counter() - began:.0f} s",
              flush=True)
    return runs


def run_elman(argv, cwd, stdin=None, timeout=240):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", PYTHONIOENCODING="utf-8")
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    try:
        done = subprocess.run([*ELMAN, *argv], cwd=cwd, env=env, input=data,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, b"", b"(timed out)")
    return subprocess.CompletedProcess(argv, done.returncode,
                                       done.stdout.decode("utf-8", "replace"),
                                       done.stderr.decode("utf-8", "replace"))


# ---------------------------------------------------------------- damage and checks

def copy_of(task, damage=None):
    """A `prepare` that copies the tiny `task` run to <folder>/copy and damages it."""
    def prepare(folder):
        copy = folder / "copy"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(folder / "runs" / task, copy)
        if damage is not None:
            damage(copy)
    return prepare


def _flip_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _garble_checkpoints(run):
    for state in (run / "checkpoints").glob("state*.json"):
        state.write_text('{"epoch": ', encoding="utf-8")


def _move_test_file(run):
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    config["data"]["test"] = str(run / "moved-away.csv")
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")


def lines_out(count, blank_at=(), json_nulls=False):
    """A check: `count` stdout lines, blank (or `null`) exactly at the 0-based `blank_at`."""
    def check(result):
        lines = result.stdout.splitlines()
        if len(lines) != count:
            return f"expected {count} output lines, got {len(lines)}"
        empty = "null" if json_nulls else ""
        got = tuple(i for i, line in enumerate(lines) if line.strip() == empty)
        return None if got == tuple(blank_at) else f"blank lines at {got}, expected {blank_at}"
    return check


def escaped(result):
    """A check: no raw control character reaches the terminal (tabs and newlines aside)."""
    if CONTROL.search(result.stdout) or CONTROL.search(result.stderr):
        return "a raw control character was printed"
    return None


def notice(number, tokens, read, what="text"):
    """A check: one truncation notice on stderr, and stdout free of it."""
    want = f"notice: {what} {number} has {tokens} tokens; the model reads the first {read}"

    def check(result):
        notices = [line for line in result.stderr.splitlines() if line.startswith("notice:")]
        if notices != [want]:
            return f"expected the notice {want!r}, got {notices}"
        return "the notice reached stdout" if "notice" in result.stdout else None
    return check


def truncated_json(result):
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    cut = [row["truncated"] for row in rows]
    if cut[0] is not None or not cut[1] or cut[1]["read"] != 12:
        return f"unexpected truncated fields {cut}"
    return None


# ---------------------------------------------------------------- the cases

S = ["train", "sentiment", "--data", "{in}/train.csv", "--set", "train.epochs=1"]
LONG = " ".join(["great"] * 20)  # the tiny sentiment run reads 12 tokens

CASES = [
    # bad output paths and folders that cannot be written (even by root: /proc)
    Case("out-unwritable", "output path", [*S, "--out", "/proc/elman-trial/run"],
         ("--out", "cannot write under /proc")),
    Case("reports-unwritable", "output path", [*S, "--out", "{tmp}/r", "--reports",
                                               "/proc/elman-trial"], ("--reports",)),
    Case("out-through-a-file", "output path", [*S, "--out", "{in}/a-file/run"],
         ("is a file",)),
    Case("out-empty", "output path", [*S, "--out", ""], ("--out is empty",)),
    Case("out-a-device", "output path", [*S, "--out", "/dev/null"], ("not a folder",)),
    Case("diagnose-out-unwritable", "output path",
         ["diagnose", "gradients", "--out", "/proc/elman-trial"], ("cannot write",)),
    Case("distributed-logs-unwritable", "output path",
         ["distributed", "--logs", "/proc/elman-trial", "--", "elman", "train", "lm"],
         ("--logs",)),
    # damaged run folders
    Case("model-empty", "damaged run", ["predict", "{copy}", "hi"], ("model.keras",),
         prepare=copy_of("sentiment", lambda r: (r / "model.keras").write_bytes(b""))),
    Case("model-one-byte-flipped", "damaged run", ["predict", "{copy}", "hi"],
         ("model.keras is damaged",),
         prepare=copy_of("sentiment", lambda r: _flip_byte(r / "model.keras"))),
    Case("model-missing", "damaged run", ["predict", "{copy}", "hi"], ("no model.keras",),
         prepare=copy_of("sentiment", lambda r: (r / "model.keras").unlink())),
    Case("run-json-a-list", "damaged run", ["predict", "{copy}", "hi"], ("run.json",),
         prepare=copy_of("sentiment", lambda r: (r / "run.json").write_text("[]"))),
    Case("run-json-missing", "damaged run", ["predict", "{copy}", "hi"], ("did not finish",),
         prepare=copy_of("sentiment", lambda r: (r / "run.json").unlink())),
    Case("checkpoint-json-corrupt", "damaged run",
         ["train", "sentiment", "--out", "{copy}", "--resume", "--reports", "{tmp}/rp"],
         ("no intact checkpoint",), prepare=copy_of("sentiment", _garble_checkpoints)),
    Case("config-json-corrupt", "damaged run", ["evaluate", "{copy}"], ("config.json",),
         prepare=copy_of("sentiment", lambda r: (r / "config.json").write_text("{"))),
    Case("evaluate-test-file-gone", "damaged run", ["evaluate", "{copy}"], ("is gone",),
         prepare=copy_of("sentiment", _move_test_file)),
    Case("translation-tokenizers-missing", "damaged run", ["translate", "{copy}", "hi"],
         ("tokenizers.json",),
         prepare=copy_of("translation", lambda r: (r / "tokenizers.json").unlink())),
    Case("lm-vocabulary-corrupt", "damaged run",
         ["generate", "{copy}", "--prefix", "the", "--length", "3"], ("vocabulary.json",),
         prepare=copy_of("lm", lambda r: (r / "vocabulary.json").write_text("garbage"))),
    Case("tagging-words-missing", "damaged run", ["predict", "{copy}", "Mary went"],
         ("words.txt",), prepare=copy_of("tagging", lambda r: (r / "words.txt").unlink())),
    # resume with changed arguments
    Case("resume-changed-max-length", "resume", ["train", "sentiment", "--out", "{sent}",
                                                 "--resume", "--set",
                                                 "tokenizer.max_length=50"],
         ("tokenizer.max_length",)),
    Case("resume-changed-label-column", "resume", ["train", "sentiment", "--out", "{sent}",
                                                   "--resume", "--label-column", "text"],
         ("data.label_column",)),
    Case("resume-and-overwrite", "resume", ["train", "sentiment", "--out", "{sent}",
                                            "--resume", "--overwrite"],
         ("give one of them",)),
    Case("resume-as-another-task", "resume", ["train", "sentiment", "--out", "{lm}",
                                              "--resume"], ("belongs to task 'lm'",)),
    # sizes that cannot fit
    Case("units-huge", "size", [*S, "--out", "{tmp}/r", "--set", "encoder.units=1000000"],
         ("encoder.units", "at most")),
    Case("batch-huge", "size", [*S, "--out", "{tmp}/r", "--set",
                                "train.batch_size=100000000"], ("train.batch_size",)),
    Case("vocabulary-huge", "size", [*S, "--out", "{tmp}/r", "--set",
                                     "tokenizer.max_tokens=100000000"], ("max_tokens",)),
    Case("generate-length-huge", "size", ["generate", "{lm}", "--prefix", "the",
                                          "--length", "10000000"], ("--length",)),
    Case("beam-wider-than-vocabulary", "size", ["translate", "{tr}", "--beam", "100000",
                                                "i like tea"], ("larger than",)),
    # out-of-range options
    Case("temperature-negative", "range", ["generate", "{lm}", "--prefix", "the",
                                           "--temperature", "-1"], ("--temperature",)),
    Case("temperature-nan", "range", ["generate", "{lm}", "--prefix", "the",
                                      "--temperature", "nan"], ("--temperature",)),
    Case("serve-port-out-of-range", "range", ["serve", "{sent}", "--port", "70000"],
         ("--port",)),
    Case("distributed-no-workers", "range", ["distributed", "--workers", "0", "--",
                                             "elman", "train", "lm"], ("--workers",)),
    Case("diagnose-zero-units", "range", ["diagnose", "gradients", "--out", "{tmp}/d",
                                          "--units", "0"], ("--units",)),
    Case("validation-fraction-one", "range", [*S, "--out", "{tmp}/r", "--set",
                                              "data.validation_fraction=1"], ("(0, 1)",)),
    Case("clipnorm-negative", "range", [*S, "--out", "{tmp}/r", "--set",
                                        "train.clipnorm=-1"], ("train.clipnorm",)),
]

CASES += [
    # malformed files
    Case("all-distinct-labels", "malformed file", [*S[:2], "--data", "{in}/all-distinct.tsv",
                                                   "--out", "{tmp}/r"],
         ("every label occurs once: 40 distinct labels in 40 rows", "'label'")),
    Case("fractional-score-labels", "malformed file",
         [*S[:2], "--data", "{in}/scores.csv", "--out", "{tmp}/r"],
         ("scores.csv:2", "fractional")),
    Case("tsv-named-csv", "malformed file", [*S[:2], "--data", "{in}/tab-header.csv",
                                             "--out", "{tmp}/r"], ("holds tabs",)),
    Case("tsv-ragged-row", "malformed file", [*S[:2], "--data", "{in}/ragged.tsv",
                                              "--out", "{tmp}/r"], ("ragged.tsv:3",)),
    Case("csv-in-utf16", "malformed file", [*S[:2], "--data", "{in}/utf16.csv", "--out",
                                            "{tmp}/r"], ("not valid UTF-8",)),
    Case("json-array-not-lines", "malformed file", [*S[:2], "--data", "{in}/array.json",
                                                    "--out", "{tmp}/r"],
         ("array.json:1", "JSON object")),
    Case("jsonl-null-label", "malformed file", [*S[:2], "--data", "{in}/null-label.jsonl",
                                                "--out", "{tmp}/r"],
         ("null-label.jsonl:2", "missing label")),
    Case("conll-only-docstart", "malformed file", ["train", "tagging", "--data",
                                                   "{in}/docstart.conll", "--out", "{tmp}/r"],
         ("no sentences",)),
    Case("pairs-spaces-not-tab", "malformed file", ["train", "translation", "--data",
                                                    "{in}/no-tab.tsv", "--out", "{tmp}/r"],
         ("no-tab.tsv:1", "--skip-bad-rows")),
    Case("lm-binary-file", "malformed file", ["train", "lm", "--data", "{in}/gzip.txt",
                                              "--out", "{tmp}/r"], ("not valid UTF-8",)),
    # standard input
    Case("stdin-only-blank-lines", "stdin", ["predict", "{sent}"], ("holds no text",),
         stdin="\n   \n\n"),
    Case("stdin-empty", "stdin", ["predict", "{sent}"], ("holds no text",), stdin=""),
    Case("stdin-not-utf8", "stdin", ["predict", "{sent}"], ("line 2",),
         stdin=b"fine\n\xff\xfe bad\n"),
    Case("stdin-crlf-and-blank", "stdin", ["predict", "{sent}"], stdin="good\r\n\r\nbad\r\n",
         check=lines_out(3, blank_at=(1,))),
    Case("stdin-blank-lines-json", "stdin", ["translate", "{tr}", "--format", "json"],
         stdin="i like tea\n\n\nyou like fish\n", check=lines_out(4, (1, 2), True)),
    Case("stdin-blank-lines-trace", "stdin", ["predict", "{sent}", "--trace"],
         stdin="good\n\nbad\n", check=lambda r: None),
    # options a verb or a task does not use
    Case("predict-with-beam", "unused option", ["predict", "{sent}", "--beam", "2", "hi"],
         ("unrecognized arguments",)),
    Case("generate-with-trace", "unused option", ["generate", "{lm}", "--prefix", "a",
                                                  "--trace"], ("unrecognized arguments",)),
    Case("lm-label-column", "unused option", ["train", "lm", "--label-column", "tag",
                                              "--out", "{tmp}/r"], ("does not apply",)),
    Case("translation-text-column", "unused option",
         ["train", "translation", "--text-column", "en", "--out", "{tmp}/r"],
         ("does not apply",)),
    Case("evaluate-lm-label-column", "unused option", ["evaluate", "{lm}", "--label-column",
                                                       "x"], ("does not apply",)),
    Case("conll-format-for-lm", "unused option", ["predict", "{lm}", "--format", "conll",
                                                  "the"], ("--format conll",)),
    Case("evaluate-trace-on-translation", "unused option", ["evaluate", "{tr}", "--trace"],
         ("language-model runs",)),
    # control characters
    Case("control-chars-in-text", "control characters",
         ["predict", "{sent}", "\x1b[2Jhello\x07"], check=escaped),
    Case("control-chars-in-column", "control characters",
         [*S[:4], "--text-column", "\x1b[31mred", "--out", "{tmp}/r"], ("unknown text",)),
    Case("newline-in-file-name", "control characters",
         [*S[:2], "--data", "{in}/a\nb.csv", "--out", "{tmp}/r"], ("file not found",)),
    Case("nul-on-stdin", "control characters", ["predict", "{sent}"], stdin="go\x00od\n",
         check=escaped),
    Case("control-chars-in-prefix", "control characters",
         ["generate", "{lm}", "--prefix", "\x1b[2Jthe", "--length", "3"], check=escaped),
    # texts longer than the model reads
    Case("truncation-notice", "truncation", ["predict", "{sent}", "hi", LONG],
         check=notice(2, 20, 12)),
    Case("truncation-json-field", "truncation", ["predict", "{sent}", "--format", "json",
                                                 "hi", LONG], check=truncated_json),
]


# ---------------------------------------------------------------- judging

def snapshot(folder):
    """{file: (size, mtime)} of everything under `folder`."""
    out = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            stat = path.stat()
            out[str(path.relative_to(folder))] = (stat.st_size, stat.st_mtime_ns)
    return out


def judge_error(case, result, before, after):
    """Why a bad-input case failed, or None."""
    if result.returncode != 2:
        return f"exit code {result.returncode}, expected 2"
    if "Traceback" in result.stderr:
        return "a traceback was printed"
    lines = [line for line in result.stderr.splitlines() if not NOISE.match(line)]
    errors = [line for line in lines if line.startswith("elman: error:")]
    if len(errors) != 1:
        return f"{len(errors)} error lines, expected 1"
    usage = lines[:lines.index(errors[0])]
    others = [line for line in lines if line != errors[0] and not (
        line in usage and usage[0].startswith("usage:"))]
    if others:
        return f"more than one line: {others[0]!r}"
    if CONTROL.search(errors[0]):
        return "a raw control character in the error line"
    missing = [needle for needle in case.needles if needle not in errors[0]]
    if missing:
        return f"the error line lacks {missing[0]!r}: {errors[0]}"
    changed = sorted(set(before.items()) ^ set(after.items()))
    return f"files were written or changed: {changed[0][0]}" if changed else None


def judge_ok(case, result):
    """Why a case that must work failed, or None."""
    if result.returncode != 0:
        return f"exit code {result.returncode}, expected 0: {result.stderr.strip()[-300:]}"
    if "Traceback" in result.stderr:
        return "a traceback was printed"
    return case.check(result)


def reproduction(case, folder, names):
    """The shell command that repeats a case (after its `prepare`)."""
    argv = [a.format(**names) for a in case.argv]
    command = f"cd {shlex.quote(str(folder))} && "
    if case.stdin is not None:
        data = case.stdin if isinstance(case.stdin, bytes) else case.stdin.encode()
        command += "printf '%b' " + shlex.quote(
            "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02x}" for b in data)) + " | "
    return command + shlex.join(["elman", *argv])


def run_case(case, folder, names):
    """(passed, reason) of one case."""
    if case.prepare is not None:
        case.prepare(folder)
    argv = [a.format(**names) for a in case.argv]
    before = snapshot(folder)
    result = run_elman(argv, cwd=folder, stdin=case.stdin)
    if case.check is not None:
        reason = judge_ok(case, result)
    else:
        reason = judge_error(case, result, before, snapshot(folder))
    return reason is None, reason


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the trial folder")
    parser.add_argument("--only", help="run only the cases whose name holds this word")
    parser.add_argument("--list", action="store_true", help="list the cases and stop")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if not args.only or args.only in c.name]
    if args.list:
        for case in cases:
            print(f"{case.kind:20} {case.name}")
        return 0
    began = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="elman-trial-"))
    paths = write_inputs(folder)
    runs = train_runs(folder, paths)
    names = {"tmp": str(folder / "scratch"), "in": str(folder / "in"),
             "copy": str(folder / "copy"), "sent": str(runs["sentiment"]),
             "lm": str(runs["lm"]), "tr": str(runs["translation"]),
             "tag": str(runs["tagging"])}
    failed = []
    for case in cases:
        passed, reason = run_case(case, folder, names)
        print(f"{'ok  ' if passed else 'FAIL'} {case.kind:18} {case.name}"
              + ("" if passed else f": {reason}"), flush=True)
        if not passed:
            failed.append((case, reason))
    print(f"\n{len(cases)} cases tried, {len(cases) - len(failed)} passed "
          f"(exit code 2 with one error line and nothing written, or the documented "
          f"success), {len(failed)} failed; {time.perf_counter() - began:.0f} s")
    for case, reason in failed:
        print(f"\nFAIL {case.name}: {reason}\n  {reproduction(case, folder, names)}")
        if case.prepare is not None:
            print(f"  (after the script's `prepare`: a damaged copy of a run in {names['copy']})")
    if failed or args.keep:
        print(f"\nthe trial folder is kept: {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
