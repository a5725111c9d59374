"""The textbook report as Markdown: the flags, one section per case, every printed value.

`report_markdown` turns the run record into the text that `runner` writes to
`report.md` (and renders to a self-contained `report.html`). Numbers are
formatted here; the Case A plot it links to is drawn by `plots`.
"""

from elman.tasks.textbook.common import DTYPE
from elman.tasks.textbook.plots import case_c_probabilities


# ----------------------------------------------------------------------------- formatting


def _fmt(v, digits=8):
    """Short float text: up to `digits` significant digits."""
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x, digits) for x in v) + "]"
    if isinstance(v, str):
        return v
    if v is None:
        return "—"
    return f"{v:.{digits}g}"


def _fmtp(v):
    """Probabilities: six decimals, as the texts print them."""
    if isinstance(v, list):
        return "[" + ", ".join(_fmtp(x) for x in v) + "]"
    return f"{v:.6f}"


def _frac(v):
    return "[" + ", ".join(v) + "]" if isinstance(v, list) else v


def _status(check):
    return "ok" if check["agrees"] else "**FLAG**"


def computed_text(value):
    """A computed value as the report shows it: words and integers as they are, floats short."""
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return str(value)
    return _fmt(value, 8)


def _flag_rows(flags):
    rows = ["| case | quantity | printed | computed | difference | tolerance | first appears "
            "| follows from the printed value before it |", "|---|---|---|---|---:|---:|---|---|"]
    for f in flags:
        follows = {True: "yes (inherited)", False: "no (a new error here)", None: "—"}[
            f["follows_from_printed"]]
        first = f"step {f['step']} ({f['first_quantity']})" if f["step"] is not None else \
            f["first_quantity"]
        diff = "—" if f["difference"] is None else f"{f['difference']:.2e}"
        tol = "—" if f["tolerance"] is None else f"{f['tolerance']:.1e}"
        rows.append(f"| {f['case']} | {f['quantity']} | {f['printed']} | "
                    f"{computed_text(f['computed'])} | {diff} | {tol} | {first} | {follows} |")
    return rows


def _printed_for(checks):
    """Printed text by record path-like key, for side-by-side columns."""
    return {c["id"]: c for c in checks}


# ----------------------------------------------------------------------------- sections


def _intro_and_flags(flags, checks):
    """The title, the method, and the table of flagged printed values."""
    lines = [
        "# Textbook cases A–G, recomputed with Keras",
        "",
        "Every number below comes from real Keras layers whose weights are set explicitly "
        "(float64). Case A is checked against exact fractions derived independently from the "
        "weights by `data/textbook/derive_expected.py` (standard library only). Every value "
        "the course texts print is shown beside the computed one; a difference beyond the "
        "printed precision (half a unit of the last printed digit; integers and fractions "
        "exact) is flagged, with the step where it first appears. Printed values are never "
        "used as results.",
        "",
        "## Flags: printed values that differ from the computation",
        "",
    ]
    if flags:
        lines += _flag_rows(flags)
        lines += ["", f"{len(flags)} of {len(checks)} printed values differ. "
                  "\"Follows from the printed value before it\" recomputes the printed value "
                  "from the text's own previous printed value: *yes* means the error was "
                  "inherited, *no* means a new one appears at that step.", ""]
    else:
        lines += [f"None: all {len(checks)} printed values agree within their precision.", ""]
    return lines


