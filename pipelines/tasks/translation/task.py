"""Translation: sentence pairs → source/target tokenizers → Seq2SeqTranslator → BLEU report.

The task's hooks for the one run skeleton (`elman.core.run.run`). `load_data` reads the
pairs (TSV, two aligned files, JSONL or a Hugging Face dataset); `prepare` filters and
de-duplicates the training pairs (counted in the report), carves validation when there
is none, and fits one tokenizer per side on train only (the target one with the
reserved start and end tokens); `fit` trains `Seq2SeqTranslator` with teacher forcing
and the house training loop; `export` writes a SavedModel that maps a batch of source
strings to translated strings; `score` decodes the evaluation splits with the compiled
batched decoders; the report has corpus BLEU and chrF (sacrebleu), exact match, length
ratio, BLEU by source length, sample translations, attention heatmaps and learning
curves.

A run folder holds `model.keras` (the Seq2SeqTranslator, ids in, ids out),
`tokenizers.json` (both tokenizers' settings and vocabularies, the start/end tokens,
the decoding settings), `source_vocabulary.txt`/`target_vocabulary.txt`,
`config.toml`/`config.json`, `saved_model/` (strings in, strings out) and `run.json`.
"""

import dataclasses
import time
from pathlib import Path

from elman.core.run import learning_curves_section, train_metrics
from elman.errors import UserError
from elman.tasks.base import Fitted, ReportParts, Task
from elman.tasks.translation import data as pairs
from elman.tasks.translation import report as translation_report
from elman.tasks.translation.config import END, START, TranslationConfig
from elman.tasks.translation.predictor import TranslationPredictor
from elman.tasks.translation.scoring import compare_beams, evaluate_split

ROOT = Path(__file__).resolve().parents[3]


@dataclasses.dataclass
class _State:
    """What `prepare` fitted and encoded for one translation run."""

    source_tok: object
    target_tok: object
    decoding: dict  # the decoding settings kept in tokenizers.json
    encoded: dict  # split name → (source ids, target in, target out, lengths)
    stats: dict  # split name → (source TokenStats, target TokenStats)


def _filter_and_carve(ctx):
    """Length-filters and de-duplicates train, carves validation when none was given."""
    from elman.text.tokenize import split_all, tokenizer_from_config

    cfg, splits = ctx.cfg, ctx.splits
    train = splits["train"]
    counter_src = tokenizer_from_config(cfg.source_tokenizer)  # token counts, no vocabulary
    counter_tgt = tokenizer_from_config(cfg.target_tokenizer)
    pairs.filter_train(train, [len(t) for t in split_all(counter_src, pairs.sources(train))],
                       [len(t) for t in split_all(counter_tgt, pairs.targets(train))],
                       cfg.data, cfg.train.seed)
    splits = pairs.carve_validation(splits, cfg.data.validation_fraction, cfg.train.seed)
    train = splits["train"]
    if not train.items:
        raise UserError("no training pairs left after length filtering; raise "
                        "data.max_source_len / data.max_target_len", path=train.source)
    ctx.log("pairs: " + ", ".join(f"{n} {len(s)}" for n, s in splits.items())
            + f" (train: {train.counts.get('too_long', 0)} too long, "
            f"{train.counts.get('duplicates', 0)} duplicates dropped)")
    return splits


def _tokenizers(ctx):
    """The source and target tokenizers: fitted on train, or reloaded on resume."""
    from elman.tasks.translation.translator import TOKENIZERS_FILE, read_tokenizers
    from elman.text.tokenize import fit_vocabulary

    cfg, train = ctx.cfg, ctx.splits["train"]
    if ctx.resume and (ctx.run_dir / TOKENIZERS_FILE).is_file():
        return read_tokenizers(ctx.run_dir)[:2]
    return (fit_vocabulary(cfg.source_tokenizer, pairs.sources(train)),
            fit_vocabulary(cfg.target_tokenizer, pairs.targets(train), reserved=(START, END)))


def _encode(splits, source_tok, target_tok):
    """Token statistics and (source, target in, target out, lengths) of every split."""
    import numpy as np

    from elman.tasks.translation.translator import ragged_ids, shift
    from elman.text.tokenize import token_stats

    vocabulary = target_tok.get_vocabulary()
    start_id, end_id = vocabulary.index(START), vocabulary.index(END)
    stats, encoded = {}, {}
    for name, split in splits.items():
        sources, targets = pairs.sources(split), pairs.targets(split)
        stats[name] = (token_stats(source_tok, sources), token_stats(target_tok, targets))
        src = ragged_ids(source_tok, sources)
        tgt = ragged_ids(target_tok, targets)
        if target_tok.max_length > 1:
            tgt = tgt[:, : target_tok.max_length - 1]  # room for the start/end token
        tgt_in, tgt_out = shift(tgt, start_id, end_id)
        lengths = np.maximum(src.row_lengths().numpy(), tgt_out.row_lengths().numpy())
        encoded[name] = (src, tgt_in, tgt_out, lengths)
    return stats, encoded


