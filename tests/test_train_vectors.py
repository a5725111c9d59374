"""Word vectors learned on the training texts (`embedding.train_vectors`): what
`elman.core.embed.train_vectors` computes, that it repeats across processes, and that
both tasks start their embedding from it."""

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from elman import cli
from elman.core import embed
from tests.conftest import ROOT, refused_settings

def topic_corpus(n=3000, seed=0):
    """Three-token texts `context word context`: words 2-11 only ever sit between contexts
    22-31, words 12-21 between contexts 32-41. Ids 42-44 never occur."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        words, contexts = ((range(2, 12), range(22, 32)) if rng.random() < 0.5
                           else (range(12, 22), range(32, 42)))
        rows.append([rng.choice(contexts), rng.choice(words), rng.choice(contexts)])
    return rows


CORPUS = topic_corpus()


@pytest.mark.parametrize("method", ["skipgram", "cbow"])
def test_words_sharing_contexts_get_close_vectors_in_their_own_rows(method):
    matrix, coverage = embed.train_vectors(CORPUS, 45, 16, method, epochs=30, window=1,
                                           seed=3)
    assert matrix.shape == (45, 16) and matrix.dtype == np.float32
    assert not matrix[0].any()  # padding
    words = matrix[2:22] / np.linalg.norm(matrix[2:22], axis=1, keepdims=True)
    similar = words @ words.T
    np.fill_diagonal(similar, -np.inf)
    group = np.arange(20) < 10
    assert np.array_equal(group[similar.argmax(1)], group)  # each word's nearest: its group
    centred = matrix[2:22] - matrix[2:42].mean(0)  # without word2vec's shared direction
    centred /= np.linalg.norm(centred, axis=1, keepdims=True)
    cos = centred @ centred.T
    assert (cos[:10, :10].sum() - 10) / 90 > 0.8 and cos[:10, 10:].mean() < 0.2
    # ids 2..41 were learned; 42..44 (never in the texts) and 1 (OOV) start random, small
    assert (coverage.found, coverage.vocabulary, coverage.learned) == (40, 43, True)
    assert np.abs(matrix[42:]).max() < 0.6 < np.linalg.norm(matrix[2])
    assert "word2vec" in coverage.describe() and "40 of 43" in coverage.describe()


def test_padding_ids_are_dropped_and_empty_texts_refused():
    with_padding, _ = embed.train_vectors([row + [0, 0] for row in CORPUS[:300]], 45, 8, seed=1)
    plain, _ = embed.train_vectors(CORPUS[:300], 45, 8, seed=1)
    np.testing.assert_array_equal(with_padding, plain)
    with pytest.raises(embed.UserError, match="no tokens"):
        embed.train_vectors([[0, 0], []], 9, 8)


_IN_A_PROCESS = """
import hashlib, json, sys
from elman.core.embed import train_vectors
matrix, _ = train_vectors(json.loads(sys.argv[1]), 45, 8, "skipgram", 3, 2, int(sys.argv[2]))
print(hashlib.sha256(matrix.tobytes()).hexdigest())
"""


def test_the_vectors_depend_on_the_seed_only_not_on_the_process():
    def digest(hash_seed, seed):
        env = dict(os.environ, PYTHONHASHSEED=str(hash_seed))
        out = subprocess.run([sys.executable, "-c", _IN_A_PROCESS, json.dumps(CORPUS[::10]),
                              str(seed)], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=120, check=True)
        return out.stdout.strip()

    first = digest(1, 5)
    assert first == digest(2, 5)  # string hashing differs between the two processes
    assert first != digest(1, 6)


@pytest.mark.parametrize("task,sets,needle", [
    ("sentiment", ["embedding.train_vectors=skipgram", "embedding.pretrained=v.txt"],
     "set one of them"),
    ("tagging", ["embedding.train_vectors=cbow", "embedding.pretrained=v.txt"],
     "set one of them"),
    ("sentiment", ["embedding.train_vectors=glove"], "embedding.train_vectors"),
    ("tagging", ["embedding.vector_epochs=0"], "at least 1"),
    ("sentiment", ["embedding.vector_window=0"], "at least 1"),
    ("sentiment", ["embedding.vector_max_tokens=0"], "at least 1"),
    ("tagging", ["embedding.vector_max_tokens=0"], "at least 1"),
    ("sentiment", ["embedding.vector_centre=0"], "set embedding.train_vectors"),
    ("tagging", ["embedding.vector_std=0.1"], "set embedding.train_vectors"),
    ("sentiment", ["embedding.train_vectors=skipgram", "embedding.vector_centre=-2"],
     "-1 (off)"),
    ("tagging", ["embedding.train_vectors=skipgram", "embedding.dim=8",
                 "embedding.vector_centre=8"], "below embedding.dim"),
    ("sentiment", ["embedding.train_vectors=skipgram", "embedding.vector_std=-1"],
     "at least 0"),
])
def test_bad_settings_are_one_clear_error(tmp_path, capsys, task, sets, needle):
    assert needle in refused_settings(tmp_path, capsys, task, sets)


def _layer(model, name):
    for layer in model._flatten_layers(include_self=False):
        if layer.name == name:
            return layer
    raise AssertionError(f"no layer {name}")


def test_recentring_removes_the_mean_and_the_leading_direction_then_rescales():
    """Rows c + a_i e1 + b_i e2 (c = (5, 5, 5), a = ±4, b = ±1, both of mean 0): the mean is
    c, the leading direction e1, so what is left is b_i e2; its elements (four ±1 among
    twelve) have sd 1/sqrt(3), so sd 0.5 makes them ±sqrt(3)/2. Row 0 stays zero."""
    a, b = [4, -4, 4, -4], [1, 1, -1, -1]
    matrix = np.array([[0, 0, 0]] + [[5 + ai, 5 + bi, 5] for ai, bi in zip(a, b)], "float32")
    half = np.sqrt(3) / 2
    expected = np.array([[0, 0, 0], [0, half, 0], [0, half, 0], [0, -half, 0],
                         [0, -half, 0]])
    out = embed.recentre_vectors(matrix, components=1, std=0.5)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, atol=1e-6)
    centred = embed.recentre_vectors(matrix)  # the mean only, the scale kept
    np.testing.assert_allclose(centred[1:], matrix[1:] - [5, 5, 5], atol=1e-6)
    assert not centred[0].any()


@pytest.mark.parametrize("task,layer,files,reshape", [
    ("sentiment", "embedding", None, ""),
    ("tagging", "word_embedding", ROOT / "data" / "tagging" / "en" / "train.conll", ""),
    ("sentiment", "embedding", None, "centre"),
    ("tagging", "word_embedding", None, "scale"),
])
def test_the_run_starts_from_the_learned_vectors(tmp_path, monkeypatch, capsys, task, layer,
                                                 files, reshape):
    """A stand-in for word2vec records the id rows it is given and returns a known
    matrix; with the embedding frozen, the saved model's embedding is that matrix, or,
    with `vector_centre = 0` and `vector_std = 0.5`, that matrix centred and rescaled:
    row i (i/1000 + j/1000 in column j, i counted in dims) minus the mean row is the same
    in every column, (i - mean i) * dim / 1000, so scaled to sd 0.5 it is 0.5 (i - mean i)
    / sd(i), i running over 1..n, whose sd is sqrt((n^2 - 1) / 12). With `vector_std = 0.5`
    alone the rows are only rescaled: rows 1.. hold the m = size - dim consecutive values
    dim/1000 .. (size - 1)/1000, whose sd is sqrt((m^2 - 1) / 12) / 1000."""
    import keras

    import elman.models

    seen = {}

    def stand_in(id_rows, vocabulary_size, dim, method, epochs, window, seed, max_tokens):
        seen.update(rows=[list(r) for r in id_rows],
                    args=(method, epochs, window, seed, max_tokens))
        matrix = np.arange(vocabulary_size * dim, dtype=np.float32).reshape(-1, dim) / 1e3
        return matrix, embed.Coverage("stand-in", vocabulary_size - 2, vocabulary_size - 2,
                                      0, True)

    monkeypatch.setattr(embed, "train_vectors", stand_in)
    run = tmp_path / "run"
    args = ["train", task, "--out", str(run), "--reports", str(tmp_path / "reports"),
            "--set", "embedding.train_vectors=cbow", "--set", "embedding.vector_epochs=4",
            "--set", "embedding.vector_window=3", "--set", "embedding.trainable=false",
            "--set", "embedding.vector_max_tokens=12345",
            "--set", "train.epochs=1", "--set", "embedding.dim=8", "--set", "encoder.units=8"]
    if reshape == "centre":
        args += ["--set", "embedding.vector_centre=0"]
    if reshape:
        args += ["--set", "embedding.vector_std=0.5"]
    assert cli.main(args) == 0
    assert seen["args"] == ("cbow", 4, 3, 1234, 12345)
    rows = seen["rows"]
    if files is not None:  # one row per training sentence, one id per token
        text = files.read_text(encoding="utf-8")
        lengths = [len(block.splitlines()) for block in text.strip().split("\n\n")
                   if not block.startswith("-DOCSTART-")]
        assert sorted(len(r) for r in rows) == sorted(lengths)
    assert all(rows) and min(min(r) for r in rows) >= 1
    elman.models.import_all()
    model = keras.saving.load_model(run / "model.keras", safe_mode=True)
    weights = keras.ops.convert_to_numpy(_layer(model, layer).embeddings)
    expected = np.arange(weights.size, dtype=np.float32).reshape(weights.shape) / 1e3
    if not reshape:
        np.testing.assert_array_equal(weights, expected)
        return
    if reshape == "scale":
        m = weights.size - weights.shape[1]
        assert not weights[0].any()
        np.testing.assert_allclose(weights[1:], expected[1:] * 0.5e3 / np.sqrt((m * m - 1) / 12),
                                   rtol=1e-5)
        log = capsys.readouterr().out
        assert "starting vectors scaled to sd 0.5" in log and "centred" not in log
        return
    n = weights.shape[0] - 1
    i = np.arange(1, n + 1)
    column = 0.5 * (i - (n + 1) / 2) / np.sqrt((n * n - 1) / 12)
    assert not weights[0].any()
    np.testing.assert_allclose(weights[1:], np.repeat(column[:, None], 8, axis=1), atol=1e-5)
    assert "starting vectors centred (mean and 0 leading directions removed), scaled to sd " \
        "0.5" in capsys.readouterr().out


def test_a_token_budget_cuts_passes_then_texts():
    rows = CORPUS[:300]  # 300 texts of 3 tokens: 900 tokens a pass
    # 10 passes would read 9,000 tokens; 2,700 allow 3 whole passes, the same as asking 3
    cut, coverage = embed.train_vectors(rows, 45, 8, epochs=10, seed=1, max_tokens=2_700)
    three, plain = embed.train_vectors(rows, 45, 8, epochs=3, seed=1)
    np.testing.assert_array_equal(cut, three)
    assert "3 epochs of 10 asked, within embedding.vector_max_tokens = 2,700" in (
        coverage.describe())
    assert "3 epochs, window" in plain.describe()  # no budget met: nothing said of one
    # 600 tokens: not one pass; one pass over 200 of the 300 texts (600 / 3), seeded
    share, coverage = embed.train_vectors(rows, 45, 8, epochs=10, seed=1, max_tokens=600)
    assert "1 epoch over 200 of the 300 texts" in coverage.describe()
    again, _ = embed.train_vectors(rows, 45, 8, epochs=10, seed=1, max_tokens=600)
    np.testing.assert_array_equal(share, again)
    # a budget the corpus stays within changes nothing
    whole, _ = embed.train_vectors(rows, 45, 8, epochs=10, seed=1, max_tokens=9_000)
    np.testing.assert_array_equal(whole, embed.train_vectors(rows, 45, 8, epochs=10, seed=1)[0])


def test_ragged_rows_and_a_share_of_texts_read_as_the_lists_they_stand_for():
    import tensorflow as tf

    rows = [row + [0] * (i % 3) for i, row in enumerate(CORPUS[:300])] + [[0, 0]]
    ragged = embed.RaggedRows(tf.ragged.constant(rows, dtype=tf.int64))
    as_lists, _ = embed.train_vectors(rows, 45, 8, epochs=4, seed=2)
    np.testing.assert_array_equal(embed.train_vectors(ragged, 45, 8, epochs=4, seed=2)[0],
                                  as_lists)
    # one pass over a seeded share: the 200 texts (of 3 tokens) a seed-2 permutation of
    # the 300 non-empty ones reaches first, in their corpus order
    share, _ = embed.train_vectors(ragged, 45, 8, epochs=10, seed=2, max_tokens=600)
    first = sorted(np.random.default_rng(2).permutation(300)[:200])
    chosen = [CORPUS[i] for i in first]
    np.testing.assert_array_equal(share, embed.train_vectors(chosen, 45, 8, epochs=1,
                                                             seed=2)[0])
