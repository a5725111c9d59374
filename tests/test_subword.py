"""Subword tokenization (`level = "subword"`): round trips in English, French and Chinese,
a vocabulary learned from the training split alone, the layer saved and loaded in safe
mode, and a cased subword translator end to end (report, translate, SavedModel)."""

import json
import subprocess
import sys
import unicodedata

import keras
import pytest
import tensorflow as tf

from elman import cli
from elman.config import TokenizerConfig
from elman.tasks.translation import translator
from elman.text.pieces import learn_pieces
from elman.text.subword import SubwordTokenizer, detokenize_pieces, fit_subword
from tests.conftest import ROOT, run_elman

ENGLISH = ["The cat sat on the mat.", "Tom doesn't like cold tea, does he?",
           "We met in Paris in 2019; it rained (a lot).", "Where's my book? It's here!",
           "She said: \"come back at 5 o'clock.\"", "I have 3 apples, 2 pears and 1 fig."]
FRENCH = ["Il est vieux.", "Vas-y\u202f! dit-il.", "« Bonjour », répondit l’élève.",
          "Qu’est-ce que c’est\u00a0?", "Nous avons mangé à 20 h ; c’était très bon.",
          "Peut-être qu’il viendra demain : on verra.", "L’été dernier, j’ai lu 12 livres."]
CHINESE = ["我喜欢喝茶。", "你明天来吗？", "他说：“我不知道。”", "我们在北京见过面，天气很好。",
           "这本书是我的。", "她买了三本书和两支笔！"]


