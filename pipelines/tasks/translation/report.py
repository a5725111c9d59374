"""The translation report's sections: the run line, per-split results with sample
translations, attention heatmaps and the data table."""

import random

from elman.core import report as rep
from elman.core.run import weights_text
from elman.tasks.translation.config import END
from elman.tasks.translation.scoring import bleu_tokenizer, lowercase


def _glyph_font():
    """A test `token -> bool`: can matplotlib's default sans-serif font draw it?"""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    path = font_manager.findfont(font_manager.FontProperties(family=["sans-serif"]))
    font = FT2Font(path)
    return lambda token: all(font.get_char_index(ord(c)) for c in token if not c.isspace())


def plot_attention(weights, source_tokens, output_tokens, path, title):
    """Heatmap of one sentence's attention (rows: output tokens); returns (file, legend).

    Tokens the plotting font cannot draw (e.g. Chinese without a CJK font) are shown as
    numbers, and the legend maps the numbers back to tokens.

    Args:
        weights: array `[output tokens, source tokens]`.
        source_tokens, output_tokens: lists of str.
        path: Path of the PNG.
        title: str, the plot's title (the source sentence).
    """
    plt = rep._pyplot()
    covered = _glyph_font()
    legend = []

    def labels(tokens, prefix):
        out = []
        for i, token in enumerate(tokens, start=1):
            if covered(token):
                out.append(token)
            else:
                out.append(f"{prefix}{i}")
                legend.append(f"{prefix}{i} = {token}")
        return out

    rows, cols = len(output_tokens), len(source_tokens)
    fig, ax = plt.subplots(figsize=(max(3.0, 0.5 * cols + 1.5), max(2.5, 0.4 * rows + 1.2)))
    ax.imshow(weights[:rows, :cols], cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(cols), labels(source_tokens, "s"), rotation=60, ha="right")
    ax.set_yticks(range(rows), labels(output_tokens, "t"))
    ax.set_xlabel("source")
    ax.set_ylabel("output")
    ax.set_title(title if covered(title) else "(source not drawable in this font)", fontsize=9)
    return rep._save(fig, path), legend


def samples(rows, count, seed):
    """Best, worst and random sample rows by sentence BLEU (ties: longer source first)."""
    if not rows:
        return {}
    order = sorted(range(len(rows)), key=lambda i: (-rows[i]["sentence_bleu"],
                                                    -len(rows[i]["source"]), i))
    worst = sorted(range(len(rows)), key=lambda i: (rows[i]["sentence_bleu"],
                                                    -len(rows[i]["source"]), i))
    rng = random.Random(seed)
    pick = sorted(rng.sample(range(len(rows)), min(count, len(rows))))
    return {"best": [rows[i] for i in order[:count]],
            "worst": [rows[i] for i in worst[:count]],
            "random": [rows[i] for i in pick]}


def _sample_tables(picked):
    md = []
    for kind in ("best", "worst", "random"):
        md.append(f"**{kind.capitalize()}** (by sentence BLEU):")
        md.append(rep.md_table(["source", "reference", "translation", "sentence BLEU"],
                               [(r["source"][:200], r["reference"][:200],
                                 r["hypothesis"][:200], round(r["sentence_bleu"], 1))
                                for r in picked.get(kind, [])]))
    return md


def beam_table(rows, length_penalty):
    """Greedy and beam search side by side: scores and decode speed of the same split."""
    greedy = rows[0]["sentences_per_s"] or 1.0
    return "\n\n".join([
        "### Greedy and beam search",
        (f"The same sentences decoded by each decoder, one after the other in this run "
         f"(beam search ranks by log-probability / length penalty, alpha "
         f"{length_penalty:g}; width 1 is the beam code path, not the greedy loop)."),
        rep.md_table(["decoding", "BLEU", "chrF", "BLEU lower-cased", "exact match",
                      "length ratio", "with unknown token", "sentences/s",
                      "time vs greedy"],
                     [(r["decoding"], f"{r['bleu']:.2f}", f"{r['chrf']:.2f}",
                       f"{r['bleu_lowercase']:.2f}", f"{r['exact_match']:.3f}",
                       f"{r['length_ratio']:.3f}", f"{r['unknown_share']:.3f}",
                       f"{r['sentences_per_s']:.1f}",
                       f"{greedy / r['sentences_per_s']:.1f}×" if r["sentences_per_s"]
                       else "") for r in rows])])


