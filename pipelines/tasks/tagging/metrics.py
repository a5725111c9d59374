"""Scores for sequence tagging: CoNLL entity P/R/F1, token accuracy, error analysis.

Entity scores are computed the way the CoNLL-2000/2003 `conlleval` script computes
them: entities are read with its chunk rules (an `I-X` after `O` or after another
type starts an entity; see `tag_schemes.bio_spans`), an entity is correct when its
type, first and last token all match, and precision/recall/F1 are micro-averaged
over entities (and given per type). Sentences are independent: an entity never
crosses a sentence boundary. Values are exact `fractions.Fraction`s; `as_dict()`
gives floats for reports.

Every gold position is scored: a predicted sentence shorter than its gold sentence
(a model that truncated its input) counts each missing position as a wrong tag and
as `O` for the entities; the number of such positions is reported.

Example:

```python
scores = evaluate_tagging([["B-PER", "I-PER", "O"]], [["B-PER", "O", "O"]])
scores.f1               # Fraction(0, 1)
scores.token_accuracy   # Fraction(2, 3)
```
"""

import dataclasses
from collections import Counter
from fractions import Fraction

from elman.tasks.tagging.schemes import bio_spans


def _ratio(numerator, denominator):
    return Fraction(numerator, denominator) if denominator else Fraction(0)


def _prf(correct, predicted, gold):
    precision = _ratio(correct, predicted)
    recall = _ratio(correct, gold)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else Fraction(0)
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "gold": gold,
        "predicted": predicted,
        "correct": correct,
    }


@dataclasses.dataclass(frozen=True)
class TaggingScores:
    """Entity and token scores of a tagged corpus, as returned by `evaluate_tagging`.

    Args:
        precision: Fraction, correct entities / predicted entities (0 when none).
        recall: Fraction, correct entities / gold entities (0 when none).
        f1: Fraction, 2PR / (P + R) (0 when P + R is 0).
        gold_entities: int, number of gold entities.
        predicted_entities: int, number of predicted entities.
        correct_entities: int, number of predicted entities equal to a gold one.
        per_type: dict, entity type -> dict with precision, recall, f1 (Fraction)
            and gold, predicted, correct (int).
        tokens: int, number of gold positions.
        correct_tokens: int, gold positions whose predicted tag is the gold tag.
        token_accuracy: Fraction, correct_tokens / tokens.
        per_tag_accuracy: dict, gold tag -> Fraction of its positions tagged right.
        per_tag_support: dict, gold tag -> number of its positions.
        confusion: dict, gold tag -> dict predicted tag -> count (a missing
            prediction is counted under the predicted tag `None`).
        missing_predictions: int, gold positions with no predicted tag.
        sentences: int, number of sentences.

    Example:

    ```python
    scores = evaluate_tagging([["B-LOC"]], [["B-LOC"]])
    scores.as_dict()["f1"]  # 1.0
    ```
    """

    precision: Fraction
    recall: Fraction
    f1: Fraction
    gold_entities: int
    predicted_entities: int
    correct_entities: int
    per_type: dict
    tokens: int
    correct_tokens: int
    token_accuracy: Fraction
    per_tag_accuracy: dict
    per_tag_support: dict
    confusion: dict
    missing_predictions: int
    sentences: int

    def as_dict(self):
        """Returns the scores as plain JSON-ready values (floats, ints, sorted keys)."""

        def plain(value):
            if isinstance(value, Fraction):
                return float(value)
            if isinstance(value, dict):
                return {str(k): plain(v) for k, v in sorted(value.items(), key=lambda i: str(i[0]))}
            return value

        return plain(dataclasses.asdict(self))


def _check_lengths(gold, predicted):
    if len(gold) != len(predicted):
        raise ValueError(
            f"Expected as many predicted sentences as gold sentences. "
            f"Received: {len(gold)} gold and {len(predicted)} predicted"
        )
    for index, (gold_tags, predicted_tags) in enumerate(zip(gold, predicted)):
        if len(predicted_tags) > len(gold_tags):
            raise ValueError(
                f"Sentence {index}: {len(predicted_tags)} predicted tags for "
                f"{len(gold_tags)} gold tags."
            )


