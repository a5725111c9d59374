"""The tagging report's sections: the run in one line, per-split results, entity and
tag errors, the data; and the conlleval-ready predictions files."""

from collections import Counter

from elman.core import report as rep
from elman.core.html import write_text_atomic
from elman.tasks.tagging import schemes as tag_schemes
from elman.tasks.tagging.model import describe_model
from elman.tasks.tagging.scoring import ERROR_KINDS, error_rows
from elman.text.splitters import join_tokens

SHOWN_ERRORS = 15


def summary(ctx, vocab, model):
    """The report's first blocks: the run in one line, the scores table, training.

    Args:
        ctx: the run's RunContext (cfg, run_dir, results, fitted).
        vocab: the run's Vocabularies.
        model: the trained SequenceTagger.
    """
    from elman.core.run import training_line

    entity = vocab.entity
    tagset = (f"entity types {', '.join(sorted({t[2:] for t in vocab.tags if t != 'O'}))} "
              f"({vocab.scheme} in the files)" if entity else f"{len(vocab.tags)} tags")
    headers = (["split", "precision", "recall", "F1", "token accuracy"] if entity
               else ["split", "token accuracy"])
    table = [((r.split, r.scores["precision"], r.scores["recall"], r.scores["f1"],
               r.scores["token_accuracy"]) if entity else (r.split, r.scores["token_accuracy"]))
             for r in ctx.results.values()]
    return [f"Run `{ctx.run_dir}` · task **tagging** · {tagset} · model: "
            f"{describe_model(ctx.cfg, model.count_params())}.",
            rep.md_table(headers, table),
            training_line(ctx.fitted.result, " (`elman bench` compares speeds)")]


def sections(ctx, vocab, data_md, model=None):
    """The report's sections after the summary; writes predictions_<split>.conll.

    Args:
        ctx: the run's RunContext (splits, results, fitted, report_dir).
        vocab: the run's Vocabularies.
        data_md: str, the data section (from `data_summary`).
        model: the trained SequenceTagger for the reading traces, or None (no traces).
    """
    from elman.core.run import learning_curves_section

    main, report_dir = ctx.main, ctx.report_dir
    out = [learning_curves_section(ctx.fitted.result.history, report_dir)]
    for r in ctx.results.values():
        out.append(result_section(r, report_dir))
        write_conll(report_dir / f"predictions_{r.split}.conll", r)
    out.append(f"## Errors ({main.split})")
    if vocab.entity:
        out.append(errors_section(main, ctx.splits[main.split].items, report_dir))
    out.append(confusions_section(main, ctx.splits[main.split].items))
    out.append("`predictions_<split>.conll` hold `token gold predicted` lines in the "
               f"input's scheme ({vocab.scheme if vocab.entity else 'free tags'}), "
               + ("as the files write them (`conlleval` needs an `I-` before each type; "
                  "the scores here read them so)" if vocab.scheme == "IO" else
                  "ready for `conlleval`")
               + "; `predictions.tsv` has one row per sentence.")
    if model is not None:
        out.append(trace_section(ctx, vocab, model, main))
    out.append(data_md)
    return out


def errors_section(result, sentences, report_dir):
    """The "Entity errors" section (counts and the first of each kind); writes
    errors_<split>.tsv.

    Args:
        result: the split's EvalResult.
        sentences: list of the split's sentences.
        report_dir: Path, the report folder.
    """
    md = ["### Entity errors"]
    rows = error_rows(result, sentences)
    counts = Counter(r["kind"] for r in rows)
    md.append(rep.md_table(["kind", "count"], [(label, counts[k]) for k, label in ERROR_KINDS]))
    for kind, label in ERROR_KINDS:
        chosen = [r for r in rows if r["kind"] == kind][:SHOWN_ERRORS]
        if not chosen:
            continue
        md.append(f"**{label}**" + (f" — first {SHOWN_ERRORS} of {counts[kind]}"
                                    if counts[kind] > SHOWN_ERRORS else ""))
        md.append(rep.md_table(["gold", "predicted", "sentence", "where"],
                               [(r["gold"], r["predicted"], r["sentence"][:200], r["where"])
                                for r in chosen]))
    rep.write_predictions(report_dir / f"errors_{result.split}.tsv", rows)
    md.append(f"Every error: `errors_{result.split}.tsv`.")
    return "\n\n".join(md)