def result_section(result, decoding, report_dir, picked=None):
    """One split's results: the scores, BLEU by source length and (main split) samples.

    Args:
        result: the split's EvalResult (per_class: the length buckets).
        decoding: DecodingConfig.
        report_dir: Path, where the plots go.
        picked: the `samples` of the main split, or None.
    """
    s, d, name = result.scores, decoding, result.split
    how = (f"beam search, width {d.beam_width}, length penalty {d.length_penalty:g}"
           if d.beam_width else "greedy")
    md = [f"## {name.capitalize()} results",
          (f"Decoding: {how}; caps: {d.max_len_ratio:g} × source tokens + "
           f"{d.max_len_offset}, at most {d.max_len}."),
          rep.md_table(["metric", "value"], [
              ("BLEU" + (" (cased)" if s.get("cased") else " (lower-cased)"), s["bleu"]),
              ("chrF", s["chrf"]),
              *([("BLEU, lower-cased", s["bleu_lowercase"]),
                 ("chrF, lower-cased", s["chrf_lowercase"])] if s.get("cased") else []),
              ("exact match", s["exact_match"]),
              ("length ratio (hyp / ref tokens)", s["length_ratio"]),
              ("BLEU brevity penalty", s["bleu_brevity_penalty"]), ("pairs", s["pairs"]),
              ("translations with an unknown token", s.get("unknown_share", 0.0)),
              ("decoded sentences/s", round(s["decode_sentences_per_s"], 1))]),
          f"sacrebleu: `{result.extra['sacrebleu_signature']}`"]
    if result.extra.get("beams"):
        md.append(beam_table(result.extra["beams"], d.length_penalty))
    buckets = result.per_class
    if buckets:
        png = rep.plot_bars([b["bucket"] for b in buckets],
                            {"BLEU": [b["bleu"] for b in buckets]},
                            report_dir / f"bleu_by_length_{name}.png",
                            f"BLEU by source length ({name})", ylabel="BLEU")
        md += ["### BLEU by source length (tokens)", f"![BLEU by source length]({png})",
               rep.md_table(["source tokens", "pairs", "BLEU"],
                            [(b["bucket"], b["pairs"], b["bleu"]) for b in buckets])]
    if picked is not None:
        md += ["### Sample translations"] + _sample_tables(picked)
    return "\n\n".join(md)


def attention_section(translator, picks, source_ids, report_dir):
    """The attention heatmaps of a few sentences (greedy decoding).

    Args:
        translator: the run's `Translator`.
        picks: example rows (with "index" and "source") to draw.
        source_ids: ragged source ids of the split the rows come from.
        report_dir: Path, where the plots go.
    """
    from elman.text.tokenize import split_all

    md = ["## Attention",
          "Where the decoder looked (greedy decoding; rows: output tokens, "
          "columns: source tokens; each row sums to 1)."]
    for k, row in enumerate(picks):
        i = row["index"]
        ids = source_ids[i:i + 1].to_tensor().numpy()
        out, weights = translator.decode_ids(ids, return_attention=True)
        out_tokens = translator.tokens(out)[0]
        shown = out_tokens + ([END] if translator.end_id in out[0].tolist() else [])
        source_tokens = split_all(translator.source_tokenizer, [row["source"]])[0][:ids.shape[1]]
        png, legend = plot_attention(weights[0], source_tokens, shown,
                                     report_dir / f"attention_{k + 1}.png", row["source"][:80])
        md.append(f"![attention {k + 1}]({png})")
        if legend:
            md.append("Labels: " + " · ".join(legend))
    return md


def trace_section(translator, rows, beam, report_dir, split, count=3):
    """The "Reading traces" section: each output token's probability under the model, for
    the `count` worst translations (not exact first, then lowest sentence BLEU), traced in
    one batch as `elman translate RUN --trace` traces them.

    Args:
        translator: the run's `Translator`.
        rows: the split's example rows ("source", "reference", "sentence_bleu", "exact").
        beam: int, the beam width the split was decoded with (0: greedy).
        report_dir: Path, where the plot goes.
        split: str, the split's name.
        count: int, how many translations to trace. Default 3.
    """
    from elman.tasks.translation.trace import trace_texts

    worst = sorted(rows, key=lambda r: (bool(r["exact"]), r["sentence_bleu"],
                                        -len(r["source"]), r["index"]))[:count]
    flag = f" --beam {beam}" if beam else ""
    md = ["## Reading traces",
          "Each output token's probability under the model, given the source and the tokens "
          f"before it (one teacher-forced pass over the translation; the end token `{END}` "
          f"is how sure it was to stop), for the worst {split} translations (not exact first, "
          f"then lowest sentence BLEU). `elman translate RUN --trace{flag} \"text\"` prints "
          "the same for any text (with the attention weights, when the model attends)."]
    if not worst:
        return "\n\n".join(md + [f"No {split} pairs to trace."])
    traces = trace_texts(translator, [r["source"] for r in worst], beam)
    panels = [{"title": f"{r['source'][:60]} → {t['translation'][:60]}  "
                        f"(reference: {r['reference'][:60]})",
               "tokens": [s["token"] for s in t["steps"]],
               "series": {"p(token)": [s["probability"] for s in t["steps"]]}}
              for r, t in zip(worst, traces)]
    png = rep.plot_trace(panels, report_dir / "trace_worst.png",
                         f"Worst translations ({split})", xlabel="output tokens")
    md.append(f"![worst translation traces]({png})")
    table = []
    for r, t in zip(worst, traces):
        low = min(t["steps"], key=lambda s: s["probability"]) if t["steps"] else None
        table.append((r["source"][:120], r["reference"][:120], t["translation"][:120],
                      f"{r['sentence_bleu']:.1f}", "-" if low is None else low["token"],
                      "-" if low is None else low["probability"], t["log_probability"]))
    md.append(rep.md_table(["source", "reference", "translation", "sentence BLEU",
                            "least probable token", "its p", "log-probability (nats)"], table))
    return "\n\n".join(md)


