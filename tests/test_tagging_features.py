"""The tagger's token features (issue 16): character bigrams and word shape.

Oracles: a hand-written table of tokens → shapes; bigram ids worked out by hand from a
toy vocabulary; the Python functions for the TensorFlow ops the SavedModel uses; and
`elman predict --format json` for the exported model loaded in a fresh process.
"""

import json
import random
import re
import subprocess
import sys

import numpy as np
import pytest

from elman import cli
from elman import config as config_lib
from elman.errors import UserError
from elman.tasks.tagging.features import SHAPES, bigram_strings, word_shape
from elman.tasks.tagging.vocab import OOV, PAD, Vocabularies, bigram_list
from tests.conftest import ROOT
from tests.test_tagging_export import ALPHABET, FRESH_LOAD
from tests.test_tagging_task import TINY

SHAPE_TABLE = {
    "paris": "lower", "don't": "lower", "e.g.": "lower", "york-based": "lower",
    "Paris": "title", "York-based": "title", "Don't": "title", "Élysée": "title",
    "ǅemal": "title",  # a title-case first letter
    "NATO": "upper", "U.S.": "upper", "I": "upper", "ÉTÉ": "upper", "Ⅻ": "upper",
    "iPhone": "mixed", "McDonald": "mixed", "O'Neil": "mixed", "eBay": "mixed",
    "2019": "numeric", "3.5": "numeric", "1,000": "numeric", "10%": "numeric",
    "-5": "numeric", "١٢": "numeric",  # Arabic-Indic digits
    "B52": "has_digit", "3rd": "has_digit", "COVID-19": "has_digit", "北京2008": "has_digit",
    ".": "punct", ",": "punct", "--": "punct", "(": "punct", "😀": "punct", "$": "punct",
    "北京": "nocase", "北": "nocase", "ア": "nocase", "كتاب": "nocase", "한국": "nocase",
    "Beijing北京": "title", "北京Beijing": "mixed",  # the first char is not upper-case
}


def test_word_shape_against_a_hand_written_table():
    for token, shape in SHAPE_TABLE.items():
        assert word_shape(token) == shape, token
    assert set(SHAPE_TABLE.values()) == set(SHAPES[1:])  # every category is covered


def _random_tokens(seed, n):
    rng = random.Random(seed)
    pieces = ALPHABET + list(SHAPE_TABLE) + ["\n", "\x85", "²", "ǈ", "ß"]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(n)]


def test_the_shape_ops_of_the_saved_model_equal_word_shape():
    import tensorflow as tf

    from elman.tasks.tagging.features import shape_ids_tf

    tokens = list(SHAPE_TABLE) + _random_tokens(5, 3000)
    got = shape_ids_tf(tf.constant(tokens)).numpy()
    for token, shape in zip(tokens, got):
        assert SHAPES[shape] == word_shape(token), repr(token)


def toy_vocab(lowercase=False):
    bigrams = [PAD, OOV, "<s> 北", "北 京", "京 </s>", "上 海", "<s> a"]
    return Vocabularies([PAD, OOV], [PAD, OOV], ["O"], "none", lowercase=lowercase,
                        bigrams=bigrams, shape=True)


def test_bigram_ids_of_a_toy_sentence_worked_out_by_hand():
    vocab = toy_vocab()
    # 北 京 上 海: "<s> 北" 2, "北 京" 3, "京 上" unknown, "上 海" 5, "海 </s>" unknown
    assert vocab.bigram_ids(["北", "京", "上", "海"]) == [(2, 3), (3, 1), (1, 5), (5, 1)]
    assert vocab.bigram_ids(["北", "京"]) == [(2, 3), (3, 4)]
    assert vocab.bigram_ids(["京"]) == [(1, 4)]  # "<s> 京" unknown, "京 </s>" known
    assert vocab.bigram_ids(["A"]) == [(1, 1)]
    assert toy_vocab(lowercase=True).bigram_ids(["A"]) == [(6, 1)]  # as the words are looked up
    assert bigram_strings(["a", "b"]) == [("<s> a", "a b"), ("a b", "b </s>")]


def test_the_bigram_vocabulary_keeps_train_bigrams_by_count_with_min_count_and_cap():
    train = [{"tokens": list("北京欢迎你")}, {"tokens": list("北京")}, {"tokens": list("上海")}]
    cfg = config_lib.load_config("tagging", overrides=["features.bigrams=true",
                                                       "features.bigram_min_count=2"])
    # seen twice: "<s> 北", "北 京"; everything else once
    assert bigram_list(cfg, train) == [PAD, OOV, "<s> 北", "北 京"]
    cfg = config_lib.load_config("tagging", overrides=["features.bigrams=true",
                                                       "features.bigram_min_count=1",
                                                       "features.max_bigrams=5"])
    assert bigram_list(cfg, train) == [PAD, OOV, "<s> 北", "北 京", "<s> 上"]  # ties by name


def _padded(ragged, width):
    dense = ragged.to_tensor(0).numpy()
    pad = [(0, 0), (0, width - dense.shape[1])] + [(0, 0)] * (dense.ndim - 2)
    return np.pad(dense, pad)


