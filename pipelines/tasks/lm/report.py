"""The language-model report's parts: the summary, the perplexity curves, generated
samples (greedy and sampled, checked against the naive whole-prefix re-run), the reading
traces of two validation lines and the data section."""

import collections

from elman.core import report as rep
from elman.tasks.lm.vocabulary import decode_ids, detokenize, encode_stream, encode_tokens
from elman.text.splitters import EOL_TOKEN


def sample_settings(cfg):
    """(prefix length, sample length) in tokens: the config's, or the level's defaults."""
    level = cfg.text.level
    prefix = cfg.report.prefix_length or (4 if level == "character" else 3)
    length = cfg.report.sample_length or {"character": 80, "subword": 40}.get(level, 30)
    return prefix, length


def _prefixes(stream, prefix_length, wanted):
    """The first `wanted` distinct line starts of a token stream."""
    prefixes, current = [], []
    for token in stream:
        if token == EOL_TOKEN:
            if current and current[:prefix_length] not in prefixes:  # distinct prefixes
                prefixes.append(current[:prefix_length])
            current = []
            if len(prefixes) >= wanted:
                break
        else:
            current.append(token)
    return prefixes


def samples(model, cfg, vocabulary, validation_stream):
    """Greedy and sampled continuations of prefixes from the validation text.

    Args:
        model: the inference `LanguageModel`.
        cfg: LMConfig.
        vocabulary: list of str.
        validation_stream: list of str, the validation split's tokens.

    Returns:
        (rows, identical, sample length): one row per prefix and mode; whether the
        naive whole-prefix re-run gave the same greedy tokens for every prefix.
    """
    import numpy as np

    from elman.bench.reference_generation import generate_naive
    from elman.tasks.lm.generation import generate

    prefix_length, length = sample_settings(cfg)
    rows, identical = [], True
    for k, tokens in enumerate(_prefixes(validation_stream, prefix_length, cfg.report.samples)):
        ids = encode_tokens([EOL_TOKEN] + tokens, vocabulary)
        greedy = generate(model, ids, length)
        identical = identical and bool(np.array_equal(greedy, generate_naive(model, ids, length)))
        sampled = generate(model, ids, length, temperature=cfg.report.temperature,
                           seed=cfg.train.seed + k)
        for mode, temperature, out in (("greedy", 0.0, greedy),
                                       ("sampled", cfg.report.temperature, sampled)):
            rows.append({"prefix": detokenize(tokens, cfg.text.level), "mode": mode,
                         "temperature": temperature,
                         "continuation": detokenize(decode_ids(out, vocabulary),
                                                    cfg.text.level)})
    return rows, identical, length