def _case_a_runs(A, checks):
    """Case A: every input step by step against the exact fractions, and the window baseline."""
    ex = A["exact"]
    lines = [
        "## Case A — the red/blue key task",
        "",
        "`h_t = ReLU(x_t·W_x + h_{t-1}·W_h + b_h)`, `z_t = h_t·W_y + b_y`, `p_t = softmax(z_t)`; "
        "W_x = W_y = I₂, W_h = 0.5·I₂, b_h = 0, b_y = [0.125, 0]; candidates "
        f"{A['candidates']} (tie → the earlier). Keras: `Embedding` → `SimpleRNN(relu)` → "
        "`Dense` head → `Softmax`. Exact columns: the oracle's fractions.",
        "",
    ]
    for text in A["inputs"]:
        run, exr = A["rnn"][text], ex["rnn"][text]
        lines += [f"### `{text}`", "",
                  "| step | token | x | h_{t-1} | h_t | h_t exact | logits | logits exact "
                  "| p = [red, blue] | printed |", "|---:|---|---|---|---|---|---|---|---|---|"]
        for i, (s, es) in enumerate(zip(run["steps"], exr["steps"])):
            printed = [c for c in checks if c["series"] == text and c["quantity_step"] == i + 1]
            ptxt = "; ".join(f"{c['quantity'].split('_')[0]} {c['printed']}"
                             + ("" if c["agrees"] else " **FLAG**") for c in printed) or ""
            lines.append(f"| {i + 1} | {s['token']} | {_fmt(s['x'])} | {_fmt(s['h_prev'])} | "
                         f"{_fmt(s['h'])} | {_frac(es['h'])} | {_fmt(s['logits'])} | "
                         f"{_frac(es['logits'])} | {_fmtp(s['probs'])} | {ptxt} |")
        lines += ["", f"RNN choice: **{run['choice']}** (oracle: {exr['choice']}).", ""]
    lines += ["### Window baseline (last two tokens)", "",
              "| input | window | logits | logits exact | p = [red, blue] | choice |",
              "|---|---|---|---|---|---|"]
    for text in A["inputs"]:
        w, ew = A["window"][text], ex["window"][text]
        lines.append(f"| `{text}` | {' '.join(w['tokens'])} | {_fmt(w['logits'])} | "
                     f"{_frac(ew['logits'])} | {_fmtp(w['probs'])} | {w['choice']} |")
    return lines


def _case_a_lesson(A):
    """Case A's lesson in exact terms, and the plot."""
    lines = []
    les = A["lesson"]
    if "blue_long" in les:
        bl = les["blue_long"]
        lines += [
            "", "**The lesson.** On the long inputs the window model gives *identical* "
            f"distributions for red and blue (identical: {les['window_identical']}): the cue "
            "never enters its computation. The RNN's distributions *differ* (differ: "
            f"{les['rnn_differs']}), but for the blue input the cue has decayed to exactly "
            f"{bl['cue_left_exact']} while the red bias is {bl['red_bias_exact']}: the red logit "
            f"leads by exactly {bl['logit_gap_exact']}, so the RNN answers **{bl['choice']}**. "
            "The path exists, the advantage does not survive — and this is exact arithmetic, "
            "not a floating-point underflow.", ""]
    lines += ["![Case A: p(red) per step](case_a_probs.png)", ""]
    return lines


def _case_a_e1(A):
    """Exercise E1: the filler search."""
    ex = A["exact"]
    e1 = A["E1"]
    lines = ["### E1 — how many fillers make the RNN choose red for a blue cue?", "",
             "| fillers | final h | logits | p = [red, blue] | choice |", "|---:|---|---|---|---|"]
    for s in e1["searched"]:
        lines.append(f"| {s['fillers']} | {_fmt(s['h'])} | {_fmt(s['logits'])} | "
                     f"{_fmtp(s['probs'])} | {s['choice']} |")
    ans = ex["E1"]["answer"] or {}
    if e1["fillers"] is None:
        lines += ["", "No filler count up to the search limit makes the RNN choose red.", ""]
    else:
        tie = e1["probs"][0] == e1["probs"][1]
        lines += ["", f"Answer (by search): **{e1['fillers']}** filler(s): `{e1['input']}`, final "
                  f"state {_fmt(e1['h'])} (exact {_frac(ans.get('h', '?'))}), logits "
                  f"{_fmt(e1['logits'])} (exact {_frac(ans.get('logits', '?'))}), choice "
                  f"**{e1['choice']}**" + (" — an exact tie, red by the tie rule." if tie else "."),
                  ""]
    return lines


