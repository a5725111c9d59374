"""Texts in and results out for the `elman` commands: texts from arguments or standard
input, one output line per input line, `notice:` lines for truncated texts, and control
characters shown escaped on a terminal."""

import json
import sys

from elman.errors import UserError


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
    if not any(line.strip() for line in lines):
        raise UserError("standard input holds no text")
    return lines  # blank lines kept: one output line per input line


def _predict_lines(predict, texts, from_stdin):
    """Predictions of the texts; from standard input, None where a line was blank (one
    output line per input line), while a blank argument is an error like any bad text."""
    if not from_stdin:
        return predict(texts)
    keep = [i for i, text in enumerate(texts) if text.strip()]
    found = dict(zip(keep, predict([texts[i] for i in keep])))
    return [found.get(i) for i in range(len(texts))]


def _terminal_safe(text):
    """Control characters and escape sequences from input, shown escaped on a terminal."""
    return "".join(c if c in "\t\n" or (ord(c) >= 32 and ord(c) != 127 and
                                        not 0x80 <= ord(c) < 0xa0)
                   else repr(c)[1:-1] for c in text)


def _print_predictions(predictor, predictions, fmt):
    if fmt == "conll" and not hasattr(predictor, "format_conll"):
        raise UserError(f"--format conll is for tagging runs; this is a {predictor.task} run")
    if fmt == "conll":  # CoNLL: sentence blocks separated by one blank line
        print("\n\n".join(_terminal_safe(predictor.format_conll(p).rstrip("\n"))
                          for p in predictions if p is not None))
        return
    for prediction in predictions:
        if prediction is None:  # a blank input line
            print("null" if fmt == "json" else "")
        elif fmt == "json":
            print(json.dumps(prediction, ensure_ascii=False))
        else:
            print(_terminal_safe(predictor.format_text(prediction)))


def _notice_truncated(results, numbers, what="text"):
    """One `notice:` line on standard error per result whose text the model read only in
    part ("truncated" set); `numbers` are the texts' numbers (lines of standard input)."""
    for number, result in zip(numbers, results):
        cut = (result or {}).get("truncated")
        if cut:
            print(f"notice: {what} {number} has {cut['tokens']} tokens; the model reads the "
                  f"{cut.get('kept', 'first')} {cut['read']}", file=sys.stderr)


def _show_predictions(predictor, predictions, fmt, from_stdin):
    _notice_truncated(predictions, range(1, len(predictions) + 1),
                      "line" if from_stdin else "text")
    _print_predictions(predictor, predictions, fmt)


def _show_traces(predictor, texts, traces, fmt, from_stdin):
    numbers = [i for i, text in enumerate(texts, start=1) if text.strip()]
    _notice_truncated(traces, numbers, "line" if from_stdin else "text")
    _print_traces(predictor, traces, fmt)


def _print_traces(predictor, traces, fmt):
    if fmt == "conll":
        raise UserError("--trace prints a table (--format text) or JSON (--format json)")
    for k, trace in enumerate(traces):
        if fmt == "json":
            print(json.dumps(trace, ensure_ascii=False))
        else:
            print(("\n" if k else "") + predictor.format_trace(trace))
