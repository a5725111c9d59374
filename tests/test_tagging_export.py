"""The tagger's raw-text SavedModel (issue 14): splitting, scheme rendering and tags.

Oracles: Python's `split_raw_text` (a `re` pattern) for the TensorFlow splitter, the
list-based `schemes.from_bio` for the tensor scheme rendering, and `elman predict
--format json` (Python splitting, vocabulary dicts, length-sorted batches) for the
exported model loaded in a fresh process.
"""

import json
import random
import subprocess
import sys

import pytest

from elman import cli
from elman.tasks.tagging import schemes as tag_schemes
from elman.text.splitters import split_raw_text
from tests.conftest import ROOT
from tests.test_tagging_task import TINY, make_sentences, write_conll

# Latin, digits with separators, abbreviations, apostrophes, CJK, kana, Hangul,
# Arabic-Indic digits, a combining mark, an emoji, Unicode spaces (no-break, ideographic,
# line separator) and the control chars the exporter uses internally.
ALPHABET = (list("abcXYZ019 .,'’-_\t\n$%") +
            ["\u00a0", "\u3000", "\u2028", "é", "ß", "İ", "ǅ", "北", "京", "。", "，", "ア",
             "あ", "한", "\U00020001", "١", "٢", "Ⅻ", "½", "\u0301", "😀", "\x1f", "\x02",
             "U.S.", "e.g.", "3.5", "1,000", "don't", "York-based"])


def test_the_tensorflow_splitter_equals_split_raw_text():
    import tensorflow as tf

    from elman.tasks.tagging.export import re2_token_pattern, split_texts

    rng = random.Random(7)
    texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 24)))
             for _ in range(2000)]
    texts += ["Alice visited the U.S. in 2019, then 北京。", "服务慢，但味道很好", ""]
    got = split_texts(tf.constant(texts), re2_token_pattern()).to_list()
    for text, tokens in zip(texts, got):
        assert [t.decode("utf-8") for t in tokens] == split_raw_text(text), repr(text)


def _random_bio(rng, length):
    tags = []
    for _ in range(length):
        kind = rng.choice("AB")
        tags.append(rng.choice(["O", f"B-{kind}", f"I-{kind}", f"I-{kind}"]))
    return tags


@pytest.mark.parametrize("scheme", ["BIO", "IOB1", "BIOES", "none"])
def test_scheme_rendering_in_the_graph_equals_from_bio(scheme):
    import tensorflow as tf

    from elman.tasks.tagging.export import render_scheme

    rng = random.Random(3)
    rows = [_random_bio(rng, 9) for _ in range(400)]  # stray I- tags included
    got = render_scheme(tf.constant(rows), scheme).numpy()
    for row, out in zip(rows, got):
        expected = row if scheme == "none" else tag_schemes.from_bio(row, scheme)
        assert [t.decode() for t in out] == expected, row


FRESH_LOAD = r"""
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
served = tf.saved_model.load(sys.argv[1] + "/saved_model")
out = served.serve(tf.constant(json.loads(sys.argv[2])))
rows = []
for tokens, tags, n in zip(out["tokens"].numpy(), out["tags"].numpy(), out["lengths"].numpy()):
    rows.append({"tokens": [t.decode() for t in tokens[:n]], "tags": [t.decode() for t in tags[:n]],
                 "padding": [t.decode() for t in tags[n:]]})
print(json.dumps(rows, ensure_ascii=False))
"""


@pytest.mark.parametrize("chars,scheme", [
    ("lstm", "BIOES"), pytest.param("none", "BIO", marks=pytest.mark.slow)])
def test_the_saved_model_tags_raw_text_like_elman_predict(tmp_path, capsys, chars, scheme):
    data = {name: write_conll(tmp_path / f"{name}.conll", make_sentences(n, seed), scheme)
            for name, n, seed in (("train", 40, 1), ("validation", 10, 2))}
    run = tmp_path / "run"
    assert cli.main([str(a) for a in [
        "train", "tagging", "--data", data["train"], "--validation", data["validation"],
        "--out", run, "--reports", tmp_path / "reports", *TINY,
        "--set", f"chars.features={chars}", "--set", "vocabulary.lowercase=true"]]) == 0
    assert (run / "saved_model" / "saved_model.pb").is_file()
    assert not (tmp_path / "run" / "saved_model.tmp").exists()
    texts = ["Mary visited Paris.", "ACME CORP opened an office in Hong Kong, didn't it?",
             "王磊 met Anna Berg in 北京 on 3.5.2019 😀", "x", "Tom",
             "An unusually long sentence where Wang Lei works for Google in New York "
             "and David Silva met Mary in Lima ."]
    capsys.readouterr()
    assert cli.main(["predict", str(run), "--format", "json", *texts]) == 0
    expected = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    fresh = subprocess.run([sys.executable, "-c", FRESH_LOAD, str(run), json.dumps(texts)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    served = json.loads(fresh.stdout.strip().splitlines()[-1])
    assert len(served) == len(texts)
    for want, got in zip(expected, served):
        assert got["tokens"] == want["tokens"]
        assert got["tags"] == want["tags"]
        assert set(got["padding"]) <= {""}
    if scheme == "BIOES":  # the run's scheme comes back, not the model's BIO
        assert any(t[:2] in ("S-", "E-") for row in served for t in row["tags"])
