"""The data stage: read labelled text from local files or the Hugging Face hub, validated.

Every example keeps where it came from ("file:line"), malformed rows raise a
`UserError` naming the file and line (or are skipped, counted and listed when the
user asks for it), and nothing is dropped silently.
"""

import csv
import dataclasses
import io
import json
from pathlib import Path

from elman.core.columns import LABEL_COLUMNS, TEXT_COLUMNS, is_number, resolve_columns
from elman.core.encodings import decode
from elman.core.folders import read_class_folders
from elman.core.hub import hub_parts, load_hub
from elman.core.split import Split, carve, sha256
from elman.errors import UserError

_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".txt": "labeled-lines",
}


@dataclasses.dataclass
class Example:
    """One labelled text and where it came from."""

    text: str
    label: str
    where: str


def texts(split):
    """The texts of a classification split, in order."""
    return [e.text for e in split.items]


def labels(split):
    """The labels of a classification split, in order."""
    return [e.label for e in split.items]


def read_text_file(path, encoding="utf-8"):
    """Reads a text file (UTF-8 unless told); a missing, empty or undecodable file is a
    UserError."""
    path = Path(path)
    if not path.exists():
        raise UserError("file not found", path=path)
    if not path.is_file():
        raise UserError("expected a file, found a folder", path=path)
    text = decode(path, path.read_bytes(), encoding)
    if not text.strip():
        raise UserError("file is empty; expected at least one example", path=path)
    return text


def detect_format(path, fmt="auto"):
    """Returns the file format name from the extension when `fmt` is "auto" (a folder:
    "folders", one subfolder per class)."""
    if fmt != "auto":
        return fmt
    if Path(path).is_dir():
        return "folders"
    suffix = Path(path).suffix.lower()
    if suffix not in _EXTENSIONS:
        raise UserError(
            f"cannot tell the format from the extension '{suffix}'; expected one of "
            f"{', '.join(sorted(_EXTENSIONS))} or set data.format",
            path=path,
        )
    return _EXTENSIONS[suffix]


class _Rows:
    """Collects rows and bad rows while reading one file."""

    def __init__(self, path, skip_bad_rows):
        self.path = str(path)
        self.skip_bad_rows = skip_bad_rows
        self.examples = []
        self.skipped = []
        self.columns_found = {}  # role → column, where a default column was looked for
        self.headerless = None  # {"label": column, "text": [columns]}, 1-based, if no header

    def bad(self, line, reason):
        if not self.skip_bad_rows:
            raise UserError(reason + " (use --skip-bad-rows to skip such rows)",
                            path=self.path, line=line)
        self.skipped.append((f"{self.path}:{line}", reason))

    def add(self, line, text, label):
        if text is not None and not isinstance(text, str):
            return self.bad(line, f"the text is a {type(text).__name__}, not a string")
        if isinstance(label, (list, dict)):
            return self.bad(line, f"the label is a {type(label).__name__}, not a single value")
        if text is None or not str(text).strip():
            return self.bad(line, "empty text")
        if label is None or not str(label).strip():
            return self.bad(line, "missing label")
        self.examples.append(Example(str(text).strip(), str(label).strip(), f"{self.path}:{line}"))


def _open_quote(physical_lines, start, end, delimiter, width):
    """The line of a quote left open, when a record absorbed lines that read as rows.

    A quoted field may hold line breaks; its inner lines (before the closing quote's
    line) are taken for absorbed rows when one holds no quote and splits into exactly
    the header's fields, none empty.
    """
    for number in range(start + 1, min(end, len(physical_lines) + 1)):
        inner = physical_lines[number - 1]
        if '"' in inner:
            continue
        fields = inner.split(delimiter)
        if len(fields) == width and all(f.strip() for f in fields):
            return number
    return None


