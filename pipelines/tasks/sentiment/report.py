"""The sentiment report's sections: per-split results, reading traces, ensemble members,
pretraining, data."""

import numpy as np

from elman.core import data as data_stage
from elman.core import folders
from elman.core import report as rep


def data_section(splits, stats, labels, coverage, tokenizer=None):
    rows = []
    for name, split in splits.items():
        s = stats[name]
        gold = data_stage.labels(split)
        counts = {label: gold.count(label) for label in labels}
        rows.append((name, len(split.items),
                     ", ".join(f"{k} {v}" for k, v in counts.items()),
                     f"{s.mean_length:.1f}", s.max_length,
                     f"{s.truncated_examples} ex / {s.truncated_tokens} tok",
                     f"{100 * s.oov_rate:.2f}%", len(split.skipped)))
    md = ["## Data", rep.md_table(["split", "examples", "labels", "mean tokens", "max tokens",
                                   "truncated", "OOV rate", "skipped rows"], rows)]
    if getattr(tokenizer, "level", None) == "subword":
        md.append(f"Tokens are SentencePiece {tokenizer.algorithm} pieces learned from the "
                  f"training texts alone: {tokenizer.vocabulary_size} ids (padding, unknown, "
                  "`<s>`, `</s>` and the pieces; `▁` marks a piece that starts a word), "
                  f"{'lower-cased' if tokenizer.lowercase else 'cased'}. Token counts and "
                  "the OOV rate are in pieces.")
    for name, split in splits.items():
        if split.counts.get("folders"):
            md.append(folders.describe(name, split.counts["folders"]))
        if split.counts.get("headerless"):
            read = split.counts["headerless"]
            text = read["text"]
            md.append(f"The {name} file has no header line, so its first line was read as a "
                      f"row: the label from column {read['label']} and the text from "
                      + (f"column {text[0]}." if len(text) == 1 else
                         f"columns {', '.join(map(str, text[:-1]))} and {text[-1]}, joined "
                         "by a space."))
        for role, column in split.counts.get("columns_found", {}).items():
            md.append(f"The {name} file has no `{role}` column: its {role} was read from "
                      f"`{column}`, the one usual {role} column name it has (name another "
                      f"with `--{role}-column`).")
        if split.skipped:
            md.append(f"Skipped rows in {name} (`--skip-bad-rows`):")
            md.append(rep.md_table(["where", "why"], split.skipped[:200]))
            if len(split.skipped) > 200:
                md.append(f"... and {len(split.skipped) - 200} more (see metrics.json).")
    if coverage is not None:
        md.append(coverage.describe("tokens"))
    return "\n\n".join(md)


def result_section(result, report_dir, tag):
    s = result.scores
    md = [f"## {result.split.capitalize()} results",
          rep.md_table(["metric", "value"], [(k, v) for k, v in sorted(s.items())]),
          rep.md_table(["class", "precision", "recall", "F1", "support"],
                       [(r["class"], r["precision"], r["recall"], r["f1"], r["support"])
                        for r in result.per_class])]
    png = rep.plot_confusion(result.extra["confusion"], result.extra["labels"],
                             report_dir / f"confusion_{tag}.png",
                             f"Confusion matrix, {result.split} (rows: gold)")
    md.append(f"![confusion matrix]({png})")
    if "roc" in result.extra:
        png = rep.plot_roc(result.extra["roc"], s["roc_auc"], report_dir / f"roc_{tag}.png")
        md.append(f"![ROC curve]({png})")
    wrong = sorted((e for e in result.examples if not e["correct"]),
                   key=lambda e: -e["confidence"])[:10]
    md.append("Most confidently wrong examples:")
    md.append(rep.md_table(["text", "gold", "predicted", "confidence", "where"],
                           [(e["text"][:160], e["gold"], e["predicted"], e["confidence"],
                             e.get("where", "")) for e in wrong]) if wrong else "(none)")
    return "\n\n".join(md)


def run_line(ctx, classifiers):
    """The report's first line: the run, the classes and the model in one sentence."""
    cfg, char_layer = ctx.cfg, ctx.state.char_layer
    e = cfg.encoder
    return (f"Run `{ctx.run_dir}` · task **sentiment** · classes: {', '.join(ctx.state.labels)} · "
            f"model: {e.num_layers}×{'Bi' if e.bidirectional else ''}"
            f"{e.cell.upper()}({e.units}), pooling {cfg.head.pooling}, "
            + ("" if char_layer is None else
               f"char {cfg.chars.features.upper()}({cfg.chars.units}) features over "
               f"{len(char_layer.chars)} chars, ")
            + ("" if ctx.state.bigram_pairs is None else
               f"token-pair embedding {cfg.features.bigram_dim} over "
               f"{len(ctx.state.bigram_pairs):,} pairs, ")
            + "".join(f"{what} training ε {value:g}, " for what, value in (
                ("adversarial", cfg.embedding.adversarial),
                ("virtual adversarial", cfg.embedding.virtual_adversarial)) if value)
            + (f"R-Drop α {cfg.head.rdrop:g}, " if cfg.head.rdrop else "")
            + (f"mixup α {cfg.head.mixup:g}, " if cfg.head.mixup else "")
            + (f"sharpness-aware minimisation ρ {cfg.train.sam:g}, " if cfg.train.sam else "")
            + (f"distilled from {cfg.ensemble} teacher(s) at share {cfg.head.distill:g}, "
               if cfg.head.distill else "")
            + (f"neighbour-word objective {cfg.head.lm_weight:g} (at most "
               f"{cfg.head.lm_words:,} classes), " if cfg.head.lm_weight else "")
            + f"{sum(c.count_params() for c in classifiers):,} parameters"
            + ("." if len(classifiers) == 1 else f" in an ensemble of {len(classifiers)} "
               "members (probabilities averaged)."))


