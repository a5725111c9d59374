"""The report stage shared by every task: plots, tables, files and the run index.

A report folder holds `report.md`, a self-contained `report.html` (plots embedded),
`metrics.json` (sorted keys), `predictions.tsv` and PNG plots. `reports/index.md`
lists every run with its main metrics.
"""

import csv
import io
import json
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from elman.core.html import render_html, write_bytes_atomic, write_text_atomic

PACKAGES = ("tensorflow", "keras", "numpy", "datasets", "pandas", "scikit-learn",
            "matplotlib", "seqeval", "sacrebleu")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    write_bytes_atomic(path, buffer.getvalue())
    return Path(path).name


def fmt(value, digits=4):
    """Formats a number for a table (ints as ints, floats to `digits` decimals)."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def md_escape(text):
    """Escapes a cell for a Markdown pipe table."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(headers, rows):
    """Returns a Markdown pipe table."""
    lines = ["| " + " | ".join(md_escape(h) for h in headers) + " |",
             "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(md_escape(fmt(c)) for c in row) + " |")
    return "\n".join(lines)


def plot_learning_curves(history, path, title="Learning curves"):
    """Plots each metric and its val_ counterpart per epoch; returns the file name."""
    plt = _pyplot()
    names = sorted(k for k in history if not k.startswith("val_") and k != "learning_rate")
    fig, axes = plt.subplots(1, max(len(names), 1), figsize=(4.2 * max(len(names), 1), 3.2))
    axes = axes if hasattr(axes, "__len__") else [axes]
    for ax, name in zip(axes, names):
        epochs = range(1, len(history[name]) + 1)
        ax.plot(epochs, history[name], marker="o", label="train")
        if "val_" + name in history:
            ax.plot(range(1, len(history["val_" + name]) + 1), history["val_" + name],
                    marker="o", label="validation")
        ax.set_xlabel("epoch")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    return _save(fig, path)


def plot_confusion(matrix, labels, path, title="Confusion matrix (rows: gold)"):
    """Plots a confusion matrix with counts; returns the file name."""
    plt = _pyplot()
    size = max(3.5, 0.45 * len(labels) + 2)
    fig, ax = plt.subplots(figsize=(size, size))
    ax.imshow(matrix, cmap="Blues")
    labels, props = label_fonts(labels)
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", **props)
    ax.set_yticks(range(len(labels)), labels, **props)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    top = max((max(r) for r in matrix), default=0) or 1
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            ax.text(j, i, str(value), ha="center", va="center",
                    color="white" if value > top / 2 else "black", fontsize=8)
    ax.set_title(title)
    return _save(fig, path)


def plot_roc(roc, auc, path):
    """Plots a ROC curve; returns the file name."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4, 4))
    ax.plot(roc["fpr"], roc["tpr"], label=f"AUC = {auc:.3f}")
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    (positive,), props = label_fonts([roc["positive"]])
    ax.set_title(f"ROC (positive: {positive})", **props)
    ax.legend(loc="lower right")
    return _save(fig, path)


def plot_bars(names, series, path, title, ylabel="score"):
    """Grouped bar chart: `series` maps a legend name to one value per name."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4, 0.9 * len(names) + 2), 3.2))
    width = 0.8 / max(len(series), 1)
    for k, (label, values) in enumerate(series.items()):
        ax.bar([i + k * width for i in range(len(names))], values, width, label=label)
    names, props = label_fonts(names)
    ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(names))], names,
                  **props)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


_FONTS = {}  # font file → FT2Font (None: unreadable); "system" → the installed font files


def _covers(path, text):
    """Whether the font file at `path` has a glyph for every non-space char of `text`."""
    from matplotlib.ft2font import FT2Font

    if path not in _FONTS:
        try:
            _FONTS[path] = FT2Font(path)
        except (OSError, RuntimeError, ValueError):
            _FONTS[path] = None
    font = _FONTS[path]
    return font is not None and all(font.get_char_index(ord(c)) for c in text
                                    if not c.isspace())


def _default_font():
    """The file of the font matplotlib draws text with by default."""
    from matplotlib import font_manager

    return font_manager.findfont(font_manager.FontProperties(family=["sans-serif"]))


def token_font(tokens):
    """The font for drawing `tokens`: None (matplotlib's default draws them all), the
    path of an installed font that does (e.g. a CJK font matplotlib's cache missed), or
    False when no font does."""
    from matplotlib import font_manager

    text = "".join(tokens)
    if _covers(_default_font(), text):
        return None
    if "system" not in _FONTS:
        _FONTS["system"] = sorted(font_manager.findSystemFonts())
    for path in _FONTS["system"]:
        if _covers(path, text):
            return path
    return False


