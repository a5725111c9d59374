"""A feature-based linear-chain CRF on a CoNLL NER corpus: a reference point for how hard
a corpus is, next to elman's BiLSTM-CRF (issue 16). Not part of elman.

It needs python-crfsuite, which elman does not install:

    .venv/bin/pip install python-crfsuite
    .venv/bin/python scripts/feature_crf_baseline.py \\
        ../shared/data/wikiann_en/train.conll ../shared/data/wikiann_en/dev.conll

Files are read with elman's CoNLL reader (scheme guessed) and scored with elman's `conlleval`
rules, so the F1 is the one elman's reports give.

Features of each token: the lower-cased word, its word shape (X/x/d runs, at most two
of a kind), prefixes and suffixes of 1-4 chars, whether it starts with a capital, its
position (0, 1, 2, 3+) and the sentence length; the lower-cased words and shapes of
the two tokens on each side, the 3-char suffixes and the word pairs of the next and
the previous token. L-BFGS with L1 `--c1` and L2 `--c2` penalties.
"""

import argparse
import re
import time


def shape(word):
    text = re.sub("[A-Z]", "X", word)
    text = re.sub("[a-z]", "x", text)
    text = re.sub("[0-9]", "d", text)
    return re.sub(r"(.)\1+", r"\1\1", text)


def token_features(tokens, i):
    word = tokens[i]
    low = word.lower()
    out = ["bias", "w=" + low, "shape=" + shape(word), f"cap={word[:1].isupper():d}",
           f"position={min(i, 3)}", f"length={len(tokens)}"]
    out += [f"prefix{n}={low[:n]}" for n in range(1, 5)]
    out += [f"suffix{n}={low[-n:]}" for n in range(1, 5)]
    for step in (-2, -1, 1, 2):
        j = i + step
        if not 0 <= j < len(tokens):
            out.append(f"{step}:outside")
            continue
        other = tokens[j]
        out += [f"{step}:w={other.lower()}", f"{step}:shape={shape(other)}"]
        if abs(step) == 1:
            out += [f"{step}:suffix3={other.lower()[-3:]}", f"{step}:pair={other.lower()}|{low}"]
    return out


def main(argv=None):
    import pycrfsuite

    from elman.tasks.tagging.metrics import evaluate_tagging
    from elman.tasks.tagging.readers import read_conll

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train")
    parser.add_argument("dev")
    parser.add_argument("--c1", type=float, default=0.05)
    parser.add_argument("--c2", type=float, default=0.01)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--model", default="/tmp/feature_crf.crfsuite")
    args = parser.parse_args(argv)

    start = time.time()
    train, dev = read_conll(args.train, scheme="auto"), read_conll(args.dev, scheme="auto")
    trainer = pycrfsuite.Trainer(verbose=False)
    for sentence in train:
        tokens = sentence["tokens"]
        trainer.append([token_features(tokens, i) for i in range(len(tokens))],
                       sentence["tags"])
    trainer.set_params({"c1": args.c1, "c2": args.c2, "max_iterations": args.iterations,
                        "feature.possible_transitions": True})
    trainer.train(args.model)
    tagger = pycrfsuite.Tagger()
    tagger.open(args.model)
    predicted = [tagger.tag([token_features(s["tokens"], i) for i in range(len(s["tokens"]))])
                 for s in dev]
    scores = evaluate_tagging([s["tags"] for s in dev], predicted)
    print(f"dev entity F1 {100 * float(scores.f1):.2f}  precision "
          f"{100 * float(scores.precision):.2f}  recall {100 * float(scores.recall):.2f}  "
          f"({len(train):,} training sentences, {time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
