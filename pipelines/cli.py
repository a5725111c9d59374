"""The `elman` command: subcommands only parse arguments and dispatch to the tasks.

User errors print one line (`elman: error: FILE:LINE: what is wrong`) and exit with
code 2, without a traceback. Heavy imports (TensorFlow) happen after parsing, so
`elman --help` is instant.
"""

import argparse
import importlib
import json
import os
import sys
from pathlib import Path

from elman.errors import UserError

TASKS = {"sentiment": "elman.tasks.sentiment.task"}  # task name → module with train()


def register_task(name, module):
    """Adds a task to the CLI (called by task modules' registration below)."""
    TASKS[name] = module


# Tasks that exist are registered here; each module has train/predict/evaluate.
for _name, _module in (("tagging", "elman.tasks.tagging.task"),
                       ("translation", "elman.tasks.translation.task"),
                       ("lm", "elman.tasks.lm.task")):
    if importlib.util.find_spec(_module) is not None:
        register_task(_name, _module)


def _quiet_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


def _task_module(task):
    if task not in TASKS:
        raise UserError(f"unknown task '{task}'; expected one of {', '.join(sorted(TASKS))}")
    return importlib.import_module(TASKS[task])


def _config_file(task, value):
    if not value:
        return None
    path = Path(value)
    if path.is_file() or path.suffix == ".toml" or "/" in value:
        return path
    from elman.config import preset_path

    preset = preset_path(task, value)
    if not preset.is_file():
        raise UserError(f"no config file or preset named '{value}' for task {task}", path=preset)
    return preset


def _data_overrides(args):
    data = {}
    tagging = getattr(args, "task", None) == "tagging"
    columns = ((("text_column", "tokens_column"), ("label_column", "tag_column")) if tagging
               else (("text_column", "text_column"), ("label_column", "label_column")))
    for flag, key in (("data", "train"), ("validation", "validation"), ("test", "test"),
                      *columns):
        value = getattr(args, flag, None)
        if value:
            data[key] = value
    if "train" in data:  # --data replaces the preset's toy validation/test too
        data.setdefault("validation", "")
        data.setdefault("test", "")
    if getattr(args, "skip_bad_rows", False):
        if tagging:
            raise UserError("--skip-bad-rows is not available for tagging: a sentence cannot "
                            "lose a token; fix the file, or use --repair-bio for stray I-X tags")
        data["skip_bad_rows"] = True
    if getattr(args, "repair_bio", False):
        if not tagging:
            raise UserError("--repair-bio applies to the tagging task only")
        data["repair_bio"] = True
    train = {}
    if getattr(args, "strategy", None):
        train["strategy"] = args.strategy
    if getattr(args, "mixed_precision", None):
        train["mixed_precision"] = args.mixed_precision
    out = {}
    if data:
        out["data"] = data
    if train:
        out["train"] = train
    return out


def cmd_train(args):
    from elman import config as config_lib
    from elman.core import runs

    module = _task_module(args.task)
    if args.resume:
        if not args.out:
            raise UserError("--resume needs --out RUN_DIR (the run folder to continue)")
        saved = Path(args.out) / "config.json"
        if not saved.is_file():
            raise UserError("nothing to resume: no config.json in the run folder", path=args.out)
        values = json.loads(saved.read_text(encoding="utf-8"))
        cfg = config_lib.config_from_dict(args.task, values)
        if args.set:
            cfg = config_lib.load_config(args.task, None, args.set,
                                         extra=config_lib.to_dict(cfg))
    else:
        cfg = config_lib.load_config(args.task, _config_file(args.task, args.config), args.set,
                                     extra=_data_overrides(args))
    run_dir, report_dir, _ = runs.resolve_dirs(args.task, args.out, args.reports)
    cleanup = None
    if cfg.train.strategy == "multi-worker":  # only the chief writes the real folders
        from elman.core.distributed import worker_dirs

        run_dir, report_dir, cleanup = worker_dirs(run_dir, report_dir, resume=args.resume)
    _quiet_tensorflow()
    try:
        module.train(cfg, run_dir, report_dir, resume=args.resume, diagnose=args.diagnose)
    finally:
        if cleanup is not None:
            cleanup()
    return 0


def _run_task(run):
    from elman.core import runs

    path = Path(run)
    if not path.is_dir():
        raise UserError("run folder not found", path=path)
    return runs.read_run(path)["task"]


def cmd_evaluate(args):
    task = _run_task(args.run)
    _quiet_tensorflow()
    overrides = {"data": args.data, "text_column": args.text_column,
                 "label_column": args.label_column}
    result = _task_module(task).evaluate(args.run, overrides)
    if args.json:
        print(json.dumps(result.scores, indent=1, sort_keys=True))
    return 0


def _read_inputs(texts):
    if texts:
        return list(texts)
    if sys.stdin is None or sys.stdin.isatty():
        raise UserError("give texts as arguments or one per line on standard input")
    data = sys.stdin.buffer.read()
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise UserError(f"standard input is not valid UTF-8 (line {line})") from None
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise UserError("standard input holds no text")
    return lines


