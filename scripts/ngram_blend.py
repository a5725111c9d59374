"""Whether a linear bag-of-n-grams model adds anything to sentiment runs: a check on
how much of a data set's remaining error is left to models of another kind (issue 16).
Not part of elman.

    .venv/bin/python scripts/ngram_blend.py TRAIN.csv reports/sentiment/RUN1 [RUN2 ...]

TRAIN.csv is the runs' training file (`label,text`, as elman reads it). A logistic
regression on TF-IDF character n-grams (scikit-learn) is fitted on it and scored on
the examples of the report folders' `predictions.tsv` (the runs' validation split, as
elman writes it; every folder must hold the same examples in one order). Printed: the
linear model's accuracy, then, for each run and for the runs' averaged probabilities,
the accuracy of (1 - w) * run + w * linear for each blend weight w.
"""

import argparse
import csv
import importlib.util
import sys
from fractions import Fraction
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "prediction_agreement", Path(__file__).with_name("prediction_agreement.py"))
_agreement = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_agreement)


def read_training(path):
    """(texts, labels) of a `label,text` CSV file with a header line."""
    with Path(path).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or "label" not in rows[0] or "text" not in rows[0]:
        raise SystemExit(f"{path}: expected a CSV file with columns label,text")
    return [r["text"] for r in rows], [r["label"] for r in rows]


def linear_probabilities(train_texts, train_labels, texts, ngrams=(1, 3), c=10.0):
    """{label: probabilities} of a TF-IDF char n-gram logistic regression on `texts`."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(analyzer="char", ngram_range=ngrams, sublinear_tf=True)
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(vectorizer.fit_transform(train_texts), train_labels)
    probs = model.predict_proba(vectorizer.transform(texts))
    return {str(label): list(probs[:, k]) for k, label in enumerate(model.classes_)}


def accuracy(probs, gold):
    """The share (a Fraction) of examples whose most probable label is gold (ties: the
    first label)."""
    labels = list(probs)
    right = 0
    for i, g in enumerate(gold):
        column = [probs[label][i] for label in labels]
        right += labels[column.index(max(column))] == g
    return Fraction(right, len(gold))


def blend(first, second, weight):
    """(1 - weight) * first + weight * second, label by label."""
    missing = set(first) ^ set(second)
    if missing:
        raise SystemExit(f"the two models do not have the same labels: {sorted(missing)}")
    return {label: [(1 - weight) * a + weight * b for a, b in zip(first[label], second[label])]
            for label in first}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train", help="the runs' training CSV (label,text)")
    parser.add_argument("folders", nargs="+", help="sentiment report folders")
    parser.add_argument("--weights", default="0.2,0.3,0.5", help="blend weights, comma-separated")
    parser.add_argument("--ngrams", type=int, default=3, help="longest character n-gram")
    parser.add_argument("-C", type=float, default=10.0, help="inverse L2 strength")
    args = parser.parse_args(argv)
    runs = [_agreement.read_predictions(folder) for folder in args.folders]
    _agreement.agreement(runs)  # refuses runs of other examples
    texts, gold = runs[0][0], runs[0][1]
    linear = linear_probabilities(*read_training(args.train), texts,
                                  ngrams=(1, args.ngrams), c=args.C)
    weights = [float(w) for w in args.weights.split(",")]
    share = float(accuracy(linear, gold))
    print(f"linear char 1-{args.ngrams}-grams: {share:.2%} of {len(gold):,}")
    named = [(folder, run[3]) for folder, run in zip(args.folders, runs)]
    if len(runs) > 1:
        mean = {label: [sum(run[3][label][i] for run in runs) / len(runs)
                        for i in range(len(gold))] for label in runs[0][3]}
        named.append(("averaged runs", mean))
    for name, probs in named:
        cells = [f"w={w:g}: {float(accuracy(blend(probs, linear, w), gold)):.2%}" for w in weights]
        print(f"{float(accuracy(probs, gold)):.2%}  {name}  blended " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
