"""Sequence tagging (NER, POS): tagged corpus → vocabularies → BiLSTM/GRU tagger → report.

The task reads a tagged corpus (CoNLL columns, CoNLL-U, JSON lines, a Hugging Face
dataset saved with `save_to_disk`, or `hub:NAME`), converts entity tags to BIO
internally, builds word and character vocabularies on the training split only, trains
a `models.SequenceTagger` (softmax or CRF head, optional character features) with the
house training loop, and scores every gold position: entity-level precision/recall/F1
exactly as `conlleval` computes them, token accuracy, and per-tag accuracy for free tag
sets such as POS. Tags are written back in the input's scheme (BIO, IOB1, BIOS, BIOES, BMES).

A run folder holds everything needed to tag new text: `model.keras` (the tagger: word
ids, plus char, bigram and shape ids when `chars` / `features` turn them on, in; tag
potentials out; `predict` gives tag ids; loads with safe mode on), `words.txt`,
`chars.txt`, `tags.txt`, `bigrams.txt` with `features.bigrams` (one entry per line, the
line number is the id) and `tagging.json` (input scheme, case settings, the token
features on), and `saved_model/`: a `serve` signature from raw strings to tokens and
tags (see `elman.tasks.tagging.export`), so TensorFlow Serving can tag text with the
same splitting and tags as `elman predict`.
"""

import dataclasses

from elman.config import check_adversarial_strategy
from elman.core.embed import check_starting_vectors
from elman.core.objectives import check_lm_objective
from elman.core.run import train_metrics
from elman.errors import UserError
from elman.tasks.base import Fitted, ReportParts, Task
from elman.tasks.tagging import report as tagging_report
from elman.tasks.tagging.config import TaggingConfig
from elman.tasks.tagging.data import check_known_tags, evaluation_data, load_splits
from elman.tasks.tagging.predictor import TaggingPredictor
from elman.tasks.tagging.vocab import Vocabularies, build_vocabularies, tag_list


@dataclasses.dataclass
class _State:
    """What `prepare` gives the later hooks."""

    vocab: Vocabularies
    counts: object  # Counter of the training words
    encoded: dict  # split name → (features, targets, lengths)
    coverage: object  # pretrained vectors' coverage, or None
    matrix: object  # the pretrained embedding matrix, or None


