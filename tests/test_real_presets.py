"""The real-corpus presets run unchanged on files of the kind they are meant for.

Issue 16 asks that `ner-en` also work on CoNLL-2003-style files (a `-DOCSTART-` line,
four columns, four entity types), that `ner-zh` read one character per line with a tab
or a space and the B/I/S tags (no E) of real Chinese corpora without `--repair-bio`, and
that the sentiment presets take their kind of files (a `label,review` CSV for Chinese
reviews, the Large Movie Review Dataset's class folders for whole reviews). Each test
writes small files of that kind (our own sentences), trains the preset as shipped with
only the data files and the epoch count changed, and checks the run against the files:
the sentence and entity counts read, the types, and the tags the saved run writes back.
The corpora the presets were tuned on are never opened here.
"""

import json
from collections import Counter

import numpy as np
import pytest

from elman import cli

PEOPLE = ["Anna Berg", "Tomas Lind", "Mei Chen", "Omar Haddad", "Lucia Ferro", "Jon Dale"]
ORGS = ["Nordic Rail", "Blue Harbor Bank", "Kestrel Labs", "Union of Millers"]
PLACES = ["Oslo", "Lake Varn", "New Brandon", "Kessel"]
MISC = ["Norwegian", "Olympic", "Dutch", "Baltic Cup"]
FRAMES = [  # slots filled from the lists above: person, organisation, place, misc
    "{p} joined {o} in {l} .",
    "The {m} team of {o} met {p} .",
    "{p} , a {m} writer , lives in {l} .",
    "{o} opened an office near {l} on Monday .",
]


def _conll2003(sentences):
    """CoNLL-2003 layout: token, POS, chunk, NER; a -DOCSTART- line before each document."""
    lines = []
    for index, tagged in enumerate(sentences):
        if index % 5 == 0:
            lines += ["-DOCSTART- -X- -X- O", ""]
        lines += [f"{word} NN I-NP {tag}" for word, tag in tagged] + [""]
    return "\n".join(lines) + "\n"


def _entity(text, kind):
    words = text.split()
    return [(w, ("B-" if i == 0 else "I-") + kind) for i, w in enumerate(words)]


def _english_sentences(count, offset):
    out = []
    for n in range(count):
        p, o = PEOPLE[(n + offset) % len(PEOPLE)], ORGS[(n + 2 * offset) % len(ORGS)]
        l, m = PLACES[(n + offset) % len(PLACES)], MISC[n % len(MISC)]
        frame = FRAMES[n % len(FRAMES)]
        tagged = []
        for piece in frame.split():
            slot = {"{p}": (p, "PER"), "{o}": (o, "ORG"), "{l}": (l, "LOC"),
                    "{m}": (m, "MISC")}.get(piece)
            tagged += _entity(*slot) if slot else [(piece, "O")]
        out.append(tagged)
    return out


def _train(tmp_path, task, preset, train, dev):
    """`elman train TASK --config PRESET` on the two files, one epoch; returns
    (run folder, the run's metrics.json as a dict, its report folder)."""
    reports, run = tmp_path / "reports", tmp_path / "run"
    assert cli.main(["train", task, "--config", preset, "--data", str(tmp_path / train),
                     "--validation", str(tmp_path / dev), "--out", str(run),
                     "--reports", str(reports), "--set", "train.epochs=1"]) == 0
    return run, _metrics(reports), reports


