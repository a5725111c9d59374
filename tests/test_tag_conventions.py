"""The tag conventions of real corpora: BIO, IOB1, BIOS (B/I/S without E), BIOES, BMES,
read without `--repair-bio` from character-per-line files split by a tab or spaces.

Every corpus here is synthetic and written by the test: tiny Chinese "sentences" whose
entities are drawn from short name lists.
"""

import json
import random
from fractions import Fraction

import pytest

from elman import cli
from elman.errors import UserError
from elman.tasks.tagging import schemes as tag_schemes
from elman.tasks.tagging.metrics import evaluate_tagging
from elman.tasks.tagging.json_records import read_jsonl
from elman.tasks.tagging.readers import read_conll
from tests.test_tagging_task import read_conll_columns

SCHEMES = ["BIO", "IOB1", "BIOS", "BIOES", "BMES"]
TINY = ["--set", "embedding.dim=8", "--set", "encoder.units=8", "--set", "chars.features=none",
        "--set", "train.batch_size=8", "--set", "train.epochs=2"]
NAMES = {"NAME": ["张三", "李", "王小明"], "ORG": ["华为公司", "北大"], "LOC": ["京"]}
FILLER = ["我", "在", "工", "作", "，", "是", "的", "。"]


def random_bio(rng, length, types=("PER", "LOC")):
    """Well-formed BIO tags with entities of 1 to 3 tokens, adjacent ones included."""
    tags, position = ["O"] * length, 0
    while position < length:
        if rng.random() < 0.4:
            position += 1
            continue
        end = min(length, position + rng.randint(1, 3))
        type_ = rng.choice(types)
        tags[position:end] = [f"B-{type_}"] + [f"I-{type_}"] * (end - position - 1)
        position = end
    return tags