def confusions_section(result, sentences):
    """The "Most frequent tag errors" section: (gold, predicted) pairs with an example.

    Args:
        result: the split's EvalResult.
        sentences: list of the split's sentences.
    """
    pairs = Counter()
    example = {}
    for sentence, g, p in zip(sentences, result.extra["gold"], result.extra["predicted"]):
        for position, (a, b) in enumerate(zip(g, p)):
            if a != b:
                pairs[(a, b)] += 1
                example.setdefault((a, b), (sentence, position))
    rows = []
    for (a, b), n in pairs.most_common(SHOWN_ERRORS):
        sentence, position = example[(a, b)]
        tokens = list(sentence["tokens"])
        tokens[position] = f"**{tokens[position]}**"
        rows.append((a, b, n, join_tokens(tokens)[:200], sentence["source"]))
    return "\n\n".join(["### Most frequent tag errors",
                        rep.md_table(["gold", "predicted", "count", "example", "where"], rows)
                        if rows else "(none)"])


def _trace_rows(result, sentences, entries, vocab):
    """One row per sentence: each token's p(predicted tag) and p(gold tag), the wrong
    positions (in the input's scheme, as scored) and the token the table reports (the
    wrong tag the model was surest of, or, all right, the least sure tag)."""
    import numpy as np

    index = {tag: i for i, tag in enumerate(vocab.tags)}
    rows = []
    for k, (sentence, entry) in enumerate(zip(sentences, entries)):
        gold, predicted = result.extra["gold"][k], result.extra["predicted"][k]
        probs, tags = entry["probs"], entry["tags"]
        p_predicted = [float(probs[t, tags[t]]) for t in range(len(tags))]
        p_gold = [float(probs[t, index[g]]) if g in index else float("nan")
                  for t, g in enumerate(vocab.model_tags(sentence["tags"]))]
        wrong = [t for t, (a, b) in enumerate(zip(gold, predicted)) if a != b]
        at = (max(wrong, key=lambda t: p_predicted[t]) if wrong
              else int(np.argmin(p_predicted)))
        rows.append({"sentence": sentence, "wrong": wrong, "at": at, "gold": gold[at],
                     "predicted": predicted[at], "p_predicted": p_predicted,
                     "p_gold": p_gold})
    return rows


def _trace_panel(row):
    """A plot panel: p(predicted tag) per token, and p(gold tag) where a tag is wrong."""
    series = {"p(predicted tag)": row["p_predicted"]}
    if row["wrong"]:
        series["p(gold tag)"] = row["p_gold"]
    text = join_tokens(row["sentence"]["tokens"])
    note = f"{len(row['wrong'])} wrong tag{'s' if len(row['wrong']) != 1 else ''}"
    return {"title": f"{text[:90]}  ({note})", "tokens": list(row["sentence"]["tokens"]),
            "series": series}


def trace_section(ctx, vocab, model, result, wrong=3, others=2):
    """The "Reading traces" section: each token's probability of its predicted (and its
    gold) tag, on the sentences of `result`'s split with the most confidently wrong tag
    and on the fully right ones the model was least sure of; one batched trace.

    Args:
        ctx: the run's RunContext (splits, state.encoded, report_dir).
        vocab: the run's Vocabularies.
        model: the trained SequenceTagger.
        result: the split's EvalResult.
        wrong, others: int, how many sentences of each kind to draw.
    """
    from elman.tasks.tagging.trace import tag_trace

    features, _, lengths = ctx.state.encoded[result.split]
    rows = _trace_rows(result, ctx.splits[result.split].items,
                       tag_trace(model, features, lengths), vocab)
    picked = {
        "confidently wrong": sorted((r for r in rows if r["wrong"]),
                                    key=lambda r: -r["p_predicted"][r["at"]])[:wrong],
        "least sure right": sorted((r for r in rows if not r["wrong"]),
                                   key=lambda r: r["p_predicted"][r["at"]])[:others]}
    source = ("the CRF's marginals (forward–backward: the probability, over every tag path, "
              "that the token carries the tag; the Viterbi tag need not be the most probable "
              "one)" if model.head == "crf" else "the softmax")
    md = ["## Reading traces",
          f"Each token's probability of the tag the model gave it, and of the gold tag where "
          f"they differ, from {source}: on the {result.split} sentences whose wrong tag the "
          "model was surest of, and on the fully right ones it was least sure of. The table's "
          "token is that wrong tag (or the least sure tag). `elman predict RUN --trace "
          "\"text\"` prints the same for any text."]
    for kind, chosen in picked.items():
        if not chosen:
            md.append(f"No {'misclassified' if 'wrong' in kind else 'fully right'} "
                      f"{result.split} sentences to trace.")
            continue
        png = rep.plot_trace([_trace_panel(r) for r in chosen],
                             ctx.report_dir / f"trace_{kind.replace(' ', '_')}.png",
                             f"{kind.capitalize()} ({result.split})", xlabel="tokens")
        md.append(f"![{kind} traces]({png})")
        md.append(rep.md_table(
            ["sentence", "where", "token", "gold", "predicted", "p(predicted)", "p(gold)"],
            [(join_tokens(r["sentence"]["tokens"])[:120], r["sentence"]["source"],
              f"{r['at'] + 1} {r['sentence']['tokens'][r['at']]}", r["gold"], r["predicted"],
              r["p_predicted"][r["at"]], r["p_gold"][r["at"]]) for r in chosen]))
    return "\n\n".join(md)


