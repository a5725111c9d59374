"""`elman bench` output: JSON-ready values and the terminal table."""


# ---------------------------------------------------------------- output

def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        try:
            return value.item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _fmt(value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if abs(value) >= 1e9:
            return f"{value / 1e9:,.2f} G"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    return str(value)


_TABLE_SKIP = {"machine", "markdown", "run", "data", "quick"}  # kept in bench.json only


def _flatten(prefix, value, rows):
    if isinstance(value, dict):
        for k, v in value.items():
            if str(k).startswith("_") or str(k) in _TABLE_SKIP:
                continue
            if isinstance(v, str) and len(v) > 80:
                continue
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, rows)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            _flatten(f"{prefix}[{i}]", v, rows)
    else:
        rows.append((prefix, _fmt(value) if not isinstance(value, list)
                     else ", ".join(_fmt(v) for v in value)))


def table(result):
    """The terminal table: the headline rows, then every task's numbers."""
    rows = []
    m = result["machine"]
    rows.append(("machine", f"{m['cpu_model']}, {m['cpu_cores']} cores "
                            f"(load {m['load_average_at_start']}), {m['device']}, "
                            f"TF {m['tensorflow']}"))
    d = result["data"]
    rows.append(("data", f"{d['name']} ({d['examples']} train sentences, mean "
                         f"{d['mean_tokens']:.1f} tokens; {d['note']})"))
    p = result["pipeline_vs_reference"]
    rows.append(("[1] model", p["model"]))
    rows.append(("[1] elman training tokens/s", _fmt(p["elman_tokens_per_s"]) +
                 f"  ({p['elman_setting']}; {p['elman_xla_shapes']} batch shapes compiled "
                 f"first in {p['elman_xla_compile_seconds']:.1f} s)"))
    rows.append(("[1] elman training tokens/s without those settings",
                 _fmt(p["elman_graph_tokens_per_s"]) + f"  ({p['speedup_graph']:.2f}x)"))
    rows.append(("[1] reference training tokens/s (real tokens)",
                 _fmt(p["reference_tokens_per_s"]) +
                 f"  ({100 * p['reference_real_token_share']:.1f}% of its positions are real; "
                 f"elman's bucketed batches: {100 * p['elman_real_token_share']:.1f}%)"))
    rows.append((f"[1] speedup (target >= {p['target']:g}x)",
                 f"{p['speedup']:.2f}x  {'meets' if p['meets_target'] else 'MISSES'} target"))
    s = result["input_pipeline"]
    rows.append(("[2] input pipeline share of step time (target <= 10%)",
                 f"{100 * s['share']:.1f}%{' (below the timing noise)' if s['share'] < 0 else ''}"
                 f"  {'meets' if s['meets_target'] else 'MISSES'} target "
                 f"(model only {s['model_only_s']:.2f} s vs full {s['full_step_s']:.2f} s, "
                 f"{s['batches']} batches, best of {s['passes']})"))
    rows.append(("[2] time blocked waiting for the next batch",
                 f"{100 * s['blocked_share']:.1f}% of the full steps (pipeline alone "
                 f"{s['pipeline_alone_s']:.2f} s, start-up {s['pipeline_startup_s']:.2f} s)"))
    f = result["recurrent_flops"]
    rows.append(("[3] dense matmul 1024^3 FLOP/s", _fmt(f["dense_matmul_1024_flops_per_s"])))
    rows.append(("[3] LSTM-step matmul " + "x".join(map(str, f["lstm_step_matmul_shape"])) +
                 " FLOP/s", _fmt(f["lstm_step_matmul_flops_per_s"])))
    rows.append(("[3] elman recurrent FLOP/s (useful) / dense",
                 f"{_fmt(f['elman_recurrent_flops_per_s'])} / dense = {f['ratio']:.3f}"))
    if "elman_token_budget_flops_per_s" in f:
        rows.append((f"[3] elman, token-budget batches ({p['elman_token_budget']} tokens), "
                     "useful FLOP/s / reference executed",
                     f"{_fmt(f['elman_token_budget_flops_per_s'])} / "
                     f"{_fmt(f['reference_executed_flops_per_s'])} = "
                     f"{f['token_budget_over_reference_executed']:.2f}"))
    rows.append(("[3] reference recurrent FLOP/s (executed, padding included) / dense",
                 f"{_fmt(f['reference_executed_flops_per_s'])} / dense = "
                 f"{f['reference_executed_ratio']:.3f}"))
    rows.append(("[3] BiLSTM alone, fwd+bwd, length "
                 f"{f['isolated_length']} / dense",
                 f"{_fmt(f['isolated_bilstm_flops_per_s'])} / dense = "
                 f"{f['isolated_ratio']:.3f}"))
    for name, values in result.get("tasks", {}).items():
        flat = []
        _flatten("", values, flat)
        for key, value in flat:
            rows.append((f"[4] {name}: {key}", value))
    for row in result.get("sentiment", []):
        rows.append((f"[5] sentiment {row['data']}: training tokens/s",
                     _fmt(row["train_tokens_per_s"]) + f"  ({row['model']})"))
        rows.append((f"[5] sentiment {row['data']}: prediction sentences/s",
                     _fmt(row["predict_sentences_per_s"]) +
                     f"  ({row['predict_sentences']} raw sentences, batch 256)"))
    from elman.bench.trace import table_rows as trace_rows

    rows.extend(trace_rows(result.get("trace", {})))
    from elman.bench.tokenizer_speed import table_rows as tokenizer_rows

    rows.extend(tokenizer_rows(result.get("tokenizers", {})))
    for name, reason in result.get("skipped", {}).items():
        rows.append((f"skipped: {name}", reason))
    width = max(len(r[0]) for r in rows)
    lines = [f"{a.ljust(width)}  {b}" for a, b in rows]
    return "\n".join(["elman bench" + (" (quick)" if result["quick"] else ""),
                      "-" * min(width + 40, 120)] + lines)