def _case_a_e2_e3(A):
    """Exercises E2 and E3, and the oracle check."""
    ex = A["exact"]
    e2 = A["E2"]
    lines = ["### E2 — W_h diagonal set to 1", "",
             f"Input `{e2['input']}`: final state {_fmt(e2['h'])} (exact {_frac(ex['E2']['h'])}), "
             f"logits {_fmt(e2['logits'])} (exact {_frac(ex['E2']['logits'])}), p = "
             f"{_fmtp(e2['probs'])}, choice **{e2['choice']}**: with no decay the cue survives.",
             ""]
    e3 = A["E3"]
    lines += ["### E3 — resetting the state before every token", "",
              "| step | token | h_{t-1} | h_t | logits | p = [red, blue] |",
              "|---:|---|---|---|---|---|"]
    for i, s in enumerate(e3["reset_every_token"]["steps"]):
        lines.append(f"| {i + 1} | {s['token']} | {_fmt(s['h_prev'])} | {_fmt(s['h'])} | "
                     f"{_fmt(s['logits'])} | {_fmtp(s['probs'])} |")
    lines += ["", "Reset before every token: choice "
              f"**{e3['reset_every_token']['choice']}**; reset "
              f"once per input: **{e3['reset_once']['choice']}**; correct: {e3['correct']}. "
              f"Answer destroyed: {e3['destroyed']} — the final state only sees `is`.", ""]
    oc = A["oracle_check"]
    lines += [f"Oracle check: largest |Keras − exact| over all states and logits = "
              f"{oc['max_abs_diff']:.3g}; choices agree: {oc['choices_agree']}; stored expected "
              f"file up to date: {oc['expected_file_current']}.", ""]
    return lines


def _case_b(B, by_id):
    """Case B: the scalar tanh RNN by hand."""
    lines = ["## Case B — the tanh RNN by hand (scalar state)", "",
             "`h_t = tanh(W_xh·x_t + W_hh·h_{t-1} + b_h)`, W_xh = 1, W_hh = 0.5, b_h = 0, "
             "inputs 1, 0 (Keras `SimpleRNN(1, tanh)`).", "",
             "| step | x_t | h_t (computed) | printed | status |", "|---:|---:|---:|---:|---|"]
    for i, (x, h) in enumerate(zip(B["x"], B["h"])):
        c = by_id.get(f"B.h_{i + 1}")
        lines.append(f"| {i + 1} | {x:g} | {h:#.5g} ({h:.10f}) | {c['printed'] if c else '—'} | "
                     f"{_status(c) if c else ''} |")
    lines += ["", "The second input is zero, yet the state is not: h_2 = tanh(0.5·h_1).", ""]
    return lines


def _case_c(C, by_id):
    """Case C: a review read start to finish, with BPTT gradients."""
    lines = ["## Case C — reading a review, start to finish", "",
             "`h_t = tanh(x_t + 0.5·h_{t-1})`, `p = σ(2·h_4)`, gold label positive; Keras "
             "`SimpleRNN(1, tanh)` + `Dense(1)` classifier, binary cross-entropy from the logit. "
             "The gradients are ∂L/∂x_t by `tf.GradientTape` through the same layers (BPTT).", "",
             "| step | token | x_t | h_t (computed) | printed | status | ∂L/∂x_t (nat) |",
             "|---:|---|---:|---:|---:|---|---:|"]
    for i, (t, x, h, g) in enumerate(zip(C["tokens"], C["x"], C["h"], C["grad_x"])):
        c = by_id.get(f"C.h_{i + 1}")
        lines.append(f"| {i + 1} | {t} | {x:g} | {h:#.5g} ({h:.10f}) | "
                     f"{c['printed'] if c else '—'} | {_status(c) if c else ''} | {g:.6g} |")
    lines += ["", "| quantity | computed | printed | status |", "|---|---:|---:|---|"]
    for key, label in (("z", "z = 2·h_4"), ("p", "p = σ(z)"), ("loss_nat", "L (nat)"),
                       ("loss_bit", "L (bit) = L (nat) / ln 2")):
        c = by_id.get(f"C.{key}")
        lines.append(f"| {label} | {C[key]:#.5g} ({C[key]:.10f}) | {c['printed'] if c else '—'} | "
                     f"{_status(c) if c else ''} |")
    steps = ", ".join(f"{t} {p:.3f}" for t, p in zip(C["tokens"], case_c_probabilities(C)))
    lines += ["", f"The judgment after each token, p = σ(2·h_t): {steps}. It is drawn by the "
              "plotting code of every model's reading trace (`elman predict RUN --trace`).",
              "", "![Case C reading trace](case_c_trace.png)"]
    lines += ["", "Nats use the natural log, bits log base 2; the two are never mixed: "
              "L(bit) = L(nat) / ln 2, and likewise for the gradients "
              f"(∂L_bit/∂x = {_fmt(C['grad_x_bit'], 6)}). The error reaches x_1 only through "
              "h_3, h_2, h_1, shrinking by 0.5·(1 − h_t²) at every step back.", ""]
    return lines


