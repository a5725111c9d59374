"""Reading-trace pictures on a machine with no font for the text (a CJK text, no CJK
font installed): the tokens are labelled by position and the title keeps what the default
font draws, so matplotlib draws no empty boxes and warns about no missing glyph."""

import warnings

import pytest


@pytest.fixture
def no_system_fonts(monkeypatch):
    """Only matplotlib's own fonts (DejaVu, no CJK glyphs) are found."""
    from matplotlib import font_manager

    from elman.core import report

    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [])
    monkeypatch.setitem(report._FONTS, "system", [])


def test_drawable_text_keeps_latin_and_marks_each_undrawable_run(no_system_fonts):
    from elman.core.report import drawable_text

    # 味道很好 and 服务 are two runs the default font has no glyphs for; the Latin text, the
    # spaces and the parentheses stay as they are
    assert drawable_text("味道很好 but 服务 slow (gold positive)") == \
        "… but … slow (gold positive)"
    assert drawable_text("plain text, 100%") == "plain text, 100%"


def test_a_trace_of_chinese_text_draws_without_missing_glyph_warnings(tmp_path,
                                                                     no_system_fonts):
    from PIL import Image

    from elman.core import report

    tokens = list("服务太慢")
    panels = [{"title": "服务太慢  (gold negative, predicted negative)", "tokens": tokens,
               "series": {"negative": [0.4, 0.6, 0.7, 0.9]}}]
    assert report.token_font(tokens + [panels[0]["title"]]) is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a "Glyph ... missing" UserWarning fails the test
        name = report.plot_trace(panels, tmp_path / "trace.png", "Reading trace")
    with Image.open(tmp_path / name) as image:
        assert image.size[0] > 100 and image.size[1] > 100


def test_chinese_class_names_in_a_confusion_matrix_stay_apart(tmp_path, no_system_fonts):
    from elman.core import report

    names, props = report.label_fonts(["正面", "负面", "neutral"])
    assert names == ["0: …", "1: …", "2: neutral"] and props == {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report.plot_confusion([[3, 1, 0], [0, 2, 1], [1, 0, 4]], ["正面", "负面", "neutral"],
                              tmp_path / "confusion.png")
        report.plot_bars(["正面", "负面"], {"f1": [0.5, 0.25]}, tmp_path / "bars.png", "F1")
        report.plot_roc({"fpr": [0, 1], "tpr": [0, 1], "positive": "正面"}, 0.5,
                        tmp_path / "roc.png")
    assert all((tmp_path / f).stat().st_size > 0 for f in ("confusion.png", "bars.png",
                                                           "roc.png"))


def test_latin_names_are_drawn_as_they_are(no_system_fonts):
    from elman.core import report

    assert report.label_fonts(["LOC", "B-PER", 3]) == (["LOC", "B-PER", "3"], {})