def _bench_run(task, quick, log):
    """A trained run folder for the decoder benchmark: the tatoeba run, the demo, or a new one."""
    import tempfile

    from elman import config as config_lib
    from elman.core.run import run as run_task

    candidates = [] if quick else [ROOT / "runs" / "translation" / "tatoeba-fra"]
    candidates.append(ROOT / "runs" / "translation" / "demo")
    for run in candidates:
        if (run / "run.json").is_file() and (run / "model.keras").is_file():
            return run
    run = Path(tempfile.mkdtemp(prefix="elman-bench-translation-"))
    cfg = config_lib.load_config(task.name, None, ["train.epochs=6"] if quick else [])
    log(f"training the toy translator for the benchmark in {run}")
    run_task(task, cfg, run / "run", run / "reports" / "translation" / "bench", log=log)
    return run / "run"


class TranslationTask(Task):
    """Translation: one translated sentence per source sentence; BLEU, chrF, exact match."""

    name = "translation"
    title = "Translation"
    config_class = TranslationConfig
    predictor_class = TranslationPredictor
    demo = (("translation", "default", "demo"),)

    def load_data(self, cfg):
        return pairs.load_splits(cfg.data, cfg.train.seed)

    def prepare(self, ctx):
        from elman.tasks.translation.model import masked_token_accuracy
        from elman.tasks.translation.translator import decoding_settings, write_tokenizers

        ctx.splits = _filter_and_carve(ctx)
        source_tok, target_tok = _tokenizers(ctx)
        decoding = decoding_settings(ctx.cfg)
        write_tokenizers(ctx.run_dir, source_tok, target_tok, decoding)
        ctx.log(f"vocabularies: source {source_tok.vocabulary_size}, target "
                f"{target_tok.vocabulary_size} ids")
        stats, encoded = _encode(ctx.splits, source_tok, target_tok)
        masked_token_accuracy()  # registers the metric class before a resume reloads it
        return _State(source_tok, target_tok, decoding, encoded, stats)

    def fit(self, ctx):
        from elman.config import length_multiple
        from elman.core.batching import dataset_from_plan, plan_eval
        from elman.core.train import fit
        from elman.tasks.translation.model import translator_from_config

        cfg, state = ctx.cfg, ctx.state
        v_src, v_in, v_out, v_len = state.encoded["validation"]
        validation = dataset_from_plan((v_src, v_in), v_out,
                                       plan_eval(v_len, cfg.train.batch_size),
                                       multiple=length_multiple(cfg.train))
        t_src, t_in, t_out, t_len = state.encoded["train"]
        cpu_began = time.process_time()  # all threads of this process: CPU-seconds of training
        result = fit(lambda: translator_from_config(cfg, state.source_tok.vocabulary_size,
                                                    state.target_tok.vocabulary_size),
                     (t_src, t_in), t_out, t_len, validation, cfg.train, ctx.run_dir,
                     resume=ctx.resume, strategy=ctx.strategy, log=ctx.log)
        cpu_seconds = time.process_time() - cpu_began
        ctx.log(f"training: {result.epochs_run} epochs, {result.seconds / 60:.1f} min wall, "
                f"{cpu_seconds / 60:.1f} CPU-min in this process")
        return Fitted(result.model, result, {"cpu_seconds": cpu_seconds})

    def inference_model(self, ctx):
        from elman.tasks.translation.model import clean_copy
        from elman.tasks.translation.translator import Translator

        model = clean_copy(ctx.fitted.model)  # uncompiled: no optimizer state in model.keras
        ctx.fitted.extra["translator"] = Translator(
            model, ctx.state.source_tok, ctx.state.target_tok, ctx.state.decoding,
            ctx.cfg.data.target_lang)
        return model

    def export(self, ctx, model):
        """Writes saved_model/: a `serve` signature from source strings to translations."""
        from elman.core.runs import replace_folder

        saved = replace_folder(ctx.run_dir / "saved_model", ctx.fitted.extra["translator"].export)
        ctx.log(f"exported {ctx.run_dir / 'model.keras'} and {saved}")

    def _result(self, split_name, scores, rows, buckets, signature, cfg):
        from elman.core.evaluate import EvalResult
        from elman.tasks.translation.scoring import bleu_interval, bleu_tokenizer, lowercase

        references = [r["reference"] for r in rows]
        interval, units = bleu_interval(
            [r["hypothesis"] for r in rows], references,
            bleu_tokenizer(cfg.eval, cfg.data.target_lang, references), lowercase(cfg))
        return EvalResult(self.name, split_name, "bleu", scores, per_class=buckets,
                          examples=rows, extra={"sacrebleu_signature": signature,
                                                "interval": interval,
                                                "interval_units": units})

    def score(self, ctx):
        cfg, translator = ctx.cfg, ctx.fitted.extra["translator"]
        results = {}
        for name in ("validation", "test"):
            if name not in ctx.splits:
                continue
            scores, rows, buckets, signature, _ = evaluate_split(
                translator, ctx.splits[name], ctx.state.encoded[name][0], cfg,
                beam_width=cfg.decoding.beam_width)
            results[name] = self._result(name, scores, rows, buckets, signature, cfg)
            ctx.log(f"{name}: BLEU {scores['bleu']:.2f}  chrF {scores['chrf']:.2f}  exact "
                    f"match {scores['exact_match']:.4f}  length ratio "
                    f"{scores['length_ratio']:.3f}")
        if cfg.eval.beam_widths:
            name = "test" if "test" in results else "validation"
            rows = compare_beams(translator, ctx.splits[name], ctx.state.encoded[name][0],
                                 cfg, cfg.eval.beam_widths)
            results[name].extra["beams"] = rows
            ctx.log(f"{name}, greedy and beam search: " + ", ".join(
                f"{r['decoding']} BLEU {r['bleu']:.2f} at {r['sentences_per_s']:.0f}/s"
                for r in rows))
        return results

    def _sections(self, ctx, picked):
        """Learning curves, per-split results, attention heatmaps, the worst translations'
        reading traces and the data table."""
        cfg, main = ctx.cfg, ctx.main
        sections = [learning_curves_section(ctx.fitted.result.history, ctx.report_dir)]
        for r in ctx.results.values():
            sections.append(translation_report.result_section(
                r, cfg.decoding, ctx.report_dir, picked if r is main else None))
        if cfg.model.attention != "none" and cfg.eval.heatmaps > 0:
            picks = (picked.get("random") or main.examples)[:cfg.eval.heatmaps]
            sections.append("\n\n".join(translation_report.attention_section(
                ctx.fitted.extra["translator"], picks, ctx.state.encoded[main.split][0],
                ctx.report_dir)))
        sections.append(translation_report.trace_section(
            ctx.fitted.extra["translator"], main.examples, cfg.decoding.beam_width,
            ctx.report_dir, main.split))
        sections.append(translation_report.data_section(ctx.splits, ctx.state.stats))
        return sections

    def report(self, ctx):
        cfg, state, main = ctx.cfg, ctx.state, ctx.main
        result, cpu_seconds = ctx.fitted.result, ctx.fitted.extra["cpu_seconds"]
        model = ctx.fitted.extra["translator"].model
        picked = translation_report.samples(main.examples, cfg.eval.samples, cfg.train.seed)
        summary = translation_report.summary(ctx, model, pairs.targets(ctx.splits[main.split]),
                                             cpu_seconds)
        metrics = {
            "results": {n: {"scores": r.scores, "bleu_by_length": r.per_class,
                            "sacrebleu_signature": r.extra["sacrebleu_signature"],
                            **({"beams": r.extra["beams"]} if "beams" in r.extra else {})}
                        for n, r in ctx.results.items()},
            **train_metrics(result), "train_seconds": result.seconds,
            "train_cpu_seconds": cpu_seconds, "parameters": int(model.count_params()),
            "vocabulary": {"source": state.source_tok.vocabulary_size,
                           "target": state.target_tok.vocabulary_size},
            "data": {n: {"pairs": len(s), "counts": s.counts,
                         "source_tokens": vars(state.stats[n][0])
                         | {"oov_rate": state.stats[n][0].oov_rate},
                         "target_tokens": vars(state.stats[n][1])
                         | {"oov_rate": state.stats[n][1].oov_rate}}
                     for n, s in ctx.splits.items()},
        }
        examples = [{k: r[k] for k in ("where", "source", "reference", "hypothesis",
                                       "sentence_bleu", "exact")} for r in main.examples]
        run_info = {"source_lang": cfg.data.source_lang, "target_lang": cfg.data.target_lang}
        return ReportParts(summary, self._sections(ctx, picked), metrics, run_info,
                           examples=examples)

    def headline(self, result):
        return (f"{result.split} BLEU {result.scores['bleu']:.2f}  exact match "
                f"{result.scores['exact_match']:.4f}")

    def evaluate(self, run_dir, overrides, log=print):
        from elman.core import runs
        from elman.tasks.translation.translator import ragged_ids

        predictor = self.predictor(run_dir)
        cfg = runs.read_config(run_dir, self.name)
        path = self.evaluation_file(cfg, overrides, "a file of sentence pairs")
        if pairs.detect_format(path, cfg.data.format) == "hub":
            raise UserError("evaluate reads local files; give --data FILE")
        split = pairs.read_pair_file(path, cfg.data, "evaluation")
        if not split.items:
            raise UserError("the file holds no sentence pairs", path=path)
        translator = predictor.translator
        source_ids = ragged_ids(translator.source_tokenizer, pairs.sources(split))
        scores, rows, buckets, signature, _ = evaluate_split(
            translator, split, source_ids, cfg, beam_width=cfg.decoding.beam_width)
        log(f"{path}: BLEU {scores['bleu']:.2f}  chrF {scores['chrf']:.2f}  exact match "
            f"{scores['exact_match']:.4f}  ({scores['pairs']} pairs)")
        return self._result("evaluation", scores, rows, buckets, signature, cfg)

    def benchmark(self, quick=False, log=print):
        """Compiled batched greedy vs eager batched loop vs per-sentence `model.predict` loop.

        Decodes the same sentences with the three decoders (identical outputs are
        required: `benchmark_decoders` raises otherwise) and returns sentences/s of each
        and the ratios, with the targets (≥ 200× over the per-sentence loop, ≥ 4× over
        eager). quick: the toy model (the demo run, or a short toy training), 256 toy
        test sentences. Otherwise the tatoeba-fra run when there is one
        (runs/translation/tatoeba-fra), 1024 dev sentences. `beam_vs_greedy` (issue 17):
        the same sentences decoded greedily and with beam widths 4 and 8 (the run's
        length penalty, caps and decoding batch size), sentences/s and time ratios.
        """
        import numpy as np

        from elman.bench.beam_speed import beam_vs_greedy
        from elman.bench.reference_decoding import benchmark_decoders
        from elman.core import runs
        from elman.tasks.translation.translator import Translator, ragged_ids

        run = _bench_run(self, quick, log)
        translator = Translator.from_run(run)
        cfg = runs.read_config(run, self.name)
        path = cfg.data.test or cfg.data.validation or cfg.data.train
        if not Path(path).exists() and (ROOT / path).exists():
            path = str(ROOT / path)  # presets are repo-relative
        n = 256 if quick else 1024
        sources = pairs.sources(pairs.read_pair_file(path, cfg.data, "bench"))[:n]
        source = ragged_ids(translator.source_tokenizer, sources).to_tensor().numpy()
        result = benchmark_decoders(translator.model, source, translator.start_id,
                                    translator.end_id, repeats=2 if quick else 3,
                                    per_sentence_limit=8 if quick else 16,
                                    **translator.caps_kwargs())
        result.update({
            "task": self.name, "run": str(run), "data": str(path),
            "targets": {"compiled_over_per_sentence": 200.0, "compiled_over_eager": 4.0},
            "meets_targets": bool(result["compiled_over_per_sentence"] >= 200.0
                                  and result["compiled_over_eager"] >= 4.0),
            "identical_outputs": True,
            "mean_source_tokens": float(np.count_nonzero(source, axis=1).mean()),
        })
        # issue 17: beam search against greedy on the same sentences, the run's settings
        result["beam_vs_greedy"] = beam_vs_greedy(
            translator.model, source, translator.start_id, translator.end_id, widths=(4, 8),
            length_penalty=translator.decoding["length_penalty"],
            repeats=2 if quick else 3, batch_size=translator.decoding["batch_size"],
            **translator.caps_kwargs())
        log(f"translation decoders on {result['sentences']} sentences: compiled "
            f"{result['compiled_sentences_per_s']:.0f}/s, eager "
            f"{result['eager_sentences_per_s']:.1f}/s, per-sentence predict "
            f"{result['per_sentence_predict_sentences_per_s']:.2f}/s → "
            f"{result['compiled_over_per_sentence']:.0f}× and "
            f"{result['compiled_over_eager']:.1f}×")
        beams = result["beam_vs_greedy"]
        log(f"translation beam search vs greedy: greedy {beams['greedy_sentences_per_s']:.0f}"
            f"/s, beam 4 {beams['beam_4_sentences_per_s']:.0f}/s "
            f"({beams['beam_4_over_greedy_time']:.1f}× the time), beam 8 "
            f"{beams['beam_8_sentences_per_s']:.0f}/s "
            f"({beams['beam_8_over_greedy_time']:.1f}× the time)")
        return result