def result_section(result, report_dir):
    """A split's results: the scores, per type (or per tag), the tag confusion matrix.

    Args:
        result: the split's EvalResult.
        report_dir: Path, the report folder (the plots go there).
    """
    s = result.scores
    md = [f"## {result.split.capitalize()} results"]
    if result.main_metric == "f1":
        md.append(rep.md_table(
            ["precision", "recall", "F1", "token accuracy", "gold entities",
             "predicted entities", "correct", "sentences", "tokens"],
            [(s["precision"], s["recall"], s["f1"], s["token_accuracy"], s["gold_entities"],
              s["predicted_entities"], s["correct_entities"], s["sentences"], s["tokens"])]))
        md.append("Entity scores as `conlleval` computes them (micro over entities; an entity "
                  "is right when type, first and last token match), over every gold position.")
        md.append("### Per type")
        md.append(rep.md_table(["type", "precision", "recall", "F1", "gold", "predicted",
                                "correct"],
                               [(r["class"], r["precision"], r["recall"], r["f1"], r["support"],
                                 r["predicted"], r["correct"]) for r in result.per_class]))
        if result.per_class:
            png = rep.plot_bars([r["class"] for r in result.per_class],
                                {"precision": [r["precision"] for r in result.per_class],
                                 "recall": [r["recall"] for r in result.per_class],
                                 "F1": [r["f1"] for r in result.per_class]},
                                report_dir / f"per_type_{result.split}.png",
                                f"Per-type scores, {result.split}")
            md.append(f"![per-type scores]({png})")
    else:
        md.append(rep.md_table(["token accuracy", "correct", "tokens", "sentences"],
                               [(s["token_accuracy"], s["correct_tokens"], s["tokens"],
                                 s["sentences"])]))
        md.append("### Per tag")
        md.append(rep.md_table(["tag", "accuracy (recall)", "precision", "F1", "support",
                                "predicted"],
                               [(r["class"], r["accuracy"], r["precision"], r["f1"],
                                 r["support"], r["predicted"]) for r in result.per_class]))
    png = rep.plot_confusion(result.extra["confusion"], result.extra["labels"],
                             report_dir / f"confusion_{result.split}.png",
                             f"Tag confusion, {result.split} (rows: gold)")
    md.append(f"![tag confusion matrix]({png})")
    return "\n\n".join(md)


def write_conll(path, result):
    """Writes `token gold predicted` lines (conlleval's input) in the input's scheme.

    Args:
        path: Path, the file.
        result: the split's EvalResult (its gold and predicted tags).
    """
    lines = []
    for tokens, gold, pred in zip(result.extra["tokens"], result.extra["gold"],
                                  result.extra["predicted"]):
        lines.extend(f"{t} {g} {p}" for t, g, p in zip(tokens, gold, pred))
        lines.append("")
    write_text_atomic(path, "\n".join(lines) + ("\n" if lines else ""))


def _split_info(split, vocab):
    """metrics.json's data entry of one split: sizes, OOV rates, repairs, skipped lines."""
    tokens = [t for s in split.items for t in s["tokens"]]
    oov = sum(vocab.word_id(t) == 1 for t in tokens)
    entity_tokens = [t for s in split.items for t, g in zip(s["tokens"], s["tags"])
                     if g != "O"] if vocab.entity else []
    entity_oov = sum(vocab.word_id(t) == 1 for t in entity_tokens)
    st = split.counts
    skipped = {k: st.get(k, 0) for k in ("docstart_lines", "comment_lines",
                                         "multiword_tokens", "empty_nodes",
                                         "overlapping_spans", "duplicate_spans",
                                         "other_annotations", "rejected_records",
                                         "space_characters")
               if st.get(k)}
    info = {"sentences": len(split.items), "tokens": len(tokens),
            "oov_tokens": oov, "oov_rate": oov / len(tokens) if tokens else 0.0,
            "entity_tokens": len(entity_tokens),
            "entity_oov_rate": entity_oov / len(entity_tokens) if entity_tokens else 0.0,
            "repaired_tags": st.get("repaired_tags", 0),
            "ill_formed_tags": st.get("ill_formed_tags", 0),
            "continued_entities": st.get("continued_entities", 0), "skipped": skipped,
            "source": split.source, "scheme_read": st.get("scheme")}
    if st.get("tags_in_first_column"):  # MIT Movie's `B-Actor<TAB>steve`
        info["tags_in_first_column"] = True
    if st.get("word_positions_removed"):  # Weibo NER's `口0 腔1`
        info["word_positions_removed"] = st["word_positions_removed"]
    if st.get("span_records"):  # read from raw text with entity spans (CLUENER, doccano)
        info["span_records"] = st["span_records"]
        info["tokens_split_at_entity_edges"] = st.get("tokens_split_at_entity_edges", 0)
    if vocab.entity:
        info["entities"] = dict(sorted(Counter(
            e[0] for s in split.items for e in tag_schemes.bio_spans(s["tags"])).items()))
    return info


