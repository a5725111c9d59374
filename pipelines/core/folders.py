"""Labelled texts laid out as folders: one subfolder per class, one text per file.

This is how whole-document sentiment corpora are usually shipped: the Large Movie Review
Dataset (`aclImdb/train/pos/0_9.txt`, `aclImdb/train/neg/…`, with an unlabelled
`unsup/` beside them), Pang and Lee's polarity corpus (`txt_sentoken/pos/cv000_29590.txt`)
and the layout Keras's `text_dataset_from_directory` reads. `--data aclImdb/train`
reads such a folder: each subfolder's name is its files' label, each file (UTF-8) one
example. A folder named `unsup`, `unlabeled` or `unlabelled` holds no labels and is not
read; files beside the class folders (aclImdb's `urls_pos.txt`, `labeledBow.feat`) are
not read either. Both are counted and named in the report, so nothing is left out silently.
A folder with no subfolders but two files or more holds one class per file and one text
per line: the layout of the MR, CR, SUBJ and MPQA releases (`rt-polarity.pos`,
`rt-polarity.neg`), some of them in Latin-1 (`data.encoding`).
"""

import hashlib
import os
from pathlib import Path

from elman.core.encodings import decode
from elman.errors import UserError

UNLABELLED = ("unsup", "unlabeled", "unlabelled")
# A folder holding files with these extensions is not read one class per file: they are
# data files of other layouts (train.csv, dev.csv) or notes, never a class's texts.
NOT_CLASS_FILES = {"csv", "tsv", "json", "jsonl", "parquet", "txt", "md", "conll", "conllu",
                   "bio", "iob", "bmes", "py", "sh", "zip", "gz", "tar", "html", "pdf"}


def _visible(name):
    return not name.startswith(".")