def _read_delimited(rows, text, delimiter, text_column, label_column):
    # in a TSV a quote is an ordinary character (a field cannot hold a tab or a newline)
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting)
    physical_lines = text.splitlines()
    try:
        header = next(reader)
    except (StopIteration, csv.Error) as err:
        raise UserError(f"cannot read the header: {err}", path=rows.path, line=1) from None
    header = [h.strip() for h in header]
    label_index = _headerless_label(header, text_column, label_column)
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated and label_index is None:
        raise UserError(f"the header names column '{repeated[0]}' more than once; give each "
                        "column its own name", path=rows.path, line=1)
    if label_index is None:
        text_column, label_column = resolve_columns(rows, header, text_column, label_column)
        text_indices, li = [header.index(text_column)], header.index(label_column)
    else:  # the first line is a row: `"2","Great CD","My lovely Pat ..."`
        li = label_index
        text_indices = [i for i in range(len(header)) if i != li]
        rows.headerless = {"label": li + 1, "text": [i + 1 for i in text_indices]}
        rows.add(1, _joined(header, text_indices), header[li])
    line = reader.line_num
    while True:
        start = line + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            raise UserError(f"malformed row: {err}", path=rows.path, line=start) from None
        line = reader.line_num
        if line > start and delimiter != "\t":
            absorbed = _open_quote(physical_lines, start, line, delimiter, len(header))
            if absorbed is not None:
                rows.bad(start, f"a quote opened here is not closed before line {absorbed}, "
                                f"which reads as a row of its own (the record runs to line "
                                f"{line}); close the quote or double it (\"\")")
                continue
        if not record or all(not f.strip() for f in record):
            continue  # a blank line is not a row
        if len(record) != len(header):
            rows.bad(start, f"expected {len(header)} fields ({', '.join(header)}), "
                            f"found {len(record)}")
            continue
        rows.add(start, _joined(record, text_indices), record[li])
    return rows


def _joined(fields, indices):
    """The text of a row: its text fields, stripped and joined by a space (empty ones
    left out), so a headerless file's title and body read as one text."""
    return " ".join(f for f in (fields[i].strip() for i in indices) if f)


def _headerless_label(header, text_column, label_column):
    """The label's column index when a CSV/TSV has no header line (the Yelp and Amazon
    polarity and AG News layouts: `"2","review"` or `"2","title","review"`), else None.

    Only with the default column names, when the first line names none of the usual
    columns and its first (else its last) field is a number: that field's column is
    the label and the other columns, joined by a space, the text.
    """
    if (text_column, label_column) != ("text", "label") or len(header) < 2:
        return None
    if any(h in TEXT_COLUMNS or h in LABEL_COLUMNS for h in header):
        return None
    for index in (0, len(header) - 1):
        if is_number(header[index]):
            return index
    return None


def _read_jsonl(rows, text, text_column, label_column):
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            rows.bad(number, f"not valid JSON: {err.msg}")
            continue
        if not isinstance(record, dict):
            rows.bad(number, "expected a JSON object per line")
            continue
        if not rows.examples and not rows.skipped:
            text_column, label_column = resolve_columns(rows, list(record), text_column,
                                                         label_column)
        missing = [c for c in (text_column, label_column) if c not in record]
        if missing:
            rows.bad(number, f"missing field '{missing[0]}'")
            continue
        rows.add(number, record[text_column], record[label_column])
    return rows


def _read_labeled_lines(rows, text):
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.strip().split(None, 1)
        if len(parts) < 2:
            rows.bad(number, "expected '<label> <text>'")
            continue
        rows.add(number, parts[1], parts[0])
    return rows


def _read_parquet(rows, path, text_column, label_column):
    import pandas

    try:
        frame = pandas.read_parquet(path)
    except Exception as err:  # pyarrow raises several types for a bad file
        raise UserError(f"cannot read Parquet: {err}", path=path) from None
    if frame.empty:
        raise UserError("file is empty; expected at least one example", path=path)
    text_column, label_column = resolve_columns(rows, list(frame.columns), text_column,
                                                 label_column)
    for number, (text, label) in enumerate(
        zip(frame[text_column].tolist(), frame[label_column].tolist()), start=1
    ):
        if label is None or (isinstance(label, float) and label != label):
            rows.bad(number, "missing label (row number counts data rows)")
            continue
        rows.add(number, text, label)
    return rows


