"""The `elman` command: subcommands only parse arguments and dispatch to the tasks.

User errors print one line (`elman: error: FILE:LINE: what is wrong`) and exit with
code 2, without a traceback. Heavy imports (TensorFlow) happen after parsing, so
`elman --help` is instant.
"""

import argparse
import errno
import json
import os
import sys
import textwrap
from pathlib import Path

from elman.cli_io import (_predict_lines, _print_traces, _read_inputs, _show_predictions,
                          _show_traces, _terminal_safe)
from elman.errors import UserError

_NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _no_space_message(err):
    """One line for a write that failed for lack of space: what, where, how much is left."""
    import shutil

    where = Path(err.filename or ".")
    folder = where if where.is_dir() else where.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    return (f"cannot write {err.filename or 'a file'}: {err.strerror} ({free / 2**20:,.0f} MiB "
            f"free on that disk); the last committed epoch is kept: free space, then run "
            "again with --resume")


def _check_bounds(*options):
    """Refuses a size option outside [low, high]: (flag, value, low, high) each."""
    for flag, value, low, high in options:
        if not low <= value <= high:
            raise UserError(f"{flag} must be between {low:,} and {high:,}; got {value:,}")


def _quiet_tensorflow():
    from elman.api import quiet_tensorflow

    quiet_tensorflow()


def cmd_train(args):
    from elman import api

    for flag, value in (("--out", args.out), ("--reports", args.reports)):
        if value is not None and not value.strip():  # an unset shell variable, say
            raise UserError(f"{flag} is empty; give a folder (or leave {flag} out)")

    api.train(args.task, config=args.config, data=args.data, validation=args.validation,
              test=args.test, out=args.out, overrides=args.set, resume=args.resume,
              overwrite=args.overwrite,
              reports=args.reports, diagnose=args.diagnose, text_column=args.text_column,
              label_column=args.label_column, skip_bad_rows=args.skip_bad_rows,
              repair_bio=args.repair_bio, strategy=args.strategy,
              mixed_precision=args.mixed_precision)
    return 0


def cmd_evaluate(args):
    from elman import api

    if args.trace:  # language models: per-token surprisal on the file
        if api.run_task_name(args.run) != "lm":
            raise UserError(f"evaluate --trace is for language-model runs; this is a "
                            f"{api.run_task_name(args.run)} run (use predict --trace)")
        predictor = api.load(args.run)
        _print_traces(predictor, [predictor.trace_file(args.data)],
                      "json" if args.json else "text")
        return 0
    log = (lambda line: print(line, file=sys.stderr)) if args.json else print  # --json: JSON alone
    result = api.evaluate(args.run, data=args.data, text_column=args.text_column,
                          label_column=args.label_column, log=log)
    interval = result.extra.get("interval")
    if interval:  # how much of the score is down to the sample (elman.core.intervals)
        digits = 4 if abs(interval["score"]) <= 1 else 2
        log(f"{interval['metric']}: {interval['level']:.0%} bootstrap interval "
            f"{interval['low']:.{digits}f}-{interval['high']:.{digits}f} over the "
            f"{interval['units']:,} {interval['unit']} ({interval['resamples']:,} resamples)")
    if args.json:
        print(json.dumps(result.scores, indent=1, sort_keys=True))
    return 0


def cmd_compare(args):
    from elman.core.compare import compare_reports, comparison_lines

    result = compare_reports(args.report_a, args.report_b)
    print(json.dumps(result, indent=1, sort_keys=True) if args.json
          else "\n".join(comparison_lines(result)))
    return 0


def cmd_predict(args):
    from elman import api

    api.run_task_name(args.run)  # a bad run folder is reported before reading stdin
    texts = _read_inputs(args.texts)
    predictor = api.load(args.run)
    if args.trace:
        _show_traces(predictor, texts, predictor.trace([t for t in texts if t.strip()]),
                     args.format, not args.texts)
    else:
        _show_predictions(predictor, _predict_lines(predictor.predict, texts, not args.texts),
                          args.format, not args.texts)
    return 0


def cmd_translate(args):
    from elman import api

    if api.run_task_name(args.run) != "translation":
        raise UserError(f"this is a {api.run_task_name(args.run)} run; expected a "
                        "translation run", path=args.run)
    texts = _read_inputs(args.texts)
    predictor = api.load(args.run)
    if args.trace:
        _show_traces(predictor, texts, predictor.trace([t for t in texts if t.strip()],
                                                       beam=args.beam), args.format,
                     not args.texts)
    else:
        _show_predictions(predictor, _predict_lines(
            lambda batch: predictor.predict(batch, beam=args.beam), texts, not args.texts),
            args.format, not args.texts)
    return 0