def _case_d(D, by_id):
    """Case D: one LSTM cell update."""
    g = D["gates"]
    lines = ["## Case D — one LSTM cell update", "",
             "A Keras `LSTMCell(1)` with zero kernels and biases logit(0.2), logit(0.9), "
             "artanh(0.5), logit(0.5) (gate order i, f, c̃, o), so the gates take the given "
             f"values: i = {g['i']!r}, f = {g['f']!r}, c̃ = {g['c_tilde']!r} (o = {g['o']!r}, "
             "not given by the text). Each bias is the float64 number whose activation, as "
             "Keras computes it, is nearest the target; where a gate shows a last-digit "
             "difference, no float64 bias reaches the target exactly.", "",
             "| quantity | computed | printed | status |", "|---|---:|---:|---|"]
    for key, label in (("kept", "kept = f·c_{t-1}"), ("written", "written = i·c̃ (cell output "
                                                               "for c_{t-1} = 0)"), ("c", "c_t")):
        c = by_id.get(f"D.{key}")
        lines.append(f"| {label} | {D[key]:.10g} | {c['printed'] if c else '—'} | "
                     f"{_status(c) if c else ''} |")
    lines += ["", f"c_t = {D['kept']:.4g} + {D['written']:.4g} = {D['c']:.4g}; h_t = o·tanh(c_t) = "
              f"{D['h']:.6g}.", ""]
    return lines


def _case_e(E, checks):
    """Case E: the products, then the measured gradient flow."""
    from elman.core import diagnostics

    lines = ["## Case E — vanishing and exploding products", "",
             "Measured through Keras: ∂h_10/∂h_0 of a linear scalar `SimpleRNN` with W_hh = 0.5 "
             "and 1.5 (GradientTape).", "",
             "| product | computed | exact | printed | status |", "|---|---:|---:|---:|---|"]
    for key, label in (("vanish", "0.5^10"), ("explode", "1.5^10")):
        prs = [c for c in checks if c["id"].startswith(f"E.{key}")]
        lines.append(f"| {label} | {E[key]:.10g} | {E['products'][key]['exact']} | "
                     f"{'; '.join(c['printed'] for c in prs)} | "
                     f"{'; '.join(_status(c) for c in prs)} |")
    lines += ["", diagnostics.gradient_flow_markdown(E["_flow"], png_name="case_e_gradients.png",
                                                     heading_level=3)]
    return lines


def _case_f(F):
    """Case F: bidirectional state size and seq2seq shapes."""
    bi, s2s = F["bidirectional"], F["seq2seq"]
    lines = ["## Case F — bidirectional state size, and seq2seq shapes", "",
             f"`Bidirectional(SimpleRNN(3))` on {bi['input_length']} positions: output shape "
             f"{bi['output_shape']}, **{bi['per_position']}** numbers per position (forward 3, "
             f"then backward 3: {bi['concat_is_forward_then_backward']}).", "",
             f"Encoder–decoder (GRU 16): input `{s2s['source']}` has **{s2s['input_length']}** "
             f"characters, output `{' '.join(s2s['target_tokens'])}` has "
             f"**{s2s['output_length']}** tokens. Fitted to this one pair ({s2s['train_steps']} "
             f"Adam steps, final loss {s2s['final_loss']:.3g}), greedy decoding from `<start>` "
             f"with its own previous prediction fed back, cap {s2s['length_cap']}: "
             f"`{' '.join(s2s['decoded'])}` (stopped at `<eos>`: {s2s['stopped_at_eos']}).", ""]
    return lines