def _classifier_rows(ctx, key, trained):
    """One row per trained classifier: `key` (1-based), seed, epochs, and its validation
    accuracy; also returns the validation labels' class indices. `trained`: (seed,
    TrainResult, validation probabilities) triples."""
    index = {label: i for i, label in enumerate(ctx.state.labels)}
    gold = np.array([index[label] for label in data_stage.labels(ctx.splits["validation"])])
    rows = [{key: k + 1, "seed": seed, "epochs_run": r.epochs_run,
             "best_epoch": r.best_epoch, "stopped_early": r.stopped_early,
             "validation_accuracy": float(np.mean(probs.argmax(axis=1) == gold))}
            for k, (seed, r, probs) in enumerate(trained)]
    return rows, gold


def member_rows(ctx, members):
    """One row per ensemble member with its own validation accuracy ([] for one model)."""
    if len(members) < 2:
        return []
    probs = ctx.fitted.extra["per_member"]["validation"]
    return _classifier_rows(ctx, "member", [(seed, r, p) for (seed, r), p
                                            in zip(members, probs)])[0]


def members_section(ctx, rows):
    """The "Ensemble members" section."""
    return ("## Ensemble members\n\n" + rep.md_table(
        ["member", "seed", "epochs", "best epoch", "validation accuracy"],
        [(m["member"], m["seed"], m["epochs_run"], m["best_epoch"], m["validation_accuracy"])
         for m in rows])
        + f"\n\nMembers' mean validation accuracy "
        f"{np.mean([m['validation_accuracy'] for m in rows]):.4f}; the "
        f"ensemble's {ctx.results['validation'].scores['accuracy']:.4f}.")


def teacher_rows(ctx, teachers):
    """`head.distill`'s record: one row per teacher (seed, epochs, validation accuracy)
    and the teachers' averaged validation accuracy. `teachers`: (seed, TrainResult,
    validation probabilities) triples."""
    rows, gold = _classifier_rows(ctx, "teacher", teachers)
    mean = np.mean([probs for _, _, probs in teachers], axis=0)
    h = ctx.cfg.head
    return {"share": h.distill, "temperature": h.distill_temperature, "teachers": rows,
            "teachers_validation_accuracy": float(np.mean(mean.argmax(axis=1) == gold))}


def teachers_section(ctx, record):
    """The "Distillation" section: the teachers, and the student beside them."""
    return ("## Distillation\n\n"
            f"The model is a student trained on targets {1 - record['share']:g} the label and "
            f"{record['share']:g} the teachers' mean probabilities (temperature "
            f"{record['temperature']:g}); the teachers are not part of the saved model.\n\n"
            + rep.md_table(["teacher", "seed", "epochs", "best epoch", "validation accuracy"],
                           [(t["teacher"], t["seed"], t["epochs_run"], t["best_epoch"],
                             t["validation_accuracy"]) for t in record["teachers"]])
            + f"\n\nThe teachers averaged: validation accuracy "
            f"{record['teachers_validation_accuracy']:.4f}; the student: "
            f"{ctx.results['validation'].scores['accuracy']:.4f}.")


def noise_section(ctx, record):
    """The "Training labels set aside" section; writes label_noise.tsv (every such text)."""
    from elman.core.label_noise import COLUMNS

    rep.write_predictions(ctx.report_dir / "label_noise.tsv",
                          [{k: r[k] for k in COLUMNS} for r in record.rows])
    shown = record.rows[:10]
    return (
        "## Training labels set aside\n\n"
        f"`noise.filter = \"confident\"`: {len(record.rows):,} of the {record.texts:,} "
        f"training texts ({len(record.rows) / record.texts:.1%}) were set aside before "
        "training: a logistic regression on character "
        f"1–{ctx.cfg.noise.ngrams}-grams, fitted on the other {record.folds - 1} of "
        f"{record.folds} folds, reads each of them as another label with at least that "
        "label's threshold (the model's mean probability on the texts carrying it). Every "
        "one is in `label_noise.tsv`; validation and test texts are never filtered.\n\n"
        + rep.md_table(["label", "training texts", "threshold", "set aside"],
                       [(label, record.per_label[label]["texts"], record.thresholds[label],
                         record.per_label[label]["set_aside"]) for label in record.per_label])
        + "\n\nThe most confident of them:\n\n"
        + (rep.md_table(["text", "label", "reads as", "probability", "where"],
                        [(r["text"][:160], r["label"], r["reads_as"], r["p_reads_as"],
                          r["where"]) for r in shown]) if shown else "(none)"))


