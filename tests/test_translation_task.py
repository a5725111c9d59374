"""Translation task: one end-to-end CLI run (train → report → translate → export → evaluate),
metric wiring against independent sacrebleu calls, detokenization, and user errors."""

import csv
import itertools
import json
import subprocess
import sys

import pytest
import tensorflow as tf

from elman import cli
from elman import config as config_lib
from elman.core.split import Split
from elman.tasks.translation import config as translation_config
from elman.tasks.translation import data as translation_data
from elman.tasks.translation import model as translation_model
from elman.tasks.translation import scoring, translator
from tests.conftest import ROOT, run_elman

SUBJECTS = {"i": "我", "you": "你", "he": "他", "she": "她"}
VERBS = {"like": "喜欢", "buy": "买"}
OBJECTS = {"tea": "茶", "fish": "鱼", "books": "书", "rice": "米饭"}
TINY = ["--set", "model.units=16", "--set", "model.embedding_dim=16", "--set",
        "train.epochs=2", "--set", "train.batch_size=16", "--set", "eval.heatmaps=1",
        "--set", "eval.samples=2"]


def tiny_pairs():
    return [(f"{s} {v} {o}", SUBJECTS[s] + VERBS[v] + OBJECTS[o])
            for s in SUBJECTS for v in VERBS for o in OBJECTS]


