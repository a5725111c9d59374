"""Language modelling: text → tokens → vocabulary → TBPTT batches → stateful LSTM/GRU → report.

The whole training text is one token stream (an `<eol>` token after each line or
paragraph), laid out as `train.batch_size` parallel streams cut into chunks of
`train.chunk_length` steps; the model carries its recurrent state from one chunk
to the next and back-propagates within a chunk (truncated BPTT), with gradients
clipped by global norm. Validation and test perplexity carry the state through
the whole text. A run folder holds `model.keras` (token ids in, next-token
logits out; safe-mode loadable), `vocabulary.json` (and at subword level `subword.model`,
the SentencePiece model learned on the training text) and the config, which is all
that `elman generate`, `elman evaluate` and `elman predict` need.

The task's hooks for the one run skeleton (`elman.core.run.run`); it keeps its own
training loop (`training.py`), its report parts are in `report.py`, its predictor in
`predictor.py`.
"""

import dataclasses
import math

from elman.core.run import train_metrics
from elman.tasks.base import Fitted, ReportParts, Task
from elman.tasks.lm import report as lm_report
from elman.tasks.lm.config import LMConfig, check_config
from elman.tasks.lm.data import load_data
from elman.tasks.lm.predictor import LMPredictor
from elman.tasks.lm.scoring import score_ids, split_stats
from elman.tasks.lm.vocabulary import (SUBWORD_FILE, VOCABULARY_FILE, build_vocabulary,
                                       encode_stream, read_subword, read_vocabulary,
                                       unknown_tokens, write_subword, write_vocabulary)


@dataclasses.dataclass
class _State:
    """What `prepare` built for one language-model run."""

    vocabulary: list
    streams: dict  # split name → token stream
    ids: dict  # split name → encoded stream (an <eol> first)
    stats: dict  # split name → split_stats dict


