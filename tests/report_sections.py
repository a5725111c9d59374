"""Reading a report.md back in tests: one section's tables and images."""

import re


def section(markdown, heading):
    """The text of the `## heading` section (up to the next `## `)."""
    start = markdown.index(f"## {heading}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start:] if end < 0 else markdown[start:end]


def section_tables(markdown, heading):
    """(data rows of every table in the section, each a list of cells; image file names)."""
    text = section(markdown, heading)
    rows, header = [], True
    for line in text.splitlines():
        if line.startswith("|---"):
            continue
        if not line.startswith("| "):
            header = True
            continue
        if header:  # a table's first line names its columns
            header = False
            continue
        rows.append(line[2:-2].split(" | "))
    return rows, re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
