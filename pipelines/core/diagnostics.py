"""Gradient-flow diagnostics: how far back does the error signal reach?

`gradient_flow` measures ‖∂loss/∂x_t‖ against the distance from the last step
for a Keras SimpleRNN, LSTM and GRU of the same width on one random sequence
(loss: the sum of the last step's output), with and without clipping by global
norm. A reference SimpleRNN whose recurrent kernel has spectral radius > 1 (and
a linear activation, so nothing saturates) shows an exploding gradient; the
tanh SimpleRNN shows a vanishing one. Clipping multiplies every gradient by the
same factor min(1, c / ‖g‖): it caps the exploding total and leaves the ratio
between far and near steps, the vanishing, exactly as it was.

Used by `elman diagnose gradients` (`run_gradients`), by the textbook's Case E
and by any task report run with `--diagnose`.
"""

import json
import math
import sys
from pathlib import Path

from elman.core.html import render_html, write_bytes_atomic, write_text_atomic
from elman.errors import UserError

CELLS = ("rnn", "lstm", "gru")
TABLE_DISTANCES = (0, 1, 2, 5, 10, 20, 50, 100)
_LABELS = {"rnn": "SimpleRNN (tanh)", "lstm": "LSTM", "gru": "GRU"}


def _explode_label(radius):
    return f"SimpleRNN (linear, spectral radius {radius:g})"


def _make_layer(name, units, seed, explode_radius):
    """Builds the recurrent layer measured for `name`, with seeded initializers."""
    import keras

    common = dict(units=units, name=name,
                  kernel_initializer=keras.initializers.GlorotUniform(seed=seed),
                  recurrent_initializer=keras.initializers.Orthogonal(seed=seed + 1))
    if name == "rnn":
        return keras.layers.SimpleRNN(activation="tanh", **common)
    if name == "lstm":
        return keras.layers.LSTM(**common)
    if name == "gru":
        return keras.layers.GRU(**common)
    # rnn_explode: orthogonal times the radius has every singular value equal to the
    # radius, so the backward product grows by exactly that factor per step.
    common["recurrent_initializer"] = keras.initializers.Orthogonal(gain=explode_radius,
                                                                    seed=seed + 1)
    return keras.layers.SimpleRNN(activation="linear", **common)


def _check_arguments(cells, units, length, clip_norm, explode_radius):
    """Validates gradient_flow's arguments; returns the clipping threshold."""
    for name in cells:
        if name not in CELLS:
            raise ValueError(f"Expected cells to be among {set(CELLS)}. Received: cell={name!r}")
    if not cells and explode_radius is None:
        raise ValueError("Expected at least one cell. Received: cells=()")
    if int(units) < 1 or int(length) < 2:
        raise ValueError(f"Expected units >= 1 and length >= 2. Received: units={units}, "
                         f"length={length}")
    clip = 1.0 if clip_norm is None else float(clip_norm)
    if not clip > 0:
        raise ValueError(f"Expected clip_norm > 0. Received: clip_norm={clip_norm}")
    if explode_radius is not None and not explode_radius > 0:
        raise ValueError(f"Expected explode_radius > 0. Received: explode_radius={explode_radius}")
    return clip


def _measure(layer, x, clip, far):
    """One layer's input-gradient norms by distance from the last step, and clipping's effect."""
    import tensorflow as tf

    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(layer(x))
    grads = tape.gradient(loss, [x] + list(layer.trainable_weights))
    gx, gw = grads[0], grads[1:]
    # Distance d from the last step: position length - 1 - d.
    norms = tf.norm(gx[0], axis=-1).numpy()[::-1].astype(float)
    (gx_clipped,), gx_global = tf.clip_by_global_norm([gx], clip)
    clipped = tf.norm(gx_clipped[0], axis=-1).numpy()[::-1].astype(float)
    gw_clipped, gw_global = tf.clip_by_global_norm(gw, clip)
    gx_global, gw_global = float(gx_global), float(gw_global)
    zeros = [d for d, v in enumerate(norms) if v == 0.0]

    def ratio(v):
        return float(v[far] / v[0]) if v[0] > 0 else None

    return {
        "norms": [float(v) for v in norms],
        "clipped_norms": [float(v) for v in clipped],
        "input_grad_global_norm": gx_global,
        "clip_scale": min(1.0, clip / gx_global) if gx_global > 0 else 1.0,
        "weight_grad_global_norm": gw_global,
        "weight_grad_global_norm_clipped": float(tf.linalg.global_norm(gw_clipped)),
        "far_near_ratio": ratio(norms),
        "far_near_ratio_clipped": ratio(clipped),
        "underflow_from": zeros[0] if zeros else None,
    }