def cmd_generate(args):
    from elman import api

    if api.run_task_name(args.run) != "lm":
        raise UserError(f"this is a {api.run_task_name(args.run)} run; expected an lm run",
                        path=args.run)
    _check_bounds(("--length", args.length, 1, 100_000))
    if not 0.0 <= args.temperature <= 100.0:
        raise UserError(f"--temperature must be between 0 and 100; got {args.temperature:g}")
    predictor = api.load(args.run)
    result = predictor.generate(args.prefix, args.length, temperature=args.temperature,
                                seed=args.seed)
    if args.format == "json":
        print(json.dumps(result, ensure_ascii=False))
    else:
        if result.get("unknown"):
            print(f"note: {len(result['unknown'])} prefix token(s) not in the vocabulary, "
                  "read as [UNK]: " + " ".join(repr(t) for t in result["unknown"][:10]),
                  file=sys.stderr)
        print(_terminal_safe(result["text"]))
    return 0


def cmd_textbook(args):
    from elman.core.runs import check_writable

    if args.out is not None:
        check_writable(args.out, "--out")
    _check_bounds(("--length", args.length, 2, 10_000), ("--units", args.units, 1, 4_096))
    _quiet_tensorflow()
    from elman.tasks.textbook import runner

    return runner.run(args.json, args.out)


def cmd_diagnose(args):
    from elman.core.runs import check_writable

    check_writable(args.out, "--out")
    _check_bounds(("--length", args.length, 2, 10_000), ("--units", args.units, 1, 4_096))
    _quiet_tensorflow()
    from elman.core import diagnostics

    return diagnostics.run_gradients(out=args.out, length=args.length, units=args.units,
                                     seed=args.seed, clip_norm=args.clip_norm,
                                     cells=args.cells)


def cmd_distributed(args):
    from elman.core import distributed

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    _check_bounds(("--workers", args.workers, 1, 64))
    if not 0 < args.deadline < float("inf"):
        raise UserError(f"--deadline must be a positive number of seconds; got {args.deadline:g}")
    if args.logs:
        from elman.core.runs import check_writable

        check_writable(args.logs, "--logs")
    return distributed.run_launcher(command, args.workers, args.deadline, args.logs)


def cmd_demo(args):
    _quiet_tensorflow()
    from elman import demo

    return demo.run_demo(reports_root=args.reports, runs_root=args.runs, only=args.only)


def cmd_serve(args):
    _check_bounds(("--port", args.port, 0, 65_535))
    _quiet_tensorflow()
    import os

    from elman.serve import server

    return server.run(args.runs, host=args.host, port=args.port, max_batch=args.max_batch,
                      max_wait_ms=args.max_wait_ms, max_batch_request=args.max_batch_request,
                      max_text_chars=args.max_text_chars, reports=args.reports,
                      api_key=args.api_key or os.environ.get("ELMAN_API_KEY") or None)


def cmd_bench(args):
    _quiet_tensorflow()
    from elman.bench import suite as bench

    return bench.run_bench(args)


def _add_train(sub):
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
    p.add_argument("--overwrite", action="store_true",
                   help="replace the run already in --out (otherwise refused)")
    p.add_argument("--skip-bad-rows", action="store_true",
                   help="skip malformed rows (counted and listed in the report)")
    p.add_argument("--repair-bio", action="store_true",
                   help="tagging: read a stray I-X (after O or another type) as B-X; counted "
                        "in the report")
    p.add_argument("--strategy", choices=["default", "mirrored", "multi-worker"])
    p.add_argument("--mixed-precision", choices=["none", "float16", "bfloat16"])
    p.add_argument("--diagnose", action="store_true", help="add gradient-flow diagnostics")
    p.set_defaults(func=cmd_train)


def _add_evaluate(sub):
    p = sub.add_parser("evaluate", help="score a saved run on labelled data")
    p.add_argument("run")
    p.add_argument("--data", help="labelled file (default: the run's test file)")
    p.add_argument("--text-column")
    p.add_argument("--label-column")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.add_argument("--trace", action="store_true",
                   help="language models: each token's surprisal in bits on the file")
    p.set_defaults(func=cmd_evaluate)


def _add_compare(sub):
    p = sub.add_parser("compare", help="two runs' reports (or run folders) on the same "
                       "split: a paired bootstrap of the difference in their main score")
    p.add_argument("report_a")
    p.add_argument("report_b")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=cmd_compare)


def _add_predict(sub):
    p = sub.add_parser("predict", help="run a saved model on raw text (args or stdin)")
    p.add_argument("run")
    p.add_argument("texts", nargs="*")
    p.add_argument("--format", default="text", choices=["text", "json", "conll"])
    p.add_argument("--trace", action="store_true",
                   help="show how the judgment moves token by token (a table; JSON with "
                        "--format json)")
    p.set_defaults(func=cmd_predict)


def _add_translate(sub):
    p = sub.add_parser("translate", help="translate sentences with a saved run")
    p.add_argument("run")
    p.add_argument("texts", nargs="*")
    p.add_argument("--beam", type=int, default=0, help="beam width (0: greedy)")
    p.add_argument("--format", default="text", choices=["text", "json"])
    p.add_argument("--trace", action="store_true",
                   help="each output token's probability and attention over the source")
    p.set_defaults(func=cmd_translate)