def _files_under(folder):
    """Every visible file under `folder`, at any depth, in a fixed (sorted) order."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if _visible(d))
        found.extend(Path(root) / f for f in sorted(files) if _visible(f))
    return found


def _class_names(files):
    """A label per class file: the extension when the files share a name (rt-polarity.pos,
    rt-polarity.neg: pos, neg), else the name without its shared extension (SUBJ's
    quote.tok.gt9.5000, plot.tok.gt9.5000: quote.tok.gt9, plot.tok.gt9), else the whole
    name."""
    stems = {f.name.rsplit(".", 1)[0] if "." in f.name else f.name for f in files}
    suffixes = [f.name.rsplit(".", 1)[1] if "." in f.name else "" for f in files]
    if len(stems) == 1 and len(set(suffixes)) == len(files) and all(suffixes):
        return suffixes
    if len(set(suffixes)) == 1 and suffixes[0] and len(stems) == len(files):
        return [f.name.rsplit(".", 1)[0] for f in files]
    return [f.name for f in files]


def _read_class_files(rows, files, digest, encoding):
    """One class per file, one text per line (the MR, CR, SUBJ and MPQA releases)."""
    from elman.core.data import Example

    read, names = {}, {}
    for path, label in zip(files, _class_names(files)):
        raw = path.read_bytes()
        digest.update(path.name.encode("utf-8") + b"\0" + hashlib.sha256(raw).digest())
        count = 0
        for number, line in enumerate(decode(path, raw, encoding).splitlines(), start=1):
            if line.strip():  # a blank line is not a row
                rows.examples.append(Example(line.strip(), label, f"{path}:{number}"))
                count += 1
        if not count:
            raise UserError("this class file holds no texts; expected one text per line",
                            path=path)
        read[label], names[label] = count, path.name
    return read, names


def read_class_folders(rows, folder, encoding="utf-8"):
    """Reads FOLDER/CLASS/FILE into `rows` (a `data._Rows`); a folder with no subfolders
    but two files or more is read one class per file, one text per line (the layout of
    the MR, CR, SUBJ and MPQA releases: `rt-polarity.pos`, `rt-polarity.neg`).

    Args:
        rows: the reader's row collector; examples are added with `where` = "FILE:1",
            and an empty file is a bad row (an error, or skipped and counted with
            `--skip-bad-rows`).
        folder: Path of the folder holding one subfolder (or file) per class.
        encoding: str, the files' text encoding. Default "utf-8".

    Returns:
        (sha256 hex digest over every file read, names and contents; counts dict with
        "classes" {label: files read}, "skipped_folders" {name: files not read} and
        "loose_files" [names of files beside the class folders, not read]; read one class
        per file: "classes" {label: texts read} and "class_files" {label: file name}).
    """
    from elman.core.data import Example  # data imports this module

    folder = Path(folder)
    subfolders = sorted((p for p in folder.iterdir() if p.is_dir() and _visible(p.name)),
                        key=lambda p: p.name)
    skipped = {p.name: len(_files_under(p)) for p in subfolders
               if p.name.lower() in UNLABELLED}
    classes = [p for p in subfolders if p.name not in skipped]
    loose = sorted(p.name for p in folder.iterdir() if p.is_file() and _visible(p.name))
    digest = hashlib.sha256()
    if not classes and len(loose) >= 2 and not any(
            "." in n and n.rsplit(".", 1)[1].lower() in NOT_CLASS_FILES for n in loose):
        read, names = _read_class_files(rows, [folder / n for n in loose], digest,
                                        encoding)
        return digest.hexdigest(), {"classes": read, "class_files": names,
                                    "skipped_folders": skipped, "loose_files": []}
    if len(classes) < 2:
        found = ", ".join(p.name for p in classes) or "none"
        raise UserError(
            "a folder of labelled texts holds one subfolder per class (two or more), each "
            f"with one text per file; class folders found: {found}"
            + (f" (not read: {', '.join(skipped)}, unlabelled)" if skipped else "")
            + (f"; files found beside them: {', '.join(loose[:3])}" if loose else "")
            + ("; a folder of files alone, none of them .csv, .txt or another data format "
               "(rt-polarity.pos, rt-polarity.neg), is read one class per file, one text "
               "per line" if not classes else ""),
            path=folder)
    read = {}
    for cls in classes:
        files = _files_under(cls)
        if not files:
            raise UserError("this class folder holds no files; expected one text per file",
                            path=cls)
        for path in files:
            raw = path.read_bytes()
            digest.update(str(path.relative_to(folder)).encode("utf-8") + b"\0")
            digest.update(hashlib.sha256(raw).digest())
            text = decode(path, raw, encoding).strip()
            if not text:
                if not rows.skip_bad_rows:
                    raise UserError("empty text (use --skip-bad-rows to skip such files)",
                                    path=path, line=1)
                rows.skipped.append((f"{path}:1", "empty text"))
                continue
            rows.examples.append(Example(text, cls.name, f"{path}:1"))
        read[cls.name] = len(files)
    return digest.hexdigest(), {"classes": read, "skipped_folders": skipped,
                                "loose_files": loose}


def describe(name, counts):
    """One report sentence on how a split's folder was read (empty when it was a file)."""
    if not counts:
        return ""
    if counts.get("class_files"):
        return (f"The {name} folder was read as one class per file, one text per line: "
                + ", ".join(f"`{c}` ({counts['class_files'][c]}, {n:,} texts)"
                            for c, n in counts["classes"].items()) + ".")
    classes = ", ".join(f"`{c}` ({n:,} files)" for c, n in counts["classes"].items())
    text = f"The {name} folder was read as one class per subfolder: {classes}."
    if counts["skipped_folders"]:
        text += " Not read, as unlabelled: " + ", ".join(
            f"`{c}` ({n:,} files)" for c, n in counts["skipped_folders"].items()) + "."
    loose = counts["loose_files"]
    if loose:
        shown = ", ".join(f"`{n}`" for n in loose[:6]) + (", …" if len(loose) > 6 else "")
        text += (f" Not read, as they sit beside the class folders: {len(loose)} "
                 f"file{'s' if len(loose) > 1 else ''} ({shown}).")
    return text
