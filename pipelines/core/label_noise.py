"""Training labels that read as another label, set aside before training (`noise.filter`).

Confident learning (Northcutt, Jiang and Chuang 2021, "Confident learning: estimating
uncertainty in dataset labels"), with the out-of-fold class probabilities of a linear
model: a logistic regression on TF-IDF character n-grams (scikit-learn), fitted on the
other folds, so no text is scored by a model that saw its label.

Class j's threshold t_j is the mean probability of j over the texts labelled j: how sure
the model is of j on a typical text of j. A text is confidently of class j when p_j ≥ t_j;
where several classes pass, the most probable of them. A text whose confident class
exists and is not its label lies off the diagonal of the confident joint and is set
aside; a text no class is confident of stays. Review corpora whose labels come from star
ratings carry such labels ("fast, tastes good" rated negative), in training as in test.

Nothing is dropped silently: the run's report lists every text set aside, with its file
and line, its label, the class it reads as and both probabilities (`label_noise.tsv`).
"""

import dataclasses

import numpy as np

from elman.errors import UserError

#: the columns of label_noise.tsv, one row per text set aside
COLUMNS = ("where", "label", "reads_as", "p_label", "p_reads_as", "text")


def out_of_fold_probabilities(texts, y, classes, folds, seed, ngrams=3, c=10.0):
    """Class probabilities of each text from a linear model fitted without it.

    Args:
        texts: list of str.
        y: int array of class indices (0 .. classes - 1).
        classes: int, the number of classes.
        folds: int ≥ 2, stratified folds (shuffled with `seed`).
        ngrams: int, the longest character n-gram (1 .. ngrams are used).
        c: float, the logistic regression's inverse L2 strength.

    Returns:
        (len(texts), classes) float array; each row sums to 1.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(y)
    probs = np.zeros((len(texts), classes))
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fit_rows, score_rows in splitter.split(np.zeros(len(y)), y):
        vectorizer = TfidfVectorizer(analyzer="char", ngram_range=(1, ngrams),
                                     sublinear_tf=True)
        model = LogisticRegression(C=c, max_iter=2000)
        model.fit(vectorizer.fit_transform([texts[i] for i in fit_rows]), y[fit_rows])
        scored = model.predict_proba(vectorizer.transform([texts[i] for i in score_rows]))
        probs[np.ix_(score_rows, model.classes_)] = scored  # a class absent from a fold: 0
    return probs


def confident_classes(probs, y):
    """The confident joint's reading of each text.

    Args:
        probs: (n, C) array of out-of-fold class probabilities.
        y: (n,) int array of the given labels.

    Returns:
        (confident, thresholds): confident is an (n,) int array, each text's confident
        class or -1 where no class reaches its threshold; thresholds is the (C,) array of
        t_j (NaN for a class no text carries, which then cannot be confident).
    """
    probs, y = np.asarray(probs, dtype=float), np.asarray(y)
    classes = probs.shape[1]
    thresholds = np.array([probs[y == j, j].mean() if np.any(y == j) else np.nan
                           for j in range(classes)])
    passing = probs >= np.where(np.isnan(thresholds), np.inf, thresholds)
    masked = np.where(passing, probs, -1.0)
    confident = np.where(passing.any(axis=1), masked.argmax(axis=1), -1)
    return confident, thresholds


@dataclasses.dataclass
class NoiseRecord:
    """What the filter did, for the report and metrics.json."""

    folds: int
    texts: int  # training texts before the filter
    thresholds: dict  # label → t_j
    per_label: dict  # label → {"texts": n, "set_aside": m}
    rows: list  # one dict per text set aside (COLUMNS)

    def summary(self):
        return {"method": "confident learning, linear char n-gram model", "folds": self.folds,
                "texts": self.texts, "set_aside": len(self.rows),
                "thresholds": self.thresholds, "per_label": self.per_label}

    def message(self):
        """The log line."""
        return (f"noise.filter: {len(self.rows):,} of {self.texts:,} training texts "
                f"({len(self.rows) / self.texts:.1%}) read as another label and are set "
                "aside (listed in the report's label_noise.tsv)")


def filter_split(split, labels, noise, seed):
    """The training split without the texts the confident joint reads as another label.

    Args:
        split: the training Split (items with .text, .label, .where).
        labels: list of str, the label names in class order.
        noise: the run's NoiseConfig (folds, ngrams, c).
        seed: int, shuffles the folds.

    Returns:
        (kept Split, NoiseRecord).
    """
    index = {label: i for i, label in enumerate(labels)}
    texts = [e.text for e in split.items]
    y = np.array([index[e.label] for e in split.items])
    counts = np.bincount(y, minlength=len(labels))
    for j, label in enumerate(labels):
        if counts[j] < noise.folds:
            raise UserError(f"noise.folds = {noise.folds} needs at least {noise.folds} training "
                            f"texts of every label; '{label}' has {counts[j]} (lower "
                            "noise.folds, or set noise.filter = \"none\")", path=split.source)
    probs = out_of_fold_probabilities(texts, y, len(labels), noise.folds, seed, noise.ngrams,
                                      noise.c)
    confident, thresholds = confident_classes(probs, y)
    aside = (confident >= 0) & (confident != y)
    left = np.bincount(y[~aside], minlength=len(labels))
    for j, label in enumerate(labels):
        if left[j] == 0:
            raise UserError(f"noise.filter would set aside every training text labelled "
                            f"'{label}'; set noise.filter = \"none\" for this data",
                            path=split.source)
    rows = [{"where": split.items[i].where, "label": labels[y[i]],
             "reads_as": labels[confident[i]], "p_label": float(probs[i, y[i]]),
             "p_reads_as": float(probs[i, confident[i]]), "text": texts[i]}
            for i in np.flatnonzero(aside)]
    rows.sort(key=lambda r: -r["p_reads_as"])
    record = NoiseRecord(
        noise.folds, len(texts), {label: float(thresholds[j]) for j, label in enumerate(labels)},
        {label: {"texts": int(counts[j]), "set_aside": int(counts[j] - left[j])}
         for j, label in enumerate(labels)}, rows)
    kept = dataclasses.replace(split, items=[e for e, bad in zip(split.items, aside)
                                             if not bad])
    return kept, record
