"""The Markdown → self-contained HTML renderer and the atomic writers."""

import base64

from elman.core.html import markdown_to_html, render_html, write_bytes_atomic, write_text_atomic

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwAD"
                       "hgGAWjR9awAAAABJRU5ErkJggg==")


def test_headings_paragraphs_inline():
    html = markdown_to_html("# Title\n\nSome **bold**, *it* and `a < b **x**` text\nnext line.\n")
    assert '<h1 id="title">Title</h1>' in html
    assert "<strong>bold</strong>" in html and "<em>it</em>" in html
    assert "<code>a &lt; b **x**</code>" in html  # no emphasis inside code
    assert "text\nnext line.</p>" in html


def test_table_with_alignment_and_escaped_bar():
    md = "| a | b |\n|:---|---:|\n| x \\| y | `1` |\n| only |"
    html = markdown_to_html(md)
    assert '<th style="text-align:left">a</th>' in html
    assert '<td style="text-align:right"><code>1</code></td>' in html
    assert "<td style=\"text-align:left\">x | y</td>" in html
    assert html.count("<tr>") == 3  # the short row is padded


def test_fenced_code_lists_quote_rule():
    md = ("```python\nif a < b:\n    pass\n```\n\n- one\n- two\n  more\n\n"
          "1. first\n2. second\n\n> quoted\n\n---\n")
    html = markdown_to_html(md)
    assert '<pre><code class="language-python">if a &lt; b:\n    pass</code></pre>' in html
    assert "<ul>\n<li>one</li>\n<li>two\nmore</li>\n</ul>" in html
    assert "<ol>\n<li>first</li>\n<li>second</li>\n</ol>" in html
    assert "<blockquote>\n<p>quoted</p>\n</blockquote>" in html and "<hr>" in html


def test_images_are_embedded_from_base_dir(tmp_path):
    (tmp_path / "plot.png").write_bytes(PNG)
    md = "![a plot](plot.png)\n\n![gone](missing.png) [link](https://x.org/?a=1&b=2)"
    page = render_html("T & U", md, tmp_path)
    assert page.startswith("<!DOCTYPE html>") and "<title>T &amp; U</title>" in page
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in page
    assert 'src="missing.png"' in page
    assert '<a href="https://x.org/?a=1&amp;b=2">link</a>' in page
    assert "<style>" in page


def test_text_is_escaped():
    assert markdown_to_html("a <script> & b") == "<p>a &lt;script&gt; &amp; b</p>"


def test_atomic_writes(tmp_path):
    target = tmp_path / "sub" / "r.md"
    write_text_atomic(target, "één\n")
    write_text_atomic(target, "two\n")
    assert target.read_text(encoding="utf-8") == "two\n"
    write_bytes_atomic(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["b.bin", "r.md", "sub"]
