"""The overview card `data/README.md`: every toy file with its size, bytes and format.

Reads the files the generators wrote, so it runs last.
"""

from .common import DATA_DIR, LICENSE, SPLITS, write_text


def file_size(relpath):
    return (DATA_DIR / relpath).stat().st_size


def count_lines(relpath):
    return (DATA_DIR / relpath).read_bytes().count(b"\n")


def write_overview():
    rows = []
    for lang in ("en", "zh"):
        for split in SPLITS:
            p = f"sentiment/{lang}/{split}.csv"
            rows.append((p, f"{count_lines(p) - 1} rows", "CSV, header `text,label`; "
                         "labels `positive`/`negative`"))
    for split in SPLITS:
        p = f"tagging/en/{split}.conll"
        n = (DATA_DIR / p).read_text(encoding="utf-8").count("\n\n") - 1
        rows.append((p, f"{n} sentences", "CoNLL: `token TAG` per line, blank line between "
                     "sentences, `-DOCSTART- O` first; IOB2 PER/ORG/LOC/MISC"))
    for split in SPLITS:
        p = f"tagging/zh/{split}.txt"
        n = (DATA_DIR / p).read_text(encoding="utf-8").count("\n\n")
        rows.append((p, f"{n} sentences", "`字 TAG` per line, blank line between sentences; "
                     "IOB2 PER/ORG/LOC"))
    for split in SPLITS:
        p = f"translation/en-zh/{split}.tsv"
        rows.append((p, f"{count_lines(p)} pairs", "`english<TAB>chinese`, no header"))
    for lang in ("en", "zh"):
        for suffix in ("", "_valid", "_test"):
            p = f"lm/{lang}{suffix}.txt"
            rows.append((p, f"{count_lines(p)} paragraphs", "plain text, one paragraph "
                         "per line"))
    lines = [
        "# Toy datasets",
        "",
        "Small datasets written for elman, used by the demo, the tests and the default",
        "configs. Every sentence comes from the grammars in `generators/` (one module per",
        "dataset; standard library only, fixed seeds); running `python3 data/make_toy_data.py`",
        "rewrites all files byte for byte. All files are UTF-8 with LF line endings.",
        "Splits never share a sentence. Each folder has a README card with details.",
        "",
        "| dataset | file | size | bytes | format |",
        "|---|---|---|---|---|",
    ]
    for p, size, fmt in rows:
        lines.append(f"| {p.split('/')[0]} | `{p}` | {size} | {file_size(p)} | {fmt} |")
    lines += [
        "",
        "Cards: [sentiment](sentiment/README.md), [tagging](tagging/README.md),",
        "[translation](translation/README.md), [lm](lm/README.md).",
        "",
        f"License of all toy data: {LICENSE}.",
        "",
    ]
    write_text("README.md", "\n".join(lines))