def read_labeled_file(path, fmt="auto", text_column="text", label_column="label",
                      skip_bad_rows=False, name="train", encoding="utf-8"):
    """Reads one file of labelled texts into a `Split`.

    Args:
        path: str or Path, a CSV, TSV, JSONL, Parquet or `<label> <text>` lines file, or
            a folder with one subfolder per class and one text per file (`core.folders`).
        fmt: str, the format or "auto" to use the extension. Default "auto".
        text_column: str, the text column (ignored for labelled lines). Default "text";
            a file without a `text` column is read by the one of `TEXT_COLUMNS` it has
            (`review`, `sentence`, ...), recorded in the Split's `counts["columns_found"]`.
        label_column: str, the label column. Default "label"; likewise `LABEL_COLUMNS`.
        skip_bad_rows: bool, skip malformed rows (counted) instead of failing. Default False.
        name: str, the split name. Default "train".
        encoding: str, the text encoding of the file(s). Default "utf-8".
    """
    path = Path(path)
    if not path.exists():
        raise UserError("file not found", path=path)
    fmt = detect_format(path, fmt)
    if path.is_dir() != (fmt == "folders"):
        raise UserError("expected a folder with one subfolder per class (data.format=folders)"
                        if path.is_file() else
                        f"expected a file, found a folder (data.format={fmt}; a folder is read "
                        "as one subfolder per class with data.format=auto or folders)",
                        path=path)
    rows = _Rows(path, skip_bad_rows)
    counts = {}
    if fmt == "folders":
        digest, counts["folders"] = read_class_folders(rows, path, encoding)
    elif fmt == "parquet":
        _read_parquet(rows, path, text_column, label_column)
    else:
        text = read_text_file(path, encoding)
        if fmt in ("csv", "tsv"):
            _read_delimited(rows, text, "," if fmt == "csv" else "\t", text_column, label_column)
        elif fmt == "jsonl":
            _read_jsonl(rows, text, text_column, label_column)
        else:
            _read_labeled_lines(rows, text)
    if not rows.examples:
        raise UserError("no usable examples in the file", path=path)
    if rows.columns_found:
        counts["columns_found"] = rows.columns_found
    if rows.headerless:
        counts["headerless"] = rows.headerless
    return Split(name, rows.examples, str(path), digest if fmt == "folders" else sha256(path),
                 rows.skipped, counts)


def load_hub_splits(name, config, splits, text_column, label_column):
    """Loads splits of a hub dataset as Splits; fails fast (no retries) when offline.

    Args:
        name: str, the dataset name on the hub (or a local dataset script/folder).
        config: str, the configuration name ("" for none).
        splits: dict of our split name → hub split name ("" to skip).
        text_column, label_column: str, the columns to use.
    """
    loaded = load_hub(name, config, "--data train.csv --validation valid.csv --test test.csv "
                              "(CSV/TSV/JSONL/Parquet or '<label> <text>' lines)")
    out = {}
    for ours, theirs, part, source in hub_parts(loaded, name, splits):
        rows = _Rows(source, False)
        text_col, label_col = resolve_columns(rows, part.column_names, text_column,
                                               label_column)
        names = getattr(part.features[label_col], "names", None)
        for i, record in enumerate(part, start=1):
            label = record[label_col]
            if names is not None and isinstance(label, int) and label >= 0:
                label = names[label]
            rows.add(i, record[text_col], label)
        out[ours] = Split(ours, rows.examples, source, "",
                          counts={"columns_found": rows.columns_found} if rows.columns_found
                          else {})
    return out


def _check_label_kinds(split):
    """Refuses labels that mix numbers and words (`1` among `positive`/`negative`): the
    odd ones out would silently train as extra classes."""
    numeric = [e for e in split.items if is_number(e.label)]
    if numeric and len(numeric) < len(split.items):
        words = [e for e in split.items if e not in numeric]
        odd = numeric if len(numeric) <= len(words) else words
        where = odd[0].where
        path, _, line = where.rpartition(":")
        raise UserError(
            f"label '{odd[0].label}' is a {'number' if odd is numeric else 'word'} among "
            f"{'words' if odd is numeric else 'numbers'} ({len(odd)} such rows; labels seen: "
            f"{', '.join(sorted({e.label for e in split.items})[:8])}); use one kind of label",
            path=path, line=int(line) if line.isdigit() else None)