def _metrics(reports):
    found = list(reports.rglob("metrics.json"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text(encoding="utf-8"))


def _conll_blocks(path):
    blocks, rows = [], []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            rows.append(line.split())
        elif rows:
            blocks.append(rows)
            rows = []
    return blocks + ([rows] if rows else [])


def test_ner_en_reads_conll_2003_files_with_four_types(tmp_path):
    train, dev = _english_sentences(40, 0), _english_sentences(10, 1)
    # a sentence of words seen nowhere else in train: the preset reads them as unknown
    train.append(_entity("Ferdinand Quill", "PER") + [("sketched", "O")]
                 + _entity("Vallory", "LOC") + [(".", "O")])
    # named as CoNLL-2003 names its files: the extension says nothing of the format
    (tmp_path / "eng.train").write_text(_conll2003(train), encoding="utf-8")
    (tmp_path / "eng.testa").write_text(_conll2003(dev), encoding="utf-8")
    run, metrics, reports = _train(tmp_path, "tagging", "ner-en", "eng.train", "eng.testa")
    # the word table: lower-cased training words seen at least twice, after padding and
    # the unknown word (the preset's vocabulary.min_count = 2)
    counts = Counter(w.lower() for s in train for w, _ in s)
    table = (run / "words.txt").read_text(encoding="utf-8").split("\n")
    assert table[:2] == ["", "[UNK]"]
    assert set(w for w in table[2:] if w) == {w for w, c in counts.items() if c >= 2}
    assert "quill" not in table and "sketched" not in table
    # -DOCSTART- lines are document marks, not sentences; every entity of the files counts
    for split, sentences in (("train", train), ("validation", dev)):
        read = metrics["data"][split]
        assert read["sentences"] == len(sentences)
        assert read["tokens"] == sum(len(s) for s in sentences)
        for kind in ("PER", "ORG", "LOC", "MISC"):
            expected = sum(1 for s in sentences for _, t in s if t == "B-" + kind)
            assert read["entities"][kind] == expected, (split, kind)
    # the main score's bootstrap interval: over the dev sentences, around the F1 reported
    interval = metrics["interval"]
    assert (interval["metric"], interval["unit"]) == ("entity F1", "sentences")
    assert interval["units"] == len(dev)
    assert interval["score"] == pytest.approx(metrics["scores"]["f1"])
    assert interval["low"] <= interval["high"]
    report = next(reports.rglob("report.md")).read_text(encoding="utf-8")
    assert f"drawing the {len(dev)} validation sentences again" in report
    from elman.core import intervals

    units = intervals.read_units(next(reports.rglob(interval["units_file"])), "f1")
    assert units.sum(axis=0).tolist() == [metrics["scores"][k] for k in (
        "correct_entities", "predicted_entities", "gold_entities")]
    # the preset's BIOES head over four types, read back as the files' BIO
    assert metrics["scheme"] == "BIO"
    assert len(metrics["tags"]) == 1 + 4 * 4
    written = _conll_blocks(reports.rglob("predictions_validation.conll").__next__())
    assert len(written) == len(dev)
    for rows, gold in zip(written, dev):
        assert [r[0] for r in rows] == [w for w, _ in gold]
        assert [r[1] for r in rows] == [t for _, t in gold]
        assert all(r[2] == "O" or r[2][:2] in ("B-", "I-") for r in rows)


def test_ner_en_reads_two_columns_with_the_tag_first(tmp_path):
    # the MIT Movie and Restaurant corpora (engtrain.bio): `B-Actor<TAB>steve`
    train, dev = _english_sentences(40, 0), _english_sentences(10, 1)
    for name, sentences in (("engtrain.bio", train), ("engtest.bio", dev)):
        text = "\n\n".join("\n".join(f"{t}\t{w.lower()}" for w, t in s) for s in sentences)
        (tmp_path / name).write_text(text + "\n", encoding="utf-8")
    _, metrics, reports = _train(tmp_path, "tagging", "ner-en", "engtrain.bio", "engtest.bio")
    for split, sentences in (("train", train), ("validation", dev)):
        read = metrics["data"][split]
        assert read["tags_in_first_column"] and read["sentences"] == len(sentences)
        for kind in ("PER", "ORG", "LOC", "MISC"):
            expected = sum(1 for s in sentences for _, t in s if t == "B-" + kind)
            assert read["entities"][kind] == expected, (split, kind)
    written = _conll_blocks(reports.rglob("predictions_validation.conll").__next__())
    assert [[r[0] for r in rows] for rows in written] == [[w.lower() for w, _ in s]
                                                          for s in dev]
    report = next(reports.rglob("report.md")).read_text(encoding="utf-8")
    assert "tags first (`B-Actor<TAB>steve`" in report


def test_ner_en_reads_io_tags_as_entities(tmp_path):
    # Few-NERD's supervised files: `token<TAB>type` with bare types (IO), no B-/I-
    train, dev = _english_sentences(40, 0), _english_sentences(10, 1)
    fine = {"PER": "person-artist", "ORG": "organization-company", "LOC": "location-GPE",
            "MISC": "other-language"}

    def io(sentences):
        return "\n\n".join("\n".join(f"{w}\t{fine[t[2:]] if t != 'O' else 'O'}" for w, t in s)
                           for s in sentences) + "\n"

    (tmp_path / "train.txt").write_text(io(train), encoding="utf-8")
    (tmp_path / "dev.txt").write_text(io(dev), encoding="utf-8")
    _, metrics, reports = _train(tmp_path, "tagging", "ner-en", "train.txt", "dev.txt")
    assert metrics["scheme"] == "IO"
    read = metrics["data"]["validation"]
    for kind, name in fine.items():  # no two entities of one type touch in these sentences
        assert read["entities"][name] == sum(1 for s in dev for _, t in s if t == "B-" + kind)
    assert "f1" in metrics["scores"]
    written = _conll_blocks(reports.rglob("predictions_validation.conll").__next__())
    assert [r[1] for rows in written for r in rows] == [
        fine[t[2:]] if t != "O" else "O" for s in dev for _, t in s]  # the files' IO tags


CHINESE = [("张伟", "PER"), ("北京", "LOC"), ("华星公司", "ORG"), ("李", "PER"),
           ("沪", "LOC")]


def _bis(word, kind):
    """B/I/S without E: a one-character entity is S-, a longer one B- I- … I-."""
    if len(word) == 1:
        return [(word, "S-" + kind)]
    return [(c, ("B-" if i == 0 else "I-") + kind) for i, c in enumerate(word)]


def _chinese_sentences(count, offset):
    out = []
    for n in range(count):
        a, b = CHINESE[(n + offset) % len(CHINESE)], CHINESE[(n + offset + 2) % len(CHINESE)]
        out.append(_bis(*a) + [(c, "O") for c in "在"] + _bis(*b)
                   + [(c, "O") for c in "工作。"])
    return out


@pytest.mark.parametrize("separator", ["\t", " "])
def test_ner_zh_reads_bis_tags_one_character_per_line(tmp_path, separator):
    train, dev = _chinese_sentences(30, 0), _chinese_sentences(8, 1)
    for name, sentences in (("train.txt", train), ("dev.txt", dev)):
        text = "\n\n".join("\n".join(f"{c}{separator}{t}" for c, t in s) for s in sentences)
        (tmp_path / name).write_text(text + "\n", encoding="utf-8")
    _, metrics, reports = _train(tmp_path, "tagging", "ner-zh", "train.txt", "dev.txt")
    read = metrics["data"]["validation"]
    assert read["sentences"] == len(dev) and read["repaired_tags"] == 0
    assert read["ill_formed_tags"] == 0
    for kind in ("PER", "LOC", "ORG"):  # an entity starts at a B- or an S- tag
        expected = sum(1 for s in dev for _, t in s if t in ("B-" + kind, "S-" + kind))
        assert read["entities"][kind] == expected
    written = _conll_blocks(reports.rglob("predictions_validation.conll").__next__())
    assert len(written) == len(dev)
    gold_tags = [t for s in dev for _, t in s]
    assert [r[1] for rows in written for r in rows] == gold_tags  # the file's own tags back
    predicted = {r[2][:2] for rows in written for r in rows}
    assert predicted <= {"O", "B-", "I-", "S-"}, predicted  # written in the file's B/I/S


def _weibo_layout(sentences):
    """weiboNER_2nd_conll: each character with its place in its word (an entity, 在,
    工作 and 。 are the words here), BIO tags with Weibo's `.NAM` types."""
    lines = []
    for tagged in sentences:
        chars = [c for c, _ in tagged]
        tags = [t.replace("S-", "B-") + ".NAM" if t != "O" else t for _, t in tagged]
        starts = {0} | {i for i, (_, t) in enumerate(tagged) if t[:2] in ("B-", "S-")}
        starts |= {i + 1 for i, (_, t) in enumerate(tagged)
                   if t[:2] in ("I-", "S-") or (t[:2] == "B-" and tagged[i + 1][1] == "O")}
        starts |= {i for i, c in enumerate(chars) if c in "在工。"}
        place = 0
        for i, (c, t) in enumerate(zip(chars, tags)):
            place = 0 if i in starts else place + 1
            lines.append(f"{c}{place}\t{t}")
        lines.append("")
    return "\n".join(lines) + "\n"


def test_ner_zh_reads_weibo_files_with_word_positions(tmp_path):
    train, dev = _chinese_sentences(30, 0), _chinese_sentences(8, 1)
    (tmp_path / "weiboNER_2nd_conll.train").write_text(_weibo_layout(train), "utf-8")
    (tmp_path / "weiboNER_2nd_conll.dev").write_text(_weibo_layout(dev), "utf-8")
    assert "张0\tB-PER.NAM\n伟1\tI-PER.NAM\n在0\tO\n" in _weibo_layout(train)
    run, metrics, reports = _train(tmp_path, "tagging", "ner-zh", "weiboNER_2nd_conll.train",
                                   "weiboNER_2nd_conll.dev")
    for split, sentences in (("train", train), ("validation", dev)):
        read = metrics["data"][split]
        assert read["word_positions_removed"] == sum(len(s) for s in sentences)
        assert sorted(read["entities"]) == ["LOC.NAM", "ORG.NAM", "PER.NAM"]
    written = _conll_blocks(reports.rglob("predictions_validation.conll").__next__())
    assert [[r[0] for r in rows] for rows in written] == [[c for c, _ in s] for s in dev]
    report = next(reports.rglob("report.md")).read_text(encoding="utf-8")
    assert "Weibo NER's `口0 腔1` layout" in report
    import elman

    assert elman.load(run).predict(["张伟在北京工作。"])[0]["tokens"] == list("张伟在北京工作。")


def _cluener(sentences):
    """CLUENER's JSON lines: the raw text and {type: {surface: [[start, end]]}}, end
    included, built from the tagged characters of `_chinese_sentences`."""
    lines = []
    for tagged in sentences:
        text = "".join(c for c, _ in tagged)
        label = {}
        for kind, start, end in _entity_spans([t for _, t in tagged]):
            label.setdefault(kind, {}).setdefault(text[start:end], []).append([start, end - 1])
        lines.append(json.dumps({"id": len(lines), "text": text, "label": label},
                                ensure_ascii=False))
    return "\n".join(lines) + "\n"


def _entity_spans(tags):
    """(type, start, end excluded) of B/I/S tags, read directly."""
    spans = []
    for i, tag in enumerate(tags):
        if tag[:2] in ("B-", "S-"):
            spans.append([tag[2:], i, i + 1])
        elif tag[:2] == "I-":
            spans[-1][2] = i + 1
    return spans


def test_ner_zh_reads_cluener_json_with_entity_spans(tmp_path):
    train, dev = _chinese_sentences(30, 0), _chinese_sentences(8, 1)
    (tmp_path / "train.json").write_text(_cluener(train), encoding="utf-8")
    (tmp_path / "dev.json").write_text(_cluener(dev), encoding="utf-8")
    run, metrics, reports = _train(tmp_path, "tagging", "ner-zh", "train.json", "dev.json")
    read = metrics["data"]["validation"]
    assert read["sentences"] == len(dev) and read["span_records"] == len(dev)
    assert read["tokens"] == sum(len(s) for s in dev)  # one token per character
    assert read["tokens_split_at_entity_edges"] == 0 and read["skipped"] == {}
    for kind in ("PER", "LOC", "ORG"):
        expected = sum(1 for s in dev for _, t in s if t in ("B-" + kind, "S-" + kind))
        assert read["entities"][kind] == expected
    written = _conll_blocks(reports.rglob("predictions_validation.conll").__next__())
    assert [[r[0] for r in rows] for rows in written] == [[c for c, _ in s] for s in dev]
    bio = [("B-" if t[:2] == "S-" else t[:2]) + t[2:] if t != "O" else t
           for s in dev for _, t in s]  # spans carry no scheme: the gold is BIO
    assert [r[1] for rows in written for r in rows] == bio
    import elman

    tagged = elman.load(run).predict(["张伟在北京工作。"])[0]
    assert tagged["tokens"] == list("张伟在北京工作。")


@pytest.mark.parametrize("preset, language", [("zh-reviews", "zh"), ("doc", "en")])
def test_sentiment_presets_train_on_their_kind_of_files(tmp_path, preset, language):
    from tests.conftest import NEGATIVE, POSITIVE, write_csv

    def script(text):
        return any("\u4e00" <= c <= "\u9fff" for c in text)

    keep = [t for t in POSITIVE + NEGATIVE if script(t) == (language == "zh")]
    rows = [(t, "positive" if t in POSITIVE else "negative") for t in keep]
    if language == "en":  # whole reviews: one longer than the preset's 400 tokens
        rows.append((" ".join(["the room was fine and the staff were kind"] * 50),
                     "positive"))
    if language == "zh":  # the layout of SophonPlus's Chinese review sets: `label,review`
        write_csv(tmp_path / "train.csv", [(b, a) for a, b in rows * 4], ("label", "review"))
        write_csv(tmp_path / "dev.csv", [(b, a) for a, b in rows], ("label", "review"))
        names = "train.csv", "dev.csv"
    else:  # the Large Movie Review Dataset's layout: train/pos/0_9.txt, train/unsup/...
        for split, copies in (("train", 4), ("test", 1)):
            for k, (text, label) in enumerate(rows * copies):
                folder = tmp_path / split / label[:3]
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"{k}_7.txt").write_text(text.replace(". ", ".<br /><br />"),
                                                   encoding="utf-8")
        (tmp_path / "train" / "unsup").mkdir()
        for k in range(3):
            (tmp_path / "train" / "unsup" / f"{k}_0.txt").write_text("no label", "utf-8")
        (tmp_path / "train" / "urls_pos.txt").write_text("http://example.org\n", "utf-8")
        names = "train", "test"
    run, metrics, reports = _train(tmp_path, "sentiment", preset, *names)
    assert metrics["scores"]["examples"] == len(rows)
    found = {"text": "review"} if language == "zh" else {}
    assert all(metrics["data"][n]["columns_found"] == found for n in ("train", "validation"))
    report = next(reports.rglob("report.md")).read_text(encoding="utf-8")
    assert ("its text was read from `review`" in report) == (language == "zh")
    assert metrics["interval"]["units"] == len(rows)  # the accuracy's bootstrap interval
    assert metrics["interval"]["score"] == pytest.approx(metrics["scores"]["accuracy"])
    assert f"drawing the {len(rows)} validation texts again" in report
    from elman.core import intervals

    units = intervals.read_units(next(reports.rglob(intervals.UNITS_FILE)), "accuracy")
    assert units[:, 0].sum() / len(rows) == pytest.approx(metrics["scores"]["accuracy"])
    if language == "en":  # the class folders read, the unlabelled and loose files counted
        positives = sum(1 for _, label in rows if label == "positive")
        assert metrics["data"]["train"]["folders"] == {
            "classes": {"neg": 4 * (len(rows) - positives), "pos": 4 * positives},
            "skipped_folders": {"unsup": 3}, "loose_files": ["urls_pos.txt"]}
        assert "Not read, as unlabelled: `unsup` (3 files)" in report
        assert "beside the class folders: 1 file (`urls_pos.txt`)" in report
        # `elman evaluate` reads the same folders, labels from the subfolder names
        assert cli.main(["evaluate", str(run), "--data", str(tmp_path / "test")]) == 0
    if language == "en":  # the long review (9 words × 50 = 450) is cut to the preset's 400
        counts = metrics["data"]["validation"]["tokens"]  # and counted, not dropped
        assert counts["truncated_examples"] == 1 and counts["truncated_tokens"] == 50
        assert metrics["data"]["validation"]["examples"] == len(rows)
    from elman.core import runs

    probs = runs.load_model(run).predict(np.array([rows[0][0]], dtype=object), verbose=0)
    assert probs.shape == (1, 2)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-5)


