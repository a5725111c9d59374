"""Which columns of a labelled-text file hold the text and the label, and the one clear
error when the file lacks them (a wrong separator, a missing header, another name)."""

from elman.errors import UserError


def is_number(label):
    """Whether a label reads as a number (`1`, `-2`, `0.5`)."""
    return label.lstrip("+-").replace(".", "", 1).isdigit()


def _separator_hint(available):
    """When the header reads as one column holding another separator: what it is."""
    if len(available) != 1:
        return ""
    for mark, name, fix in (("\t", "tabs", "name it .tsv or set data.format=tsv"),
                            (",", "commas", "name it .csv or set data.format=csv"),
                            (";", "semicolons", "save it with commas (CSV) or tabs (TSV)")):
        if mark in str(available[0]):
            return f"; the header is one column that holds {name}: {fix}"
    return ""


# Other names real corpora give their columns (SophonPlus's Chinese review sets have
# `label,review`, GLUE's SST-2 `sentence,label`, CLUE's sets `text_a`): a default column
# (`text`, `label`) the file lacks is looked for among these, when exactly one is there.
TEXT_COLUMNS = ("text", "review", "sentence", "content", "comment", "document", "text_a",
                "review_text", "body")
LABEL_COLUMNS = ("label", "labels", "sentiment", "polarity", "class", "target")


def resolve_columns(rows, available, text_column, label_column):
    """The (text, label) columns to read: the given ones, or, for a default name the file
    lacks, the one usual name it has (recorded on `rows.columns_found`); else the error
    of `check_columns`."""
    chosen = {"text": text_column, "label": label_column}
    for role, default, usual in (("text", "text", TEXT_COLUMNS),
                                 ("label", "label", LABEL_COLUMNS)):
        if chosen[role] != default or default in available:
            continue
        present = [c for c in usual if c in available and c not in chosen.values()]
        if len(present) == 1:
            chosen[role] = present[0]
            rows.columns_found[role] = present[0]
    check_columns(rows.path, available, chosen["text"], chosen["label"])
    return chosen["text"], chosen["label"]


def _headerless_hint(available):
    """When the first line reads as a data row (a number, or a field of several words
    among the names), as in headerless `"2","review text"` polarity CSVs: what to do."""
    names = [str(c).strip() for c in available]
    if len(names) < 2 or not any(is_number(n) or len(n.split()) >= 4 for n in names):
        return ""
    return ("; the first line reads as a data row, not a header: add a header line that "
            "names the columns (e.g. label,text)")


def _shown(column, width=40):
    column = str(column)
    return column if len(column) <= width else column[:width - 3] + "..."


def check_columns(path, available, text_column, label_column):
    for role, column in (("text", text_column), ("label", label_column)):
        if column not in available:
            hint = (_separator_hint(available) or _headerless_hint(available)
                    or f" (choose one with --{role}-column)")
            raise UserError(
                f"unknown {role} column '{column}'; the file has columns: "
                + ", ".join(repr(_shown(c)) if len(available) == 1 else _shown(c)
                            for c in available)
                + hint,
                path=path,
                line=1,
            )
