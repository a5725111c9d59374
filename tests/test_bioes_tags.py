"""BIOES tags inside the tagger (`head.tags = "BIOES"`): the model learns and predicts
B-/I-/E-/S- tags while files are read and written in their own scheme.

The expected tag sequences below are worked out by hand from the BIOES definition
(an entity's last token E-, a one-token entity S-), not produced by the code under test.
"""

import json

import numpy as np
import pytest

from elman import cli
from elman.tasks.tagging.schemes import from_bio, misfits, split_tag
from elman.tasks.tagging.vocab import OOV, PAD, Vocabularies, tag_list
from tests.conftest import refused_settings
from tests.test_tagging_task import TINY

BIO = ["B-PER", "I-PER", "I-PER", "O", "B-LOC", "B-LOC", "O", "B-PER", "I-PER"]
BIOES = ["B-PER", "I-PER", "E-PER", "O", "S-LOC", "S-LOC", "O", "B-PER", "E-PER"]


def bioes_vocab():
    tags = tag_list([BIO], True, "BIOES")
    return Vocabularies([PAD, OOV, "a"], [PAD, OOV], tags, "BIO", encoding="BIOES")


def test_the_tag_set_and_the_conversions_by_hand():
    assert tag_list([BIO], True, "BIOES") == ["O", "B-LOC", "I-LOC", "E-LOC", "S-LOC",
                                               "B-PER", "I-PER", "E-PER", "S-PER"]
    assert tag_list([BIO], True) == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    vocab = bioes_vocab()
    assert vocab.model_tags(BIO) == BIOES
    ids = [vocab.tags.index(t) for t in BIOES]
    assert vocab.tag_names(ids) == BIO
    # a BIO model's vocabulary leaves the tags alone both ways
    plain = Vocabularies([PAD, OOV], [PAD, OOV], tag_list([BIO], True), "BIO")
    assert plain.model_tags(BIO) == BIO
    assert plain.tag_names([plain.tags.index(t) for t in BIO]) == BIO
    # free labels (POS) are never converted
    free = Vocabularies([PAD, OOV], [PAD, OOV], ["NOUN", "S-X"], "none", encoding="BIOES")
    assert free.model_tags(["S-X"]) == ["S-X"] and free.tag_names([1]) == ["S-X"]


def test_the_encoded_targets_are_the_bioes_ids():
    from elman.tasks.tagging.model import encode

    vocab = bioes_vocab()
    tokens = [["a"] * len(BIO), ["a", "a"]]
    _, targets, lengths = encode(vocab, tokens, False, [BIO, ["O", "B-LOC"]])
    expected = [[5, 6, 7, 0, 4, 4, 0, 5, 7], [0, 4]]  # indices in the hand-written tag set
    assert [list(r) for r in targets.to_list()] == expected and list(lengths) == [9, 2]


def test_the_vocabularies_keep_the_encoding(tmp_path):
    vocab = bioes_vocab()
    vocab.save(tmp_path)
    again = Vocabularies.load(tmp_path)
    assert again.encoding == "BIOES" and again.tags == vocab.tags
    settings = json.loads((tmp_path / "tagging.json").read_text(encoding="utf-8"))
    del settings["encoding"]  # a run folder written before the setting reads as BIO
    (tmp_path / "tagging.json").write_text(json.dumps(settings), encoding="utf-8")
    assert Vocabularies.load(tmp_path).encoding == "BIO"


@pytest.mark.parametrize("sets,needle", [
    (["head.tags=BIOES", "head.constraint=BIO"], "does not fit the model's tags"),
    (["head.constraint=BIOES"], "does not fit the model's tags"),
    (["head.tags=BIOES", "head.type=softmax", "head.constraint=BIOES"], "CRF head only"),
    (["head.tags=BIOSE"], "head.tags"),
])
def test_bad_settings_are_one_clear_error(tmp_path, capsys, sets, needle):
    assert needle in refused_settings(tmp_path, capsys, "tagging", sets)


def test_free_tags_refuse_bioes(tmp_path, capsys):
    train = tmp_path / "pos.conll"
    train.write_text("the\tDET\ncat\tNOUN\n\na\tDET\ndog\tNOUN\n", encoding="utf-8")
    code = cli.main(["train", "tagging", "--data", str(train), "--out", str(tmp_path / "run"),
                     "--set", "data.scheme=none", "--set", "head.tags=BIOES", *TINY])
    err = capsys.readouterr().err
    assert code == 2 and "free labels" in err and "Traceback" not in err


@pytest.mark.parametrize("head", ["crf", pytest.param("softmax", marks=pytest.mark.slow)])
def test_a_bioes_run_learns_bioes_and_serves_bio(tmp_path, capsys, head):
    """Trained on the toy English BIO files with BIOES tags inside: the tag set is
    BIOES, the CRF's paths are valid BIOES, the run predicts E- and S- tags, and the
    SavedModel (which reads the tags back to BIO in the graph) tags raw text exactly as
    the Python predictor (which reads them back in Python) does."""
    import tensorflow as tf

    import elman

    run, reports = tmp_path / "run", tmp_path / "reports"
    args = ["train", "tagging", "--out", str(run), "--reports", str(reports), *TINY,
            "--set", "head.tags=BIOES", "--set", f"head.type={head}",
            "--set", "train.epochs=5", "--set", "train.learning_rate=0.02",
            "--set", "encoder.units=16"]
    assert cli.main(args) == 0, capsys.readouterr().err
    tags = (run / "tags.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert tags == ["O"] + [f"{p}-{t}" for t in ("LOC", "MISC", "ORG", "PER") for p in "BIES"]
    metrics = json.loads((reports / "tagging" / "run" / "metrics.json").read_text())
    assert "over BIOES tags" in metrics["model"]
    assert metrics["results"]["validation"]["scores"]["f1"] > 0.5  # it learned something

    predictor = elman.load(run)
    texts = ["Mary visited Paris .", "Acme Corp opened an office in New York .",
             "David Silva works for Bank of China .", "I ate an apple in the park .",
             "Wang Lei met Tom in Hong Kong .", "Lima"]
    traced = predictor.trace(texts)
    model_tags = [[s["model_tag"] for s in t["steps"]] for t in traced]
    seen = {split_tag(t)[0] for row in model_tags for t in row}
    assert {"E", "S"} <= seen  # the run really predicts BIOES tags
    if head == "crf":  # the constraints allow valid BIOES paths only
        assert all(misfits(row, "BIOES") == [] for row in model_tags)
    # read back by prefix (E- as I-, S- as B-), then written as BIO files are: a stray
    # I-X (a softmax head's E-X after O) begins an entity
    bio = [from_bio([{"E": "I", "S": "B"}.get(t[0], t[0]) + t[1:] for t in row], "BIO")
           for row in model_tags]
    assert [t["tags"] for t in traced] == bio
    assert [p["tags"] for p in predictor.predict(texts)] == bio

    loaded = tf.saved_model.load(str(run / "saved_model"))  # kept: serve needs its variables
    served = loaded.serve(tf.constant(texts))
    lengths = served["lengths"].numpy()
    got = [[t.decode() for t in row[:n]] for row, n in zip(served["tags"].numpy(), lengths)]
    assert got == bio
    assert np.all(lengths == [len(t["tokens"]) for t in traced])
