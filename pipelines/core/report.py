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
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
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
    ax.set_title(f"ROC (positive: {roc['positive']})")
    ax.legend(loc="lower right")
    return _save(fig, path)


def plot_bars(names, series, path, title, ylabel="score"):
    """Grouped bar chart: `series` maps a legend name to one value per name."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4, 0.9 * len(names) + 2), 3.2))
    width = 0.8 / max(len(series), 1)
    for k, (label, values) in enumerate(series.items()):
        ax.bar([i + k * width for i in range(len(names))], values, width, label=label)
    ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(names))], names)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
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


def git_commit():
    """Returns the git commit of the working tree (with '+dirty' when modified)."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
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


def write_report(report_dir, title, markdown_body, metrics, predictions=()):
    """Writes report.md, report.html, metrics.json and predictions.tsv; updates the index.

    Args:
        report_dir: Path, `reports/<task>/<run-id>/`.
        title: str, the report title.
        markdown_body: str, the report after the title (plots referenced by file name).
        metrics: dict, written to metrics.json with sorted keys; should hold "task",
            "run_id", "main_metric" and "scores".
        predictions: list of dicts, one per example.
    """
    report_dir = Path(report_dir)
    markdown_text = f"# {title}\n\n{markdown_body.strip()}\n"
    write_text_atomic(report_dir / "report.md", markdown_text)
    write_text_atomic(report_dir / "report.html", render_html(title, markdown_text, report_dir))
    write_text_atomic(report_dir / "metrics.json",
                      json.dumps(metrics, indent=1, sort_keys=True, default=str) + "\n")
    write_predictions(report_dir / "predictions.tsv", list(predictions))
    update_index(report_dir.parent.parent)


def update_index(reports_root):
    """Rewrites `reports/index.md`: every run with its main metrics, newest first."""
    reports_root = Path(reports_root)
    rows = []
    for path in sorted(reports_root.glob("*/*/metrics.json")):
        try:
            metrics = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        scores = metrics.get("scores", {})
        main = metrics.get("main_metric", "")
        others = ", ".join(f"{k} {fmt(v)}" for k, v in sorted(scores.items())
                           if k != main and isinstance(v, float))[:160]
        rows.append((metrics.get("finished", ""), metrics.get("task", path.parent.parent.name),
                     f"[{path.parent.name}]({path.parent.relative_to(reports_root)}/report.md)",
                     metrics.get("split", ""), main, fmt(scores.get(main, "")), others))
    rows.sort(key=lambda r: str(r[0]), reverse=True)
    text = "# elman reports\n\nEvery run, newest first.\n\n" + md_table(
        ["finished", "task", "run", "split", "main metric", "value", "other scores"], rows) + "\n"
    write_text_atomic(reports_root / "index.md", text)