def write_tsv(path, pairs):
    path.write_text("".join(f"{a}\t{b}\n" for a, b in pairs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One tiny CLI training run shared by the end-to-end checks below."""
    root = tmp_path_factory.mktemp("translation")
    pairs = tiny_pairs()
    files = {"train": write_tsv(root / "train.tsv", pairs + pairs[:5]),  # 5 duplicates
             "validation": write_tsv(root / "validation.tsv", pairs[::4]),
             "test": write_tsv(root / "test.tsv", pairs[1::3])}
    run, reports = root / "run", root / "reports"
    result = run_elman(["train", "translation", "--data", files["train"], "--validation",
                        files["validation"], "--test", files["test"], "--out", run,
                        "--reports", reports, *TINY])
    assert result.returncode == 0, result.stderr[-3000:]
    return {"run": run, "report": reports / "translation" / "run", "files": files,
            "pairs": pairs}


def read_predictions(path):
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def test_train_writes_report_and_metrics_match_sacrebleu(trained):
    import sacrebleu

    report, run = trained["report"], trained["run"]
    for name in ("report.md", "report.html", "metrics.json", "predictions.tsv",
                 "learning_curves.png", "bleu_by_length_test.png", "attention_1.png"):
        assert (report / name).is_file(), name
    for name in ("model.keras", "tokenizers.json", "config.json", "run.json",
                 "source_vocabulary.txt", "target_vocabulary.txt", "saved_model"):
        assert (run / name).exists(), name
    text = (report / "metrics.json").read_text(encoding="utf-8")
    metrics = json.loads(text)
    assert list(metrics) == sorted(metrics)
    assert metrics["split"] == "test" and metrics["main_metric"] == "bleu"
    counts = metrics["data"]["train"]["counts"]
    assert counts["duplicates"] == 5 and counts["read"] == 37
    assert metrics["data"]["train"]["pairs"] == 32
    md = (report / "report.md").read_text(encoding="utf-8")
    for needle in ("BLEU by source length", "Sample translations", "Attention", "## Data",
                   "Reproducibility", "tok:zh"):
        assert needle in md, needle

    # The scores agree with sacrebleu called here on the written predictions.
    rows = read_predictions(report / "predictions.tsv")
    gold = [b for a, b in trained["pairs"][1::3]]
    assert [r["reference"] for r in rows] == gold
    hyps = [r["hypothesis"] for r in rows]
    scores = metrics["scores"]
    assert scores["pairs"] == len(gold)
    assert scores["bleu"] == pytest.approx(
        sacrebleu.corpus_bleu(hyps, [gold], tokenize="zh").score, abs=1e-9)
    assert scores["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [gold]).score, abs=1e-9)
    # Chinese targets without spaces: token equality is string equality here.
    assert scores["exact_match"] == sum(h == g for h, g in zip(hyps, gold)) / len(gold)
    # BLEU's bootstrap interval over the test pairs, with the zh tokenizer the score has
    interval = metrics["interval"]
    assert (interval["metric"], interval["units"]) == ("BLEU", len(gold))
    assert interval["score"] == pytest.approx(scores["bleu"], abs=1e-9)
    assert interval["low"] <= interval["high"]
    assert f"drawing the {len(gold)} test sentence pairs again" in md
    from elman.core import intervals

    units = intervals.read_units(report / interval["units_file"], "bleu")  # for compare
    assert float(intervals.bleu_of(units.sum(axis=0))) == pytest.approx(scores["bleu"])


def test_report_traces_the_worst_translations(trained):
    """The "Reading traces" section: its plot exists, its rows are the worst pairs of the
    main split, and its numbers are what `predictor.trace` gives for those sources."""
    from elman.core import runs
    from elman.tasks.translation.predictor import TranslationPredictor
    from tests.report_sections import section_tables

    report = trained["report"]
    rows, images = section_tables((report / "report.md").read_text(encoding="utf-8"),
                                  "Reading traces")
    assert images == ["trace_worst.png"] and (report / "trace_worst.png").stat().st_size > 0
    predictions = read_predictions(report / "predictions.tsv")
    assert len(rows) == min(3, len(predictions))

    def rank(r):
        return (r["exact"] == "True", round(float(r["sentence_bleu"]), 4))

    traced = {r[0] for r in rows}
    worst = max(rank(p) for p in predictions if p["source"] in traced)
    assert all(rank(p) >= worst for p in predictions if p["source"] not in traced)
    beam = runs.read_config(trained["run"], "translation").decoding.beam_width
    traces = TranslationPredictor(trained["run"]).trace([r[0] for r in rows], beam)
    by_source = {p["source"]: p for p in predictions}
    for row, trace in zip(rows, traces):
        source, reference, translation, _, token, p, log_p = row
        assert (reference, translation) == (by_source[source]["reference"],
                                            by_source[source]["hypothesis"])
        assert translation == trace["translation"]
        low = min(trace["steps"], key=lambda s: s["probability"])
        assert token == low["token"]
        assert float(p) == pytest.approx(low["probability"], abs=1e-4)
        assert float(log_p) == pytest.approx(trace["log_probability"], abs=1e-4)


def test_translate_args_stdin_beam_and_evaluate(trained, capsys):
    run = trained["run"]
    texts = ["i like tea", "she buys fish", "you like books"]
    assert cli.main(["translate", str(run), *texts]) == 0
    greedy = capsys.readouterr().out.splitlines()
    # one line per text, what the Python API translates, made of target tokens only
    # (Chinese characters, no start, end or [UNK] marker)
    import elman

    assert greedy == [p["translation"] for p in elman.load(run).predict(texts)]
    target_vocabulary = (run / "target_vocabulary.txt").read_text(encoding="utf-8").split()
    characters = {t for t in target_vocabulary if len(t) == 1}
    assert all(set(line) <= characters for line in greedy), (greedy, characters)
    # beam search of width 1 is greedy decoding
    assert cli.main(["translate", str(run), "--beam", "1", *texts]) == 0
    assert capsys.readouterr().out.splitlines() == greedy
    # many sentences from standard input: one output line per input line, order kept
    result = run_elman(["translate", run], stdin="i like tea\n\nshe buys fish\nyou like books\n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines() == [greedy[0], "", *greedy[1:]]

    metrics = json.loads((trained["report"] / "metrics.json").read_text(encoding="utf-8"))
    assert cli.main(["evaluate", str(run), "--json"]) == 0
    out = capsys.readouterr().out
    scores = json.loads(out)  # --json: stdout is the JSON alone
    for key in ("bleu", "chrf", "exact_match", "length_ratio", "pairs"):
        assert scores[key] == pytest.approx(metrics["scores"][key], abs=1e-9), key


@pytest.mark.slow
def test_a_source_longer_than_the_encoder_reads_is_marked_and_noticed(trained):
    import elman

    long_source = " ".join(["i like tea"] * 40)  # 120 tokens; the encoder reads 100
    predictions = elman.load(trained["run"]).predict(["she buys fish", long_source])
    assert predictions[0]["truncated"] is None
    assert predictions[1]["truncated"] == {"tokens": 120, "read": 100, "kept": "first"}
    result = run_elman(["translate", trained["run"], "--format", "json"],
                       stdin=f"she buys fish\n\n{long_source}\n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert [json.loads(line) for line in result.stdout.splitlines()] == \
        [predictions[0], None, predictions[1]]
    notices = [line for line in result.stderr.splitlines() if line.startswith("notice:")]
    assert notices == ["notice: line 3 has 120 tokens; the model reads the first 100"]


FRESH_LOAD = r"""
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
served = tf.saved_model.load(sys.argv[1] + "/saved_model")
out = served.serve(tf.constant(json.loads(sys.argv[2])))
print(json.dumps([t.decode("utf-8") for t in out.numpy()], ensure_ascii=False))
"""


def test_saved_model_in_fresh_process_equals_translate_cli(trained, capsys):
    run = trained["run"]
    texts = ["i like tea", "he buys rice", "she likes books", "you buy fish", "i buy"]
    assert cli.main(["translate", str(run), *texts]) == 0
    expected = capsys.readouterr().out.splitlines()
    fresh = subprocess.run([sys.executable, "-c", FRESH_LOAD, str(run), json.dumps(texts)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    assert json.loads(fresh.stdout.strip().splitlines()[-1]) == expected


# ------------------------------------------------------------------- fast unit tests


def test_scores_wiring_against_independent_sacrebleu():
    import sacrebleu

    hyps = ["the cat sat on the mat", "a dog", "Hello world"]
    refs = ["the cat sat on the mat", "a big dog", "hello world"]
    hyp_tokens = [h.lower().split() for h in hyps]
    ref_tokens = [r.lower().split() for r in refs]
    for lowercase in (False, True):
        scores, per_sentence, _ = scoring.translation_scores(
            hyps, refs, hyp_tokens, ref_tokens, "13a", lowercase)
        assert scores["bleu"] == pytest.approx(
            sacrebleu.corpus_bleu(hyps, [refs], tokenize="13a", lowercase=lowercase).score)
        low = (lambda t: t.lower()) if lowercase else (lambda t: t)
        assert scores["chrf"] == pytest.approx(sacrebleu.corpus_chrf(
            [low(h) for h in hyps], [[low(r) for r in refs]]).score)
        assert scores["length_ratio"] == pytest.approx(10 / 11)  # tokens: 6+2+2 over 6+3+2
        assert scores["exact_match"] == pytest.approx(2 / 3)
        assert per_sentence[0] == pytest.approx(100.0)
    zh, _, _ = scoring.translation_scores(["我爱你"], ["我爱他"], [["我", "爱", "你"]],
                                          [["我", "爱", "他"]], "zh", False)
    assert zh["bleu"] == pytest.approx(
        sacrebleu.corpus_bleu(["我爱你"], [["我爱他"]], tokenize="zh").score)
    assert zh["exact_match"] == 0.0


@pytest.mark.parametrize("attention", [pytest.param("none", marks=pytest.mark.slow), "luong"])
def test_compiled_training_step_and_masked_token_accuracy(attention):
    """With and without attention (the decoder's padding mask reaches the metrics only
    without it), one fit step runs and the metric counts real target tokens only."""
    import keras
    import numpy as np

    from elman.models.seq2seq_translator import Seq2SeqTranslator

    keras.utils.set_random_seed(0)
    model = Seq2SeqTranslator(9, 8, embedding_dim=4, units=4, attention=attention)
    translation_model.compile_translator(model, translation_config.TranslationTrainConfig())
    source = np.array([[4, 5, 6], [7, 0, 0]])
    target_in = np.array([[2, 4, 5, 6], [2, 7, 0, 0]])
    target_out = np.array([[4, 5, 6, 3], [7, 3, 0, 0]])
    model.fit((source, target_in), target_out, epochs=1, verbose=0)
    results = model.evaluate((source, target_in), target_out, verbose=0, return_dict=True)
    predicted = np.asarray(model((source, target_in))).argmax(-1)
    real = target_out != 0
    assert results["masked_token_accuracy"] == pytest.approx(
        (predicted == target_out)[real].sum() / real.sum())


def test_bleu_tokenizer_choice():
    auto = translation_config.TranslationEvalConfig()
    assert scoring.bleu_tokenizer(auto, "zh") == "zh"
    assert scoring.bleu_tokenizer(auto, "zh-CN") == "zh"
    assert scoring.bleu_tokenizer(auto, "fr") == "13a"
    assert scoring.bleu_tokenizer(auto, "", ["我爱你", "好"]) == "zh"
    fixed = translation_config.TranslationEvalConfig(bleu_tokenize="intl")
    assert scoring.bleu_tokenizer(fixed, "zh") == "intl"


def test_ids_to_text_cuts_at_end_and_joins_by_level():
    vocab = ["", "[UNK]", "<s>", "</s>", "peut", "-", "être", "我", "爱", "nlp", "l", "’", "a"]
    ids = [[4, 5, 6, 3, 9, 9], [7, 8, 9, 3, 0, 0], [10, 11, 12, 2, 0, 0], [3, 7, 0, 0, 0, 0]]
    tokens = translator.ids_to_tokens(ids, vocab, start_id=2, end_id=3)
    assert [[t.decode() for t in row] for row in tokens.to_list()] == [
        ["peut", "-", "être"], ["我", "爱", "nlp"], ["l", "’", "a"], []]

    def text(level):
        return [t.decode() for t in translator.tokens_to_text(tokens, level).numpy()]

    assert text("word") == ["peut-être", "我 爱 nlp", "l’a", ""]
    assert text("cjk") == ["peut - être", "我爱nlp", "l ’ a", ""]
    assert text("char") == ["peut-être", "我爱nlp", "l’a", ""]


def test_word_level_text_glues_punctuation_by_language():
    rows = [["il", "est", "vieux", "."], ["(", "oui", ")", ",", "non", "!"],
            ["¿", "qué", "?"], ["«", "va", "»", ":", "50", "%"]]
    tokens = tf.ragged.constant(rows)

    def text(lang):
        return [t.decode() for t in translator.tokens_to_text(tokens, "word", lang).numpy()]

    assert text("en") == ["il est vieux.", "(oui), non!", "¿qué?", "«va»: 50%"]
    # French keeps the space before ! ? ; : % and inside « »
    assert text("fr") == ["il est vieux.", "(oui), non !", "¿qué ?", "« va » : 50 %"]


def test_graph_caps_equal_decoding_caps():
    import numpy as np

    from elman.tasks.translation.decoding import length_caps

    rng = np.random.default_rng(0)
    source = rng.integers(0, 5, size=(50, 23)).astype(np.int32)
    for ratio, offset, max_len in ((2.0, 5, 200), (1.3, 0, 9), (0.5, 2, None)):
        got = translator.caps_graph(source, {"max_len_ratio": ratio, "max_len_offset": offset,
                                             "max_len": max_len}).numpy()
        assert got.tolist() == length_caps(source, max_len, ratio, offset).tolist()


def test_length_buckets_cover_every_length():
    lengths = [3, 3, 4, 5, 7, 9, 10, 30]
    buckets = scoring.length_buckets(lengths)
    assert buckets[0][0] == 3 and buckets[-1][1] == 30
    for (_, high), (low, _) in itertools.pairwise(buckets):
        assert low == high + 1
    assert sum(any(lo <= n <= hi for lo, hi in buckets) for n in lengths) == len(lengths)


def test_train_filter_counts(tmp_path):
    data = translation_config.TranslationDataConfig(max_source_len=3, max_target_len=4)
    split = Split("train", [
        {"source": "a b", "target": "x"}, {"source": "a b c d", "target": "x"},
        {"source": "a b", "target": "x"}, {"source": "a", "target": "1 2 3 4 5"},
        {"source": "c", "target": "y"}], "mem", "", counts={"read": 5})
    translation_data.filter_train(split, [2, 4, 2, 1, 1], [1, 1, 1, 5, 0], data, seed=0)
    assert [p["source"] for p in split.items] == ["a b"]
    assert split.counts["too_long"] == 2 and split.counts["duplicates"] == 1
    assert split.counts["empty_after_tokenizing"] == 1


def test_hub_dataset_splits(monkeypatch):
    datasets = pytest.importorskip("datasets")
    rows = [{"en": "i like tea", "zh": "我喜欢茶"}, {"en": "she buys fish", "zh": "她买鱼"}]
    loaded = datasets.DatasetDict({
        "train": datasets.Dataset.from_dict({"translation": rows * 2}),
        "test": datasets.Dataset.from_dict({"translation": rows[:1]})})
    calls = []
    monkeypatch.setattr(datasets, "load_dataset",
                        lambda name, config=None: calls.append((name, config)) or loaded)
    data = translation_config.TranslationDataConfig(
        train="hub:toy/en-zh", hub_config="en-zh", source_lang="zh", target_lang="en")
    splits = translation_data.load_splits(data, seed=0)
    assert calls == [("toy/en-zh", "en-zh")]
    assert set(splits) == {"train", "test"}  # no validation split: carved later
    assert [p["source"] for p in splits["train"].items] == ["我喜欢茶", "她买鱼"] * 2
    assert splits["test"].items[0]["target"] == "i like tea"
    assert splits["train"].items[3]["where"] == "hub:toy/en-zh[train][3]"


def test_config_format_choices_are_per_task():
    cfg = config_lib.load_config("translation", None, ["data.format=parallel"])
    assert cfg.data.format == "parallel"
    assert config_lib.load_config("sentiment", None, ["data.format=csv"]).data.format == "csv"
    from elman.errors import UserError

    with pytest.raises(UserError, match="'data.format' must be one of auto, "):
        config_lib.load_config("translation", None, ["data.format=csv"])
    preset = config_lib.load_config("translation", config_lib.preset_path(
        "translation", "tatoeba-fra"))
    assert preset.target_tokenizer.level == "subword" and not preset.eval.lowercase
    assert not preset.target_tokenizer.lowercase and preset.eval.beam_widths == (1, 4, 8)


# ------------------------------------------------------------------------ user errors


def assert_one_clear_error(capsys, args, *needles):
    code = cli.main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("elman: error:")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_empty_side_is_an_error_with_file_and_line(tmp_path, capsys):
    path = write_tsv(tmp_path / "pairs.tsv", [("i like tea", "我喜欢茶"), ("you like fish", " ")])
    assert_one_clear_error(capsys, ["train", "translation", "--data", path, "--out",
                                    tmp_path / "run"], "pairs.tsv:2", "empty target text")
    path.write_text("i like tea\t我喜欢茶\n\t你喜欢鱼\n", encoding="utf-8")
    assert_one_clear_error(capsys, ["train", "translation", "--data", path, "--out",
                                    tmp_path / "run"], "pairs.tsv:2", "empty source text")


def test_aligned_files_of_different_lengths(tmp_path, capsys):
    (tmp_path / "train.en").write_text("i like tea\nyou like fish\nhe buys rice\n",
                                       encoding="utf-8")
    (tmp_path / "train.zh").write_text("我喜欢茶\n你喜欢鱼\n", encoding="utf-8")
    assert_one_clear_error(capsys, ["train", "translation", "--data",
                                    f"{tmp_path / 'train.en'},{tmp_path / 'train.zh'}",
                                    "--out", tmp_path / "run"],
                           "train.en:3", "3 lines", "2", "aligned")
    # the prefix form names the files by language
    assert_one_clear_error(capsys, ["train", "translation", "--data", tmp_path / "train",
                                    "--set", "data.format=parallel", "--out", tmp_path / "r"],
                           "train.en:3")


def test_translate_errors(tmp_path, capsys, trained):
    assert_one_clear_error(capsys, ["translate", tmp_path / "nowhere", "hello"],
                           "run folder not found")
    assert_one_clear_error(capsys, ["translate", trained["run"], "   "], "text 1 is empty")
    assert_one_clear_error(capsys, ["translate", trained["run"], "--beam", "-2", "hi"],
                           "--beam")
