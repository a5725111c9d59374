"""How far several sentiment runs agree on one split, and what averaging them would give:
a reference point for how much of a data set's remaining error any model of the kind
can still remove (issue 16). Not part of elman.

    .venv/bin/python scripts/prediction_agreement.py \
        reports/sentiment/RUN1 reports/sentiment/RUN2 ...

Each folder is a sentiment report folder holding `predictions.tsv` (columns `text`,
`gold`, `predicted`, `p_<label>` ... as elman writes them) for the same split in the
same order. Printed: each run's accuracy, the accuracy of the runs' averaged class
probabilities (what `ensemble = N` computes, here across runs of any settings), and
how many examples every run gets wrong, none gets wrong, and some get wrong.
"""

import argparse
import csv
import sys
from pathlib import Path


def read_predictions(folder):
    """(texts, gold labels, predicted labels, {label: probability list}) of a report."""
    path = Path(folder) / "predictions.tsv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if not rows or "gold" not in rows[0]:
        raise SystemExit(f"{path}: expected a sentiment predictions.tsv with a gold column")
    labels = [key[2:] for key in rows[0] if key.startswith("p_")]
    probs = {label: [float(r[f"p_{label}"]) for r in rows] for label in labels}
    return ([r["text"] for r in rows], [r["gold"] for r in rows],
            [r["predicted"] for r in rows], probs)


def agreement(runs):
    """The summary of a list of `read_predictions` results (same split, same order).

    Returns:
        dict: "accuracies" (one per run), "averaged" (accuracy of the mean
        probabilities; ties go to the first label), "wrong_by_all", "wrong_by_none",
        "wrong_by_some" (example counts) and "examples".
    """
    texts, gold = runs[0][0], runs[0][1]
    for other in runs[1:]:
        if other[0] != texts or other[1] != gold:
            raise SystemExit("the runs' predictions are not of the same examples in one order")
    n = len(gold)
    accuracies = [sum(p == g for p, g in zip(run[2], gold)) / n for run in runs]
    labels = list(runs[0][3])
    averaged = 0
    for i in range(n):
        means = [sum(run[3][label][i] for run in runs) / len(runs) for label in labels]
        averaged += labels[means.index(max(means))] == gold[i]
    wrong = [sum(run[2][i] != gold[i] for run in runs) for i in range(n)]
    return {"accuracies": accuracies, "averaged": averaged / n, "examples": n,
            "wrong_by_all": sum(w == len(runs) for w in wrong),
            "wrong_by_none": sum(w == 0 for w in wrong),
            "wrong_by_some": sum(0 < w < len(runs) for w in wrong)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", help="sentiment report folders")
    args = parser.parse_args(argv)
    result = agreement([read_predictions(folder) for folder in args.folders])
    for folder, accuracy in zip(args.folders, result["accuracies"]):
        print(f"{accuracy:.2%}  {folder}")
    print(f"averaged probabilities: {result['averaged']:.2%} of {result['examples']:,}")
    print(f"wrong by every run: {result['wrong_by_all']:,}; by none: "
          f"{result['wrong_by_none']:,}; by some: {result['wrong_by_some']:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
