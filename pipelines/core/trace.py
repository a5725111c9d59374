"""Terminal tables for the reading traces (`elman predict --trace` and friends).

Every task's `Predictor.trace` returns JSON-ready dicts; its `format_trace` turns one
into text with these helpers. Columns are aligned by display width, so Chinese
characters (two columns wide in a terminal) line up with Latin ones.
"""

import unicodedata

BAR_WIDTH = 20


def display_width(text):
    """The number of terminal columns `text` takes (East Asian wide chars count two)."""
    width = 0
    for char in str(text):
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def shown(token, limit=24):
    """A token as a table cell: control characters escaped, long tokens cut."""
    text = str(token)
    if any(c.isspace() or unicodedata.category(c).startswith("C") for c in text) or not text:
        text = repr(text)[1:-1] or "''"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def bar(value, width=BAR_WIDTH):
    """A horizontal bar of `value` in [0, 1], in eighths of a column."""
    value = min(max(float(value), 0.0), 1.0)
    eighths = round(value * width * 8)
    full, part = divmod(eighths, 8)
    return "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")


def table(headers, rows, right=()):
    """Aligned columns separated by two spaces.

    Args:
        headers: list of str.
        rows: list of lists of cells (str).
        right: indices of the columns aligned right (numbers).

    Returns:
        str, the header line and one line per row (trailing spaces stripped).
    """
    cells = [list(map(str, headers))] + [list(map(str, row)) for row in rows]
    widths = [max(display_width(row[k]) for row in cells) for k in range(len(headers))]
    lines = []
    for row in cells:
        parts = []
        for k, cell in enumerate(row):
            gap = " " * (widths[k] - display_width(cell))
            parts.append(gap + cell if k in right else cell + gap)
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)
