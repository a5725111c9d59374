"""Token-budget batches against example batches on real corpora, side by side (issue 20).

    python -m elman.bench.token_batches [--epochs 3] [--only tagging|translation]
        [--scales 1,2] [--out reports/bench/token_batches.json]

Each case trains one preset in this process, from the same seed, for the same number
of epochs: with batches of `train.batch_size` sentences, then with `train.batch_tokens`
set to the mean padded size of those batches (`--scales 1`: the same mean tokens a
step, so the same work a step on average and about as many steps an epoch) and to
twice it (`2`: half the steps, each twice as full; the learning rate is left as the
preset has it). Reported per run: training tokens/s (elman's own count: real
tokens over the time in `fit`), steps an epoch, mean sentences a batch, real-token
share of the padded batches, wall seconds, and the dev score after the same number
of epochs (so the speed is not bought with quality). Cases:

- tagging: the `ud-pos` preset (UD English Web Treebank UPOS, char BiLSTM, CRF),
  dev token accuracy;
- translation: the `tatoeba-cmn` preset (Tatoeba English→Chinese, GRU 256 with
  attention), dev BLEU of greedy decoding.

Early stopping and the time budget are off, so both runs train every epoch. The data
are in ../shared/data (not part of the project); a case whose data is absent is skipped.
No test asserts a time.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "tagging": {"task": "tagging", "preset": "ud-pos", "score": "token_accuracy",
                "overrides": []},
    "translation": {"task": "translation", "preset": "tatoeba-cmn", "score": "bleu",
                    "overrides": ["eval.beam_widths=[]", "eval.samples=0"]},
}


def _run(case, epochs, batch_tokens, root, log):
    from elman import api

    overrides = [f"train.epochs={epochs}", "train.patience=1000", "train.max_minutes=0",
                 f"train.batch_tokens={batch_tokens}"] + case["overrides"]
    name = f"{case['task']}-{'tokens' if batch_tokens else 'examples'}"
    began = time.perf_counter()
    run = api.train(case["task"], config=case["preset"], out=str(root / "runs" / name),
                    overrides=overrides, reports=str(root / "reports"), log=log)
    seconds = time.perf_counter() - began
    metrics = run.metrics
    batching = metrics.get("batching", {})
    padded = batching.get("mean_padded_tokens_per_batch") or 0
    return {
        "batch_tokens": batch_tokens,
        "batching": batching,
        "train_tokens_per_s": metrics.get("train_tokens_per_second"),
        "real_token_share": (batching.get("mean_real_tokens_per_batch", 0) / padded
                             if padded else None),
        "epochs_run": metrics.get("epochs_run"),
        "wall_seconds": round(seconds, 1),
        "dev_score": run.scores.get(case["score"]),
        "score": case["score"],
    }


def compare(name, epochs, root, scales=(1.0, 2.0), log=print):
    """Both runs of one case; None when its data is absent."""
    from elman import config as config_lib
    from elman.bench.suite import _resolve

    case = CASES[name]
    cfg = config_lib.load_config(case["task"],
                                 config_lib.preset_path(case["task"], case["preset"]))
    if not _resolve(cfg.data.train).is_file():
        log(f"{name}: {cfg.data.train} is absent; skipped")
        return None
    examples = _run(case, epochs, 0, root, log)
    mean_padded = examples["batching"]["mean_padded_tokens_per_batch"]
    out = {"preset": case["preset"], "epochs": epochs, "examples": examples, "budgets": []}
    line = (f"{name} ({case['preset']}, {epochs} epochs): examples "
            f"{examples['train_tokens_per_s']:,.0f} tokens/s, dev {case['score']} "
            f"{examples['dev_score']:.4f}")
    for scale in scales:
        budget = int(round(scale * mean_padded))
        tokens = _run(case, epochs, budget, root, log)
        tokens["scale"] = scale
        tokens["over_examples"] = (tokens["train_tokens_per_s"] / examples["train_tokens_per_s"]
                                   if examples["train_tokens_per_s"] else None)
        out["budgets"].append(tokens)
        line += (f"; budget {budget} ({scale:g}x) {tokens['train_tokens_per_s']:,.0f} "
                 f"tokens/s ({tokens['over_examples']:.2f}x), dev {tokens['dev_score']:.4f}")
    log(line)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--only", choices=sorted(CASES))
    parser.add_argument("--scales", default="1,2",
                        help="budgets as multiples of the example batches' mean padded size")
    parser.add_argument("--out", default="reports/bench/token_batches.json")
    args = parser.parse_args(argv)
    from elman.bench.timing import machine_facts

    scales = [float(x) for x in args.scales.split(",")]
    result = {"machine": machine_facts(), "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in [args.only] if args.only else sorted(CASES):
            result["cases"][name] = compare(name, args.epochs, Path(tmp), scales)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
