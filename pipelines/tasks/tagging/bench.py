"""`elman bench` rows of the tagging task: training tokens/s and tagging sentences/s,
softmax against CRF head, measured side by side in one process."""

import dataclasses
import time
from pathlib import Path

from elman import config as config_lib
from elman.core import report as rep
from elman.tasks.tagging.data import load_splits
from elman.tasks.tagging.model import build_model, describe_model, encode, predict_tag_ids
from elman.tasks.tagging.vocab import build_vocabularies

TASK = "tagging"
ROOT = Path(__file__).resolve().parents[3]


def _bench_one(cfg, splits, scheme, head, train_steps, log):
    """Times one head: a `fit` epoch over `train_steps` batches and tagging validation."""
    import keras

    from elman.core.batching import dataset_from_plan, plan_epoch

    cfg = config_lib.load_config(TASK, None, [f"head.type={head}"], extra=config_lib.to_dict(cfg))
    keras.utils.set_random_seed(cfg.train.seed)
    vocab, _ = build_vocabularies(cfg, splits["train"].items, scheme)
    with_chars = cfg.chars.features != "none"
    train = splits["train"].items
    x, y, lengths = encode(vocab, [s["tokens"] for s in train], with_chars,
                           [s["tags"] for s in train])
    model = build_model(cfg, vocab)
    plan = plan_epoch(lengths, cfg.train.batch_size, cfg.train.seed, 0, cfg.train.bucketing)
    steps = min(train_steps, len(plan))
    # the same tf.data pipeline and fit() as real training; a short fit first traces
    model.fit(dataset_from_plan(x, y, plan[:3]), epochs=1, shuffle=False, verbose=0)
    timed = dataset_from_plan(x, y, plan[:steps])
    began = time.perf_counter()
    model.fit(timed, epochs=1, shuffle=False, verbose=0)
    train_seconds = time.perf_counter() - began
    tokens = int(sum(lengths[i].sum() for i in plan[:steps]))
    val = splits["validation"]
    repeat = max(1, 400 // len(val.items))  # at least ~400 sentences per timing
    features, _, val_lengths = encode(vocab, [s["tokens"] for s in val.items] * repeat,
                                      with_chars)
    predict_tag_ids(model, features, val_lengths)  # warm-up (tracing)
    timings = []
    for _ in range(3):
        began = time.perf_counter()
        predict_tag_ids(model, features, val_lengths)
        timings.append(time.perf_counter() - began)
    tag_seconds = min(timings)
    row = {"head": head, "char_features": cfg.chars.features,
           "model": describe_model(cfg, model.count_params()),
           "train_tokens_per_second": tokens / train_seconds,
           "train_tokens_timed": tokens, "train_batch_size": cfg.train.batch_size,
           "tag_sentences_per_second": len(val_lengths) / tag_seconds,
           "tag_sentences_timed": len(val_lengths), "tag_batch_size": 256}
    log(f"  {head:7s} train {row['train_tokens_per_second']:9,.0f} tokens/s   "
        f"tag {row['tag_sentences_per_second']:8,.0f} sentences/s")
    return row


def benchmark(quick=False, log=print):
    """Training tokens/s and tagging sentences/s, softmax vs CRF, side by side.

    Each data set is timed with both heads in one process with the same settings
    (the preset's, only `head.type` differs): one `fit` epoch over the same batches
    (after a short traced warm-up fit), and tagging the validation set (repeated to
    at least ~400 sentences; batches of 256) after a warm-up pass, best of three.

    Args:
        quick: bool, the toy English data only; otherwise also UD English EWT
            (../shared/data/ud_english_ewt, skipped with a note when missing).
        log: callable for progress lines.

    Returns:
        dict with "machine" and "datasets": name → {"rows": [one per head],
        "crf_over_softmax": {"train": ratio, "tag": ratio}} (or {"skipped": why}).
    """
    from elman.core import runtime

    presets = [("toy-en", "default", 40)]
    if not quick:
        presets.append(("ud-ewt-upos", "ud-pos", 60))
    out = {"quick": quick, "datasets": {}}
    for name, preset, steps in presets:
        cfg = config_lib.load_config(TASK, config_lib.preset_path(TASK, preset))
        cfg = dataclasses.replace(cfg, data=dataclasses.replace(
            cfg.data, train=str(ROOT / cfg.data.train) if not Path(cfg.data.train).is_absolute()
            else cfg.data.train,
            validation=str(ROOT / cfg.data.validation) if cfg.data.validation else "",
            test=""))
        if not Path(cfg.data.train).exists():
            out["datasets"][name] = {"skipped": f"{cfg.data.train} not found"}
            log(f"{name}: skipped ({cfg.data.train} not found)")
            continue
        runtime.configure(cfg.train, log)
        splits, scheme = load_splits(cfg.data, cfg.train.seed)
        log(f"{name}: {len(splits['train'].items)} train sentences, "
            f"{len(splits['validation'].items)} tagged")
        rows = [_bench_one(cfg, splits, scheme, head, steps, log) for head in ("softmax", "crf")]
        ratio = {"train": rows[1]["train_tokens_per_second"] / rows[0]["train_tokens_per_second"],
                 "tag": rows[1]["tag_sentences_per_second"] / rows[0]["tag_sentences_per_second"]}
        log(f"  CRF / softmax: training {ratio['train']:.2f}×, tagging {ratio['tag']:.2f}×")
        out["datasets"][name] = {"rows": rows, "crf_over_softmax": ratio}
        out["machine"] = runtime.device_summary(cfg.train)
    return out


def benchmark_markdown(result):
    """The benchmark result as a Markdown table."""
    rows = []
    for name, entry in result["datasets"].items():
        if "skipped" in entry:
            rows.append((name, "-", entry["skipped"], "-", "-"))
            continue
        for row in entry["rows"]:
            rows.append((name, row["head"], row["model"], f"{row['train_tokens_per_second']:,.0f}",
                         f"{row['tag_sentences_per_second']:,.0f}"))
    machine = result.get("machine", {})
    return (rep.md_table(["data", "head", "model", "training tokens/s", "tagging sentences/s"],
                         rows)
            + f"\n\nMachine: {machine.get('device', '?')}, {machine.get('cpu_count', '?')} CPUs, "
              f"{machine.get('intra_op_threads', '?')} intra-op threads.")