def test_the_saved_model_features_equal_the_python_ones():
    """RawTextTagger (the export's feature graph) against `encode` on varied sentences."""
    import tensorflow as tf

    from elman.models.sequence_tagger import SequenceTagger
    from elman.tasks.tagging.export import RawTextTagger, re2_token_pattern, split_texts
    from elman.tasks.tagging.model import encode
    from elman.text.splitters import split_raw_text

    texts = ["北京欢迎你", "我在北京上海工作", "Alice visited the U.S. in 2019, then 北京。",
             "ACME CORP opened 3 offices in Hong Kong, didn't it?", "iPhone 15 Pro Max",
             "王磊 met Anna Berg in 北京 on 3.5.2019 😀", "x", "COVID-19 hit NEW YORK", "上海",
             "The B52s played 1,000 shows", "ǅemal O'Neil McDonald", "١٢ ½ Ⅻ"]
    rng = random.Random(11)
    texts += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 20)))
              for _ in range(30)]
    texts = [t for t in texts if split_raw_text(t)]
    token_lists = [split_raw_text(t) for t in texts]
    train = [{"tokens": tokens} for tokens in token_lists[::2]]  # half the bigrams known
    for lowercase in (False, True):
        cfg = config_lib.load_config("tagging", overrides=[
            "features.bigrams=true", "features.shape=true", "features.bigram_min_count=1",
            f"vocabulary.lowercase={str(lowercase).lower()}"])
        vocab = Vocabularies(["", "[UNK]", "北"], ["", "[UNK]"], ["O", "B-X", "I-X"], "BIO",
                             lowercase=lowercase, bigrams=bigram_list(cfg, train), shape=True)
        model = SequenceTagger(3, 3, embedding_dim=2, units=2,
                               bigram_vocabulary_size=len(vocab.bigrams), bigram_embedding_dim=2,
                               shape_vocabulary_size=len(SHAPES), shape_embedding_dim=2)
        tagger = RawTextTagger(model, vocab)
        got = tagger._features(split_texts(tf.constant(texts), re2_token_pattern()))
        want, _, _ = encode(vocab, token_lists, with_chars=False)
        width = max(len(t) for t in token_lists)
        assert set(got) == set(want) == {"words", "bigrams", "shapes"}
        for name in want:
            np.testing.assert_array_equal(got[name].numpy(), _padded(want[name], width), name)
        assert (want["bigrams"].flat_values.numpy() > 1).mean() > 0.3  # known ones met


def test_sequence_tagger_with_bigrams_and_shapes_round_trips(tmp_path):
    import keras

    from elman.models.sequence_tagger import SequenceTagger

    keras.utils.set_random_seed(0)
    model = SequenceTagger(9, 3, embedding_dim=4, units=4, head="crf",
                           bigram_vocabulary_size=7, bigram_embedding_dim=3,
                           shape_vocabulary_size=len(SHAPES), shape_embedding_dim=2)
    x = {"words": np.array([[2, 3, 4], [5, 6, 0]], np.int32),
         "bigrams": np.array([[[2, 3], [3, 4], [4, 1]], [[5, 6], [6, 1], [0, 0]]], np.int32),
         "shapes": np.array([[1, 4, 8], [3, 2, 0]], np.int32)}
    assert model.get_layer("word_features").output.shape[-1] == 4 + 2 * 3 + 2
    before = np.asarray(model(x))
    # the bigram and shape ids reach the potentials (not only the word ids)
    changed = {**x, "bigrams": x["bigrams"] % 6 + 1, "shapes": x["shapes"] % 7 + 1}
    assert not np.allclose(before[0], np.asarray(model(changed))[0])
    path = tmp_path / "tagger.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(np.asarray(loaded(x)), before, rtol=1e-6)
    assert loaded.get_config() == model.get_config()
    with pytest.raises(ValueError, match="Expected bigram_vocabulary_size"):
        SequenceTagger(9, 3, bigram_vocabulary_size=0)


@pytest.mark.parametrize("item, needle", [
    ("features.bigrams=maybe", "'features.bigrams' expects a bool"),
    ("features.bigram=true", "unknown setting 'features.bigram'"),
    ("features.shape_dim=0", "features.shape_dim must be between 1 and 16,384; got 0"),
    ("features.bigram_dim=100000", "features.bigram_dim must be between 1 and 16,384"),
    ("features.bigram_min_count=0", "features.bigram_min_count must be at least 1; got 0"),
    ("features.max_bigrams=0", "features.max_bigrams must be at least 1; got 0"),
])
def test_bad_feature_settings_are_refused(item, needle):
    from elman.tasks.tagging.task import TaggingTask

    with pytest.raises(UserError, match=re.escape(needle)):
        TaggingTask().check(config_lib.load_config("tagging", overrides=[item]))