def _plot_perplexity(history, path):
    plt = rep._pyplot()
    fig, ax = plt.subplots(figsize=(5.4, 3.4))
    for key, label in (("perplexity", "train (running, with dropout)"),
                       ("val_perplexity", "validation")):
        values = history.get(key, [])
        if values:
            ax.plot(range(1, len(values) + 1), values, marker="o", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("perplexity (log scale)")
    ax.set_title("Perplexity per epoch")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    return rep._save(fig, path)


def curves_section(history, report_dir):
    """The "Learning curves" section: perplexity per epoch, then the loss curves."""
    ppl_png = _plot_perplexity(history, report_dir / "perplexity.png")
    curves = rep.plot_learning_curves(history, report_dir / "learning_curves.png")
    return "\n\n".join(["## Learning curves", f"![perplexity per epoch]({ppl_png})",
                        f"![learning curves]({curves})"])


def summary(ctx, parameters, stream):
    """The report's first blocks: the run, the scores table, training, how it is scored.

    Args:
        ctx: the run's `RunContext` (scored).
        parameters: int, the inference model's parameter count.
        stream: int, tokens per parallel training stream.
    """
    cfg, result, level = ctx.cfg, ctx.fitted.result, ctx.cfg.text.level
    character = level == "character"
    results = {name: r.scores for name, r in ctx.results.items()}
    headers = ["split", "perplexity", "cross-entropy (nats)"] + (
        ["bits per character"] if character else []) + ["tokens scored"]
    score_rows = [(name, s["perplexity"], s["cross_entropy"])
                  + ((s["bits_per_character"],) if character else ())
                  + (s["tokens"],) for name, s in results.items()]
    first_val = result.history.get("val_perplexity", [float("nan")])[0]
    return [
        f"Run `{ctx.run_dir}` · task **language model** · {level} level · model: embedding "
        f"{cfg.model.embedding_dim} → {cfg.model.num_layers}×{cfg.model.cell.upper()}"
        f"({cfg.model.units}) → softmax over {len(ctx.state.vocabulary)} ids, "
        f"{parameters:,} parameters.",
        rep.md_table(headers, score_rows),
        f"Truncated BPTT: {cfg.train.batch_size} parallel streams of {stream} tokens, chunks of "
        f"K = {cfg.train.chunk_length} steps, state carried across chunks; gradients clipped "
        f"by global norm {cfg.train.clipnorm or 'off'}. Trained {result.epochs_run} epochs "
        f"(best: epoch {result.best_epoch}{', stopped early' if result.stopped_early else ''}); "
        f"validation perplexity {first_val:.2f} after epoch 1 → "
        f"{results['validation']['perplexity']:.2f} at the best epoch; "
        f"{result.tokens_per_second:,.0f} training tokens/s in this process.",
        "Perplexity is exp of the mean next-token cross-entropy over every token of the text "
        f"(`<eol>` and `[UNK]` included), the state carried through the text "
        f"({cfg.train.eval_batch_size} stream{'s' if cfg.train.eval_batch_size > 1 else ''})."
        + (" Bits per character = cross-entropy / ln 2." if character else ""),
    ]


def samples_section(cfg, rows, identical, sample_length):
    """The "Generated samples" section."""
    table = rep.md_table(
        ["prefix", "mode", "continuation"],
        [(s["prefix"], s["mode"] if s["mode"] == "greedy" else f"T = {s['temperature']:g}",
          s["continuation"].replace("\n", " ⏎ ")) for s in rows])
    return "\n\n".join([
        "## Generated samples",
        f"{sample_length} tokens after prefixes from the validation text; greedy, and sampled at "
        f"temperature {cfg.report.temperature} (seed {cfg.train.seed} + prefix number). The "
        "state-carrying generator and the naive whole-prefix re-run gave "
        f"{'identical' if identical else 'DIFFERENT'} greedy tokens for these prefixes.",
        table if rows else "(no prefixes in the validation text)",
    ])


TRACE_RANKED_TOKENS = 20000  # validation tokens read to rank the lines (the first ones)
TRACE_MAX_LINE = 150  # tokens: longer lines are picked only when no line is shorter


def _line_surprisals(model, cfg, vocabulary, stream):
    """The validation lines (units) and each one's mean surprisal in bits, read as
    `elman evaluate --trace` reads the file (`train.eval_batch_size` pieces, the state
    carried), over the first `TRACE_RANKED_TOKENS` tokens; lines not fully scored are left
    out. Returns a list of (tokens with their `<eol>`, bits per token)."""
    import numpy as np

    from elman.tasks.lm.trace import stream_trace

    units, current = [], []
    for token in stream:
        current.append(token)
        if token == EOL_TOKEN:
            units.append(current)
            current = []
            if sum(map(len, units)) >= TRACE_RANKED_TOKENS:
                break
    flat = [t for unit in units for t in unit]
    if len(flat) < 2:
        return []
    ids = encode_stream(flat, vocabulary)
    scored = stream_trace(model, ids, cfg.train.eval_batch_size, top=1)
    unit_of = np.repeat(np.arange(len(units)), [len(u) for u in units])
    where = unit_of[scored["position"] - 1]
    bits = np.bincount(where, -scored["log_prob"] / np.log(2), minlength=len(units))
    counts = np.bincount(where, minlength=len(units))
    return [(unit, float(bits[k] / counts[k])) for k, unit in enumerate(units)
            if counts[k] == len(unit)]


def _picked_lines(lines):
    """{"highest surprisal": line, "typical": line}: the line of the highest mean
    surprisal and, of the others, the median one (lines of at most TRACE_MAX_LINE tokens
    when there are any)."""
    short = [line for line in lines if 2 <= len(line[0]) <= TRACE_MAX_LINE]
    ranked = sorted(short or lines, key=lambda line: -line[1])
    if not ranked:
        return {}
    rest = ranked[1:]
    return {"highest surprisal": ranked[0],
            **({"typical": rest[len(rest) // 2]} if rest else {})}


def _shown(token):
    from elman.core.trace import shown

    return "␣" if token == " " else shown(token)


def trace_section(model, cfg, vocabulary, stream, validation_bits, report_dir, pieces=None):
    """The "Reading traces" section: each token's surprisal in bits on the validation line
    the model found hardest and on a typical one, each read on its own from a fresh state
    as `elman predict RUN --trace "line"` reads it.

    Args:
        model: the inference `LanguageModel`.
        cfg: LMConfig.
        vocabulary: list of str.
        stream: list of str, the validation split's tokens.
        validation_bits: float, the validation cross-entropy in bits per token.
        report_dir: Path, where the plot goes.
        pieces: the run's `PieceSplitter` at subword level, else None.
    """
    from elman.tasks.lm.data import token_stream
    from elman.tasks.lm.trace import stream_trace, trace_record

    picked = _picked_lines(_line_surprisals(model, cfg, vocabulary, stream))
    md = ["## Reading traces",
          "Each token's surprisal (bits: −log₂ of its probability given the tokens before it; "
          "the `<eol>` that ends the line is scored too) on the validation line of the "
          "highest mean surprisal and on a typical one (the median of the others), ranked "
          f"as `elman evaluate RUN --trace` reads the file (its first {TRACE_RANKED_TOKENS:,} "
          "tokens, the state carried) and drawn as each line reads on its own, from a fresh "
          "state: `elman predict RUN --trace \"line\"` prints the same, with the tokens the "
          f"model expected. Dotted: the validation mean, {validation_bits:.2f} bits/token."]
    if not picked:
        return "\n\n".join(md + ["No validation line to trace."])
    traces = []
    for tokens, _ in picked.values():
        text = detokenize(tokens[:-1], cfg.text.level)
        line_tokens = token_stream([text], cfg.text, pieces)
        ids = encode_stream(line_tokens, vocabulary)
        traces.append({"text": text, **trace_record(line_tokens, ids,
                                                    stream_trace(model, ids, 1, top=3),
                                                    vocabulary)})
    panels = [{"title": f"{kind}: {t['text'][:100]}",
               "tokens": [s["token"] for s in t["steps"]],
               "series": {"surprisal (bits)": [s["surprisal_bits"] for s in t["steps"]]}}
              for kind, t in zip(picked, traces)]
    png = rep.plot_trace(panels, report_dir / "trace_validation.png", "Validation lines",
                         ylabel="surprisal (bits)", ylim=None, reference=validation_bits,
                         xlabel="tokens")
    md.append(f"![validation line traces]({png})")
    rows = []
    for (kind, (_, in_file)), t in zip(picked.items(), traces):
        top = max(t["steps"], key=lambda s: s["surprisal_bits"])
        rows.append((kind, t["text"][:120], t["tokens_scored"], t["total_bits"] /
                     t["tokens_scored"], in_file, _shown(top["token"]), top["surprisal_bits"],
                     ", ".join(f"{_shown(e['token'])} {e['probability']:.3f}"
                               for e in top["expected"])))
    md.append(rep.md_table(["line", "text", "tokens", "bits/token (alone)",
                            "bits/token (in the file)", "most surprising token", "its bits",
                            "expected there"], rows))
    return "\n\n".join(md)


def data_section(cfg, splits, stats, vocabulary, train_tokens):
    """The "Data" section: tokens per split, OOV rates, the vocabulary and its cut.

    Args:
        cfg: LMConfig.
        splits: dict name → `Split`.
        stats: dict name → `split_stats` dict.
        vocabulary: list of str.
        train_tokens: list of str, the training token stream.
    """
    train_counts = collections.Counter(train_tokens)
    rows = [(name, s.source, stats[name]["lines"], stats[name]["tokens"],
             stats[name]["distinct"], stats[name]["oov"], f"{100 * stats[name]['oov_rate']:.2f}%")
            for name, s in splits.items()]
    distinct = len(train_counts)
    kept = len(vocabulary) - 2
    cut = distinct - kept
    top = ", ".join(f"`{t or ' '}` {c}" for t, c in train_counts.most_common(12))
    md = ["## Data",
          f"Tokens: {cfg.text.level} level, {'lower-cased' if cfg.text.lowercase else 'cased'}, "
          f"an `<eol>` token after each {cfg.text.unit}."
          + ("" if cfg.text.level != "subword" else
             f" The pieces are a SentencePiece {cfg.text.algorithm} model "
             f"(`text.vocabulary_size` {cfg.text.vocabulary_size}) learned on the training "
             "text alone; `▁` marks a piece that starts a word."),
          rep.md_table(["split", "source", "lines", "tokens", "distinct tokens", "OOV tokens",
                        "OOV rate"], rows),
          f"Vocabulary: {len(vocabulary)} ids (padding, `[UNK]` and {kept} training tokens); "
          f"{distinct} distinct training tokens, {cut} left out "
          f"(cap {cfg.text.max_vocabulary or 'none'}, min count {cfg.text.min_count}); "
          "OOV tokens count as `[UNK]` and are scored like any other token.",
          f"Most frequent training tokens: {top}."]
    return "\n\n".join(md)
