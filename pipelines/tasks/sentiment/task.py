"""Sentiment classification: labelled texts → tokenizer → BiLSTM/GRU classifier → report.

The task's hooks for the one run skeleton (`elman.core.run.run`); its models live in
`model.py`, its report sections in `report.py`, its predictor in `predictor.py`.
"""

import dataclasses
import json

import numpy as np

from elman.config import check_adversarial_strategy
from elman.core import data as data_stage
from elman.core import report as rep
from elman.core.embed import check_starting_vectors
from elman.core.objectives import check_lm_objective
from elman.core.html import write_text_atomic
from elman.core.run import learning_curves_section, train_metrics, training_line
from elman.errors import UserError
from elman.tasks.base import Fitted, ReportParts, Task
from elman.tasks.sentiment import model as sentiment_model
from elman.tasks.sentiment import report as sentiment_report
from elman.tasks.sentiment.config import SentimentConfig
from elman.tasks.sentiment.data import load_data, pretraining_texts, token_ids
from elman.tasks.sentiment.predictor import SentimentPredictor


@dataclasses.dataclass
class _State:
    """What `prepare` fitted and encoded for one sentiment run."""

    tokenizer: object
    char_layer: object
    labels: list
    encoded: dict  # split name → (ids, y, lengths)
    stats: dict  # split name → TokenStats
    coverage: object
    initializer: object
    bigram_pairs: list = None  # features.bigrams: the known token-pair codes


TOKENIZER_FILE = "tokenizer.json"  # a subword run's tokenizer (its config: the model, base64)


def _tokenizers(ctx):
    """The word tokenizer and (with char features) the char layer: fitted, or reloaded.

    A subword run keeps its learned SentencePiece tokenizer in `tokenizer.json` (the
    layer's config), so `--resume` reads the same pieces back instead of learning them
    again; `vocabulary.txt` lists the ids' tokens (or pieces) either way.
    """
    from elman.text.tokenize import (char_ids_from_config, fit_char_ids, fit_vocabulary,
                                     tokenizer_from_config)

    cfg, run_dir, texts = ctx.cfg, ctx.run_dir, data_stage.texts(ctx.splits["train"])
    vocab_file, chars_file = run_dir / "vocabulary.txt", run_dir / "chars.json"
    tokenizer_file, subword = run_dir / TOKENIZER_FILE, cfg.tokenizer.level == "subword"
    if ctx.resume and subword and tokenizer_file.is_file():
        from elman.text.subword import SubwordTokenizer

        tokenizer = SubwordTokenizer.from_config(
            json.loads(tokenizer_file.read_text(encoding="utf-8")))
    elif ctx.resume and not subword and vocab_file.is_file():
        tokenizer = tokenizer_from_config(
            cfg.tokenizer, vocab_file.read_text(encoding="utf-8").split("\n")[2:-1])
    else:
        tokenizer = fit_vocabulary(cfg.tokenizer, texts)
    char_layer = None
    if cfg.chars.features != "none":
        if ctx.resume and chars_file.is_file():
            char_layer = char_ids_from_config(
                cfg.tokenizer, json.loads(chars_file.read_text(encoding="utf-8")),
                cfg.chars.max_word_length)
        else:
            char_layer = fit_char_ids(cfg.tokenizer, texts, cfg.chars.max_word_length)
    if subword:
        write_text_atomic(tokenizer_file, json.dumps(tokenizer.get_config(), indent=1,
                                                     sort_keys=True) + "\n")
    write_text_atomic(vocab_file, "\n".join(tokenizer.get_vocabulary()) + "\n")
    if char_layer is not None:
        write_text_atomic(chars_file, json.dumps(char_layer.chars, ensure_ascii=False))
    return tokenizer, char_layer


def _encode(splits, tokenizer, char_layer, labels):
    import tensorflow as tf

    index = {label: i for i, label in enumerate(labels)}
    encoded = {}
    for name, split in splits.items():
        texts = data_stage.texts(split)
        ids = token_ids(tokenizer, texts)
        y = tf.constant([index[label] for label in data_stage.labels(split)], dtype=tf.int32)
        lengths = ids.row_lengths().numpy()
        if char_layer is not None:
            ids = {"token_ids": ids, "char_ids": token_ids(char_layer, texts)}
        encoded[name] = (ids, y, lengths)
    return encoded