def _data_row(name, info, entity):
    skipped_text = ", ".join(f"{k.replace('_', ' ')} {v}"
                             for k, v in info["skipped"].items()) or "0"
    if entity:
        return (name, info["sentences"], info["tokens"],
                ", ".join(f"{k} {v}" for k, v in info["entities"].items()) or "-",
                f"{100 * info['oov_rate']:.2f}%", f"{100 * info['entity_oov_rate']:.2f}%",
                info["repaired_tags"], info["ill_formed_tags"], skipped_text)
    return (name, info["sentences"], info["tokens"], f"{100 * info['oov_rate']:.2f}%",
            skipped_text)


def data_summary(splits, vocab, counts, coverage):
    """The data section: sizes, OOV rates, repaired/ill-formed tags, skipped lines.

    Args:
        splits: dict of split name → Split of sentences.
        vocab: the run's Vocabularies.
        counts: Counter of the training words (from `build_vocabularies`).
        coverage: the pretrained vectors' coverage, or None.

    Returns:
        (the section's Markdown, metrics.json's "data": split name → its entry)
    """
    data = {name: _split_info(split, vocab) for name, split in splits.items()}
    rows = [_data_row(name, info, vocab.entity) for name, info in data.items()]
    headers = (["split", "sentences", "tokens", "entities", "OOV rate", "OOV in entities",
                "repaired tags", "ill-formed tags (read as conlleval)", "skipped lines"]
               if vocab.entity else ["split", "sentences", "tokens", "OOV rate",
                                     "skipped lines (not words)"])
    kind = (f"entity tags, {vocab.scheme} in the files, BIO inside" if vocab.entity
            else "free labels")
    md = ["## Data",
          rep.md_table(headers, rows),
          f"Vocabulary (train only): {len(vocab.words) - 2:,} words "
          f"({'lower-cased' if vocab.lowercase else 'case kept'}; {sum(counts.values()):,} "
          f"train tokens, {len(counts):,} distinct), {len(vocab.chars) - 2:,} characters, "
          f"{len(vocab.tags)} tags ({kind}). OOV: tokens whose word is not in the vocabulary."]
    if any(i["repaired_tags"] for i in data.values()):
        md.append("Repaired tags: with `--repair-bio`, each `I-X` that did not continue an "
                  "entity of type X was read as `B-X` (the entities `conlleval` reads are "
                  "unchanged).")
    continued = {name: i["continued_entities"] for name, i in data.items()
                 if i["continued_entities"]}
    if continued:
        md.append("Sentences that begin inside an entity (the corpus cut a sentence in the "
                  "middle of one; their first entity is read as starting at the first token): "
                  + ", ".join(f"{name} {n}" for name, n in continued.items()) + ".")
    flipped = [name for name, i in data.items() if i.get("tags_in_first_column")]
    if flipped:
        md.append(f"The {' and '.join(flipped)} file{'s' if len(flipped) > 1 else ''} "
                  "had two columns, tags first (`B-Actor<TAB>steve`, the MIT Movie and "
                  "Restaurant layout): the tags were read from the first column and the "
                  "words from the second.")
    positioned = {name: i["word_positions_removed"] for name, i in data.items()
                  if i.get("word_positions_removed")}
    if positioned:
        md.append("Each character came with its place in a segmented word (Weibo NER's "
                  "`口0 腔1` layout); raw text has no such numbers, so they were removed: "
                  + ", ".join(f"{name} {n:,} tokens" for name, n in positioned.items()) + ".")
    if coverage is not None:
        md.append(coverage.describe("words"))
    if vocab.bigrams is not None:
        md.append(f"Bigram features: {len(vocab.bigrams) - 2:,} token bigrams in the "
                  "vocabulary (train only; the rest read as one unknown bigram).")
    return "\n\n".join(md), data