def test_a_bigram_vocabulary_with_nothing_kept_is_one_clear_error(tmp_path, capsys):
    data = ROOT / "data" / "tagging" / "en"
    code = cli.main([str(a) for a in [
        "train", "tagging", "--data", data / "train.conll", "--validation",
        data / "validation.conll", "--out", tmp_path / "run", "--reports", tmp_path / "rep",
        *TINY, "--set", "features.bigrams=true", "--set", "features.bigram_min_count=100000"]])
    assert code == 2
    err = capsys.readouterr().err
    assert "no bigram of the training data is kept" in err and "Traceback" not in err


def test_defaults_leave_the_features_off():
    cfg = config_lib.load_config("tagging")
    assert (cfg.features.bigrams, cfg.features.shape) == (False, False)


def test_the_vocabularies_round_trip_through_the_run_folder(tmp_path):
    vocab = toy_vocab(lowercase=True)
    vocab.save(tmp_path)
    loaded = Vocabularies.load(tmp_path)
    assert (loaded.bigrams, loaded.shape, loaded.lowercase) == (vocab.bigrams, True, True)
    assert loaded.bigram_ids(["A", "北"]) == vocab.bigram_ids(["A", "北"]) == [(6, 1), (1, 1)]
    plain = Vocabularies([PAD, OOV], [PAD, OOV], ["O"], "none")
    folder = tmp_path / "plain"
    folder.mkdir()
    plain.save(folder)
    assert not (folder / "bigrams.txt").exists()
    again = Vocabularies.load(folder)
    assert (again.bigrams, again.shape) == (None, False)


def train_zh_with_features(tmp_path, epochs=1):
    """Trains on data/tagging/zh with both features and adversarial training on; returns
    the run folder."""
    data = ROOT / "data" / "tagging" / "zh"
    run = tmp_path / "run"
    args = ["train", "tagging", "--data", data / "train.txt",
            "--validation", data / "validation.txt", "--out", run,
            "--reports", tmp_path / "reports", *TINY, "--set", f"train.epochs={epochs}",
            "--set", "chars.features=none", "--set", "features.bigrams=true",
            "--set", "features.bigram_dim=4", "--set", "features.shape=true",
            "--set", "features.shape_dim=2", "--set", "embedding.adversarial=0.1"]
    assert cli.main([str(a) for a in args]) == 0
    return run


@pytest.mark.slow  # a CLI training, an export and a fresh process
def test_trained_with_bigrams_and_shape_the_saved_model_tags_like_elman_predict(tmp_path,
                                                                               capsys):
    import elman

    data = ROOT / "data" / "tagging" / "zh"
    run = train_zh_with_features(tmp_path)
    # the bigram vocabulary is train's, min count 2 (the default), nothing from validation
    from elman.tasks.tagging.readers import read_conll

    cfg = config_lib.load_config("tagging", overrides=["features.bigrams=true"])
    train = read_conll(data / "train.txt", scheme=None)
    saved = (run / "bigrams.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert saved == bigram_list(cfg, train) and len(saved) > 50
    settings = json.loads((run / "tagging.json").read_text(encoding="utf-8"))
    assert settings["bigrams"] is True and settings["shape"] is True
    texts = ["苹果公司在北京开设了办公室", "王磊去了上海。", "Mary visited 北京 in 2019",
             "ACME CORP 和 iPhone 15", "x", "张伟在深圳的腾讯公司工作，李娜在杭州。"]
    capsys.readouterr()
    assert cli.main(["predict", str(run), "--format", "json", *texts]) == 0
    expected = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    predictor = elman.load(run)
    assert [p["tags"] for p in predictor.predict(texts)] == [p["tags"] for p in expected]
    assert [t["tags"] for t in predictor.trace(texts)] == [p["tags"] for p in expected]
    metrics = json.loads((tmp_path / "reports" / "tagging" / "run" / "metrics.json")
                         .read_text(encoding="utf-8"))
    assert "no char features + bigrams 2×4 + shape 2 →" in metrics["model"]
    assert "adversarial training ε 0.1" in metrics["model"]
    fresh = subprocess.run([sys.executable, "-c", FRESH_LOAD, str(run), json.dumps(texts)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    served = json.loads(fresh.stdout.strip().splitlines()[-1])
    assert [(s["tokens"], s["tags"]) for s in served] == [
        (p["tokens"], p["tags"]) for p in expected]


@pytest.mark.slow
def test_a_run_with_bigrams_and_shape_resumes(tmp_path, capsys):
    run = train_zh_with_features(tmp_path)
    saved = (run / "bigrams.txt").read_text(encoding="utf-8")
    texts = ["王磊去了上海。", "Mary visited 北京 in 2019"]
    # resume reads the saved vocabularies back and trains on
    assert cli.main([str(a) for a in ["train", "tagging", "--out", run, "--reports",
                                      tmp_path / "reports", "--resume",
                                      "--set", "train.epochs=2"]]) == 0
    assert "resuming after epoch 1" in capsys.readouterr().out
    assert (run / "bigrams.txt").read_text(encoding="utf-8") == saved
    assert cli.main(["predict", str(run), "--format", "json", *texts]) == 0
