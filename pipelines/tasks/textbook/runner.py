"""`elman textbook`: recomputes Cases A–G, checks every printed value, writes the report.

Every case runs through real Keras layers whose weights are set explicitly
(float64, so that the comparison with exact arithmetic is limited by float64
alone): a ReLU `SimpleRNN` with the given matrices, an `LSTMCell` whose gates are
forced to the given values, a `Bidirectional` layer, a small encoder–decoder and
a small language model. Case A is checked against exact fractions derived
independently by `data/textbook/derive_expected.py`; every value the texts print
(`data/textbook/printed_values.json`) is compared with the computed one and
flagged beyond its printed precision. Printed values are never used as results.

Writes `report.md`, a self-contained `report.html`, PNG plots and `run.json`
(the run record, sorted keys) to the report folder.
"""

import argparse
import json
import platform
import sys
from pathlib import Path

from elman.core.html import render_html, write_text_atomic
from elman.errors import UserError
from elman.tasks.textbook.case_a import case_a
from elman.tasks.textbook.cases_rnn import case_b, case_c, case_d, case_e
from elman.tasks.textbook.cases_training import case_f, case_g
from elman.tasks.textbook.common import DTYPE, read_json, sha256
from elman.tasks.textbook.plots import plot_case_a, plot_case_c
from elman.tasks.textbook.printed import check_printed
from elman.tasks.textbook.report import computed_text, report_markdown

DEFAULT_OUT = Path("reports/textbook")
DEFAULT_DATA = Path("data/textbook")


def _meta(printed_path):
    """Library versions, the device and the printed-values file's hash."""
    import keras
    import numpy as np
    import tensorflow as tf

    return {
        "python": platform.python_version(), "tensorflow": tf.__version__,
        "keras": keras.__version__, "numpy": np.__version__,
        "device": "GPU" if tf.config.list_logical_devices("GPU") else "CPU",
        "dtype": DTYPE,
        "printed_values": {"file": str(printed_path), "sha256": sha256(printed_path)},
    }


def run_textbook(report_dir=DEFAULT_OUT, data_dir=DEFAULT_DATA):
    """Recomputes Cases A–G, checks the printed values, writes the report and the run record.

    Writes `report.md`, `report.html`, `case_a_probs.png`, `case_c_trace.png`,
    `case_e_gradients.png` and `run.json` (sorted keys) to `report_dir`.

    Args:
        report_dir: Path, the output folder. Default Path("reports/textbook").
        data_dir: Path, the folder with case_a.json, case_a_expected.json,
            derive_expected.py and printed_values.json. Default Path("data/textbook").

    Returns:
        dict, the run record: `A`–`G`, `flags`, `checks`, `meta`.

    Example:
        >>> record = run_textbook(Path("reports/textbook"))
        >>> record["A"]["rnn"]["blue key is"]["choice"]
        'blue'
    """
    report_dir, data_dir = Path(report_dir), Path(data_dir)
    printed_path = data_dir / "printed_values.json"
    printed = read_json(printed_path)
    report_dir.mkdir(parents=True, exist_ok=True)

    e = case_e(report_dir)
    flow = e.pop("_flow")
    record = {"A": case_a(data_dir), "B": case_b(), "C": case_c(), "D": case_d(), "E": e,
              "F": case_f(), "G": case_g()}
    record["checks"], record["flags"] = check_printed(record, printed["values"])
    record["meta"] = _meta(printed_path)
    plot_case_a(record["A"], report_dir / "case_a_probs.png")
    plot_case_c(record["C"], report_dir / "case_c_trace.png")
    md = report_markdown({**record, "E": {**e, "_flow": flow}}, record["checks"])
    write_text_atomic(report_dir / "report.md", md)
    write_text_atomic(report_dir / "report.html", render_html("elman — textbook cases", md,
                                                              report_dir))
    write_text_atomic(report_dir / "run.json", record_json(record))
    return record


def record_json(record):
    """The run record as JSON text with sorted keys.

    Args:
        record: dict, from `run_textbook`.

    Returns:
        str, the JSON (indent 1, sorted keys, UTF-8 characters kept), ending in a newline.
    """
    return json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def run(json_out, out, data=None):
    """`elman textbook` without argument parsing: runs, then prints the record or a summary.

    Args:
        json_out: bool, print the run record to stdout (sorted keys) instead of the summary.
        out: str, Path or None, the report folder. None: reports/textbook.
        data: str, Path or None, the data folder. None: data/textbook.

    Returns:
        int, the exit code: 0, or 2 for a user error (bad data file).

    Example:
        >>> run(False, "reports/textbook")
        0
    """
    out = DEFAULT_OUT if out is None else Path(out)
    data = DEFAULT_DATA if data is None else Path(data)
    try:
        record = run_textbook(out, data)
    except UserError as err:
        print(f"elman textbook: {err}", file=sys.stderr)
        return 2
    if json_out:
        sys.stdout.write(record_json(record))
    else:
        print(f"wrote {out / 'report.md'}, {out / 'report.html'}, {out / 'run.json'}")
        print(f"{len(record['flags'])} printed value(s) differ from the computation:")
        for f in record["flags"]:
            print(f"  {f['case']} {f['quantity']}: printed {f['printed']}, computed "
                  f"{computed_text(f['computed'])} (first at step {f['step']})")
    return 0


def main(argv=None):
    """`elman textbook [--json] [--out DIR] [--data DIR]`.

    Args:
        argv: list of str or None, the arguments after `textbook`. Default None (sys.argv[1:]).

    Returns:
        int, the exit code: 0, or 2 for a user error (bad data file).

    Example:
        >>> main(["--out", "reports/textbook"])
        0
    """
    parser = argparse.ArgumentParser(
        prog="elman textbook",
        description="Recompute the course texts' worked examples (Cases A–G) with Keras and "
                    "check every printed value.")
    parser.add_argument("--json", action="store_true",
                        help="print the run record to stdout (sorted keys)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="report folder (default reports/textbook)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="data folder (default data/textbook)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    return run(args.json, args.out, args.data)


if __name__ == "__main__":
    sys.exit(main())
