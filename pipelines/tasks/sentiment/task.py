"""Sentiment classification: data → tokenizer → tf.data → BiLSTM/GRU classifier → report."""

import dataclasses
import datetime
import json
from pathlib import Path

from elman import config as config_lib
from elman.errors import UserError
from elman.core import report as rep
from elman.core.html import write_text_atomic

TASK = "sentiment"


def _ids(tokenizer, texts):
    import tensorflow as tf

    ds = tf.data.Dataset.from_tensor_slices(tf.constant(texts, dtype=tf.string))
    ds = ds.batch(2048).map(tokenizer.ragged_ids)  # tokenization inside the pipeline
    parts = list(ds)
    return tf.concat(parts, axis=0) if len(parts) > 1 else parts[0]


def classifier_from_config(cfg, vocabulary_size, num_classes, char_vocabulary_size=0,
                           embeddings_initializer="uniform", name="sentiment_classifier"):
    """The SentimentClassifier a SentimentConfig describes (not compiled)."""
    from elman.models.sentiment_classifier import SentimentClassifier

    e, h = cfg.encoder, cfg.head
    return SentimentClassifier(
        vocabulary_size, num_classes, embedding_dim=cfg.embedding.dim, cell=e.cell,
        units=e.units, num_layers=e.num_layers, bidirectional=e.bidirectional,
        dropout=e.dropout, merge_mode=e.merge_mode, recurrent_dropout=e.recurrent_dropout,
        pooling=h.pooling, hidden=h.hidden, head_dropout=h.dropout,
        embeddings_initializer=embeddings_initializer,
        embedding_trainable=cfg.embedding.trainable, word_dropout=cfg.embedding.dropout,
        unk_dropout=cfg.embedding.unk_dropout, char_features=cfg.chars.features,
        char_vocabulary_size=char_vocabulary_size, char_embedding_dim=cfg.chars.embedding_dim,
        char_units=cfg.chars.units, char_kernel_size=cfg.chars.kernel_size,
        adversarial=cfg.embedding.adversarial, name=name)


def build_inference_model(tokenizer, classifiers, char_ids=None):
    """Raw strings in, class probabilities out.

    Args:
        tokenizer: the TextTokenizer layer.
        classifiers: one SentimentClassifier, or a list of them (an ensemble: the
            probabilities are averaged).
        char_ids: the CharIds layer when the classifiers use char features.
    """
    import keras

    if not isinstance(classifiers, (list, tuple)):
        classifiers = [classifiers]
    text = keras.Input(shape=(), dtype="string", name="text")
    ids = tokenizer(text)
    if char_ids is not None:
        ids = {"token_ids": ids, "char_ids": char_ids(text)}
    outputs = [classifier(ids) for classifier in classifiers]
    probs = outputs[0] if len(outputs) == 1 else keras.layers.Average(name="ensemble")(outputs)
    return keras.Model(text, probs, name="sentiment_inference")


def _pretrain(cfg, member_cfg, corpus, encoded, vocabulary_size, initializer, pretrain_dir,
              resume, strategy, log):
    """Masked-word pretraining of the embedding and encoder; returns fit's TrainResult.

    Reads `corpus` (token ids and lengths of the training texts and any extra texts;
    no labels); the validation texts' loss picks the best epoch. It has its own
    checkpoints under `pretrain_dir`, so an interrupted run resumes inside pretraining.
    """
    import keras

    from elman.models.masked_word_pretrainer import MaskedWordPretrainer
    from elman.core.batching import dataset_from_plan, plan_eval
    from elman.core.train import adam, fit, read_state

    p, e = cfg.pretrain, cfg.encoder
    train_cfg = dataclasses.replace(member_cfg, epochs=p.epochs, batch_size=p.batch_size,
                                    learning_rate=p.learning_rate, patience=p.patience,
                                    monitor="val_loss", ema=0.0, lr_decay=1.0)

    def build_and_compile():
        model = MaskedWordPretrainer(
            vocabulary_size, embedding_dim=cfg.embedding.dim, cell=e.cell, units=e.units,
            num_layers=e.num_layers, bidirectional=e.bidirectional, dropout=p.dropout,
            merge_mode=e.merge_mode, rate=p.rate,
            embeddings_initializer=initializer,
            embedding_trainable=cfg.embedding.trainable, seed=member_cfg.seed,
            name="masked_word_pretrainer")
        model.compile(optimizer=adam(train_cfg))
        return model

    ids, lengths = corpus
    val_ids, _, val_lengths = encoded["validation"]  # token ids only: no char features
    validation = dataset_from_plan(val_ids, None, plan_eval(val_lengths, p.batch_size))
    log(f"pretraining the embedding and encoder on hidden words (up to {p.epochs} epochs)")
    return fit(build_and_compile, ids, None, lengths, validation, train_cfg, pretrain_dir,
               resume=resume and read_state(pretrain_dir) is not None, strategy=strategy,
               log=log)


