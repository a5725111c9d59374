"""The textbook report's plots: Case A (p(red) after every token, RNN against the window
model) and Case C's reading trace (drawn by the same code as every model's trace).

Matplotlib (Agg backend) is imported when the plot is drawn, never at import time.
"""

import math

from elman.core.html import write_bytes_atomic


def case_c_probabilities(C):
    """Case C's step-by-step p(positive): the classifier σ(2·h_t) after each token."""
    return [1.0 / (1.0 + math.exp(-2.0 * h)) for h in C["h"]]


def plot_case_c(C, png_path):
    """Case C's reading trace: p(positive) after each token, with `plot_trace`."""
    from elman.core.report import plot_trace

    plot_trace([{"title": " / ".join(C["tokens"]) + " (gold: positive)",
                 "tokens": C["tokens"], "series": {"p(positive) = σ(2·h_t)":
                                                   case_c_probabilities(C)}}],
               png_path, "Case C: the judgment after each token")


def plot_case_a(rec, png_path):
    """Left: p(red) after every token for all inputs. Right: the end of the long inputs, zoomed."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, zoom) = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110,
                                   gridspec_kw={"width_ratios": [3, 2]})
    long_inputs = rec["lesson"].get("long_inputs", [])
    for i, text in enumerate(rec["inputs"]):
        steps = rec["rnn"][text]["steps"]
        xs = list(range(1, len(steps) + 1))
        ys = [s["probs"][0] for s in steps]
        is_long = text in long_inputs
        style = dict(color=f"C{i}", linestyle="--" if is_long else "-",
                     marker="o" if is_long else "s", markersize=4 if is_long else 7,
                     label=f"RNN: {text}")
        ax.plot(xs, ys, **style)
        ax.plot([xs[-1] + 0.3], [rec["window"][text]["probs"][0]], "D", color=f"C{i}",
                markerfacecolor="none", markersize=9)
        if is_long:
            zoom.plot(xs[-4:], ys[-4:], **style)
            zoom.plot([xs[-1] + 0.3], [rec["window"][text]["probs"][0]], "D", color=f"C{i}",
                      markerfacecolor="none", markersize=10)
    for a in (ax, zoom):
        a.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
        a.set_xlabel("step (token read)")
        a.grid(True, alpha=0.3)
    ax.set_ylabel("p(red)")
    ax.set_title("p(red) after each token (◇: window model)", fontsize=10)
    zoom.set_title("long inputs, last steps: the RNN differs,\nthe window (◇) is identical; "
                   "both above 0.5", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    write_bytes_atomic(png_path, buf.getvalue())