def gradient_flow(cells=CELLS, units=32, length=120, seed=0, clip_norm=None,
                  explode_radius=1.2):
    """Measures ‖∂loss/∂x_t‖ against the distance from the last step, with and without clipping.

    Each layer reads the same random sequence (standard normal, `units` features,
    batch 1, float32); the loss is the sum of the last step's output. Clipping is
    `tf.clip_by_global_norm`, applied to the input gradients (the plotted
    quantity) and, separately, to the layer's weight gradients (what training clips).

    Args:
        cells: tuple of str, any of "rnn", "lstm", "gru". Default ("rnn", "lstm", "gru").
        units: int, the width of every layer and of the input. Default 32.
        length: int, the sequence length (use ≥ 100 to see vanishing). Default 120.
        seed: int, seeds the input and the initializers. Default 0.
        clip_norm: float or None, the global-norm threshold; None uses 1.0. Default None.
        explode_radius: float or None, adds the exploding reference "rnn_explode" (a linear
            SimpleRNN with this spectral radius) when not None. Default 1.2.

    Returns:
        dict with `units`, `length`, `seed`, `clip_norm`, `distances`, `table_distances`
        and `cells`: for each measured layer its `label`, `norms` and `clipped_norms`
        (index = distance from the last step), `input_grad_global_norm`, `clip_scale`,
        `weight_grad_global_norm`, `weight_grad_global_norm_clipped`, `far_near_ratio`,
        `far_near_ratio_clipped` and `underflow_from` (first distance whose norm is 0).

    Example:
        >>> result = gradient_flow(units=16, length=100)
        >>> result["cells"]["lstm"]["norms"][0] > result["cells"]["lstm"]["norms"][99]
        True
    """
    cells = tuple(cells)
    clip = _check_arguments(cells, units, length, clip_norm, explode_radius)

    import numpy as np
    import tensorflow as tf

    units, length = int(units), int(length)
    x = tf.constant(np.random.default_rng(seed).standard_normal((1, length, units)),
                    dtype=tf.float32)
    names = cells + (("rnn_explode",) if explode_radius is not None else ())
    far = min(100, length - 1)
    result = {
        "units": units, "length": length, "seed": seed, "clip_norm": clip,
        "explode_radius": explode_radius, "input": "standard normal, batch 1, float32",
        "loss": "sum of the last step's output", "far_distance": far,
        "distances": list(range(length)),
        "table_distances": [d for d in TABLE_DISTANCES if d < length],
        "cells": {},
    }
    for name in names:
        layer = _make_layer(name, units, seed, explode_radius)
        result["cells"][name] = {"label": _LABELS.get(name) or _explode_label(explode_radius),
                                 **_measure(layer, x, clip, far)}
    return result


def plot_gradient_flow(result, png_path):
    """Plots the norms against the distance, one line per layer, clipped dashed, log scale.

    Zero norms (float32 underflow) cannot be drawn on a log axis and are left out
    of the line; the table reports them.

    Args:
        result: dict, from `gradient_flow`.
        png_path: str or Path, where the PNG is written (atomically).

    Example:
        >>> plot_gradient_flow(gradient_flow(), "reports/diagnostics/gradients.png")
    """
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4.6), dpi=110)
    for i, (name, cell) in enumerate(result["cells"].items()):
        color = f"C{i}"
        for key, style, suffix in (("norms", "-", ""), ("clipped_norms", "--", ", clipped")):
            pts = [(d, v) for d, v in enumerate(cell[key]) if v > 0 and math.isfinite(v)]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color,
                        linewidth=1.6 if style == "-" else 1.2,
                        label=cell["label"] + suffix)
    ax.set_yscale("log")
    ax.set_xlabel("distance from the last step (steps)")
    ax.set_ylabel("‖∂loss/∂x_t‖")
    ax.set_title(f"Gradient flow: width {result['units']}, length {result['length']}, "
                 f"clip by global norm {result['clip_norm']:g}")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    write_bytes_atomic(png_path, buf.getvalue())


def _fmt(v):
    if v is None:
        return "n/a"
    if v == 0.0:
        return "0 (underflow)"
    if not math.isfinite(v):
        return str(v)
    return f"{v:.3e}"