def _label_column_hint(data, values, column):
    """What the label values look like and how to choose another label column."""
    fmt = "hub" if data.train.startswith("hub:") else detect_format(data.train, data.format)
    words = sorted(len(v.split()) for v in values)
    looks = ("; its values read like text" if words[len(words) // 2] >= 3 else
             "; its values look like ids or numbers" if all(map(is_number, values)) else "")
    if fmt == "folders":
        return "; each subfolder is one class: put several texts (files) in each"
    if fmt == "labeled-lines":
        return looks + ("; in '<label> <text>' lines the first word is the label: is this "
                        "a file of labelled lines?")
    return looks + (f"; is '{column}' the label column? choose another with "
                    "--label-column")


def _check_label_column(split, data):
    """Refuses a label column that cannot be a classifier's labels: fractional scores,
    or (nearly) every row a label of its own (an id or the text in the label column)."""
    values = [e.label for e in split.items]
    column = split.counts.get("columns_found", {}).get("label", data.label_column)
    counts = {}
    for label in values:
        counts[label] = counts.get(label, 0) + 1
    n, distinct = len(values), len(counts)
    fractional = [e for e in split.items if is_number(e.label) and "." in e.label
                  and float(e.label) != int(float(e.label))]
    if distinct > 10 and fractional and all(map(is_number, counts)):
        path, _, line = fractional[0].where.rpartition(":")
        low, high = min(map(float, counts)), max(map(float, counts))
        raise UserError(
            f"label '{fractional[0].label}' is a fractional number: column "
            f"'{column}' holds {distinct} distinct numbers from {low:g} to "
            f"{high:g}, scores rather than classes; bin them into a few classes first",
            path=path, line=int(line) if line.isdigit() else None)
    singles = sum(1 for c in counts.values() if c == 1)
    if not ((n >= 3 and distinct == n) or (n >= 20 and singles * 2 > n)):
        return
    once = [v for v, c in counts.items() if c == 1]
    shown = ", ".join(repr(v if len(v) <= 30 else v[:27] + "...") for v in once[:3])
    what = (f"every label occurs once: {n} distinct labels in {n} rows" if distinct == n else
            f"{singles} of {n} rows have a label no other row has ({distinct} distinct "
            f"labels in {n} rows)")
    raise UserError(f"{what}, e.g. {shown}; a classifier needs several examples of each "
                    f"label{_label_column_hint(data, list(counts), column)}",
                    path=split.source)


def load_classification_splits(data, seed):
    """Loads train/validation/test for a classification task from a DataConfig.

    Returns:
        dict with keys "train", "validation" and (when given) "test", each a Split.
        Labels in validation/test that train never saw raise a UserError.
    """
    if not data.train:
        raise UserError("no training data: give --data FILE (or hub:NAME) or set data.train")
    if data.train.startswith("hub:"):
        splits = load_hub_splits(
            data.train[4:], data.hub_config,
            {"train": data.hub_train_split, "validation": data.hub_validation_split,
             "test": data.hub_test_split},
            data.text_column, data.label_column,
        )
    else:
        splits = {"train": read_labeled_file(data.train, data.format, data.text_column,
                                             data.label_column, data.skip_bad_rows, "train",
                                             data.encoding)}
    for name in ("validation", "test"):
        path = getattr(data, name)
        if path:
            splits[name] = read_labeled_file(path, data.format, data.text_column,
                                             data.label_column, data.skip_bad_rows, name,
                                             data.encoding)
    _check_label_column(splits["train"], data)  # before carving: its message is the cause
    _check_label_kinds(splits["train"])
    if "validation" not in splits:
        splits["train"], splits["validation"] = carve(
            splits["train"], data.validation_fraction, seed, stratify=lambda e: e.label)
    known = set(labels(splits["train"]))
    for name in ("validation", "test"):
        if name in splits:
            for example in splits[name].items:
                if example.label not in known:
                    path, _, line = example.where.rpartition(":")
                    raise UserError(
                        f"label '{example.label}' never appears in the training data "
                        f"(train labels: {', '.join(sorted(known))})",
                        path=path, line=int(line) if line.isdigit() else None,
                    )
    return splits
