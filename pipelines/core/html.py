"""Self-contained HTML from a small Markdown subset, and atomic file writes.

Every report in elman is written as Markdown first; `render_html` turns it into
one HTML file with its images embedded as base64 data URIs, so the page can be
mailed or archived alone. Supported: ATX headings, paragraphs, pipe tables (with
`:---:` alignment), fenced code, bullet and numbered lists, block quotes,
horizontal rules, inline code, bold, italics, links and images.
"""

import base64
import html
import os
import re
import tempfile
from pathlib import Path

_CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
       color: #1d1d1f; max-width: 64rem; margin: 2rem auto; padding: 0 1.25rem; }
h1, h2, h3, h4 { line-height: 1.25; margin: 1.6em 0 0.5em; }
h1 { font-size: 1.8em; border-bottom: 2px solid #e3e3e8; padding-bottom: 0.25em; }
h2 { font-size: 1.4em; border-bottom: 1px solid #e3e3e8; padding-bottom: 0.2em; }
h3 { font-size: 1.15em; }
code { font: 0.92em/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
       background: #f3f3f6; padding: 0.1em 0.3em; border-radius: 3px; }
pre { background: #f6f6f9; border: 1px solid #e3e3e8; border-radius: 4px;
      padding: 0.75em 1em; overflow-x: auto; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.93em; display: block;
        overflow-x: auto; }
th, td { border: 1px solid #d8d8de; padding: 0.3em 0.6em; vertical-align: top; }
th { background: #f0f0f4; }
tr:nth-child(even) td { background: #fafafc; }
img { max-width: 100%; height: auto; }
blockquote { margin: 0.8em 0; padding: 0.2em 1em; border-left: 4px solid #d0d0d8;
             color: #444; }
hr { border: 0; border-top: 1px solid #e3e3e8; margin: 2em 0; }
""".strip()

_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
         ".gif": "image/gif", ".svg": "image/svg+xml", ".webp": "image/webp"}

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_HR = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_ORDERED = re.compile(r"^(\s*)\d+[.)]\s+(.*)$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$")
_INLINE = re.compile(
    r"(?P<code>(?P<ticks>`+)(?P<code_text>.+?)(?P=ticks))"
    r"|(?P<image>!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)(?:\s+\"(?P<img_title>[^\"]*)\")?\))"
    r"|(?P<link>\[(?P<link_text>[^\]]+)\]\((?P<href>[^)\s]+)\))"
)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![*\w])")


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_atomic(path, data):
    """Writes bytes so that readers see the old file or the new one, never a partial one.

    Writes to a temporary file in the same folder, then renames it over `path`.
    Missing parent folders are created.

    Args:
        path: str or Path, the file to write.
        data: bytes, the content.

    Example:
        >>> write_bytes_atomic("reports/x/plot.png", png_bytes)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it owner-only; honour the umask
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text_atomic(path, text):
    """Writes UTF-8 text atomically (temporary file in the same folder, then rename).

    Args:
        path: str or Path, the file to write.
        text: str, the content.

    Example:
        >>> write_text_atomic("reports/x/report.md", "# Report\\n")
    """
    write_bytes_atomic(path, text.encode("utf-8"))


def _data_uri(src, base_dir):
    """Returns a data URI for a local image file, or None when it is remote or missing."""
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", src):  # http:, https:, data:, file: ...
        return None
    path = Path(base_dir) / src
    mime = _MIME.get(path.suffix.lower())
    if mime is None or not path.is_file():
        return None
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _emphasis(escaped):
    """Bold and italics on already escaped text."""
    escaped = _BOLD.sub(r"<strong>\1</strong>", escaped)
    return _ITALIC.sub(r"<em>\1</em>", escaped)


def _inline(text, base_dir):
    """Renders inline Markdown (code, images, links, bold, italics) to HTML."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(_emphasis(html.escape(text[pos:m.start()], quote=False)))
        if m.group("code"):
            out.append(f"<code>{html.escape(m.group('code_text').strip(), quote=False)}</code>")
        elif m.group("image"):
            src = m.group("src")
            uri = _data_uri(src, base_dir) or src
            title = m.group("img_title")
            title_attr = f' title="{html.escape(title)}"' if title else ""
            out.append(f'<img src="{html.escape(uri)}" alt="{html.escape(m.group("alt"))}"'
                       f"{title_attr}>")
        else:
            label = _emphasis(html.escape(m.group("link_text"), quote=False))
            out.append(f'<a href="{html.escape(m.group("href"))}">{label}</a>')
        pos = m.end()
    out.append(_emphasis(html.escape(text[pos:], quote=False)))
    return "".join(out)


def _split_row(line):
    """Splits a pipe-table row into cell texts; `\\|` is a literal bar."""
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [c.strip().replace("\\|", "|") for c in cells]


def _table(lines, base_dir):
    """Renders a pipe table: header row, separator row, body rows."""
    header = _split_row(lines[0])
    aligns = []
    for spec in _split_row(lines[1]):
        left, right = spec.startswith(":"), spec.endswith(":")
        aligns.append("center" if left and right else "right" if right else
                      "left" if left else None)

    def cell(tag, text, i):
        align = aligns[i] if i < len(aligns) else None
        style = f' style="text-align:{align}"' if align else ""
        return f"<{tag}{style}>{_inline(text, base_dir)}</{tag}>"

    parts = ["<table>", "<thead><tr>"
             + "".join(cell("th", t, i) for i, t in enumerate(header)) + "</tr></thead>",
             "<tbody>"]
    for line in lines[2:]:
        cells = _split_row(line)
        cells += [""] * (len(header) - len(cells))
        parts.append("<tr>" + "".join(cell("td", t, i) for i, t in enumerate(cells)) + "</tr>")
    parts.append("</tbody></table>")
    return "\n".join(parts)


def _is_block_start(lines, i):
    """True when line i starts a block other than a paragraph."""
    line = lines[i]
    if _HEADING.match(line) or _FENCE.match(line) or _HR.match(line):
        return True
    if _BULLET.match(line) or _ORDERED.match(line) or line.lstrip().startswith(">"):
        return True
    return (line.lstrip().startswith("|") and i + 1 < len(lines)
            and bool(_TABLE_SEP.match(lines[i + 1])))


def _paragraph_html(lines, base_dir):
    """Joins paragraph lines; a line ending in two spaces or a backslash breaks the line."""
    rendered = []
    for j, line in enumerate(lines):
        hard = line.endswith("  ") or line.endswith("\\")
        text = line.rstrip().rstrip("\\").strip()
        rendered.append(_inline(text, base_dir) + ("<br>" if hard and j < len(lines) - 1 else ""))
    return "\n".join(rendered)


def markdown_to_html(markdown_text, base_dir="."):
    """Renders the supported Markdown subset to an HTML fragment (no `<html>` wrapper).

    Args:
        markdown_text: str, the Markdown source.
        base_dir: str or Path, where relative image paths are read from. Default ".".

    Returns:
        str, the HTML fragment.

    Example:
        >>> markdown_to_html("# Title\\n\\nSome **bold** text.")
        '<h1 id="title">Title</h1>\\n<p>Some <strong>bold</strong> text.</p>'
    """
    lines = markdown_text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks, i, used_ids = [], 0, {}
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        for block in _BLOCKS:
            found = block(lines, i, base_dir, used_ids)
            if found is not None:
                text, i = found
                blocks.append(text)
                break
    return "\n".join(blocks)


def _fence_block(lines, i, base_dir, used_ids):
    fence = _FENCE.match(lines[i])
    if not fence:
        return None
    marker, lang = fence.group(1), fence.group(2)
    body, i = [], i + 1
    while i < len(lines) and not lines[i].strip().startswith(marker):
        body.append(lines[i])
        i += 1
    cls = f' class="language-{html.escape(lang)}"' if lang else ""
    return (f"<pre><code{cls}>{html.escape(chr(10).join(body), quote=False)}</code></pre>",
            i + 1)  # past the closing fence (or the end of the text)


def _heading_block(lines, i, base_dir, used_ids):
    heading = _HEADING.match(lines[i])
    if not heading:
        return None
    level, text = len(heading.group(1)), heading.group(2)
    slug = re.sub(r"[^\w]+", "-", text.lower()).strip("-") or "section"
    used_ids[slug] = used_ids.get(slug, 0) + 1
    if used_ids[slug] > 1:
        slug = f"{slug}-{used_ids[slug]}"
    return f'<h{level} id="{html.escape(slug)}">{_inline(text, base_dir)}</h{level}>', i + 1


def _rule_block(lines, i, base_dir, used_ids):
    return ("<hr>", i + 1) if _HR.match(lines[i]) else None


def _table_block(lines, i, base_dir, used_ids):
    if not (lines[i].lstrip().startswith("|") and i + 1 < len(lines)
            and _TABLE_SEP.match(lines[i + 1])):
        return None
    rows = [lines[i], lines[i + 1]]
    i += 2
    while i < len(lines) and lines[i].strip().startswith("|"):
        rows.append(lines[i])
        i += 1
    return _table(rows, base_dir), i


def _quote_block(lines, i, base_dir, used_ids):
    if not lines[i].lstrip().startswith(">"):
        return None
    quoted = []
    while i < len(lines) and lines[i].lstrip().startswith(">"):
        quoted.append(re.sub(r"^\s*>\s?", "", lines[i]))
        i += 1
    return (f"<blockquote>\n{markdown_to_html(chr(10).join(quoted), base_dir)}\n</blockquote>",
            i)


def _list_block(lines, i, base_dir, used_ids):
    line = lines[i]
    item_re = _BULLET if _BULLET.match(line) else _ORDERED if _ORDERED.match(line) else None
    if item_re is None:
        return None
    tag = "ul" if item_re is _BULLET else "ol"
    items = []
    while i < len(lines):
        m = item_re.match(lines[i])
        if m:
            items.append([m.group(2)])
        elif lines[i].strip() and lines[i][:1] in " \t" and items:
            items[-1].append(lines[i].strip())  # continuation of the item
        else:
            break
        i += 1
    return (f"<{tag}>\n" + "\n".join(f"<li>{_paragraph_html(item, base_dir)}</li>"
                                      for item in items) + f"\n</{tag}>", i)


def _paragraph_block(lines, i, base_dir, used_ids):
    para = []
    while i < len(lines) and lines[i].strip() and (not para or not _is_block_start(lines, i)):
        para.append(lines[i])
        i += 1
    return f"<p>{_paragraph_html(para, base_dir)}</p>", i


# tried in this order; a paragraph takes whatever no other block claims
_BLOCKS = (_fence_block, _heading_block, _rule_block, _table_block, _quote_block, _list_block,
           _paragraph_block)


def render_html(title, markdown_text, base_dir):
    """Renders a Markdown report as one self-contained HTML page.

    Local images (`![alt](plot.png)`) are read from `base_dir` and embedded as
    base64 data URIs; remote or missing images keep their address.

    Args:
        title: str, the page title (`<title>`).
        markdown_text: str, the report in the supported Markdown subset.
        base_dir: Path, the folder relative image paths are read from.

    Returns:
        str, a complete HTML document with a small embedded stylesheet.

    Example:
        >>> md = "# Textbook\\n\\n![A](case_a.png)"
        >>> page = render_html("Textbook", md, Path("reports/textbook"))
        >>> write_text_atomic(Path("reports/textbook/report.html"), page)
    """
    body = markdown_to_html(markdown_text, base_dir)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n<style>\n{_CSS}\n</style>\n</head>\n"
            f"<body>\n{body}\n</body>\n</html>\n")