def gradient_flow_markdown(result, png_name="gradients.png", heading_level=2):
    """Formats the measurement as a Markdown section: the plot, a distance table, a clipping table.

    Args:
        result: dict, from `gradient_flow`.
        png_name: str, the plot's path relative to the Markdown file. Default "gradients.png".
        heading_level: int, the level of the section heading; 0 leaves the heading out (for a
            caller that writes its own). Default 2.

    Returns:
        str, the Markdown section.

    Example:
        >>> md = gradient_flow_markdown(gradient_flow(), png_name="gradients.png")
    """
    cells = result["cells"]
    far = result["far_distance"]
    clip = result["clip_norm"]
    lines = [f"{'#' * heading_level} Gradient flow", ""] if heading_level else []
    lines += [
        f"‖∂loss/∂x_t‖ against the distance from the last step, for Keras layers of width "
        f"{result['units']} on one random sequence of length {result['length']} "
        f"(seed {result['seed']}; loss = {result['loss']}). Dashed: after clipping by global "
        f"norm {clip:g}.",
        "",
        f"![gradient norm against distance]({png_name})",
        "",
        "| distance | " + " | ".join(f"{c['label']}" for c in cells.values()) + " | "
        + " | ".join(f"{c['label']}, clipped" for c in cells.values()) + " |",
        "|---:|" + "---:|" * (2 * len(cells)),
    ]
    for d in result["table_distances"]:
        lines.append(f"| {d} | " + " | ".join(_fmt(c["norms"][d]) for c in cells.values())
                     + " | " + " | ".join(_fmt(c["clipped_norms"][d]) for c in cells.values())
                     + " |")
    lines += [
        "",
        f"Clipping by global norm {clip:g} multiplies every gradient by min(1, {clip:g} / ‖g‖):",
        "",
        f"| layer | ‖∂L/∂x‖ (all steps) | scale | ratio d={far} / d=0 | ratio, clipped "
        "| ‖∂L/∂W‖ | ‖∂L/∂W‖, clipped | underflow from d |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in cells.values():
        under = "none" if c["underflow_from"] is None else str(c["underflow_from"])
        lines.append(
            f"| {c['label']} | {_fmt(c['input_grad_global_norm'])} | {c['clip_scale']:.3g} | "
            f"{_fmt(c['far_near_ratio'])} | {_fmt(c['far_near_ratio_clipped'])} | "
            f"{_fmt(c['weight_grad_global_norm'])} | "
            f"{_fmt(c['weight_grad_global_norm_clipped'])} | {under} |")
    lines += ["", "Reading:", ""]
    for c in cells.values():
        peak = max(c["clipped_norms"])
        if c["far_near_ratio"] is not None and c["far_near_ratio"] > 1:
            lines.append(
                f"- {c['label']}: exploding. The gradient {far} steps back is "
                f"{c['far_near_ratio']:.3g}× the last step's. Clipping scaled everything by "
                f"{c['clip_scale']:.3g}, so the largest step norm is now {peak:.3g} "
                f"(≤ {clip:g}); the ratio is unchanged ({_fmt(c['far_near_ratio_clipped'])}).")
        else:
            lines.append(
                f"- {c['label']}: vanishing. The gradient {far} steps back is "
                f"{_fmt(c['far_near_ratio'])} of the last step's. Clipping (scale "
                f"{c['clip_scale']:.3g}) can only scale it further down; the ratio stays "
                f"{_fmt(c['far_near_ratio_clipped'])}.")
    lines += ["", "Clipping by global norm limits exploding gradients and does nothing for "
              "vanishing ones: it never changes the ratio between steps.", ""]
    return "\n".join(lines)


def _summary_json(result):
    return json.dumps(result, indent=1, sort_keys=True) + "\n"


def run_gradients(out="reports/diagnostics", length=120, units=32, seed=0, clip_norm=1.0,
                  cells="rnn,lstm,gru", log=print):
    """`elman diagnose gradients`: writes gradients.md, .html, .png and .json to `out`.

    Args:
        out: str or Path, the output folder. Default "reports/diagnostics".
        length: int, sequence length (vanishing shows best at 100 or more). Default 120.
        units: int, layer width. Default 32.
        seed: int, random seed. Default 0.
        clip_norm: float, the global-norm clipping threshold. Default 1.0.
        cells: str, comma-separated cells among rnn, lstm, gru. Default all three.
        log: callable for the written files' paths.

    Returns:
        0. A bad value is a UserError.
    """
    try:
        result = gradient_flow(cells=tuple(c.strip() for c in cells.split(",") if c.strip()),
                               units=units, length=length, seed=seed, clip_norm=clip_norm)
    except ValueError as err:
        raise UserError(f"diagnose gradients: {err}") from None
    out = Path(out)
    plot_gradient_flow(result, out / "gradients.png")
    md = "# Gradient-flow diagnostics\n\n" + gradient_flow_markdown(result, "gradients.png")
    write_text_atomic(out / "gradients.md", md)
    write_text_atomic(out / "gradients.html", render_html("Gradient-flow diagnostics", md, out))
    write_text_atomic(out / "gradients.json", _summary_json(result))
    if length < 100:
        print(f"note: length {length} < 100; vanishing shows best at 100 or more",
              file=sys.stderr)
    for name in ("gradients.md", "gradients.html", "gradients.png", "gradients.json"):
        log(out / name)
    return 0