def normalised(text):
    """The text as SentencePiece's nmt_nfkc rule leaves it: NFKC, spaces folded."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def subword_config(**settings):
    return TokenizerConfig(**{"level": "subword", "lowercase": False,
                              "vocabulary_size": 300, **settings})


def mixed_corpus():
    """Training text with every character of the samples, in other sentences too."""
    return (ENGLISH + FRENCH + CHINESE) * 20 + [s.upper() for s in ENGLISH] * 3


@pytest.fixture(scope="module")
def tokenizers():
    corpus = mixed_corpus()
    return {algorithm: fit_subword(subword_config(algorithm=algorithm), corpus,
                                   reserved=("<s>", "</s>"))
            for algorithm in ("unigram", "bpe")}


@pytest.mark.parametrize("algorithm", ["unigram", "bpe"])
def test_ids_round_trip_to_the_normalised_text(tokenizers, algorithm):
    """detokenize(tokenize(x)) == x for normalised x, through the ids and back."""
    tok = tokenizers[algorithm]
    samples = ENGLISH + FRENCH + CHINESE + ["  Tom   est là\u00a0! ", "cat Paris 北京"]
    ids = tok.ragged_ids(tf.constant(samples))
    assert not tf.reduce_any(ids.flat_values == 1), "a sample has an unknown piece"
    pieces = tf.gather(tf.constant(tok.get_vocabulary()), ids)
    assert [t.decode() for t in detokenize_pieces(pieces).numpy()] == [
        normalised(s) for s in samples]
    # the French narrow no-break space before "!" becomes a plain space, the space kept
    assert normalised(FRENCH[1]) == "Vas-y ! dit-il."
    # the same text through the translator's target-side path (as the SavedModel does)
    vocabulary = tok.get_vocabulary()
    end = tf.fill([ids.nrows(), 1], tf.constant(3, tf.int64))
    texts = translator.tokens_to_text(translator.ids_to_tokens(
        tf.concat([ids, end], axis=1).to_tensor(), vocabulary, 2, 3), "subword")
    assert [t.decode() for t in texts.numpy()][:3] == [normalised(s) for s in samples[:3]]


def test_reserved_ids_and_chinese_without_spaces(tokenizers):
    tok = tokenizers["unigram"]
    assert tok.get_vocabulary()[:4] == ["", "[UNK]", "<s>", "</s>"]
    assert tok.vocabulary_size == len(tok.get_vocabulary())
    pieces = tok.split(tf.constant(["我喜欢喝茶。"])).to_list()[0]
    assert "".join(p.decode() for p in pieces) == "\u2581我喜欢喝茶。"
    # a character never seen in training is the unknown id, shown as [UNK]
    ids = tok.ragged_ids(tf.constant(["我喜欢喝咖啡"])).to_list()[0]
    assert 1 in ids


def test_identity_normalization_keeps_full_width_chinese_punctuation():
    """nmt_nfkc folds `？` to `?`; the identity rule keeps the characters as written (the
    Chinese preset's choice), and either rule still folds runs of spaces."""
    corpus = CHINESE * 20 + ENGLISH * 5
    samples = CHINESE + ["  你  明天来吗？ "]
    texts = {}
    for rule in ("nmt_nfkc", "identity"):
        tok = fit_subword(subword_config(normalization=rule, vocabulary_size=120), corpus)
        ids = tok.ragged_ids(tf.constant(samples))
        assert not tf.reduce_any(ids.flat_values == 1), rule
        pieces = tf.gather(tf.constant(tok.get_vocabulary()), ids)
        texts[rule] = [t.decode() for t in detokenize_pieces(pieces).numpy()]
    as_written = [" ".join(s.split()) for s in samples]
    assert texts["identity"] == as_written
    assert texts["identity"][1] == "你明天来吗？" and texts["identity"][-1] == "你 明天来吗？"
    assert texts["nmt_nfkc"] == [normalised(s) for s in samples]
    assert texts["nmt_nfkc"][1] == "你明天来吗?"  # full-width question mark folded
    with pytest.raises(ValueError, match="normalization"):
        learn_pieces(CHINESE, 50, normalization="nfd")


def test_strip_markup_before_learning_and_splitting():
    corpus = [s + "<br /><br />" + t for s, t in zip(ENGLISH, reversed(ENGLISH))] * 20
    tok = fit_subword(subword_config(strip_markup=True, vocabulary_size=150), corpus)
    assert not [p for p in tok.vocabulary[2:] if "<" in p or "br" == p.strip("\u2581")]
    pieces = tok.split(tf.constant(["Tom<br />sat."])).to_list()[0]
    assert "".join(p.decode() for p in pieces).replace("\u2581", " ").strip() == "Tom sat."
    assert SubwordTokenizer.from_config(tok.get_config()).strip_markup


def test_detokenize_pieces_by_hand():
    pieces = tf.ragged.constant([["\u2581Il", "\u2581est", "\u2581vie", "ux", "."],
                                 ["\u2581«", "\u2581Va", "\u2581»", "\u2581!"],
                                 ["\u2581我", "爱", "你", "。"], []])
    assert [t.decode() for t in detokenize_pieces(pieces).numpy()] == [
        "Il est vieux.", "« Va » !", "我爱你。", ""]


def test_learned_vocabulary_depends_only_on_the_training_texts():
    corpus = mixed_corpus()
    first = fit_subword(subword_config(), corpus)
    again = fit_subword(subword_config(), list(corpus))
    assert first.model == again.model  # deterministic: one thread, no sampling
    other = fit_subword(subword_config(), corpus + ["Zebras quickly vexed the judge."] * 30)
    assert other.model != first.model
    lowered = fit_subword(subword_config(lowercase=True), corpus)
    assert all(p == p.lower() for p in lowered.vocabulary[2:])
    assert any(p != p.lower() for p in first.vocabulary[2:])  # case kept when asked


def test_truncation_keeps_first_or_last_pieces(tokenizers):
    tok = tokenizers["unigram"]
    full = tok.ragged_ids(tf.constant([ENGLISH[1]])).to_list()[0]
    cut = SubwordTokenizer.from_config(tok.get_config() | {"max_length": 3})
    assert cut.ragged_ids(tf.constant([ENGLISH[1]])).to_list()[0] == full[:3]
    pre = SubwordTokenizer.from_config(tok.get_config() | {"max_length": 3,
                                                           "truncation": "pre"})
    assert pre.ragged_ids(tf.constant([ENGLISH[1]])).to_list()[0] == full[-3:]
    assert cut.truncation_info([ENGLISH[1], "Tom"]) == [
        {"tokens": len(full), "read": 3, "kept": "first"}, None]
    assert cut(tf.constant(["", "Tom"])).shape[1] >= 1  # never zero positions


def test_layer_saved_in_a_keras_model_loads_in_safe_mode(tokenizers, tmp_path):
    tok = tokenizers["bpe"]
    inputs = keras.Input(shape=(), dtype="string")
    model = keras.Model(inputs, tok(inputs))
    path = tmp_path / "tok.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    texts = tf.constant(FRENCH + CHINESE)
    assert loaded(texts).numpy().tolist() == model(texts).numpy().tolist()
    assert loaded.layers[-1].get_vocabulary() == tok.get_vocabulary()


def test_config_choices_and_ranges(tmp_path, capsys):
    from elman import config as config_lib
    from elman.errors import UserError

    cfg = config_lib.load_config("translation", None, [
        "target_tokenizer.level=subword", "target_tokenizer.algorithm=bpe",
        "eval.beam_widths=[1, 4]", "target_tokenizer.normalization=identity"])
    assert cfg.target_tokenizer.algorithm == "bpe" and cfg.eval.beam_widths == (1, 4)
    assert cfg.target_tokenizer.normalization == "identity"
    assert config_lib.load_config("sentiment", None, [
        "tokenizer.normalization=nfkc"]).tokenizer.normalization == "nfkc"
    for bad in ("target_tokenizer.algorithm=wordpiece", "target_tokenizer.vocabulary_size=3",
                "source_tokenizer.character_coverage=0.5", "eval.beam_widths=[1.5]",
                "target_tokenizer.normalization=nfd"):
        with pytest.raises(UserError):
            config_lib.load_config("translation", None, [bad])


# ------------------------------------------------------------- end to end, translation

SUBJECTS = {"我": "I", "你": "You", "汤姆": "Tom", "玛丽": "Mary"}
VERBS = {"喜欢": "like", "买": "buy"}
OBJECTS = {"茶": "tea", "鱼": "fish", "书": "books", "米饭": "rice"}
CASED = ["--set", "source_tokenizer.level=subword", "--set", "target_tokenizer.level=subword",
         "--set", "source_tokenizer.vocabulary_size=40", "--set",
         "target_tokenizer.vocabulary_size=60", "--set", "target_tokenizer.lowercase=false",
         "--set", "model.units=32", "--set", "model.embedding_dim=32", "--set",
         "train.epochs=25", "--set", "train.batch_size=8", "--set", "train.patience=25",
         "--set", "train.learning_rate=0.01", "--set", "eval.beam_widths=[1, 2]", "--set",
         "eval.heatmaps=1", "--set", "eval.samples=2", "--set", "data.source_lang=zh",
         "--set", "data.target_lang=en",
         # a tiny corpus learns few pieces: English comes out nearly letter by letter
         "--set", "decoding.max_len_ratio=6.0"]


def cased_pairs():
    def verb(s, v):
        return v + "s" if s in ("Tom", "Mary") else v

    return [(s + v + o, f"{es} {verb(es, ev)} {eo}.") for s, es in SUBJECTS.items()
            for v, ev in VERBS.items() for o, eo in OBJECTS.items()]


FRESH_LOAD = r"""
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
import tensorflow_text  # registers SentencepieceOp, which the subword SavedModel uses
served = tf.saved_model.load(sys.argv[1] + "/saved_model")
out = served.serve(tf.constant(json.loads(sys.argv[2])))
print(json.dumps([t.decode("utf-8") for t in out.numpy()], ensure_ascii=False))
"""


@pytest.fixture(scope="module")
def cased_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("subword")
    pairs = cased_pairs()
    for name, rows in (("train", pairs), ("validation", pairs[::3])):
        (root / f"{name}.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in rows),
                                          encoding="utf-8")
    run, reports = root / "run", root / "reports"
    result = run_elman(["train", "translation", "--data", root / "train.tsv", "--validation",
                        root / "validation.tsv", "--out", run, "--reports", reports, *CASED])
    assert result.returncode == 0, result.stderr[-3000:]
    return {"run": run, "report": reports / "translation" / "run", "pairs": pairs}


@pytest.mark.slow  # a 25-epoch training, an export and a fresh process (about 50 s)
def test_cased_subword_translator_end_to_end(cased_run, capsys):
    run, report, pairs = cased_run["run"], cased_run["report"], cased_run["pairs"]
    # the target vocabulary is the one learned from the training targets alone
    saved = json.loads((run / "tokenizers.json").read_text(encoding="utf-8"))
    cfg = subword_config(vocabulary_size=60)
    expected = fit_subword(cfg, [b for _, b in pairs], reserved=("<s>", "</s>"))
    assert SubwordTokenizer.from_config(saved["target"]).model == expected.model

    # case survives the model: the translations of training sources are cased sentences
    sources = [a for a, _ in pairs[:12]]
    assert cli.main(["translate", str(run), *sources]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(sources)
    cased = [t for t in out if t[:1].isupper() and t.endswith(".") and " ." not in t]
    assert len(cased) >= len(sources) * 3 // 4, out
    assert sum(t == b for t, (_, b) in zip(out, pairs[:12])) >= 6, out

    # the SavedModel maps raw strings to the same detokenized strings in a fresh process
    fresh = subprocess.run([sys.executable, "-c", FRESH_LOAD, str(run), json.dumps(sources)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    assert json.loads(fresh.stdout.strip().splitlines()[-1]) == out

    # the report: cased and lower-cased scores, greedy and beam side by side
    metrics = json.loads((report / "metrics.json").read_text(encoding="utf-8"))
    scores = metrics["scores"]
    assert scores["cased"] is True and scores["bleu"] <= scores["bleu_lowercase"] + 1e-9
    beams = metrics["results"]["validation"]["beams"]
    assert [b["beam_width"] for b in beams] == [0, 1, 2]
    assert beams[0]["bleu"] == pytest.approx(scores["bleu"])
    assert beams[1]["bleu"] == pytest.approx(beams[0]["bleu"])  # width 1 is greedy
    md = (report / "report.md").read_text(encoding="utf-8")
    for needle in ("BLEU (cased)", "BLEU, lower-cased", "Greedy and beam search",
                   "translations with an unknown token", "(subword)"):
        assert needle in md, needle