def _pretraining_texts(cfg):
    """Checks the pretraining settings; returns the texts of `pretrain.texts` and a record.

    The record (source, SHA-256, counts) goes to the report; ([], None) when there is
    no such file. Blank lines are skipped and counted.
    """
    from elman.core.data import sha256_of
    from elman.tasks.lm.data import read_text_lines

    if cfg.pretrain.epochs and cfg.chars.features != "none":
        raise UserError("pretrain.epochs needs chars.features = \"none\" (a hidden word's "
                        "chars would give it away)")
    if not (cfg.pretrain.epochs and cfg.pretrain.texts):
        return [], None
    lines = read_text_lines(cfg.pretrain.texts)
    texts = [line for line in lines if line.strip()]
    return texts, {"split": "pretraining texts", "source": str(cfg.pretrain.texts),
                   "sha256": sha256_of(cfg.pretrain.texts), "texts": len(texts),
                   "blank_lines_skipped": len(lines) - len(texts)}


def _pretraining_row(seed, result, state=None):
    """The report's row for one member's pretraining (from its TrainResult or state.json)."""
    import math

    if result is not None:
        history, best, epochs = result.history, result.best_epoch, result.epochs_run
    elif state is not None:
        history, best, epochs = state["history"], state["best_epoch"], state["epoch"]
    else:
        return {"seed": seed, "epochs_run": None, "best_epoch": None,
                "validation_loss": None, "validation_perplexity": None}
    loss = history["val_loss"][best - 1]
    return {"seed": seed, "epochs_run": epochs, "best_epoch": best, "validation_loss": loss,
            "validation_perplexity": math.exp(loss)}


def _data_section(splits, stats, labels, coverage):
    rows = []
    for name, split in splits.items():
        s = stats[name]
        counts = {label: split.labels.count(label) for label in labels}
        rows.append((name, len(split.examples),
                     ", ".join(f"{k} {v}" for k, v in counts.items()),
                     f"{s.mean_length:.1f}", s.max_length,
                     f"{s.truncated_examples} ex / {s.truncated_tokens} tok",
                     f"{100 * s.oov_rate:.2f}%", len(split.skipped)))
    md = ["## Data", rep.md_table(["split", "examples", "labels", "mean tokens", "max tokens",
                                   "truncated", "OOV rate", "skipped rows"], rows)]
    for name, split in splits.items():
        if split.skipped:
            md.append(f"Skipped rows in {name} (`--skip-bad-rows`):")
            md.append(rep.md_table(["where", "why"], split.skipped[:200]))
            if len(split.skipped) > 200:
                md.append(f"... and {len(split.skipped) - 200} more (see metrics.json).")
    if coverage is not None:
        md.append(f"Pretrained vectors `{coverage.path}` cover {coverage.found} of "
                  f"{coverage.vocabulary} vocabulary tokens ({100 * coverage.share:.1f}%; "
                  f"{coverage.found_lowercased} only after lower-casing).")
    return "\n\n".join(md)


def _result_section(result, report_dir, tag):
    s = result.scores
    md = [f"## {result.split.capitalize()} results",
          rep.md_table(["metric", "value"], [(k, v) for k, v in sorted(s.items())]),
          rep.md_table(["class", "precision", "recall", "F1", "support"],
                       [(r["class"], r["precision"], r["recall"], r["f1"], r["support"])
                        for r in result.per_class])]
    png = rep.plot_confusion(result.extra["confusion"], result.extra["labels"],
                             report_dir / f"confusion_{tag}.png",
                             f"Confusion matrix, {result.split} (rows: gold)")
    md.append(f"![confusion matrix]({png})")
    if "roc" in result.extra:
        png = rep.plot_roc(result.extra["roc"], s["roc_auc"], report_dir / f"roc_{tag}.png")
        md.append(f"![ROC curve]({png})")
    wrong = sorted((e for e in result.examples if not e["correct"]),
                   key=lambda e: -e["confidence"])[:10]
    md.append("Most confidently wrong examples:")
    md.append(rep.md_table(["text", "gold", "predicted", "confidence", "where"],
                           [(e["text"][:160], e["gold"], e["predicted"], e["confidence"],
                             e.get("where", "")) for e in wrong]) if wrong else "(none)")
    return "\n\n".join(md)


