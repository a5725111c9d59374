"""The tagging task's scores: every gold position of a split, entity P/R/F1 as
`conlleval` computes them (elman.tasks.tagging.metrics) or token accuracy for free tags,
and the entity errors as rows."""

from collections import Counter

from elman.tasks.tagging import schemes as tag_schemes
from elman.tasks.tagging.data import entity_like
from elman.text.splitters import join_tokens


def to_output(bio_tags, scheme):
    """BIO tags → the input's scheme (free tags are returned unchanged).

    Args:
        bio_tags: list of str.
        scheme: str, one of `schemes.SCHEMES` or "none".
    """
    if scheme == "none":
        return list(bio_tags)
    return tag_schemes.from_bio(list(bio_tags), scheme)


def _tag_order(tags):
    def key(tag):
        if tag == "O":
            return ("", 0)
        if entity_like([tag]):
            return (tag[2:], "BIMES".index(tag[0]) + 1)
        return (tag, 0)

    return sorted(tags, key=key)


def _free_scores(gold, predicted):
    support, right, confusion, predicted_counts = Counter(), Counter(), {}, Counter()
    for gold_tags, predicted_tags in zip(gold, predicted):
        for position, tag in enumerate(gold_tags):
            guess = predicted_tags[position] if position < len(predicted_tags) else None
            support[tag] += 1
            right[tag] += guess == tag
            predicted_counts[guess] += 1
            confusion.setdefault(tag, Counter())[guess] += 1
    tokens = sum(support.values())
    per_tag = []
    for tag in sorted(support, key=lambda t: (-support[t], t)):
        precision = right[tag] / predicted_counts[tag] if predicted_counts[tag] else 0.0
        recall = right[tag] / support[tag]
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_tag.append({"class": tag, "accuracy": recall, "precision": precision,
                        "recall": recall, "f1": f1, "support": support[tag],
                        "predicted": predicted_counts[tag]})
    scores = {"token_accuracy": sum(right.values()) / tokens if tokens else 0.0,
              "tokens": tokens, "correct_tokens": sum(right.values()),
              "sentences": len(gold)}
    return scores, per_tag, {k: dict(v) for k, v in confusion.items()}


def score_split(split_name, sentences, predicted_bio, scheme):
    """Scores predictions of one split (every gold position) → EvalResult.

    Args:
        split_name: str.
        sentences: list of {"tokens", "tags" (BIO for entity tags), "source"}.
        predicted_bio: list of lists of str, predicted tags (BIO for entity tags).
        scheme: str, the input scheme (one of `schemes.SCHEMES`) or "none".
    """
    from elman.core import intervals
    from elman.core.evaluate import EvalResult
    from elman.tasks.tagging.metrics import entity_errors, evaluate_tagging, sentence_counts

    tokens = [s["tokens"] for s in sentences]
    gold = [to_output(s["tags"], scheme) for s in sentences]
    predicted = [to_output(p, scheme) for p in predicted_bio]
    extra = {"gold": gold, "predicted": predicted, "tokens": tokens}
    if scheme == "none":
        scores, per_class, confusion = _free_scores(gold, predicted)
        main = "token_accuracy"
        units = [[sum(a == b for a, b in zip(g, p)), len(g)] for g, p in zip(gold, predicted)]
        extra["interval"] = intervals.described(
            intervals.resampled_interval(units, "accuracy"), "token accuracy", "sentences")
        extra["interval_units"] = units
    else:
        if scheme == "IO":  # bare types: scored as IOB1, whose spans are the same
            from elman.tasks.tagging.schemes import io_to_iob1

            gold = [io_to_iob1(t) for t in gold]
            predicted = [io_to_iob1(t) for t in predicted]
        result = evaluate_tagging(gold, predicted)
        d = result.as_dict()
        scores = {"f1": d["f1"], "precision": d["precision"], "recall": d["recall"],
                  "token_accuracy": d["token_accuracy"], "tokens": d["tokens"],
                  "correct_tokens": d["correct_tokens"], "sentences": d["sentences"],
                  "gold_entities": d["gold_entities"],
                  "predicted_entities": d["predicted_entities"],
                  "correct_entities": d["correct_entities"]}
        per_class = [{"class": t, "precision": v["precision"], "recall": v["recall"],
                      "f1": v["f1"], "support": v["gold"], "predicted": v["predicted"],
                      "correct": v["correct"]} for t, v in d["per_type"].items()]
        confusion = {g: {str(p): n for p, n in row.items()} for g, row in
                     result.confusion.items()}
        extra["errors"] = entity_errors(gold, predicted, tokens)
        extra["fraction"] = {"f1": str(result.f1), "precision": str(result.precision),
                             "recall": str(result.recall),
                             "token_accuracy": str(result.token_accuracy)}
        main = "f1"
        extra["interval_units"] = sentence_counts(gold, predicted)
        extra["interval"] = intervals.described(intervals.resampled_interval(
            extra["interval_units"], "f1"), "entity F1", "sentences")
    labels = _tag_order({t for tags in gold + predicted for t in tags})
    index = {t: i for i, t in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for g, row in confusion.items():
        for p, n in row.items():
            if p in index:
                matrix[index[g]][index[p]] += n
    extra.update(labels=labels, confusion=matrix)
    examples = []
    for sentence, g, p in zip(sentences, gold, predicted):
        wrong = sum(a != b for a, b in zip(g, p))
        examples.append({"where": sentence["source"], "sentence": join_tokens(sentence["tokens"]),
                         "gold": " ".join(g), "predicted": " ".join(p), "wrong_tags": wrong,
                         "correct": wrong == 0})
    return EvalResult("tagging", split_name, main, scores, per_class, examples, extra)


ERROR_KINDS = (("missed", "missed (gold entity, nothing predicted over it)"),
               ("spurious", "spurious (predicted, no gold entity there)"),
               ("wrong_type", "wrong type (same span, other type)"),
               ("wrong_boundary", "wrong boundary (overlapping span, other first/last token)"))


def _entity_text(entity, tokens):
    return f"{join_tokens(tokens[entity['start']:entity['end']])} [{entity['type']}]"


def error_rows(result, sentences):
    """Every entity error of a result as rows (kind, where, gold, predicted, sentence).

    Args:
        result: the split's EvalResult (from `score_split`).
        sentences: list of {"tokens", "tags", "source"}, the split's items.
    """
    rows = []
    for entry in result.extra.get("errors", []):
        tokens = sentences[entry["sentence"]]["tokens"]
        where = sentences[entry["sentence"]]["source"]
        text = join_tokens(tokens)
        for kind, _ in ERROR_KINDS:
            for item in entry[kind]:
                if kind == "missed":
                    gold, pred = _entity_text(item, tokens), "-"
                elif kind == "spurious":
                    gold, pred = "-", _entity_text(item, tokens)
                else:
                    gold = _entity_text(item["gold"], tokens)
                    pred = _entity_text(item["predicted"], tokens)
                rows.append({"kind": kind, "where": where, "gold": gold, "predicted": pred,
                             "sentence": text})
    return rows




def error_counts(result, sentences):
    """How many entity errors of each kind a result has (metrics.json's error_counts)."""
    return dict(Counter(e["kind"] for e in error_rows(result, sentences)))