def evaluate_tagging(gold, predicted):
    """Scores predicted tag sequences against gold ones, as `conlleval` does.

    Args:
        gold: list of lists of str, the gold tags of each sentence (BIO, IOB1, BIOS,
            BIOES or BMES tags; `"O"` outside entities).
        predicted: list of lists of str, the predicted tags, one list per gold
            sentence, no longer than it (a shorter list leaves positions missing).

    Returns:
        A `TaggingScores`.

    Example:

    ```python
    evaluate_tagging([["O", "I-PER"]], [["O", "B-PER"]]).f1  # Fraction(1, 1)
    ```
    """
    _check_lengths(gold, predicted)
    gold_counts, predicted_counts, correct_counts = Counter(), Counter(), Counter()
    support, right, confusion = Counter(), Counter(), {}
    missing = 0
    for gold_tags, predicted_tags in zip(gold, predicted):
        gold_tags = list(gold_tags)
        padded = list(predicted_tags) + ["O"] * (len(gold_tags) - len(predicted_tags))
        gold_spans = set(bio_spans(gold_tags))
        predicted_spans = set(bio_spans(padded))
        gold_counts.update(span[0] for span in gold_spans)
        predicted_counts.update(span[0] for span in predicted_spans)
        correct_counts.update(span[0] for span in gold_spans & predicted_spans)
        for position, gold_tag in enumerate(gold_tags):
            predicted_tag = predicted_tags[position] if position < len(predicted_tags) else None
            missing += predicted_tag is None
            support[gold_tag] += 1
            right[gold_tag] += predicted_tag == gold_tag
            row = confusion.setdefault(gold_tag, Counter())
            row[predicted_tag] += 1
    types = sorted(set(gold_counts) | set(predicted_counts))
    per_type = {t: _prf(correct_counts[t], predicted_counts[t], gold_counts[t]) for t in types}
    total = _prf(
        sum(correct_counts.values()), sum(predicted_counts.values()), sum(gold_counts.values())
    )
    tokens = sum(support.values())
    correct_tokens = sum(right.values())
    return TaggingScores(
        precision=total["precision"],
        recall=total["recall"],
        f1=total["f1"],
        gold_entities=total["gold"],
        predicted_entities=total["predicted"],
        correct_entities=total["correct"],
        per_type=per_type,
        tokens=tokens,
        correct_tokens=correct_tokens,
        token_accuracy=_ratio(correct_tokens, tokens),
        per_tag_accuracy={tag: Fraction(right[tag], support[tag]) for tag in sorted(support)},
        per_tag_support=dict(sorted(support.items())),
        confusion={tag: dict(row) for tag, row in sorted(confusion.items())},
        missing_predictions=missing,
        sentences=len(gold),
    )


def sentence_counts(gold, predicted):
    """Per sentence, [correct entities, predicted entities, gold entities]: the rows whose
    sums give `evaluate_tagging`'s entity totals (a shorter predicted sentence is padded
    with `O`, as there), for resampling the sentences (`elman.core.intervals.f1_of`)."""
    _check_lengths(gold, predicted)
    rows = []
    for gold_tags, predicted_tags in zip(gold, predicted):
        padded = list(predicted_tags) + ["O"] * (len(gold_tags) - len(predicted_tags))
        gold_spans, predicted_spans = set(bio_spans(list(gold_tags))), set(bio_spans(padded))
        rows.append([len(gold_spans & predicted_spans), len(predicted_spans), len(gold_spans)])
    return rows


def _entity(span, tokens):
    type_, start, end = span
    entity = {"type": type_, "start": start, "end": end}
    if tokens is not None:
        entity["text"] = " ".join(str(token) for token in tokens[start:end])
    return entity


def entity_errors(gold, predicted, tokens=None):
    """Lists, for each sentence, the entities the prediction got wrong.

    Spans within a sentence never overlap, so each wrong entity falls in exactly
    one group:

    - `missed`: a gold entity that no predicted entity overlaps.
    - `spurious`: a predicted entity that overlaps no gold entity.
    - `wrong_type`: a gold and a predicted entity with the same first and last
      token but different types.
    - `wrong_boundary`: a gold and a predicted entity that overlap with a different
      first or last token (of the same type or not).

    Args:
        gold: list of lists of str, the gold tags of each sentence.
        predicted: list of lists of str, the predicted tags (see
            `evaluate_tagging` for shorter lists).
        tokens: list of lists of str or None, the words, to add each entity's text.
            Default None.

    Returns:
        A list with one dict per sentence: `sentence` (index), `correct` (int),
        `missed` and `spurious` (lists of entities), `wrong_type` and
        `wrong_boundary` (lists of `{"gold": entity, "predicted": entity}`); an
        entity is `{"type", "start", "end"}` (end exclusive) plus `"text"`.

    Example:

    ```python
    entity_errors([["B-PER", "I-PER"]], [["B-LOC", "I-LOC"]])[0]["wrong_type"]
    # [{'gold': {'type': 'PER', 'start': 0, 'end': 2},
    #   'predicted': {'type': 'LOC', 'start': 0, 'end': 2}}]
    ```
    """
    _check_lengths(gold, predicted)
    if tokens is not None and len(tokens) != len(gold):
        raise ValueError(
            f"Expected one token list per sentence. Received: {len(tokens)} for {len(gold)}"
        )
    report = []
    for index, (gold_tags, predicted_tags) in enumerate(zip(gold, predicted)):
        words = None if tokens is None else tokens[index]
        padded = list(predicted_tags) + ["O"] * (len(gold_tags) - len(predicted_tags))
        gold_spans = bio_spans(gold_tags)
        predicted_spans = bio_spans(padded)
        exact = set(gold_spans) & set(predicted_spans)
        entry = {
            "sentence": index,
            "correct": len(exact),
            "missed": [],
            "spurious": [],
            "wrong_type": [],
            "wrong_boundary": [],
        }
        for g in gold_spans:
            if g in exact:
                continue
            overlapping = [p for p in predicted_spans if p[1] < g[2] and g[1] < p[2]]
            if not overlapping:
                entry["missed"].append(_entity(g, words))
            for p in overlapping:
                kind = "wrong_type" if (p[1], p[2]) == (g[1], g[2]) else "wrong_boundary"
                entry[kind].append({"gold": _entity(g, words), "predicted": _entity(p, words)})
        for p in predicted_spans:
            if p not in exact and not any(p[1] < g[2] and g[1] < p[2] for g in gold_spans):
                entry["spurious"].append(_entity(p, words))
        report.append(entry)
    return report
