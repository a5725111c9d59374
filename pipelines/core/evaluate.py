"""The evaluation stage: one result type for every task, and the classification scores."""

import dataclasses

import numpy as np

from elman.core import intervals


@dataclasses.dataclass
class EvalResult:
    """Scores of one model on one split.

    Attributes:
        task: str, the task name.
        split: str, the split evaluated ("validation", "test").
        main_metric: str, the key in `scores` that ranks runs.
        scores: dict of str → float, every scalar metric.
        per_class: list of dicts, one row per class/type/tag with its scores.
        examples: list of dicts, one per example, written to predictions.tsv.
        extra: dict, anything task-specific the report needs (matrices, curves).
    """

    task: str
    split: str
    main_metric: str
    scores: dict
    per_class: list = dataclasses.field(default_factory=list)
    examples: list = dataclasses.field(default_factory=list)
    extra: dict = dataclasses.field(default_factory=dict)


def classification_result(task, split, texts, gold, probs, labels, wheres=None):
    """Scores a classifier's probabilities against gold labels.

    Args:
        task, split: str, names for the result.
        texts: list of str, the inputs.
        gold: list of str, the gold labels.
        probs: array [n, len(labels)], predicted probabilities.
        labels: list of str, the label of each probability column.
        wheres: list of str, "file:line" of each example, or None.

    Returns:
        EvalResult with accuracy, macro-F1, per-class precision/recall/F1 (and ROC-AUC
        for two classes), the confusion matrix and the accuracy's bootstrap interval over
        the texts (`elman.core.intervals`; its per-text counts in "interval_units") in
        `extra`, and per-example predictions.
    """
    from sklearn import metrics

    probs = np.asarray(probs, dtype="float64")
    index = {label: i for i, label in enumerate(labels)}
    y_true = np.array([index[g] for g in gold])
    y_pred = probs.argmax(axis=1)
    columns = list(range(len(labels)))
    precision, recall, f1, support = metrics.precision_recall_fscore_support(
        y_true, y_pred, labels=columns, zero_division=0)
    scores = {
        "accuracy": float(metrics.accuracy_score(y_true, y_pred)),
        "macro_f1": float(metrics.f1_score(y_true, y_pred, labels=columns, average="macro",
                                           zero_division=0)),
        "examples": int(len(y_true)),
    }
    units = np.stack([y_pred == y_true, np.ones(len(y_true), dtype=bool)], axis=1)
    interval = intervals.resampled_interval(units, "accuracy")
    extra = {"labels": list(labels),
             "interval": intervals.described(interval, "accuracy", "texts"),
             "interval_units": units.astype(int).tolist(),
             "confusion": metrics.confusion_matrix(y_true, y_pred, labels=columns).tolist()}
    if len(labels) == 2 and len(set(y_true.tolist())) == 2:
        scores["roc_auc"] = float(metrics.roc_auc_score(y_true, probs[:, 1]))
        fpr, tpr, _ = metrics.roc_curve(y_true, probs[:, 1])
        extra["roc"] = {"fpr": fpr.tolist(), "tpr": tpr.tolist(), "positive": labels[1]}
    per_class = [
        {"class": labels[i], "precision": float(precision[i]), "recall": float(recall[i]),
         "f1": float(f1[i]), "support": int(support[i])}
        for i in columns
    ]
    examples = []
    for i, text in enumerate(texts):
        row = {"text": text, "gold": gold[i], "predicted": labels[y_pred[i]],
               "confidence": float(probs[i, y_pred[i]]),
               "correct": bool(y_pred[i] == y_true[i])}
        row.update({f"p_{label}": float(probs[i, j]) for j, label in enumerate(labels)})
        if wheres:
            row["where"] = wheres[i]
        examples.append(row)
    return EvalResult(task, split, "accuracy", scores, per_class, examples, extra)