def _case_g(G):
    """Case G: the RNN language model."""
    gc, tb, gen = G["grad_check"], G["tbptt"], G["generation"]
    lines = ["## Case G — the RNN language model", "",
             f"Sample {' / '.join(G['tokens'])}: inputs {' '.join(G['inputs'])}, targets "
             f"{' '.join(G['targets'])} (Keras `Embedding` → `SimpleRNN(8)` → `Dense`, float64).",
             "", "| step | input | target | cross-entropy (nat), initial weights |",
             "|---:|---|---|---:|"]
    for i, (a, b, l) in enumerate(zip(G["inputs"], G["targets"], G["per_step_loss"])):
        lines.append(f"| {i + 1} | {a} | {b} | {l:.6f} |")
    lines += ["", f"Sum {G['loss_sum']:.6f}, mean {G['loss_mean']:.6f}. Shared weights: the "
              f"gradient of the summed loss equals the sum of the per-step gradients, largest "
              f"difference {gc['max_abs_diff']:.2e} (largest gradient {gc['max_abs_grad']:.3g}; "
              f"equal: {gc['equal']}).", "",
              f"Truncated BPTT with K = {tb['K']}: the state crosses the chunk boundary "
              f"(same loss: {tb['same_loss']}), the gradient does not (∂L_chunk2/∂x_chunk1 = "
              f"{tb['cross_boundary_grad']:g}; the weight gradient differs from full BPTT by "
              f"{tb['grad_difference_norm']:.3g}).", "",
              f"Greedy generation from `{' '.join(gen['prefix'])}` after "
              f"{G['training']['steps']} Adam steps: re-running the prefix "
              f"`{' '.join(gen['naive'])}`, carrying the state `{' '.join(gen['carried_state'])}` "
              f"(identical: {gen['identical']}; the default is the carried state, linear time).",
              ""]
    return lines


def _all_printed(checks):
    """Every printed value beside the computed one."""
    lines = ["## All printed values", "",
             "| case | series | quantity | printed | computed | status |",
             "|---|---|---|---|---|---|"]
    for c in checks:
        lines.append(f"| {c['case']} | {c['series']} | {c['quantity']} | {c['printed']} | "
                     f"{computed_text(c['computed'])} | {_status(c)} |")
    return lines


def _reproducibility(A, meta):
    """Data hashes and library versions."""
    lines = ["", "## Reproducibility", "",
             f"- data: `{A['data']['file']}` sha256 `{A['data']['sha256']}`",
             f"- printed values: `{meta['printed_values']['file']}` sha256 "
             f"`{meta['printed_values']['sha256']}`",
             f"- python {meta['python']}, tensorflow {meta['tensorflow']}, keras {meta['keras']}, "
             f"numpy {meta['numpy']}; device {meta['device']}; dtype {DTYPE} (Cases A–E, G)",
             ""]
    return lines


def report_markdown(record, checks):
    """The whole report as Markdown.

    Args:
        record: dict, the run record, with `E["_flow"]` (the full gradient-flow measurement).
        checks: list of dict, every printed-value comparison (from `check_printed`).

    Returns:
        str, the Markdown text.
    """
    A, B, C, D, E, F, G = (record[k] for k in "ABCDEFG")
    by_id = _printed_for(checks)
    lines = _intro_and_flags(record["flags"], checks)
    lines += _case_a_runs(A, checks) + _case_a_lesson(A) + _case_a_e1(A) + _case_a_e2_e3(A)
    lines += _case_b(B, by_id) + _case_c(C, by_id) + _case_d(D, by_id) + _case_e(E, checks)
    lines += _case_f(F) + _case_g(G)
    lines += _all_printed(checks) + _reproducibility(A, record["meta"])
    return "\n".join(lines)