def char_sentences(n, seed):
    """Character-per-line sentences as (chars, BIO tags)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        chars, tags = [], []
        for _ in range(rng.randint(2, 4)):
            if rng.random() < 0.5:
                type_ = rng.choice(sorted(NAMES))
                name = rng.choice(NAMES[type_])
                chars += list(name)
                tags += [f"B-{type_}"] + [f"I-{type_}"] * (len(name) - 1)
            else:
                chars.append(rng.choice(FILLER))
                tags.append("O")
        out.append((chars, tags))
    return out


def write_columns(path, sentences, scheme, separator="\t"):
    lines = []
    for chars, tags in sentences:
        written = tag_schemes.from_bio(tags, scheme)
        lines += [f"{c}{separator}{t}" for c, t in zip(chars, written)] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("scheme", SCHEMES)
def test_round_trips_of_random_valid_sequences(scheme):
    rng = random.Random(7)
    for _ in range(300):
        bio = random_bio(rng, rng.randint(0, 10))
        tags = tag_schemes.from_bio(bio, scheme)
        assert tag_schemes.to_bio(tags, scheme) == bio
        assert tag_schemes.from_bio(tag_schemes.to_bio(tags, scheme), scheme) == tags
        assert tag_schemes.bio_spans(tags) == tag_schemes.bio_spans(bio)
        assert tag_schemes.misfits(tags, scheme) == []
        for tag in tags:
            tag_schemes.split_tag(tag, scheme)  # only the scheme's own prefixes


def test_how_each_scheme_writes_one_sentence():
    bio = ["B-PER", "I-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC"]
    assert tag_schemes.from_bio(bio, "BIOS") == [
        "B-PER", "I-PER", "I-PER", "O", "S-LOC", "B-LOC", "I-LOC"]
    assert tag_schemes.from_bio(bio, "BMES") == [
        "B-PER", "M-PER", "E-PER", "O", "S-LOC", "B-LOC", "E-LOC"]
    assert tag_schemes.normalize_scheme("bmes") == "BMES"
    with pytest.raises(ValueError, match="not a valid BIOS tag"):
        tag_schemes.split_tag("E-PER", "BIOS")
    with pytest.raises(ValueError, match="not a valid BMES tag"):
        tag_schemes.split_tag("I-PER", "BMES")


@pytest.mark.parametrize("tags, expected", [
    ([["O", "O"], []], "BIO"),  # fits every scheme: the simplest
    ([["B-PER", "I-PER", "O", "B-LOC"]], "BIO"),
    ([["I-PER", "I-PER", "O", "I-LOC", "B-LOC"]], "IOB1"),
    ([["S-PER", "O", "B-LOC", "I-LOC", "I-LOC"]], "BIOS"),
    ([["S-PER", "O"], ["S-LOC"]], "BIOS"),  # singles only: BIOS before BIOES
    ([["S-PER", "O", "B-LOC", "E-LOC"]], "BIOES"),  # no I-/M-: BIOES before BMES
    ([["S-PER", "O", "B-LOC", "I-LOC", "E-LOC"]], "BIOES"),
    ([["S-PER", "O", "B-LOC", "M-LOC", "E-LOC"]], "BMES"),
    ([["B-PER", "I-PER"], ["S-LOC"]], "BIOS"),  # S- in another sentence
    ([["I-ORG", "I-ORG", "O", "S-LOC"], ["B-ORG", "I-ORG"]], "BIOS"),  # starts inside
])
def test_detection_takes_the_simplest_scheme_that_fits(tags, expected):
    assert tag_schemes.detect_scheme(tags) == expected
    assert tag_schemes.detect_scheme(list(reversed(tags))) == expected  # order-free


def test_detection_on_character_per_line_files(tmp_path):
    sentences = char_sentences(12, 1) + [(["京"], ["B-LOC"])]  # a one-character entity
    for scheme in SCHEMES:
        stats = {}
        path = write_columns(tmp_path / f"{scheme}.txt", sentences, scheme)
        read = read_conll(path, scheme="auto", stats=stats)
        assert stats["scheme"] == scheme and "ill_formed_tags" not in stats
        assert [s["tags"] for s in read] == [tags for _, tags in sentences]  # BIO inside
        assert [s["tokens"] for s in read] == [chars for chars, _ in sentences]


def test_a_sentence_may_begin_inside_an_entity(tmp_path):
    # a corpus that cut a sentence in the middle of an organisation name (Resume NER does)
    text = "司\tI-ORG\n长\tO\n\n华\tB-ORG\n为\tI-ORG\n京\tS-LOC\n"
    stats = {}
    read = read_conll(_write(tmp_path, "cut.txt", text), scheme="auto", stats=stats)
    assert stats["scheme"] == "BIOS" and stats["continued_entities"] == 1
    assert read[0]["tags"] == ["B-ORG", "O"]
    assert "repaired_tags" not in stats and "ill_formed_tags" not in stats
    stats = {}
    read = read_conll(_write(tmp_path, "cut.bio", "a I-X\nb I-X\nc O\n"), stats=stats)
    assert read[0]["tags"] == ["B-X", "I-X", "O"] and stats["continued_entities"] == 1
    stats = {}  # --repair-bio turns that I-X into B-X and counts it among its repairs
    read = read_conll(tmp_path / "cut.bio", repair=True, stats=stats)
    assert read[0]["tags"] == ["B-X", "I-X", "O"] and stats["repaired_tags"] == 1
    assert "continued_entities" not in stats
    # but not a dangling entity in BIOES: I- with no E- is still ill-formed
    assert not tag_schemes.starts_inside(["I-X", "O"], "BIOES")
    assert tag_schemes.starts_inside(["M-X", "E-X", "O"], "BMES")


@pytest.mark.parametrize("name, text, line, needles", [
    ("stray.txt", "张\tB-NAME\n三\tI-NAME\n\n在\tO\n京\tI-LOC\n", 5,
     ["'I-LOC' after 'O' does not continue", "repair"]),
    ("mixed.txt", "张\tB-NAME\n三\tM-NAME\n四\tE-NAME\n\n王\tB-NAME\n小\tM-NAME\n"
     "明\tE-NAME\n\n华\tB-ORG\n为\tI-ORG\n司\tE-ORG\n", 10,
     ["'I-ORG' is not a valid BMES tag"]),  # I- in a BMES file
    ("noend.txt", "张\tS-NAME\n\n华\tB-ORG\n为\tE-ORG\n\n王\tB-NAME\n在\tO\n", 6,
     ["'B-NAME' at the start is not valid BIOES", "'S-NAME'"]),
])
def test_a_file_no_scheme_fits_is_an_error_with_file_and_line(tmp_path, name, text, line,
                                                               needles):
    path = _write(tmp_path, name, text)
    with pytest.raises(UserError) as caught:
        read_conll(path, scheme="auto")
    assert caught.value.line == line and str(caught.value).startswith(f"{path}:{line}:")
    for needle in needles:
        assert needle in caught.value.message


def test_entity_f1_does_not_depend_on_the_scheme(tmp_path):
    rng = random.Random(3)
    gold = [random_bio(rng, rng.randint(1, 9)) for _ in range(60)]
    predicted = [tags if rng.random() < 0.5 else random_bio(rng, len(tags)) for tags in gold]
    results = {}
    for scheme in SCHEMES:
        rows = [(list("字" * len(g)), g) for g in gold]
        path = write_columns(tmp_path / f"gold_{scheme}.txt", rows, scheme, separator=" ")
        read = read_conll(path, scheme=scheme)
        g = [tag_schemes.from_bio(s["tags"], scheme) for s in read]
        p = [tag_schemes.from_bio(tags, scheme) for tags in predicted]
        score = evaluate_tagging(g, p)
        entities = [tag_schemes.bio_spans(tags) for tags in g]
        results[scheme] = (score.f1, score.precision, score.recall, score.per_type, entities)
    assert 0 < results["BIO"][0] < 1
    assert all(results[scheme] == results["BIO"] for scheme in SCHEMES)


@pytest.mark.parametrize("text", [
    "北\tB-LOC\n京\tI-LOC\n\u3000\tO\n是\tO\n",  # tab; a full-width space is a token
    "北 B-LOC\n京  I-LOC\n\u3000 O\n是 O\n",  # one or more spaces
    "北\t B-LOC\n京 \tI-LOC\n\u3000\tO \n是\tO\r\n",  # mixed, trailing blanks, CRLF
])
def test_character_per_line_columns_by_tab_or_space(tmp_path, text):
    read = read_conll(_write(tmp_path, "zh.txt", text), scheme="auto")
    assert read == [{"tokens": ["北", "京", "\u3000", "是"],
                     "tags": ["B-LOC", "I-LOC", "O", "O"],
                     "source": f"{tmp_path / 'zh.txt'}:1"}]
    nbsp = read_conll(_write(tmp_path, "nbsp.txt", "a\tO\n\u00a0\tO\n"))
    assert nbsp[0]["tokens"] == ["a", "\u00a0"]


def test_an_ascii_space_token_is_refused_with_a_hint(tmp_path):
    path = _write(tmp_path, "space.txt", "北\tB-LOC\n \tO\n京\tS-LOC\n")
    with pytest.raises(UserError) as caught:
        read_conll(path)
    assert caught.value.line == 2
    assert "Expected 2 columns like line 1, found 1" in caught.value.message
    assert "U+3000" in caught.value.message
    path = _write(tmp_path, "plain.txt", "北\tB-LOC\n京\n")  # no leading blank: no hint
    with pytest.raises(UserError) as caught:
        read_conll(path)
    assert "U+3000" not in caught.value.message


def test_jsonl_with_bios_tags(tmp_path):
    rows = [{"text": list("王小明在北大"), "label": ["B-NAME", "I-NAME", "I-NAME", "O",
                                                 "B-ORG", "I-ORG"]},
            {"text": list("李在京"), "label": ["S-NAME", "O", "S-LOC"]}]
    path = _write(tmp_path, "zh.jsonl", "\n".join(json.dumps(r, ensure_ascii=False)
                                                   for r in rows))
    stats = {}
    read = read_jsonl(path, tokens_key="text", tags_key="label", scheme="auto", stats=stats)
    assert stats["scheme"] == "BIOS" and read[1]["tags"] == ["B-NAME", "O", "B-LOC"]
    # the keys guessed: `text`/`label` as the real corpus writes them, no settings needed
    guessed = read_jsonl(path, scheme="auto", guess_keys=True)
    assert [s["tokens"] for s in guessed] == [r["text"] for r in rows]
    assert [s["tags"] for s in guessed] == [s["tags"] for s in read]
    with pytest.raises(UserError, match="Missing key 'tokens'"):  # only when asked to
        read_jsonl(path, scheme="auto")
    # a later record must have the keys the first one had
    bad = _write(tmp_path, "bad.jsonl", json.dumps(rows[0], ensure_ascii=False) + "\n"
                 + json.dumps({"tokens": ["李"], "tags": ["O"]}))
    with pytest.raises(UserError, match="Missing key 'text'") as caught:
        read_jsonl(bad, scheme="auto", guess_keys=True)
    assert caught.value.line == 2


def test_jsonl_keys_guessed_in_a_training_run(tmp_path):
    """`elman train tagging` on `{"text", "label"}` files with B/I/S tags and no settings."""
    rng = random.Random(3)
    lines = {}
    for split, count in (("train", 60), ("validation", 12)):
        rows = []
        for _ in range(count):
            kind = rng.choice(sorted(NAMES))
            name = rng.choice(NAMES[kind])
            tags = (["S-" + kind] if len(name) == 1
                    else ["B-" + kind] + ["I-" + kind] * (len(name) - 1))
            rows.append({"text": list(name) + ["在", "工", "作"], "label": tags + ["O"] * 3})
        lines[split] = _write(tmp_path, f"{split}.jsonl", "\n".join(
            json.dumps(r, ensure_ascii=False) for r in rows))
    out = tmp_path / "run"
    code = cli.main(["train", "tagging", "--data", str(lines["train"]), "--validation",
                     str(lines["validation"]), "--out", str(out), "--reports",
                     str(tmp_path / "reports"), *TINY])
    assert code == 0
    run = json.loads((out / "run.json").read_text())
    assert "BIOS" in json.dumps(run)


@pytest.mark.parametrize("scheme", ["BIOS", "BMES"])
def test_scheme_rendering_in_the_graph_equals_from_bio(scheme):
    import tensorflow as tf

    from elman.tasks.tagging.export import render_scheme

    rng = random.Random(5)
    rows = [random_bio(rng, 8) for _ in range(200)]
    rows += [["O", "I-PER", "I-LOC", "I-LOC", "B-LOC", "O", "I-PER", "O"]]  # stray I- tags
    got = render_scheme(tf.constant(rows), scheme).numpy()
    for row, out in zip(rows, got):
        assert [t.decode() for t in out] == tag_schemes.from_bio(row, scheme), row


def test_the_scheme_is_detected_on_all_given_files(tmp_path):
    from elman import config as config_lib
    from elman.tasks.tagging.data import load_splits

    # train alone is BIO (no one-character entity); the test file's S- single makes the
    # corpus BIOS, and the test file is read without an error or --repair-bio
    train = _write(tmp_path, "train.txt", "王\tB-NAME\n小\tI-NAME\n明\tI-NAME\n在\tO\n")
    test = _write(tmp_path, "test.txt", "李\tS-NAME\n在\tO\n")
    assert tag_schemes.detect_scheme([s["tags"] for s in read_conll(train, scheme=None)]) == "BIO"
    cfg = config_lib.load_config("tagging", None, [], extra={"data": {
        "train": str(train), "validation": str(train), "test": str(test)}})
    splits, scheme = load_splits(cfg.data)
    assert scheme == "BIOS"
    assert splits["train"].items[0]["tags"] == ["B-NAME", "I-NAME", "I-NAME", "O"]
    assert splits["test"].items[0]["tags"] == ["B-NAME", "O"]


@pytest.mark.slow
def test_cli_trains_on_a_bios_character_file_and_writes_bios(tmp_path, capsys):
    train_rows = char_sentences(40, 1) + [(["京"], ["B-LOC"])]
    test_rows = char_sentences(8, 3)
    train = write_columns(tmp_path / "train.txt", train_rows, "BIOS", "\t")
    with train.open("a", encoding="utf-8") as handle:  # a sentence cut inside an entity
        handle.write("\n司\tI-ORG\n在\tO\n")
    validation = write_columns(tmp_path / "validation.txt", char_sentences(8, 2), "BIOS", " ")
    test = write_columns(tmp_path / "test.txt", test_rows, "BIOS", "\t")
    run, reports = tmp_path / "run", tmp_path / "reports"
    code = cli.main([str(a) for a in ["train", "tagging", "--data", train, "--validation",
                                      validation, "--test", test, "--out", run,
                                      "--reports", reports, *TINY]])
    err = capsys.readouterr().err
    assert code == 0, err
    assert json.loads((run / "tagging.json").read_text())["scheme"] == "BIOS"
    report = reports / "tagging" / "run"
    metrics = json.loads((report / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["data"]["train"]["continued_entities"] == 1
    assert metrics["data"]["train"]["repaired_tags"] == 0
    columns = read_conll_columns(report / "predictions_test.conll")
    expected = [tag_schemes.from_bio(tags, "BIOS") for _, tags in test_rows]
    assert [[row[1] for row in s] for s in columns] == expected  # gold written as read
    for sentence in columns:
        predicted = [row[2] for row in sentence]
        for tag in predicted:
            tag_schemes.split_tag(tag, "BIOS")  # no E- ever
        assert tag_schemes.misfits(predicted, "BIOS") == []


def test_validation_f1_each_epoch_and_as_the_monitor(tmp_path):
    """`val_f1` is logged every epoch; with `train.monitor = "val_f1"` the kept epoch is
    the first with the highest one, and the report's validation F1 (scored afresh from
    the saved model's predictions) equals that epoch's logged value."""
    out = tmp_path / "run"
    code = cli.main(["train", "tagging", "--out", str(out), "--reports",
                     str(tmp_path / "reports"), "--set", "train.monitor=val_f1", *TINY,
                     "--set", "train.epochs=3"])
    assert code == 0
    lines = (out / "logs" / "training.csv").read_text().split()
    header = lines[0].split(",")
    f1s = [float(line.split(",")[header.index("val_f1")]) for line in lines[1:]]
    assert len(f1s) == 3 and all(0.0 <= f <= 1.0 for f in f1s)
    metrics = json.loads((tmp_path / "reports" / "tagging" / "run" / "metrics.json")
                         .read_text())
    best = f1s.index(max(f1s)) + 1
    assert metrics["best_epoch"] == best and metrics["history"]["val_f1"] == f1s
    exact = Fraction(metrics["results"]["validation"]["exact"]["f1"])  # entities counted
    assert float(exact) == pytest.approx(f1s[best - 1], abs=1e-12)



@pytest.mark.parametrize("name, text, expected", [
    ("eng.train", "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n", "conll"),
    ("train.char.bmes", "张 B-NAME\n伟 E-NAME\n\n", "conll"),
    ("dev", '{"tokens": ["a"], "tags": ["O"]}\n', "jsonl"),
    ("en_ewt.dev", "# sent_id = 1\n1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n", "conllu"),
    ("notes.train", "Just a line of prose\nthat\n", None),  # "that" has no tag column
])
def test_a_file_named_without_a_known_extension_is_told_by_its_lines(tmp_path, name, text,
                                                                      expected):
    from elman.tasks.tagging import readers

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert readers.sniff_format(path) == expected
    if expected is None:
        with pytest.raises(UserError, match="Cannot tell the format"):
            readers.read_tagged_file(path)
    else:
        assert readers.read_tagged_file(path, **({} if expected == "conllu" else
                                                  {"scheme": "auto"}))[0]["tokens"][0] in (
            "EU", "张", "a", "Hi")