def test_doc_reads_headerless_polarity_csv(tmp_path):
    # the Amazon polarity layout: no header; label (1 negative, 2 positive), title, text
    from tests.conftest import NEGATIVE, POSITIVE

    english = [t for t in POSITIVE + NEGATIVE if t.isascii()]
    rows = [("2" if t in POSITIVE else "1", t.split()[0].title(), t) for t in english]

    def write(name, copies):
        lines = ['"{}","{}","{}"'.format(*r) for r in rows * copies]
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")

    write("train.csv", 4)
    write("test.csv", 1)
    _, metrics, reports = _train(tmp_path, "sentiment", "doc", "train.csv", "test.csv")
    assert metrics["labels"] == ["1", "2"]
    assert metrics["scores"]["examples"] == len(rows)
    assert metrics["data"]["validation"]["headerless"] == {"label": 1, "text": [2, 3]}
    report = next(reports.rglob("report.md")).read_text(encoding="utf-8")
    assert ("no header line, so its first line was read as a row: the label from column 1 "
            "and the text from columns 2 and 3, joined by a space.") in report


def test_sst2_reads_the_mr_layout_in_latin_1(tmp_path):
    # Pang and Lee's sentence polarity release: rt-polarity.pos / .neg, Latin-1
    from tests.conftest import NEGATIVE, POSITIVE

    for split, copies in (("train", 4), ("dev", 1)):
        folder = tmp_path / split
        folder.mkdir()
        for label, texts in (("pos", POSITIVE), ("neg", NEGATIVE)):
            lines = [t + (" caf\xe9" if i % 3 == 0 else "")
                     for i, t in enumerate(texts * copies) if t.isascii()]
            (folder / f"rt-polarity.{label}").write_bytes(("\n".join(lines) + "\n")
                                                          .encode("latin-1"))
    reports, run = tmp_path / "reports", tmp_path / "run"
    assert cli.main(["train", "sentiment", "--config", "sst2", "--data", str(tmp_path / "train"),
                     "--validation", str(tmp_path / "dev"), "--out", str(run), "--reports",
                     str(reports), "--set", "train.epochs=1",
                     "--set", "data.encoding=latin-1"]) == 0
    metrics = _metrics(reports)
    english = [t for t in POSITIVE + NEGATIVE if t.isascii()]
    assert metrics["labels"] == ["neg", "pos"] and metrics["scores"]["examples"] == len(english)
    assert metrics["data"]["validation"]["folders"]["class_files"] == {
        "neg": "rt-polarity.neg", "pos": "rt-polarity.pos"}
    report = next(reports.rglob("report.md")).read_text(encoding="utf-8")
    assert "one class per file, one text per line" in report