def _pretraining_corpus(state, extra_texts):
    """Token ids and lengths of the training texts and any extra pretraining texts."""
    import tensorflow as tf

    ids, _, lengths = state.encoded["train"]  # token ids only: pretraining refuses chars
    if not extra_texts:
        return ids, lengths
    extra_ids = token_ids(state.tokenizer, extra_texts)
    return (tf.concat([ids, extra_ids], axis=0),
            np.concatenate([lengths, extra_ids.row_lengths().numpy()]))


class SentimentTask(Task):
    """Sentiment (any text classification): label and class probabilities per text."""

    name = "sentiment"
    title = "Sentiment"
    config_class = SentimentConfig
    predictor_class = SentimentPredictor
    demo = (("sentiment", "default", "demo"), ("sentiment-zh", "zh", "demo-zh"))

    def check(self, cfg):
        if cfg.tokenizer.level == "subword" and cfg.chars.features != "none":
            raise UserError(f"chars.features = \"{cfg.chars.features}\" needs whole words, and "
                            "tokenizer.level = \"subword\" reads pieces of words; use "
                            "chars.features = \"none\" with subwords, or another "
                            "tokenizer.level with char features")
        if cfg.features.bigrams and cfg.pretrain.epochs and cfg.pretrain.transfer != "embedding":
            raise UserError("features.bigrams widens the encoder's input, so a pretrained "
                            "encoder does not fit it; use pretrain.transfer = \"embedding\" "
                            "or features.bigrams = false")
        check_adversarial_strategy(cfg)
        check_starting_vectors(cfg.embedding)
        check_lm_objective(cfg, pooled_states=cfg.head.pooling != "last")
        if cfg.head.distill and (cfg.head.label_smoothing or cfg.head.drop_hardest):
            raise UserError("head.distill sets the student's training targets, and so do "
                            "head.label_smoothing and head.drop_hardest; leave them at 0 "
                            "with head.distill")
        if cfg.head.distill and cfg.train.strategy == "multi-worker":
            raise UserError("head.distill is not available with train.strategy "
                            "'multi-worker'; use 'mirrored' or 'default'")
        if cfg.head.rcnn and cfg.head.pooling == "last":
            raise UserError("head.rcnn reads the encoder's states at every position, which "
                            "pooling \"last\" does not keep; use head.pooling = \"max\" "
                            "(or mean, max-mean, attention) with head.rcnn")

    def load_data(self, cfg):
        splits = load_data(cfg)
        self.extra_texts, self.extra_source = pretraining_texts(cfg)
        self.noise = None
        if cfg.noise.filter == "confident":
            from elman.core.label_noise import filter_split

            labels = sorted(set(data_stage.labels(splits["train"])))
            if len(labels) >= 2:  # one label: prepare's error says so
                splits["train"], self.noise = filter_split(splits["train"], labels, cfg.noise,
                                                           cfg.train.seed)
        return splits

    def prepare(self, ctx):
        import keras

        from elman.core.embed import RaggedRows, starting_vectors
        from elman.text.tokenize import token_stats

        cfg, splits = ctx.cfg, ctx.splits
        labels = sorted(set(data_stage.labels(splits["train"])))
        if len(labels) < 2:
            raise UserError(f"training data has only one label ({labels[0]}); need at least "
                            "two", path=splits["train"].source)
        if self.noise is not None:
            ctx.log(self.noise.message())
        tokenizer, char_layer = _tokenizers(ctx)
        stats = {name: token_stats(tokenizer, data_stage.texts(split))
                 for name, split in splits.items()}
        encoded = _encode(splits, tokenizer, char_layer, labels)
        matrix, coverage = starting_vectors(cfg.embedding, tokenizer.get_vocabulary(),
                                            lambda: RaggedRows(encoded["train"][0]),
                                            cfg.train.seed, ctx.log)
        initializer = "uniform" if matrix is None else keras.initializers.Constant(matrix)
        pairs = sentiment_model.bigram_pairs(cfg, encoded["train"][0], tokenizer.vocabulary_size)
        if pairs is not None:
            ctx.log(f"token pairs: {len(pairs):,} seen at least "
                    f"{cfg.features.bigram_min_count} times in train")
        return _State(tokenizer, char_layer, labels, encoded, stats, coverage, initializer,
                      pairs)

    def _member(self, ctx, k, validation, corpus, targets=None):
        """Trains ensemble member k (0-based), or, given `targets` (the soft targets of
        `head.distill`, one row a training text), the student; returns (seed, TrainResult,
        pretraining row) or None when the time budget stopped its pretraining."""
        import keras

        from elman.core.train import adam, fit, read_state

        cfg, state, log = ctx.cfg, ctx.state, ctx.log
        member_cfg, member_dir, member_name = cfg.train, ctx.run_dir, "sentiment_classifier"
        if targets is not None:
            member_cfg = dataclasses.replace(cfg.train, seed=cfg.train.seed + cfg.ensemble)
            member_dir = ctx.run_dir / "student"
            log(f"the student (seed {member_cfg.seed}): targets {1 - cfg.head.distill:g} the "
                f"label and {cfg.head.distill:g} the teachers' probabilities")
            keras.utils.set_random_seed(member_cfg.seed)
        elif cfg.ensemble > 1 or cfg.head.distill:
            member_cfg = dataclasses.replace(cfg.train, seed=cfg.train.seed + k)
            member_dir = ctx.run_dir / "members" / str(k + 1)
            member_name = f"sentiment_classifier_{k + 1}"
            role = "teacher" if cfg.head.distill else "ensemble member"
            log(f"{role} {k + 1} of {cfg.ensemble} (seed {member_cfg.seed})")
            if k:  # member 1 starts from the seeding runtime.configure did
                keras.utils.set_random_seed(member_cfg.seed)
        trained = read_state(member_dir, log) is not None  # the classifier has begun
        pretrain_dir = member_dir / "pretrain"
        member_resume = ctx.resume and trained
        if ctx.resume and not trained and read_state(pretrain_dir) is None:
            log(f"notice: no epoch of {member_dir} was committed yet; starting it from the "
                "beginning (nothing was lost)")
        pretrained, row = None, None
        if cfg.pretrain.epochs and not member_resume:
            pretrained = sentiment_model.pretrain(
                cfg, member_cfg, corpus, state.encoded, state.tokenizer.vocabulary_size,
                state.initializer, pretrain_dir, ctx.resume, ctx.strategy, log)
            row = sentiment_model.pretraining_row(member_cfg.seed, pretrained)
            if pretrained.epochs_run < cfg.pretrain.epochs and not pretrained.stopped_early:
                log("pretraining stopped by train.max_minutes; the classifier trains after "
                    "it ends: run again with --resume")
                return None
        elif cfg.pretrain.epochs:  # the classifier's checkpoint already holds the weights
            row = sentiment_model.pretraining_row(member_cfg.seed, None,
                                                  read_state(pretrain_dir))

        def build_and_compile():
            if pretrained is not None:  # the classifier's draws do not depend on pretraining's
                keras.utils.set_random_seed(member_cfg.seed)
            model = sentiment_model.classifier_from_config(
                cfg, state.tokenizer.vocabulary_size, len(state.labels),
                state.char_layer.vocabulary_size if state.char_layer else 0,
                state.initializer, member_name, bigram_pairs=state.bigram_pairs)
            if pretrained is not None:
                from elman.models.masked_word_pretrainer import transfer_weights

                transfer_weights(pretrained.model, model, cfg.pretrain.transfer.split("-"))
            loss, metric = "sparse_categorical_crossentropy", "accuracy"
            if targets is not None:  # soft targets; the validation labels come one-hot
                loss = keras.losses.CategoricalCrossentropy()
                metric = keras.metrics.CategoricalAccuracy(name="accuracy")
            elif cfg.head.label_smoothing or cfg.head.drop_hardest:
                from elman.models.label_smoothing import SmoothedSparseCrossentropy

                loss = SmoothedSparseCrossentropy(cfg.head.label_smoothing,
                                                  cfg.head.drop_hardest)
            model.compile(optimizer=adam(cfg.train), loss=loss, metrics=[metric])
            return model

        ids, y, lengths = state.encoded["train"]
        y = y if targets is None else targets
        result = fit(build_and_compile, ids, y, lengths, validation, member_cfg, member_dir,
                     resume=member_resume, strategy=ctx.strategy, log=log)
        return member_cfg.seed, result, row

    @staticmethod
    def _validation(ctx, one_hot=False):
        """The validation batches `fit` scores each epoch on; `one_hot`: the labels as
        one-hot rows (what the student's categorical loss reads)."""
        import tensorflow as tf

        from elman.config import length_multiple
        from elman.core.batching import dataset_from_plan, plan_eval

        val_ids, val_y, val_len = ctx.state.encoded["validation"]
        if one_hot:
            val_y = tf.one_hot(val_y, len(ctx.state.labels))
        return dataset_from_plan(val_ids, val_y, plan_eval(val_len, ctx.cfg.train.batch_size),
                                 multiple=length_multiple(ctx.cfg.train))

    def fit(self, ctx):
        state = ctx.state
        validation = self._validation(ctx)
        corpus = (_pretraining_corpus(state, self.extra_texts) if ctx.cfg.pretrain.epochs
                  else None)
        members = []
        for k in range(ctx.cfg.ensemble):
            member = self._member(ctx, k, validation, corpus)
            if member is None:
                return None
            members.append(member)
        pretraining = [row for _, _, row in members if row is not None]
        distillation = None
        if ctx.cfg.head.distill:  # the members were the teachers; the student is the model
            student = self._student(ctx, members, corpus)
            if student is None:
                return None
            distillation = sentiment_report.teacher_rows(
                ctx, [(seed, r, self._probabilities(ctx, r.model, "validation"))
                      for seed, r, _ in members])
            pretraining += [student[2]] if student[2] is not None else []
            members = [student]
        return Fitted(members[0][1].model, members[0][1],
                      {"members": [(seed, r) for seed, r, _ in members],
                       "distillation": distillation, "pretraining": pretraining})

    def _student(self, ctx, teachers, corpus):
        """`head.distill`: the student trained on the teachers' blended targets."""
        import tensorflow as tf

        cfg, state = ctx.cfg, ctx.state
        mean = np.mean([self._probabilities(ctx, r.model, "train") for _, r, _ in teachers],
                       axis=0)
        gold = state.encoded["train"][1].numpy()
        targets = sentiment_model.distilled_targets(mean, gold, cfg.head.distill,
                                                    cfg.head.distill_temperature)
        agree = float(np.mean(mean.argmax(axis=1) == gold))
        ctx.log(f"the teachers agree with {agree:.2%} of the training labels")
        return self._member(ctx, cfg.ensemble, self._validation(ctx, one_hot=True), corpus,
                            tf.constant(targets))

    def inference_model(self, ctx):
        classifiers = [r.model for _, r in ctx.fitted.extra["members"]]
        return sentiment_model.build_inference_model(ctx.state.tokenizer, classifiers,
                                                     ctx.state.char_layer)

    def _member_probabilities(self, ctx, name):
        """Each member's class probabilities on a split, in the split's order."""
        return [self._probabilities(ctx, r.model, name) for _, r in ctx.fitted.extra["members"]]

    @staticmethod
    def _probabilities(ctx, model, name):
        """One classifier's class probabilities on a split, in the split's order."""
        from elman.core.batching import dataset_from_plan, plan_eval

        ids, _, lengths = ctx.state.encoded[name]
        plan = plan_eval(lengths, 256)
        probs = model.predict(dataset_from_plan(ids, None, plan), verbose=0)
        out = np.zeros_like(probs)
        out[np.concatenate(plan)] = probs
        return out

    def score(self, ctx):
        from elman.core.evaluate import classification_result

        results, per_member = {}, {}
        for name in ("validation", "test"):
            if name in ctx.splits:
                split = ctx.splits[name]
                per_member[name] = self._member_probabilities(ctx, name)
                results[name] = classification_result(
                    self.name, name, data_stage.texts(split), data_stage.labels(split),
                    np.mean(per_member[name], axis=0), ctx.state.labels,
                    [e.where for e in split.items])
        ctx.fitted.extra["per_member"] = per_member
        return results

    def report(self, ctx):
        state, fitted = ctx.state, ctx.fitted
        members, result = fitted.extra["members"], fitted.result
        classifiers = [r.model for _, r in members]
        member_rows = sentiment_report.member_rows(ctx, members)
        summary = [sentiment_report.run_line(ctx, classifiers),
                   rep.md_table(["split", "accuracy", "macro-F1", "ROC-AUC"],
                                [(r.split, r.scores["accuracy"], r.scores["macro_f1"],
                                  r.scores.get("roc_auc", "-")) for r in ctx.results.values()]),
                   training_line(result) if len(members) == 1 else
                   "Each member is trained on its own (its seed sets the initial weights, "
                   "dropout and batch order) and keeps its best epoch; the learning curves "
                   "are member 1's."]
        if member_rows:
            summary.append(sentiment_report.members_section(ctx, member_rows))
        if fitted.extra.get("distillation"):
            summary.append(sentiment_report.teachers_section(ctx, fitted.extra["distillation"]))
        if self.noise is not None:
            summary.append(sentiment_report.noise_section(ctx, self.noise))
        if fitted.extra["pretraining"]:
            summary.append(sentiment_report.pretraining_section(
                ctx, fitted.extra["pretraining"], self.extra_source))
        sections = [learning_curves_section(result.history, ctx.report_dir),
                    *[sentiment_report.result_section(r, ctx.report_dir, r.split)
                      for r in ctx.results.values()],
                    sentiment_report.trace_section(ctx, classifiers, ctx.main),
                    sentiment_report.data_section(ctx.splits, state.stats, state.labels,
                                                  state.coverage, state.tokenizer)]
        metrics = {
            "results": {n: {"scores": r.scores, "per_class": r.per_class,
                            "confusion": r.extra["confusion"]}
                        for n, r in ctx.results.items()},
            "labels": state.labels, **train_metrics(result),
            "ensemble_members": member_rows, "distillation": fitted.extra.get("distillation"),
            "pretraining": fitted.extra["pretraining"],
            "pretraining_texts": self.extra_source,
            "label_noise": None if self.noise is None else self.noise.summary(),
            "data": {n: {"examples": len(s.items), "skipped": s.skipped,
                         "columns_found": s.counts.get("columns_found", {}),
                         "folders": s.counts.get("folders"),
                         "headerless": s.counts.get("headerless"),
                         "tokens": vars(state.stats[n]) | {"oov_rate": state.stats[n].oov_rate}}
                     for n, s in ctx.splits.items()},
            "embedding_coverage": None if state.coverage is None else vars(state.coverage) | {
                "share": state.coverage.share},
        }
        extra_files = ([] if self.extra_source is None else
                       [{k: self.extra_source[k] for k in ("split", "source", "sha256")}])
        return ReportParts(summary, sections, metrics, {"labels": state.labels}, extra_files)

    def headline(self, result):
        return (f"{result.split} accuracy {result.scores['accuracy']:.4f}  macro-F1 "
                f"{result.scores['macro_f1']:.4f}")

    def evaluate(self, run_dir, overrides, log=print):
        from elman.core import runs
        from elman.core.evaluate import classification_result

        predictor = self.predictor(run_dir)
        cfg = runs.read_config(run_dir, self.name)
        path = self.evaluation_file(cfg, overrides, "a labelled file")
        split = data_stage.read_labeled_file(
            path, cfg.data.format, overrides.get("text_column") or cfg.data.text_column,
            overrides.get("label_column") or cfg.data.label_column, name="evaluation",
            encoding=cfg.data.encoding)
        labels = predictor.labels
        for example in split.items:
            if example.label not in labels:
                p, _, line = example.where.rpartition(":")
                raise UserError(f"label '{example.label}' is not one the model knows "
                                f"({', '.join(labels)})", path=p, line=int(line))
        texts = data_stage.texts(split)
        result = classification_result(self.name, "evaluation", texts, data_stage.labels(split),
                                       predictor.probabilities(texts), labels,
                                       [e.where for e in split.items])
        log(f"{path}: {self.headline(result).split(' ', 1)[1]}  ({len(split.items)} examples)")
        return result