def _add_generate(sub):
    p = sub.add_parser("generate", help="generate text with a saved language model")
    p.add_argument("run")
    p.add_argument("--prefix", required=True)
    p.add_argument("--length", type=int, default=50)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--format", default="text", choices=["text", "json"])
    p.set_defaults(func=cmd_generate)


def cmd_presets(args):
    from elman import api, tasks

    names = [args.task] if args.task else tasks.names()
    listed = {task: api.presets(task) for task in names}  # an unknown task: UserError
    if args.format == "json":
        print(json.dumps(listed, ensure_ascii=False, indent=1))
        return 0
    for task, presets in listed.items():
        for name, about in presets.items():
            command = f"elman train {task}" + ("" if name == "default" else f" --config {name}")
            print(command)
            print(textwrap.fill(about, 92, initial_indent="    ", subsequent_indent="    "))
    return 0


def _add_presets(sub):
    p = sub.add_parser("presets", help="the presets of every task (or of TASK), described")
    p.add_argument("task", nargs="?", help="sentiment, tagging, translation or lm")
    p.add_argument("--format", default="text", choices=["text", "json"])
    p.set_defaults(func=cmd_presets)


def _add_textbook(sub):
    p = sub.add_parser("textbook", help="reproduce the textbook cases A-G")
    p.add_argument("--json", action="store_true", help="print the run record as JSON")
    p.add_argument("--out", help="report folder (default reports/textbook)")
    p.set_defaults(func=cmd_textbook)


def _add_diagnose(sub):
    p = sub.add_parser("diagnose", help="gradient-flow diagnostics")
    p.add_argument("what", choices=["gradients"])
    p.add_argument("--out", default="reports/diagnostics")
    p.add_argument("--length", type=int, default=120)
    p.add_argument("--units", type=int, default=32)
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--clip-norm", type=float, default=1.0,
                   help="global-norm clipping threshold (default 1.0)")
    p.add_argument("--cells", default="rnn,lstm,gru",
                   help="comma-separated cells among rnn,lstm,gru (default all)")
    p.set_defaults(func=cmd_diagnose)


def _add_distributed(sub):
    p = sub.add_parser("distributed",
                       help="run a command as N multi-worker processes on this machine")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--deadline", type=float, default=3600.0, help="seconds")
    p.add_argument("--logs", default=None, help="folder for worker-N.log")
    p.add_argument("command", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_distributed)


def _add_demo(sub):
    p = sub.add_parser("demo", help="train every task on the toy data and write reports")
    p.add_argument("--reports", default="reports")
    p.add_argument("--runs", default="runs")
    p.add_argument("--only", action="append", help="run only these parts")
    p.set_defaults(func=cmd_demo)


def _add_serve(sub):
    p = sub.add_parser("serve", help="serve runs over HTTP: a JSON API and a web page")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders (model name: folder name)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                   "127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free)")
    p.add_argument("--max-batch", type=int, default=64,
                   help="texts merged into one model call (default 64; 1: batching off)")
    p.add_argument("--max-wait-ms", type=float, default=5.0,
                   help="how long a batch waits for more requests (default 5)")
    p.add_argument("--max-batch-request", type=int, default=64,
                   help="instances one request may hold (default 64)")
    p.add_argument("--max-text-chars", type=int, default=10_000,
                   help="characters one text may hold (default 10000)")
    p.add_argument("--reports", default="reports", help="reports folder the pages show")
    p.add_argument("--api-key", help="require 'Authorization: Bearer KEY' on /v1 calls "
                   "(default: the ELMAN_API_KEY environment variable)")
    p.set_defaults(func=cmd_serve)


def _add_bench(sub):
    p = sub.add_parser("bench", help="speed benchmarks (ratios measured side by side)")
    p.add_argument("--quick", action="store_true", help="toy data only, fewer repeats")
    p.add_argument("--gpu", action="store_true", help="the GPU check")
    p.add_argument("--core", action="store_true",
                   help="rows 1-3 only (training tokens/s against the reference, input "
                        "pipeline share, FLOP rates): a few minutes")
    p.add_argument("--out", default="reports/bench")
    p.set_defaults(func=cmd_bench)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="elman", description="Recurrent NLP done right: train, evaluate, predict, report.")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_train(sub)
    _add_evaluate(sub)
    _add_compare(sub)
    _add_predict(sub)
    _add_translate(sub)
    _add_generate(sub)
    _add_presets(sub)
    _add_textbook(sub)
    _add_diagnose(sub)
    _add_distributed(sub)
    _add_demo(sub)
    _add_serve(sub)
    _add_bench(sub)
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
        code = args.func(args) or 0
        sys.stdout.flush()  # a closed pipe fails here, inside the try, not at exit
        return code
    except UserError as err:  # one line, whatever a path or a value in it holds
        message = _terminal_safe(str(err)).replace("\n", "\\n")
        print(f"elman: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `elman presets | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error
        return 141  # what a shell reports for a writer stopped by SIGPIPE (128 + 13)
    except OSError as err:
        if err.errno not in _NO_SPACE:
            raise
        print(f"elman: error: {_no_space_message(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("elman: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