class TaggingTask(Task):
    """Sequence tagging: a tag per token, and the entities the tags make."""

    name = "tagging"
    title = "Tagging"
    config_class = TaggingConfig
    predictor_class = TaggingPredictor
    column_settings = ("tokens_column", "tag_column")
    refused_flags = {"skip_bad_rows": "--skip-bad-rows is not available for tagging: a "
                                      "sentence cannot lose a token; fix the file, or use "
                                      "--repair-bio for stray I-X tags"}
    demo = (("tagging", "default", "demo"), ("tagging-zh", "zh", "demo-zh"))

    def check(self, cfg):
        check_starting_vectors(cfg.embedding)
        if cfg.encoder.merge_mode != "concat":
            raise UserError("the tagger concatenates the two directions: encoder.merge_mode "
                            "must be \"concat\"")
        if not 0.0 <= cfg.embedding.word_dropout < 1.0:
            raise UserError(f"embedding.word_dropout must be in [0, 1); got "
                            f"{cfg.embedding.word_dropout}")
        if not 0.0 <= cfg.encoder.dropout < 1.0:
            raise UserError(f"encoder.dropout must be in [0, 1); got {cfg.encoder.dropout}")
        for key, value in (("chars.max_word_length", cfg.chars.max_word_length),
                           ("vocabulary.min_count", cfg.vocabulary.min_count),
                           ("vocabulary.max_words", cfg.vocabulary.max_words),
                           ("features.bigram_min_count", cfg.features.bigram_min_count),
                           ("features.max_bigrams", cfg.features.max_bigrams)):
            if value < 1:
                raise UserError(f"{key} must be at least 1; got {value}")
        for key, value in (("features.bigram_dim", cfg.features.bigram_dim),
                           ("features.shape_dim", cfg.features.shape_dim)):
            if not 1 <= value <= 16_384:
                raise UserError(f"{key} must be between 1 and 16,384; got {value:,}")
        if cfg.head.type != "crf" and cfg.head.constraint in ("BIO", "BIOES"):
            raise UserError("head.constraint applies to the CRF head only (head.type = \"crf\")")
        if cfg.head.constraint in ("BIO", "BIOES") and cfg.head.constraint != cfg.head.tags:
            raise UserError(f"head.constraint = \"{cfg.head.constraint}\" does not fit the "
                            f"model's tags (head.tags = \"{cfg.head.tags}\"): use "
                            "head.constraint = \"auto\"")
        check_lm_objective(cfg)
        check_adversarial_strategy(cfg)

    def load_data(self, cfg):
        splits, self.scheme = load_splits(cfg.data, cfg.train.seed)
        train = splits["train"]
        tags = tag_list([s["tags"] for s in train.items], self.scheme is not None)
        if len(tags) < 2:
            raise UserError(f"the training data has only one tag ({tags[0]}); need at least "
                            "two", path=train.source)
        check_known_tags(splits, tags, self.scheme is not None)
        return splits

    def prepare(self, ctx):
        from elman.tasks.tagging.model import encode

        cfg, splits, log = ctx.cfg, ctx.splits, ctx.log
        vocab, counts = build_vocabularies(cfg, splits["train"].items, self.scheme)
        if ctx.resume and (ctx.run_dir / "tagging.json").is_file():
            vocab = Vocabularies.load(ctx.run_dir)
            check_known_tags(splits, vocab.tags, vocab.entity)
        if vocab.bigrams is not None and len(vocab.bigrams) <= 2:
            raise UserError(f"features.bigrams: no bigram of the training data is kept (none "
                            f"seen {cfg.features.bigram_min_count} times, or "
                            f"features.max_bigrams = {cfg.features.max_bigrams} leaves no "
                            "room after padding and OOV); lower features.bigram_min_count "
                            "or raise features.max_bigrams", path=splits["train"].source)
        vocab.save(ctx.run_dir)
        if vocab.bigrams is not None:
            log(f"bigram vocabulary: {len(vocab.bigrams) - 2:,} bigrams seen at least "
                f"{cfg.features.bigram_min_count} times in train")
        with_chars = cfg.chars.features != "none"
        encoded = {name: encode(vocab, [s["tokens"] for s in split.items], with_chars,
                                [s["tags"] for s in split.items])
                   for name, split in splits.items()}
        from elman.core.embed import starting_vectors

        matrix, coverage = starting_vectors(cfg.embedding, vocab.words,
                                            lambda: _word_rows(encoded["train"][0]),
                                            cfg.train.seed, log)
        return _State(vocab, counts, encoded, coverage, matrix)

    def fit(self, ctx):
        from elman.config import length_multiple
        from elman.core.batching import dataset_from_plan, plan_eval
        from elman.core.train import fit
        from elman.tasks.tagging.model import build_model

        cfg, state = ctx.cfg, ctx.state

        def build_and_compile():
            model = build_model(cfg, state.vocab)
            if state.matrix is not None:
                model.get_layer("word_embedding").embeddings.assign(state.matrix)
            return model

        val_x, val_y, val_len = state.encoded["validation"]
        validation = dataset_from_plan(val_x, val_y,
                                       plan_eval(val_len, max(cfg.train.batch_size, 64)),
                                       multiple=length_multiple(cfg.train))
        x, y, lengths = state.encoded["train"]
        scores = _validation_f1(state.vocab, ctx.splits["validation"].items, val_x, val_len)
        result = fit(build_and_compile, x, y, lengths, validation, cfg.train, ctx.run_dir,
                     resume=ctx.resume, strategy=ctx.strategy, log=ctx.log,
                     epoch_scores=scores)
        return Fitted(result.model, result)

    def inference_model(self, ctx):
        return ctx.fitted.model  # token ids in: raw text is split in Python

    def export(self, ctx, model):
        """Writes saved_model/: a `serve` signature from raw strings to tokens and tags."""
        from elman.core.runs import replace_folder
        from elman.tasks.tagging.export import export_tagger

        saved = replace_folder(ctx.run_dir / "saved_model",
                               lambda tmp: export_tagger(model, ctx.state.vocab, tmp))
        ctx.log(f"exported {ctx.run_dir / 'model.keras'} and {saved}")

    def score(self, ctx):
        from elman.tasks.tagging.model import predict_tag_ids
        from elman.tasks.tagging.scoring import score_split

        vocab, results = ctx.state.vocab, {}
        for name in ("validation", "test"):
            if name in ctx.splits:
                features, _, lengths = ctx.state.encoded[name]
                ids = predict_tag_ids(ctx.fitted.model, features, lengths)
                predicted = [vocab.tag_names(row) for row in ids]
                results[name] = score_split(name, ctx.splits[name].items, predicted,
                                            vocab.scheme)
        return results

    def report(self, ctx):
        from elman.tasks.tagging.model import describe_model
        from elman.tasks.tagging.scoring import error_counts

        cfg, state, model = ctx.cfg, ctx.state, ctx.fitted.model
        vocab, coverage = state.vocab, state.coverage
        data_md, data_info = tagging_report.data_summary(ctx.splits, vocab, state.counts,
                                                         coverage)
        summary = tagging_report.summary(ctx, vocab, model)
        sections = tagging_report.sections(ctx, vocab, data_md, model)
        metrics = {
            "results": {n: {"scores": r.scores, "per_class": r.per_class,
                            "labels": r.extra["labels"], "confusion": r.extra["confusion"],
                            "exact": r.extra.get("fraction"),
                            "error_counts": error_counts(r, ctx.splits[n].items)
                            if vocab.entity else None}
                        for n, r in ctx.results.items()},
            "tags": vocab.tags, "scheme": vocab.scheme, "entity_tags": vocab.entity,
            "model": describe_model(cfg, model.count_params()),
            **train_metrics(ctx.fitted.result), "data": data_info,
            "embedding_coverage": None if coverage is None else vars(coverage) | {
                "share": coverage.share},
        }
        return ReportParts(summary, sections, metrics,
                           {"labels": vocab.tags, "scheme": vocab.scheme})

    def headline(self, result):
        s = result.scores
        if result.main_metric == "f1":
            return (f"{result.split} F1 {s['f1']:.4f}  precision {s['precision']:.4f}  "
                    f"recall {s['recall']:.4f}  token accuracy {s['token_accuracy']:.4f}")
        return f"{result.split} token accuracy {s['token_accuracy']:.4f}"

    def evaluate(self, run_dir, overrides, log=print):
        """Scores a saved run on a tagged file (default: the run's test, else validation
        file); tags the model never saw are scored, not refused."""
        from elman.core import runs
        from elman.tasks.tagging.scoring import score_split

        predictor = self.predictor(run_dir)
        cfg = runs.read_config(run_dir, self.name)
        path = self.evaluation_file(cfg, overrides, "a tagged file")
        data = evaluation_data(cfg.data, path, overrides, self.column_settings)
        splits, _ = load_splits(data, scheme=predictor.vocab.scheme, for_training=False)
        split = splits["train"]
        predicted = predictor.tag_internal([s["tokens"] for s in split.items])
        result = score_split("evaluation", split.items, predicted, predictor.vocab.scheme)
        line = self.headline(result).split(" ", 1)[1]
        log(f"{path}: {line}  ({result.scores['sentences']} sentences)")
        return result

    def benchmark(self, quick=False, log=print):
        from elman.tasks.tagging.bench import benchmark

        return benchmark(quick=quick, log=log)


def _word_rows(features):
    """The training sentences' word id rows (`encode`'s features: ragged ids or a dict)."""
    from elman.core.embed import RaggedRows

    words = features["words"] if isinstance(features, dict) else features
    return RaggedRows(words)


def _validation_f1(vocab, sentences, features, lengths):
    """For entity tags, the callable giving each epoch's validation entity F1 (`val_f1`,
    what `train.monitor = "val_f1"` watches, as NER is usually selected) from the
    decoded tags (the CRF's Viterbi path), scored as `conlleval` does; None for free tags.
    """
    if not vocab.entity:
        return None
    from elman.tasks.tagging.metrics import evaluate_tagging
    from elman.tasks.tagging.model import predict_tag_ids

    gold = [s["tags"] for s in sentences]

    def scores(model):
        ids = predict_tag_ids(model, features, lengths)
        return {"val_f1": float(evaluate_tagging(gold, [vocab.tag_names(row)
                                                        for row in ids]).f1)}

    return scores