def data_section(splits, stats):
    """The data table: pairs read, skipped, filtered and used, token statistics per side."""
    rows = []
    for name, split in splits.items():
        c = split.counts
        s_src, s_tgt = stats[name]
        rows.append((name, c.get("read", len(split.items)), c.get("bad_rows", 0),
                     c.get("too_long", "-"), c.get("duplicates", "-"),
                     c.get("empty_after_tokenizing", "-"), len(split.items),
                     f"{s_src.mean_length:.1f} / {s_src.max_length}",
                     f"{s_tgt.mean_length:.1f} / {s_tgt.max_length}",
                     f"{100 * s_src.oov_rate:.2f}% / {100 * s_tgt.oov_rate:.2f}%",
                     f"{s_src.truncated_examples} / {s_tgt.truncated_examples}"))
    md = ["## Data",
          rep.md_table(["split", "pairs read", "bad rows skipped", "too long", "duplicates",
                        "empty after tokenizing", "pairs used",
                        "source tokens mean / max", "target tokens mean / max",
                        "OOV source / target", "truncated source / target"], rows),
          ("Length filtering and de-duplication apply to the training split only; the "
           "evaluation splits are scored whole (sources longer than the source tokenizer's "
           "`max_length` are truncated).")]
    for name, split in splits.items():
        examples = split.counts.get("bad_row_examples") or []
        if examples:
            md.append(f"Skipped rows in {name} (`--skip-bad-rows`), first {len(examples)}:")
            md.append("\n".join(f"- `{e}`" for e in examples))
    return "\n\n".join(md)


def summary(ctx, model, main_references, cpu_seconds):
    """The report's first blocks: the run line, the scores table and the training line.

    Args:
        ctx: the RunContext (after `score`).
        model: the saved Seq2SeqTranslator.
        main_references: list of str, the main split's references (BLEU tokenizer).
        cpu_seconds: float, CPU-seconds of training in this process.
    """
    cfg, result = ctx.cfg, ctx.fitted.result
    source_tok, target_tok = ctx.state.source_tok, ctx.state.target_tok
    m = cfg.model
    direction = f"{cfg.data.source_lang or 'source'} → {cfg.data.target_lang or 'target'}"
    tokenize = bleu_tokenizer(cfg.eval, cfg.data.target_lang, main_references)
    return [
        (f"Run `{ctx.run_dir}` · task **translation** ({direction}) · model: "
         f"{m.num_layers}×{'Bi' if m.bidirectional else ''}{m.cell.upper()}({m.units}) encoder, "
         f"{m.cell.upper()}({m.units}) decoder, attention {m.attention}, embeddings "
         f"{m.embedding_dim}, {model.count_params():,} parameters · vocabularies: source "
         f"{source_tok.vocabulary_size} ({source_tok.level}), target "
         f"{target_tok.vocabulary_size} ({target_tok.level})."),
        rep.md_table(["split", "BLEU", "chrF", "exact match", "length ratio", "pairs"],
                     [(n, r.scores["bleu"], r.scores["chrf"], r.scores["exact_match"],
                       r.scores["length_ratio"], r.scores["pairs"])
                      for n, r in ctx.results.items()]),
        (f"Trained {result.epochs_run} epochs in {result.seconds / 60:.1f} min "
         f"({cpu_seconds / 60:.1f} CPU-min) in this process "
         f"(best: epoch {result.best_epoch}{', stopped early' if result.stopped_early else ''}"
         + weights_text(result) + ");"
         f" {result.tokens_per_second:,.0f} training tokens/s. BLEU and chrF: sacrebleu, "
         f"tokenizer `{tokenize}`, {'lower-cased' if lowercase(cfg) else 'case-sensitive'}, "
         "one reference."),
    ]