def train(cfg, run_dir, report_dir, resume=False, log=print, diagnose=False):
    """Trains, evaluates, exports and reports one sentiment run; returns metrics.json's dict.

    Returns None, having written no model or report, when train.max_minutes stops the
    run inside pretraining (`resume=True` continues it).
    """
    from elman.core import data as data_stage

    if cfg.embedding.adversarial and cfg.train.strategy == "multi-worker":
        raise UserError("embedding.adversarial is not available with train.strategy "
                        "'multi-worker': that strategy's training loop does not run the "
                        "classifier's adversarial step; use 'mirrored' or 'default'")
    splits = data_stage.load_classification_splits(cfg.data, cfg.train.seed)  # fail fast
    extra_texts, extra_source = _pretraining_texts(cfg)
    import keras
    import numpy as np
    import tensorflow as tf

    from elman.core import runtime
    from elman.core import runs
    from elman.core.batching import dataset_from_plan, plan_eval
    from elman.core.embed import read_pretrained
    from elman.core.evaluate import classification_result
    from elman.text.tokenize import TextTokenizer, char_ids_from_config, fit_char_ids, fit_vocabulary, token_stats
    from elman.core.train import fit, read_state

    run_dir, report_dir = Path(run_dir), Path(report_dir)
    strategy = runtime.configure(cfg.train, log)
    labels = sorted(set(splits["train"].labels))
    if len(labels) < 2:
        raise UserError(f"training data has only one label ({labels[0]}); need at least two",
                        path=splits["train"].source)
    vocab_file = run_dir / "vocabulary.txt"
    if resume and vocab_file.is_file():
        vocabulary = vocab_file.read_text(encoding="utf-8").split("\n")[2:-1]
        tokenizer = TextTokenizer(vocabulary=vocabulary, level=cfg.tokenizer.level,
                                  lowercase=cfg.tokenizer.lowercase,
                                  punctuation=cfg.tokenizer.punctuation,
                                  max_length=cfg.tokenizer.max_length,
                                  truncation=cfg.tokenizer.truncation, name="tokenizer")
    else:
        tokenizer = fit_vocabulary(cfg.tokenizer, splits["train"].texts)
    char_layer, chars_file = None, run_dir / "chars.json"
    if cfg.chars.features != "none":
        if resume and chars_file.is_file():
            char_layer = char_ids_from_config(
                cfg.tokenizer, json.loads(chars_file.read_text(encoding="utf-8")),
                cfg.chars.max_word_length)
        else:
            char_layer = fit_char_ids(cfg.tokenizer, splits["train"].texts,
                                      cfg.chars.max_word_length)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(vocab_file, "\n".join(tokenizer.get_vocabulary()) + "\n")
    if char_layer is not None:
        write_text_atomic(chars_file, json.dumps(char_layer.chars, ensure_ascii=False))
    write_text_atomic(run_dir / "config.toml", config_lib.dumps_toml(cfg))
    write_text_atomic(run_dir / "config.json",
                      json.dumps(config_lib.to_dict(cfg), indent=1, sort_keys=True))
    stats = {name: token_stats(tokenizer, split.texts) for name, split in splits.items()}
    index = {label: i for i, label in enumerate(labels)}
    encoded = {}
    for name, split in splits.items():
        ids = _ids(tokenizer, split.texts)
        y = tf.constant([index[label] for label in split.labels], dtype=tf.int32)
        lengths = ids.row_lengths().numpy()
        if char_layer is not None:
            ids = {"token_ids": ids, "char_ids": _ids(char_layer, split.texts)}
        encoded[name] = (ids, y, lengths)
    coverage, initializer = None, "uniform"
    if cfg.embedding.pretrained:
        matrix, coverage = read_pretrained(cfg.embedding.pretrained, tokenizer.get_vocabulary(),
                                           cfg.embedding.dim, cfg.train.seed)
        initializer = keras.initializers.Constant(matrix)

    member_name, pretrained = "sentiment_classifier", None

    def build_and_compile():
        if pretrained is not None:  # the classifier's own draws do not depend on pretraining's
            keras.utils.set_random_seed(member_cfg.seed)
        model = classifier_from_config(
            cfg, tokenizer.vocabulary_size, len(labels),
            char_layer.vocabulary_size if char_layer else 0, initializer, member_name)
        if pretrained is not None:
            from elman.models.masked_word_pretrainer import transfer_weights

            transfer_weights(pretrained.model, model, cfg.pretrain.transfer.split("-"))
        from elman.core.train import adam
        model.compile(
            optimizer=adam(cfg.train),
            loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        return model

    val_ids, val_y, val_len = encoded["validation"]
    validation = dataset_from_plan(val_ids, val_y, plan_eval(val_len, cfg.train.batch_size))
    ids, y, lengths = encoded["train"]
    members, pretraining = [], []  # (seed, TrainResult); one summary row per member
    corpus = None  # the pretraining texts' token ids and lengths
    if cfg.pretrain.epochs:
        corpus = (ids, lengths)  # token ids only: pretraining refuses char features
        if extra_texts:
            extra_ids = _ids(tokenizer, extra_texts)
            corpus = (tf.concat([ids, extra_ids], axis=0),
                      np.concatenate([lengths, extra_ids.row_lengths().numpy()]))
    for k in range(cfg.ensemble):
        member_cfg, member_dir = cfg.train, run_dir
        if cfg.ensemble > 1:
            member_cfg = dataclasses.replace(cfg.train, seed=cfg.train.seed + k)
            member_dir = run_dir / "members" / str(k + 1)
            member_name = f"sentiment_classifier_{k + 1}"
            log(f"ensemble member {k + 1} of {cfg.ensemble} (seed {member_cfg.seed})")
            if k:  # member 1 starts from the seeding runtime.configure did
                keras.utils.set_random_seed(member_cfg.seed)
        trained = read_state(member_dir) is not None  # the classifier has begun
        pretrain_dir = member_dir / "pretrain"
        if resume and cfg.ensemble == 1 and not trained and read_state(pretrain_dir) is None:
            raise UserError("nothing to resume: no completed epoch in this run folder",
                            path=member_dir / "checkpoints")
        member_resume = resume and trained
        pretrained = None
        if cfg.pretrain.epochs and not member_resume:
            pretrained = _pretrain(cfg, member_cfg, corpus, encoded, tokenizer.vocabulary_size,
                                   initializer, pretrain_dir, resume, strategy, log)
            pretraining.append(_pretraining_row(member_cfg.seed, pretrained))
            if pretrained.epochs_run < cfg.pretrain.epochs and not pretrained.stopped_early:
                log("pretraining stopped by train.max_minutes; the classifier trains after "
                    "it ends: run again with --resume")
                return None
        elif cfg.pretrain.epochs:  # the classifier's checkpoint already holds the weights
            pretraining.append(_pretraining_row(
                member_cfg.seed, None, read_state(pretrain_dir)))
        members.append((member_cfg.seed, fit(build_and_compile, ids, y, lengths, validation,
                                             member_cfg, member_dir, resume=member_resume,
                                             strategy=strategy, log=log)))
    result = members[0][1]
    classifiers = [r.model for _, r in members]

    inference = build_inference_model(tokenizer, classifiers, char_layer)
    tmp = run_dir / "model.tmp.keras"
    inference.save(tmp)
    tmp.replace(run_dir / "model.keras")
    saved = run_dir / "saved_model"
    inference.export(str(saved) + ".tmp", format="tf_saved_model", verbose=False)
    if saved.exists():
        import shutil

        shutil.rmtree(saved)
    Path(str(saved) + ".tmp").rename(saved)

    def member_probabilities(name):
        """Each member's class probabilities on a split, in the split's order."""
        ids, _, lengths = encoded[name]
        plan = plan_eval(lengths, 256)
        order = np.concatenate(plan)
        out = []
        for model in classifiers:
            probs = model.predict(dataset_from_plan(ids, None, plan), verbose=0)
            out.append(np.zeros_like(probs))
            out[-1][order] = probs
        return out

    results, per_member = {}, {}
    for name in ("validation", "test"):
        if name in splits:
            split = splits[name]
            per_member[name] = member_probabilities(name)
            results[name] = classification_result(
                TASK, name, split.texts, split.labels, np.mean(per_member[name], axis=0),
                labels, [e.where for e in split.examples])
    main = results.get("test", results["validation"])

    report_dir.mkdir(parents=True, exist_ok=True)
    curves = rep.plot_learning_curves(result.history, report_dir / "learning_curves.png")
    data_files = [{"split": n, "source": s.source, "sha256": s.sha256} for n, s in splits.items()]
    if extra_source is not None:
        data_files.append({k: extra_source[k] for k in ("split", "source", "sha256")})
    device = runtime.device_summary(cfg.train, strategy)
    repro_md, repro = rep.reproducibility(config_lib.dumps_toml(cfg), data_files,
                                          cfg.train.seed, device)
    summary = [
        f"Run `{run_dir}` · task **sentiment** · classes: {', '.join(labels)} · "
        f"model: {cfg.encoder.num_layers}×{'Bi' if cfg.encoder.bidirectional else ''}"
        f"{cfg.encoder.cell.upper()}({cfg.encoder.units}), pooling {cfg.head.pooling}, "
        + ("" if char_layer is None else
           f"char {cfg.chars.features.upper()}({cfg.chars.units}) features over "
           f"{len(char_layer.chars)} chars, ") +
        f"{sum(c.count_params() for c in classifiers):,} parameters"
        + ("." if len(members) == 1 else f" in an ensemble of {len(members)} members "
           "(probabilities averaged)."),
        rep.md_table(["split", "accuracy", "macro-F1", "ROC-AUC"],
                     [(r.split, r.scores["accuracy"], r.scores["macro_f1"],
                       r.scores.get("roc_auc", "-")) for r in results.values()]),
        f"Trained {result.epochs_run} epochs (best: epoch {result.best_epoch}"
        f"{', stopped early' if result.stopped_early else ''}); "
        f"{result.tokens_per_second:,.0f} training tokens/s in this process."
        if len(members) == 1 else
        "Each member is trained on its own (its seed sets the initial weights, dropout "
        "and batch order) and keeps its best epoch; the learning curves are member 1's.",
    ]
    member_rows = []
    if len(members) > 1:
        val_labels = np.array([index[label] for label in splits["validation"].labels])
        for k, ((seed, r), probs) in enumerate(zip(members, per_member["validation"])):
            accuracy = float(np.mean(probs.argmax(axis=1) == val_labels))
            member_rows.append({"member": k + 1, "seed": seed, "epochs_run": r.epochs_run,
                                "best_epoch": r.best_epoch, "stopped_early": r.stopped_early,
                                "validation_accuracy": accuracy})
        summary.append("## Ensemble members\n\n" + rep.md_table(
            ["member", "seed", "epochs", "best epoch", "validation accuracy"],
            [(m["member"], m["seed"], m["epochs_run"], m["best_epoch"],
              m["validation_accuracy"]) for m in member_rows])
            + f"\n\nMembers' mean validation accuracy "
            f"{np.mean([m['validation_accuracy'] for m in member_rows]):.4f}; the "
            f"ensemble's {results['validation'].scores['accuracy']:.4f}.")
    if pretraining:
        p = cfg.pretrain
        summary.append(
            "## Pretraining\n\n"
            f"Before training on the labels, the embedding and encoder learned to restore "
            f"hidden words of the {len(splits['train'].examples)} training texts"
            + ("" if extra_source is None else
               f" and {extra_source['texts']} texts of `{extra_source['source']}` "
               f"({extra_source['blank_lines_skipped']} blank lines skipped)") + " "
            f"({100 * p.rate:g}% of the words hidden; up to {p.epochs} epochs, best epoch by "
            "the validation texts' loss). The perplexity is over hidden "
            "words only.\n\n" + rep.md_table(
                ["member", "seed", "epochs", "best epoch", "validation loss", "perplexity"],
                [(k + 1, r["seed"], r["epochs_run"] or "-", r["best_epoch"] or "-",
                  "-" if r["validation_loss"] is None else r["validation_loss"],
                  "-" if r["validation_perplexity"] is None else r["validation_perplexity"])
                 for k, r in enumerate(pretraining)]))
    body = "\n\n".join(summary + [
        "## Learning curves", f"![learning curves]({curves})",
        *[_result_section(r, report_dir, r.split) for r in results.values()],
        _data_section(splits, stats, labels, coverage),
    ])
    if diagnose:
        from elman.core.diagnostics import gradient_flow, gradient_flow_markdown, plot_gradient_flow

        flow = gradient_flow(units=cfg.encoder.units, seed=cfg.train.seed)
        plot_gradient_flow(flow, report_dir / "gradient_flow.png")
        body += "\n\n## Gradient flow\n\n" + gradient_flow_markdown(
            flow, png_name="gradient_flow.png", heading_level=0)
    body += "\n\n" + repro_md
    finished = datetime.datetime.now().isoformat(timespec="seconds")
    metrics = {
        "task": TASK, "run_id": run_dir.name, "run_dir": str(run_dir), "finished": finished,
        "split": main.split, "main_metric": main.main_metric, "scores": main.scores,
        "results": {n: {"scores": r.scores, "per_class": r.per_class,
                        "confusion": r.extra["confusion"]} for n, r in results.items()},
        "labels": labels, "history": result.history, "best_epoch": result.best_epoch,
        "epochs_run": result.epochs_run, "train_tokens_per_second": result.tokens_per_second,
        "ensemble_members": member_rows,
        "pretraining": pretraining,
        "pretraining_texts": extra_source,
        "data": {n: {"examples": len(s.examples), "skipped": s.skipped,
                     "tokens": vars(stats[n]) | {"oov_rate": stats[n].oov_rate}}
                 for n, s in splits.items()},
        "embedding_coverage": None if coverage is None else vars(coverage) | {
            "share": coverage.share},
        "reproducibility": repro,
    }
    rep.write_report(report_dir, f"Sentiment report — {run_dir.name}", body, metrics,
                     main.examples)
    runs.write_run_file(run_dir, {"task": TASK, "run_id": run_dir.name,
                                  "report_dir": str(report_dir), "labels": labels,
                                  "finished": finished})
    log(f"{main.split} accuracy {main.scores['accuracy']:.4f}  macro-F1 "
        f"{main.scores['macro_f1']:.4f}  report: {report_dir / 'report.md'}")
    return metrics


def predict(run_dir, texts):
    """Classifies raw texts with a saved run; returns (labels, probabilities array)."""
    import numpy as np
    import tensorflow as tf

    from elman.core import runs

    info = runs.read_run(run_dir, TASK)
    for i, text in enumerate(texts, start=1):
        if not text.strip():
            raise UserError(f"text {i} is empty; expected some text to classify")
    model = runs.load_model(run_dir)
    probs = np.asarray(model.predict(tf.constant(texts), verbose=0, batch_size=256))
    return info["labels"], probs


def evaluate(run_dir, cfg_overrides, report_root=None, log=print):
    """Scores a saved run on a labelled file; returns the EvalResult."""
    from elman.core import data as data_stage
    from elman.core import runs
    from elman.core.evaluate import classification_result

    info = runs.read_run(run_dir, TASK)
    saved = json.loads((Path(run_dir) / "config.json").read_text(encoding="utf-8"))
    cfg = config_lib.config_from_dict(TASK, saved)
    path = cfg_overrides.get("data") or cfg.data.test or cfg.data.validation
    if not path:
        raise UserError("give a labelled file to evaluate on with --data FILE")
    split = data_stage.read_labeled_file(
        path, cfg.data.format, cfg_overrides.get("text_column") or cfg.data.text_column,
        cfg_overrides.get("label_column") or cfg.data.label_column, name="evaluation")
    labels = info["labels"]
    for example in split.examples:
        if example.label not in labels:
            p, _, line = example.where.rpartition(":")
            raise UserError(f"label '{example.label}' is not one the model knows "
                            f"({', '.join(labels)})", path=p, line=int(line))
    _, probs = predict(run_dir, split.texts)
    result = classification_result(TASK, "evaluation", split.texts, split.labels, probs, labels,
                                   [e.where for e in split.examples])
    log(f"{path}: accuracy {result.scores['accuracy']:.4f}  macro-F1 "
        f"{result.scores['macro_f1']:.4f}  ({len(split.examples)} examples)")
    return result
