"""Labelled texts laid out as folders: one subfolder per class, one text per file.

This is how whole-document sentiment corpora are usually shipped: the Large Movie Review
Dataset (`aclImdb/train/pos/0_9.txt`, `aclImdb/train/neg/…`, with an unlabelled
`unsup/` beside them), Pang and Lee's polarity corpus (`txt_sentoken/pos/cv000_29590.txt`)
and the layout Keras's `text_dataset_from_directory` reads. `--data aclImdb/train`
reads such a folder: each subfolder's name is its files' label, each file (UTF-8) one
example. A folder named `unsup`, `unlabeled` or `unlabelled` holds no labels and is not
read; files beside the class folders (aclImdb's `urls_pos.txt`, `labeledBow.feat`) are
not read either. Both are counted and named in the report, so nothing is left out silently.
"""

import hashlib
import os
from pathlib import Path

from elman.errors import UserError

UNLABELLED = ("unsup", "unlabeled", "unlabelled")


def _visible(name):
    return not name.startswith(".")


def _files_under(folder):
    """Every visible file under `folder`, at any depth, in a fixed (sorted) order."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if _visible(d))
        found.extend(Path(root) / f for f in sorted(files) if _visible(f))
    return found


def _decode(path, raw):
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise UserError(f"not valid UTF-8 (byte 0x{raw[err.start]:02x} at offset "
                        f"{err.start}); save the file as UTF-8", path=path,
                        line=raw[: err.start].count(b"\n") + 1) from None


def read_class_folders(rows, folder):
    """Reads FOLDER/CLASS/FILE into `rows` (a `data._Rows`).

    Args:
        rows: the reader's row collector; examples are added with `where` = "FILE:1",
            and an empty file is a bad row (an error, or skipped and counted with
            `--skip-bad-rows`).
        folder: Path of the folder holding one subfolder per class.

    Returns:
        (sha256 hex digest over every file read, names and contents; counts dict with
        "classes" {label: files read}, "skipped_folders" {name: files not read} and
        "loose_files" [names of files beside the class folders, not read]).
    """
    from elman.core.data import Example  # data imports this module

    folder = Path(folder)
    subfolders = sorted((p for p in folder.iterdir() if p.is_dir() and _visible(p.name)),
                        key=lambda p: p.name)
    skipped = {p.name: len(_files_under(p)) for p in subfolders
               if p.name.lower() in UNLABELLED}
    classes = [p for p in subfolders if p.name not in skipped]
    loose = sorted(p.name for p in folder.iterdir() if p.is_file() and _visible(p.name))
    if len(classes) < 2:
        found = ", ".join(p.name for p in classes) or "none"
        raise UserError(
            "a folder of labelled texts holds one subfolder per class (two or more), each "
            f"with one text per file; class folders found: {found}"
            + (f" (not read: {', '.join(skipped)}, unlabelled)" if skipped else "")
            + (f"; files found beside them: {', '.join(loose[:3])}" if loose else ""),
            path=folder)
    digest = hashlib.sha256()
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
            text = _decode(path, raw).strip()
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