def cmd_predict(args):
    task = _run_task(args.run)
    texts = _read_inputs(args.texts)
    _quiet_tensorflow()
    module = _task_module(task)
    if task != "sentiment":
        return module.predict_cli(args.run, texts, args)
    labels, probs = module.predict(args.run, texts)
    for text, row in zip(texts, probs):
        best = int(row.argmax())
        if args.format == "json":
            print(json.dumps({"text": text, "label": labels[best],
                              "probabilities": {lab: round(float(p), 6)
                                                for lab, p in zip(labels, row)}},
                             ensure_ascii=False))
        else:
            detail = "  ".join(f"{lab}={float(p):.4f}" for lab, p in zip(labels, row))
            print(f"{labels[best]}\t{detail}\t{text}")
    return 0


def cmd_translate(args):
    texts = _read_inputs(args.texts)
    _quiet_tensorflow()
    return _task_module("translation").translate_cli(args.run, texts, args)


def cmd_generate(args):
    _quiet_tensorflow()
    return _task_module("lm").generate_cli(args.run, args)


def cmd_textbook(args):
    _quiet_tensorflow()
    from elman.tasks.textbook import task as textbook

    argv = (["--json"] if args.json else []) + (["--out", args.out] if args.out else [])
    return textbook.main(argv)


def cmd_diagnose(args):
    _quiet_tensorflow()
    from elman.core import diagnostics

    argv = ["--out", args.out, "--length", str(args.length), "--units", str(args.units)]
    return diagnostics.diagnose_main(argv)


def cmd_demo(args):
    _quiet_tensorflow()
    from elman import demo

    return demo.run_demo(reports_root=args.reports, runs_root=args.runs, only=args.only)


def cmd_bench(args):
    _quiet_tensorflow()
    from elman.bench import suite as bench

    return bench.run_bench(args)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="elman", description="Recurrent NLP done right: train, evaluate, predict, report.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train a model and write its report")
    p.add_argument("task", help="sentiment, tagging, translation or lm")
    p.add_argument("--config", help="a TOML file or a preset name (e.g. sst2)")
    p.add_argument("--data", help="training file, or hub:NAME for a Hugging Face dataset")
    p.add_argument("--validation", help="validation file (default: carved from train)")
    p.add_argument("--test", help="test file")
    p.add_argument("--text-column", help="column with the text (tagging: the tokens key)")
    p.add_argument("--label-column",
                   help="column with the label (tagging: the tag column or key)")
    p.add_argument("--out", help="run folder (default runs/TASK/<time>)")
    p.add_argument("--reports", default="reports", help="reports root (default reports)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a setting, e.g. --set encoder.units=128")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run (--out)")
    p.add_argument("--skip-bad-rows", action="store_true",
                   help="skip malformed rows (counted and listed in the report)")
    p.add_argument("--repair-bio", action="store_true",
                   help="tagging: read a stray I-X (after O or another type) as B-X; counted "
                        "in the report")
    p.add_argument("--strategy", choices=["default", "mirrored", "multi-worker"])
    p.add_argument("--mixed-precision", choices=["none", "float16", "bfloat16"])
    p.add_argument("--diagnose", action="store_true", help="add gradient-flow diagnostics")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("evaluate", help="score a saved run on labelled data")
    p.add_argument("run")
    p.add_argument("--data", help="labelled file (default: the run's test file)")
    p.add_argument("--text-column")
    p.add_argument("--label-column")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("predict", help="run a saved model on raw text (args or stdin)")
    p.add_argument("run")
    p.add_argument("texts", nargs="*")
    p.add_argument("--format", default="text", choices=["text", "json", "conll"])
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("translate", help="translate sentences with a saved run")
    p.add_argument("run")
    p.add_argument("texts", nargs="*")
    p.add_argument("--beam", type=int, default=0, help="beam width (0: greedy)")
    p.set_defaults(func=cmd_translate)

    p = sub.add_parser("generate", help="generate text with a saved language model")
    p.add_argument("run")
    p.add_argument("--prefix", required=True)
    p.add_argument("--length", type=int, default=50)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("textbook", help="reproduce the textbook cases A-G")
    p.add_argument("--json", action="store_true", help="print the run record as JSON")
    p.add_argument("--out", help="report folder (default reports/textbook)")
    p.set_defaults(func=cmd_textbook)

    p = sub.add_parser("diagnose", help="gradient-flow diagnostics")
    p.add_argument("what", choices=["gradients"])
    p.add_argument("--out", default="reports/diagnostics")
    p.add_argument("--length", type=int, default=120)
    p.add_argument("--units", type=int, default=32)
    p.set_defaults(func=cmd_diagnose)

    p = sub.add_parser("demo", help="train every task on the toy data and write reports")
    p.add_argument("--reports", default="reports")
    p.add_argument("--runs", default="runs")
    p.add_argument("--only", action="append", help="run only these parts")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("bench", help="speed benchmarks (ratios measured side by side)")
    p.add_argument("--quick", action="store_true", help="toy data only, fewer repeats")
    p.add_argument("--gpu", action="store_true", help="the GPU check")
    p.add_argument("--out", default="reports/bench")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv=None):
    """Runs the command line; returns the exit code."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # texts after options (`predict RUN --format json "a" "b"`) are still texts
        if hasattr(args, "texts") and not any(e.startswith("-") for e in extra):
            args.texts = list(args.texts) + extra
        else:
            parser.error("unrecognized arguments: " + " ".join(extra))
    try:
        return args.func(args) or 0
    except UserError as err:
        print(f"elman: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("elman: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