def drawable_text(text):
    """`text` with every run of characters the default font cannot draw replaced by "…",
    for a title when no installed font draws them (matplotlib would draw empty boxes and
    warn once per character); the full text stays in the report's tables."""
    default = _default_font()
    out = []
    for char in text:
        if char.isspace() or _covers(default, char):
            out.append(char)
        elif not out or out[-1] != "…":
            out.append("…")
    return "".join(out)


def label_fonts(labels):
    """Class or type names as a plot can draw them: (names, text properties). With a font
    that draws them all, the names and that font; when none does, each name numbered
    ("0: …") with its undrawable characters elided, so two names stay apart."""
    labels = [str(label) for label in labels]
    font = token_font(labels)
    if font is None:
        return labels, {}
    if font is False:
        return [f"{i}: {drawable_text(label)}" for i, label in enumerate(labels)], {}
    from matplotlib.font_manager import FontProperties

    return labels, {"fontproperties": FontProperties(fname=font)}


def plot_trace(panels, path, title, ylabel="probability", ylim=(-0.03, 1.03), reference=0.5,
               xlabel="tokens read"):
    """Reading traces, one panel per text: values against the tokens read so far.

    The shared picture of every trace (a sentiment model's class probabilities after
    each prefix, the textbook's Case C, a tagger's or translator's token probabilities,
    a language model's surprisals). Tokens no installed font can draw are shown by
    position, and the title keeps what the default font draws ("…" for the rest; the
    report's tables have the text). Long texts keep the figure at most
    22 inches wide and label every k-th token.

    Args:
        panels: list of dicts {"title": str, "tokens": list of str, "series": {name:
            list of floats, one per token}}.
        path: Path of the PNG.
        title: str, the figure's title.
        ylabel: str, the y axis label. Default "probability".
        ylim: (low, high) of the y axis, or None for 0 to just above the highest value.
            Default (-0.03, 1.03).
        reference: float, where a dotted horizontal line is drawn, or None. Default 0.5.
        xlabel: str, the x axis label. Default "tokens read".

    Returns:
        str, the file name.
    """
    plt = _pyplot()
    from matplotlib.font_manager import FontProperties

    widest = max((len(p["tokens"]) for p in panels), default=1)
    width = min(max(5.0, 0.45 * widest + 2.5), 22.0)
    every = -(-widest // max(1, int((width - 2.5) / 0.16)))  # label every k-th token
    fig, axes = plt.subplots(len(panels), 1, squeeze=False,
                             figsize=(width, 2.6 * len(panels) + 0.6))
    for ax, panel in zip(axes[:, 0], panels):
        tokens = panel["tokens"]
        xs = range(1, len(tokens) + 1)
        for k, (name, values) in enumerate(panel["series"].items()):
            ax.plot(xs, values, marker="o", markersize=4 if every == 1 else 2, color=f"C{k}",
                    label=name)
        if reference is not None:
            ax.axhline(reference, color="grey", linewidth=0.8, linestyle=":")
        if ylim is None:  # from 0 to a little above the highest value (NaN: no point)
            top = max([v for values in panel["series"].values() for v in values if v == v]
                      + [reference or 0.0, 1e-6])
            ax.set_ylim(0, 1.1 * top)
        else:
            ax.set_ylim(*ylim)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        font = token_font(tokens + [panel["title"]])
        props = {} if font is None or font is False else {"fontproperties":
                                                          FontProperties(fname=font)}
        labels = tokens if font is not False else [str(x) for x in xs]
        ax.set_xticks(list(xs)[::every], labels[::every], rotation=60 if widest > 12 else 0,
                      ha="right" if widest > 12 else "center", **props,
                      **({} if every == 1 else {"fontsize": 7}))
        ax.set_title(panel["title"] if font is not False else drawable_text(panel["title"]),
                     fontsize=9, loc="left", **props)
        ax.legend(fontsize=7, loc="best")
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)