class LMTask(Task):
    """Language model: perplexity of a text; next tokens and generation from a prefix."""

    name = "lm"
    title = "Language model"
    config_class = LMConfig
    predictor_class = LMPredictor
    demo = (("lm", "default", "demo"), ("lm-zh", "zh", "demo-zh"))

    def check(self, cfg):
        check_config(cfg)

    def load_data(self, cfg):
        splits, self.streams, self.pieces = load_data(cfg)
        return splits

    def _subword(self, ctx):
        """Writes the run's subword model; a resumed run keeps the one it saved (and its
        text is tokenized again with it should this one differ)."""
        saved = ctx.run_dir / SUBWORD_FILE
        if ctx.resume and saved.is_file() and saved.read_bytes() != self.pieces.model:
            from elman.tasks.lm.data import tokenize_splits

            ctx.log(f"notice: the subword model learned now differs from the run's "
                    f"{SUBWORD_FILE}; the run keeps its own")
            self.pieces = read_subword(ctx.run_dir)
            self.streams = tokenize_splits(ctx.splits, ctx.cfg.text, self.pieces)
        write_subword(ctx.run_dir, self.pieces.model)

    def prepare(self, ctx):
        if self.pieces is not None:
            self._subword(ctx)
        cfg, streams = ctx.cfg, self.streams
        if ctx.resume and (ctx.run_dir / VOCABULARY_FILE).is_file():
            vocabulary = read_vocabulary(ctx.run_dir)
        else:
            vocabulary = build_vocabulary(streams["train"],
                                          max_size=cfg.text.max_vocabulary or None,
                                          min_count=cfg.text.min_count)
        write_vocabulary(ctx.run_dir, vocabulary)
        ids = {name: encode_stream(streams[name], vocabulary) for name in ctx.splits}
        stats = {name: split_stats(split, streams[name], vocabulary)
                 for name, split in ctx.splits.items()}
        val = stats["validation"]
        ctx.log(f"vocabulary {len(vocabulary)} · train {stats['train']['tokens']} tokens · "
                f"validation {val['tokens']} tokens (OOV {100 * val['oov_rate']:.2f}%)")
        return _State(vocabulary, streams, ids, stats)

    def _stream_length(self, ctx):
        return (len(ctx.state.ids["train"]) - 1) // ctx.cfg.train.batch_size

    def fit(self, ctx):
        from elman.tasks.lm.data import make_tbptt_dataset
        from elman.tasks.lm.model import build_and_compile
        from elman.tasks.lm.scoring import eval_dataset
        from elman.tasks.lm.training import fit_tbptt

        cfg, ids, size = ctx.cfg, ctx.state.ids, len(ctx.state.vocabulary)
        train_ds = make_tbptt_dataset(ids["train"], cfg.train.batch_size, cfg.train.chunk_length)
        val_ds = eval_dataset(ids["validation"], cfg.train.eval_batch_size)
        train_tokens = self._stream_length(ctx) * cfg.train.batch_size
        result = fit_tbptt(lambda: build_and_compile(cfg, size), train_ds, val_ds,
                           train_tokens, cfg.train, ctx.run_dir, resume=ctx.resume, log=ctx.log)
        return Fitted(result.model, result)

    def inference_model(self, ctx):
        from elman.tasks.lm.model import inference_copy

        model = inference_copy(ctx.cfg, ctx.fitted.model, len(ctx.state.vocabulary))
        ctx.fitted.extra["inference"] = model
        return model

    def export(self, ctx, model):
        """Nothing beyond model.keras: the model takes token ids, not raw strings."""

    def score(self, ctx):
        from elman.core.evaluate import EvalResult

        model, cfg = ctx.fitted.extra["inference"], ctx.cfg
        return {name: EvalResult(self.name, name, "perplexity",
                                 score_ids(model, ctx.state.ids[name], cfg.train.eval_batch_size,
                                           cfg.text.level))
                for name in ("validation", "test") if name in ctx.splits}

    def report(self, ctx):
        cfg, state, result = ctx.cfg, ctx.state, ctx.fitted.result
        model = ctx.fitted.extra["inference"]
        stream, parameters = self._stream_length(ctx), model.count_params()
        samples, identical, sample_length = lm_report.samples(
            model, cfg, state.vocabulary, state.streams["validation"])
        sections = [lm_report.curves_section(result.history, ctx.report_dir),
                    lm_report.samples_section(cfg, samples, identical, sample_length),
                    lm_report.trace_section(
                        model, cfg, state.vocabulary, state.streams["validation"],
                        ctx.results["validation"].scores["cross_entropy"] / math.log(2),
                        ctx.report_dir, self.pieces),
                    lm_report.data_section(cfg, ctx.splits, state.stats, state.vocabulary,
                                           state.streams["train"])]
        metrics = {
            "results": {name: r.scores for name, r in ctx.results.items()},
            "level": cfg.text.level, "vocabulary_size": len(state.vocabulary),
            **train_metrics(result), "stopped_early": result.stopped_early,
            "tbptt": {"batch_size": cfg.train.batch_size,
                      "chunk_length": cfg.train.chunk_length,
                      "stream_length": stream, "clipnorm": cfg.train.clipnorm},
            "data": state.stats, "samples": samples, "samples_identical_to_naive": identical,
            "parameters": parameters,
        }
        return ReportParts(lm_report.summary(ctx, parameters, stream), sections, metrics,
                           {"level": cfg.text.level, "vocabulary_size": len(state.vocabulary)},
                           examples=samples)

    def headline(self, result):
        s = result.scores
        extra = (f"  bits/char {s['bits_per_character']:.3f}"
                 if "bits_per_character" in s else "")
        return f"{result.split} perplexity {s['perplexity']:.2f}{extra}"

    def evaluate(self, run_dir, overrides, log=print):
        """Perplexity of a saved run on a text file (default: the run's test, else
        validation file)."""
        from elman.core.evaluate import EvalResult
        from elman.tasks.lm.data import read_text_lines, token_stream

        predictor = self.predictor(run_dir)
        saved = predictor.cfg
        path = self.evaluation_file(saved, overrides, "a text file")
        # fail fast, before the model
        lines = read_text_lines(path, saved.data.encoding)
        tokens = token_stream(lines, saved.text, predictor.pieces)
        ids = encode_stream(tokens, predictor.vocabulary)
        scores = score_ids(predictor.model, ids, saved.train.eval_batch_size, saved.text.level)
        scores["oov_rate"] = len(unknown_tokens(tokens, predictor.vocabulary)) / len(tokens)
        extra = (f"  bits/char {scores['bits_per_character']:.4f}"
                 if "bits_per_character" in scores else "")
        log(f"{path}: perplexity {scores['perplexity']:.4f}{extra}  ({scores['tokens']} "
            f"tokens, OOV {100 * scores['oov_rate']:.2f}%)")
        return EvalResult(self.name, "evaluation", "perplexity", scores,
                          extra={"data": str(path)})

    def benchmark(self, quick=False, log=print):
        """State-carrying vs naive whole-prefix greedy generation, side by side (see
        `elman.bench.reference_generation.benchmark_lm`)."""
        from elman.bench.reference_generation import benchmark_lm

        return benchmark_lm(quick=quick, log=log)