def pretraining_section(ctx, pretraining, extra_source):
    """The "Pretraining" section: what was pretrained on and each member's best epoch."""
    p = ctx.cfg.pretrain
    return (
        "## Pretraining\n\n"
        f"Before training on the labels, the embedding and encoder learned to restore "
        f"hidden words of the {len(ctx.splits['train'].items)} training texts"
        + ("" if extra_source is None else
           f" and {extra_source['texts']} texts of `{extra_source['source']}` "
           f"({extra_source['blank_lines_skipped']} blank lines skipped)") + " "
        f"({100 * p.rate:g}% of the words hidden; up to {p.epochs} epochs, best epoch by "
        "the validation texts' loss). The perplexity is over hidden "
        "words only.\n\n" + rep.md_table(
            ["member", "seed", "epochs", "best epoch", "validation loss", "perplexity"],
            [(k + 1, r["seed"], r["epochs_run"] or "-", r["best_epoch"] or "-",
              "-" if r["validation_loss"] is None else r["validation_loss"],
              "-" if r["validation_perplexity"] is None else r["validation_perplexity"])
             for k, r in enumerate(pretraining)]))


CONTRAST = (" but ", " however", " yet ", " although ", " though ", " except ", "但", "却",
            "不过", "可是", "然而", "虽然")  # words that can turn a review round


def _contrast_texts(examples, count, max_chars=120):
    """Up to `count` texts with a contrast word, shortest first (ties: data order)."""
    found = [e for e in examples if len(e["text"]) <= max_chars
             and any(w in f" {e['text'].lower()} " for w in CONTRAST)]
    return sorted(found, key=lambda e: len(e["text"]))[:count]


def _panel(trace, example, labels):
    """One plot panel: the gold class's probability (and the predicted one's, if
    another) after each token."""
    gold, predicted = example["gold"], trace["label"]
    shown = [gold] if len(labels) == 2 or predicted == gold else [gold, predicted]
    series = {f"p({name})" + (" gold" if name == gold else " predicted"):
              [s["probabilities"][name] for s in trace["steps"]] for name in shown}
    if trace["steps"] and "attention" in trace["steps"][0]:  # attention pooling's weights
        series["attention weight"] = [s["attention"] for s in trace["steps"]]
    return {"title": f"{example['text'][:90]}  (gold {gold}, predicted {predicted})",
            "tokens": trace["tokens"], "series": series}


def trace_section(ctx, classifiers, result, wrong=3, contrast=3):
    """The "Reading traces" section: how the judgment moves token by token on the most
    confidently wrong examples and on a few contrast sentences of `result`'s split."""
    from elman.tasks.sentiment.trace import PrefixTracer

    state = ctx.state
    picked = {"confidently wrong": sorted((e for e in result.examples if not e["correct"]),
                                          key=lambda e: -e["confidence"])[:wrong],
              "contrast": _contrast_texts(result.examples, contrast)}
    tracer = PrefixTracer(state.tokenizer, classifiers, state.labels, state.char_layer)
    md = ["## Reading traces",
          "The class probabilities after reading the first t tokens, for every t: the "
          "model applied to each prefix (`elman predict RUN --trace \"text\"` prints the "
          "same for any text)."
          + (" The encoder is bidirectional, so its backward direction reads only the "
             "prefix; the last point is the prediction for the whole text."
             if tracer.bidirectional else "")]
    for kind, examples in picked.items():
        if not examples:
            md.append(f"No misclassified {result.split} examples to trace." if kind != "contrast"
                      else f"No {result.split} text holds a contrast word (but, however, 但, …).")
            continue
        traces = tracer.trace([e["text"] for e in examples])
        png = rep.plot_trace([_panel(t, e, state.labels) for t, e in zip(traces, examples)],
                             ctx.report_dir / f"trace_{kind.replace(' ', '_')}.png",
                             f"{kind.capitalize()} ({result.split})")
        md.append(f"![{kind} traces]({png})")
        md.append(rep.md_table(["text", "gold", "predicted", "turns (token: leading label)"],
                               [(e["text"][:120], e["gold"], t["label"], _turns(t))
                                for t, e in zip(traces, examples)]))
    return "\n\n".join(md)


def _turns(trace):
    """Where the leading label changes: "3 slow: negative, 10 great: positive"."""
    out, previous = [], None
    for t, step in enumerate(trace["steps"], start=1):
        if previous is not None and step["label"] != previous:
            out.append(f"{t} {step['token']}: {step['label']}")
        previous = step["label"]
    return ", ".join(out) or "none"