def package_versions():
    """Returns installed versions of the packages a run depends on."""
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def git_commit(root=None):
    """Returns the git commit of the working tree (with '+dirty' when modified).

    Changes under `reports/` do not count: `make demo` rewrites the committed demo
    reports as it goes, and its later runs would otherwise call a clean checkout dirty.

    Args:
        root: the repository folder (default: the project's).
    """
    root = Path(__file__).resolve().parents[2] if root is None else Path(root)
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)reports"],
                               cwd=root, capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (commit or "unknown") + ("+dirty" if dirty.strip() else "")


def reproducibility(config_toml, data_files, seed, device):
    """The reproducibility block: returns (markdown, dict for metrics.json)."""
    info = {"seed": seed, "data_files": data_files, "packages": package_versions(),
            "git_commit": git_commit(), "device": device,
            "command": " ".join(Path(sys.argv[0]).name if i == 0 else a
                                for i, a in enumerate(sys.argv))}
    rows = [(f["split"], f["source"], f.get("sha256") or "-") for f in data_files]
    md = "\n\n".join([
        "## Reproducibility",
        md_table(["what", "value"], [("seed", seed), ("git commit", info["git_commit"]),
                                     ("command", f"`{info['command']}`")]
                 + [(k, v) for k, v in device.items() if not isinstance(v, list)]),
        "Data files:",
        md_table(["split", "source", "SHA-256"], rows),
        "Packages: " + ", ".join(f"{k} {v}" for k, v in info["packages"].items()),
        "Resolved config:",
        "```toml\n" + config_toml.strip() + "\n```",
    ])
    return md, info


def write_predictions(path, rows):
    """Writes per-example rows as TSV (tabs and newlines inside cells become spaces)."""
    if not rows:
        write_text_atomic(path, "")
        return
    headers = list(rows[0])
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(headers)
    for row in rows:
        writer.writerow([fmt(row.get(h), 6) if isinstance(row.get(h), float) else
                         str(row.get(h, "")).replace("\t", " ").replace("\n", " ")
                         for h in headers])
    write_text_atomic(path, buffer.getvalue())


def write_report(report_dir, title, markdown_body, metrics, predictions=(), index=True):
    """Writes report.md, report.html, metrics.json and predictions.tsv; updates the index.

    Args:
        report_dir: Path, `reports/<task>/<run-id>/`.
        title: str, the report title.
        markdown_body: str, the report after the title (plots referenced by file name).
        metrics: dict, written to metrics.json with sorted keys; should hold "task",
            "run_id", "main_metric" and "scores".
        predictions: list of dicts, one per example.
        index: bool, rewrite `reports/index.md` (the run skeleton does it itself, once the
            report folder is in place). Default True.
    """
    report_dir = Path(report_dir)
    markdown_text = f"# {title}\n\n{markdown_body.strip()}\n"
    write_text_atomic(report_dir / "report.md", markdown_text)
    write_text_atomic(report_dir / "report.html", render_html(title, markdown_text, report_dir))
    write_text_atomic(report_dir / "metrics.json",
                      json.dumps(metrics, indent=1, sort_keys=True, default=str) + "\n")
    write_predictions(report_dir / "predictions.tsv", list(predictions))
    if index:
        update_index(report_dir.parent.parent)


def update_index(reports_root):
    """Rewrites `reports/index.md`: every run with its main metrics, newest first."""
    reports_root = Path(reports_root)
    rows = []
    for path in sorted(reports_root.glob("*/*/metrics.json")):
        if path.parent.name.startswith("."):  # a report still being written
            continue
        try:
            metrics = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        scores = metrics.get("scores", {})
        main = metrics.get("main_metric", "")
        others = ", ".join(f"{k} {fmt(v)}" for k, v in sorted(scores.items())
                           if k != main and isinstance(v, float))[:160]
        interval = metrics.get("interval") or {}
        spread = (f"{fmt(interval['low'])}–{fmt(interval['high'])}"
                  if {"low", "high"} <= set(interval) else "-")
        rows.append((metrics.get("finished", ""), metrics.get("task", path.parent.parent.name),
                     f"[{path.parent.name}]({path.parent.relative_to(reports_root)}/report.md)",
                     metrics.get("split", ""), main, fmt(scores.get(main, "")), spread, others))
    rows.sort(key=lambda r: str(r[0]), reverse=True)
    text = ("# elman reports\n\nEvery run, newest first; \"95% interval\" is the main score's "
            "bootstrap interval over the scored examples (`docs/pipeline.md`).\n\n" + md_table(
                ["finished", "task", "run", "split", "main metric", "value", "95% interval",
                 "other scores"], rows) + "\n")
    write_text_atomic(reports_root / "index.md", text)
