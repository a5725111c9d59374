"""The tagging task: CLI end to end, Hugging Face data, scheme round trips, bad input.

The Hugging Face test saves a `datasets.DatasetDict` with `ClassLabel` tag features
to a folder (`save_to_disk`) and trains on it through `--data FOLDER`, the same
path a user takes; no hub access and no monkeypatching are needed.
"""

import json
import random
import shutil

import pytest

from elman import cli
from elman.tasks.tagging import schemes as tag_schemes
from elman.text.splitters import split_raw_text

TINY = ["--set", "embedding.dim=8", "--set", "encoder.units=8", "--set", "chars.units=4",
        "--set", "chars.embedding_dim=4", "--set", "train.batch_size=8", "--set",
        "train.epochs=2"]

PEOPLE = [["Mary"], ["David", "Silva"], ["Anna", "Berg"], ["Wang", "Lei"], ["Tom"]]
PLACES = [["Paris"], ["New", "York"], ["Rome"], ["Hong", "Kong"], ["Lima"]]
COMPANIES = [["Apple"], ["Acme", "Corp"], ["Google"], ["Bank", "of", "China"]]
TEMPLATES = [
    [("PER",), "visited", ("LOC",), "."],
    [("ORG",), "opened", "an", "office", "in", ("LOC",), "."],
    [("PER",), "works", "for", ("ORG",), "."],
    ["I", "ate", "an", "apple", "in", "the", "park", "."],
    [("PER",), "met", ("PER",), "in", ("LOC",), "."],
]


def make_sentences(n, seed):
    """Tiny NER sentences as (tokens, BIO tags)."""
    rng = random.Random(seed)
    names = {"PER": PEOPLE, "LOC": PLACES, "ORG": COMPANIES}
    out = []
    for i in range(n):
        tokens, tags = [], []
        for slot in TEMPLATES[i % len(TEMPLATES)]:
            if isinstance(slot, tuple):
                words = rng.choice(names[slot[0]])
                tokens += words
                tags += [f"B-{slot[0]}"] + [f"I-{slot[0]}"] * (len(words) - 1)
            else:
                tokens.append(slot)
                tags.append("O")
        out.append((tokens, tags))
    return out


def write_conll(path, sentences, scheme="BIO", docstart=True):
    lines = ["-DOCSTART- O", ""] if docstart else []
    for tokens, tags in sentences:
        tags = tag_schemes.from_bio(tags, scheme) if scheme != "BIO" else tags
        lines += [f"{t} {g}" for t, g in zip(tokens, tags)] + [""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_conll_columns(path):
    sentences, rows = [], []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            rows.append(line.split(" "))
        elif rows:
            sentences.append(rows)
            rows = []
    return sentences + ([rows] if rows else [])


@pytest.fixture
def tiny_ner(tmp_path):
    return {name: write_conll(tmp_path / f"{name}.conll", make_sentences(n, seed))
            for name, n, seed in (("train", 40, 1), ("validation", 10, 2), ("test", 10, 3))}


def run_cli(capsys, args):
    code = cli.main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_train_report_predict_evaluate(tmp_path, tiny_ner, capsys):
    from seqeval.metrics import f1_score

    # one stray I-PER (after O) in train: repaired with --repair-bio and counted
    train = tiny_ner["train"]
    text = train.read_text(encoding="utf-8").replace("Mary B-PER\nvisited", "Mary I-PER\nvisited",
                                                     1)
    assert "Mary I-PER" in text
    train.write_text(text, encoding="utf-8")
    run, reports = tmp_path / "run", tmp_path / "reports"
    code, _, err = run_cli(capsys, ["train", "tagging", "--data", train,
                                    "--validation", tiny_ner["validation"],
                                    "--test", tiny_ner["test"], "--repair-bio",
                                    "--out", run, "--reports", reports, *TINY])
    assert code == 0, err
    report = reports / "tagging" / "run"
    for name in ("report.md", "report.html", "metrics.json", "predictions.tsv",
                 "learning_curves.png", "confusion_test.png", "per_type_test.png",
                 "predictions_test.conll", "predictions_validation.conll", "errors_test.tsv"):
        assert (report / name).is_file(), name
    metrics_text = (report / "metrics.json").read_text(encoding="utf-8")
    metrics = json.loads(metrics_text)
    assert list(metrics) == sorted(metrics)
    assert metrics["split"] == "test" and metrics["main_metric"] == "f1"
    assert metrics["data"]["train"]["repaired_tags"] == 1
    assert metrics["data"]["test"]["repaired_tags"] == 0
    assert metrics["scheme"] == "BIO" and metrics["tags"][0] == "O"
    md = (report / "report.md").read_text(encoding="utf-8")
    for needle in ("## Test results", "### Per type", "### Entity errors", "## Data",
                   "repaired tags", "## Reproducibility", "--repair-bio"):
        assert needle in md, needle
    # every gold position is scored; seqeval on the written predictions agrees
    columns = read_conll_columns(report / "predictions_test.conll")
    assert sum(len(s) for s in columns) == metrics["scores"]["tokens"]
    gold = [[row[1] for row in s] for s in columns]
    predicted = [[row[2] for row in s] for s in columns]
    assert metrics["scores"]["f1"] == pytest.approx(f1_score(gold, predicted), abs=1e-12)
    _check_reading_traces(md, report, run, columns)
    for name in ("model.keras", "words.txt", "chars.txt", "tags.txt", "tagging.json",
                 "run.json", "config.json"):
        assert (run / name).is_file(), name

    # the run folder alone is enough to tag: copy it without checkpoints and logs
    alone = tmp_path / "elsewhere" / "run"
    shutil.copytree(run, alone, ignore=shutil.ignore_patterns("checkpoints", "logs"))
    texts = ["Apple opened an office in Paris", "Mary visited New York."]
    code, out, err = run_cli(capsys, ["predict", alone, "--format", "json", *texts])
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["text"] for line in lines] == texts
    for line, text in zip(lines, texts):
        assert line["tokens"] == split_raw_text(text)
        assert len(line["tags"]) == len(line["tokens"])
        spans = tag_schemes.bio_spans(line["tags"])
        assert [(e["type"], e["start"], e["end"]) for e in line["entities"]] == spans
        for entity in line["entities"]:  # these texts space their tokens singly
            assert entity["text"] == " ".join(line["tokens"][entity["start"]:entity["end"]])

    code, out, err = run_cli(capsys, ["predict", alone, "--format", "conll", *texts])
    assert code == 0, err
    blocks = out.strip("\n").split("\n\n")
    assert len(blocks) == 2
    assert [row.split("\t")[0] for row in blocks[1].split("\n")] == split_raw_text(texts[1])

    code, out, err = run_cli(capsys, ["predict", alone, texts[0]])
    assert code == 0, err
    assert out.splitlines()[0].startswith("Apple/")

    code, out, err = run_cli(capsys, ["evaluate", run, "--data", tiny_ner["test"], "--json"])
    assert code == 0, err
    scores = json.loads(out)  # --json: stdout is the JSON alone
    assert "F1" in err  # the summary line goes to stderr
    assert scores["f1"] == metrics["scores"]["f1"]
    assert scores["token_accuracy"] == metrics["scores"]["token_accuracy"]


def _check_reading_traces(md, report, run, columns):
    """The report's traces: its plots exist, each table row is its sentence's most
    confidently wrong tag (or, all right, its least sure one), with the numbers
    `predictor.trace` gives for the sentence."""
    from elman.tasks.tagging.predictor import TaggingPredictor
    from elman.text.splitters import join_tokens
    from tests.report_sections import section_tables

    rows, images = section_tables(md, "Reading traces")
    assert rows and images and set(images) <= {"trace_confidently_wrong.png",
                                                "trace_least_sure_right.png"}
    for name in images:
        assert (report / name).stat().st_size > 0, name
    scored = {join_tokens([r[0] for r in s]): s for s in columns}  # text → token gold pred
    assert ("trace_confidently_wrong.png" in images) == any(
        r[1] != r[2] for s in columns for r in s)
    traces = TaggingPredictor(run).trace([row[0] for row in rows])
    for row, trace in zip(rows, traces):
        _, _, token, gold_tag, predicted_tag, p_predicted, p_gold = row
        position, word = token.split(" ", 1)
        steps, at = trace["steps"], int(position) - 1
        assert (steps[at]["token"], steps[at]["tag"]) == (word, predicted_tag)
        assert float(p_predicted) == pytest.approx(steps[at]["probability"], abs=1e-4)
        assert float(p_gold) == pytest.approx(steps[at]["probabilities"][gold_tag], abs=1e-4)
        sentence = scored[row[0]]
        assert [s["tag"] for s in steps] == [r[2] for r in sentence]
        assert sentence[at][1] == gold_tag
        wrong = [t for t, r in enumerate(sentence) if r[1] != r[2]]
        candidates = wrong or range(len(steps))
        best = (max if wrong else min)(steps[t]["probability"] for t in candidates)
        assert steps[at]["probability"] == pytest.approx(best, abs=1e-4)


def test_entity_text_is_the_exact_span_of_the_raw_text():
    """An entity's text is cut from the raw text, spacing kept, nothing more or less.

    Mutations that fail here (tried, tagging/entities.py): the span's end taken from
    the token after it (`offsets[end - 1][1]` → `offsets[end][1]` guarded by `min`);
    the tokens joined instead of cut (`if offsets:` → `if False:`).
    """
    from elman.tasks.tagging.entities import entities_of

    text = "Mary  visited New   York, then Bank of China ."
    tokens = split_raw_text(text)
    tags = ["B-PER", "O", "B-LOC", "I-LOC", "O", "O", "B-ORG", "I-ORG", "I-ORG", "O"]
    assert len(tokens) == len(tags)
    # character offsets counted by hand: "Mary" 0-4, "New   York" 14-24, "Bank of China" 31-44
    assert entities_of(tokens, tags, text) == [
        {"type": "PER", "start": 0, "end": 1, "char_start": 0, "char_end": 4, "text": "Mary"},
        {"type": "LOC", "start": 2, "end": 4, "char_start": 14, "char_end": 24,
         "text": "New   York"},
        {"type": "ORG", "start": 6, "end": 9, "char_start": 31, "char_end": 44,
         "text": "Bank of China"}]
    assert entities_of(tokens, tags)[1] == {"type": "LOC", "start": 2, "end": 4,
                                            "text": "New York"}  # no text: tokens joined
    text = "苹果公司在北京开了新店。"
    tags = ["B-ORG", "I-ORG", "I-ORG", "I-ORG", "O", "B-LOC", "I-LOC", "O", "O", "O", "O", "O"]
    assert [e["text"] for e in entities_of(split_raw_text(text), tags, text)] == [
        "苹果公司", "北京"]


@pytest.mark.slow
def test_hugging_face_dataset_with_class_labels(tmp_path, capsys):
    datasets = pytest.importorskip("datasets")
    names = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
    features = datasets.Features({
        "tokens": datasets.Sequence(datasets.Value("string")),
        "ner_tags": datasets.Sequence(datasets.ClassLabel(names=names)),
    })

    def part(n, seed):
        rows = make_sentences(n, seed)
        return datasets.Dataset.from_dict(
            {"tokens": [t for t, _ in rows], "ner_tags": [[names.index(g) for g in tags]
                                                          for _, tags in rows]},
            features=features)

    folder = tmp_path / "hf_ner"
    datasets.DatasetDict({"train": part(30, 1), "validation": part(8, 2),
                          "test": part(8, 3)}).save_to_disk(str(folder))
    run, reports = tmp_path / "run", tmp_path / "reports"
    code, _, err = run_cli(capsys, ["train", "tagging", "--data", folder, "--out", run,
                                    "--reports", reports, *TINY, "--set", "train.epochs=1"])
    assert code == 0, err
    metrics = json.loads((reports / "tagging" / "run" / "metrics.json").read_text())
    assert metrics["split"] == "test" and metrics["scheme"] == "BIO"
    assert set(metrics["tags"]) == set(names)  # ClassLabel ids mapped to their names
    assert metrics["data"]["train"]["sentences"] == 30
    assert metrics["data"]["test"]["source"] == f"{folder}[test]"
    conll = read_conll_columns(reports / "tagging" / "run" / "predictions_test.conll")
    assert conll[0][0][1] in names


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["IOB1", "BIOES"])
def test_scheme_round_trip(tmp_path, capsys, scheme):
    rows = make_sentences(40, 1)
    # two adjacent entities of one type: IOB1 needs its B- there
    rows.append((["Mary", "Tom", "visited", "Rome", "."], ["B-PER", "B-PER", "O", "B-LOC", "O"]))
    train = write_conll(tmp_path / "train.conll", rows, scheme)
    test_rows = make_sentences(10, 3)
    test = write_conll(tmp_path / "test.conll", test_rows, scheme)
    run, reports = tmp_path / "run", tmp_path / "reports"
    code, _, err = run_cli(capsys, ["train", "tagging", "--data", train, "--test", test,
                                    "--out", run, "--reports", reports, *TINY])
    assert code == 0, err
    assert json.loads((run / "tagging.json").read_text())["scheme"] == scheme
    columns = read_conll_columns(reports / "tagging" / "run" / "predictions_test.conll")
    expected = [tag_schemes.from_bio(tags, scheme) for _, tags in test_rows]
    assert [[row[1] for row in s] for s in columns] == expected  # gold written back as read
    for sentence in columns:
        predicted = [row[2] for row in sentence]
        for tag in predicted:
            tag_schemes.split_tag(tag, scheme)  # only this scheme's prefixes
        assert tag_schemes.from_bio(tag_schemes.to_bio(predicted, scheme), scheme) == predicted
    code, out, err = run_cli(capsys, ["predict", run, "--format", "conll",
                                      "Mary Tom visited New York ."])
    assert code == 0, err
    tags = [line.split("\t")[1] for line in out.strip().split("\n")]
    assert tag_schemes.from_bio(tag_schemes.to_bio(tags, scheme), scheme) == tags


def test_repair_bio_flag_is_counted_without_training(tmp_path):
    from elman import api
    from elman import config as config_lib
    from elman.tasks.tagging.data import load_splits
    from elman.tasks.tagging.report import data_summary
    from elman.tasks.tagging.vocab import build_vocabularies

    path = write_conll(tmp_path / "t.conll", [(["Mary", "met", "Tom"], ["I-PER", "O", "I-PER"]),
                                             (["Rome"], ["B-LOC"])])
    args = cli.build_parser().parse_args(["train", "tagging", "--data", str(path),
                                          "--repair-bio"])
    cfg = api.build_config("tagging", data=args.data, repair_bio=args.repair_bio)
    assert cfg.data.repair_bio and cfg.data.train == str(path)
    splits, scheme = load_splits(
        config_lib.load_config("tagging", None, ["data.scheme=BIO"], extra={
            "data": {"train": str(path), "validation": str(path), "repair_bio": True}}).data)
    assert scheme == "BIO" and splits["train"].counts["repaired_tags"] == 2
    assert splits["train"].items[0]["tags"] == ["B-PER", "O", "B-PER"]
    vocab, counts = build_vocabularies(cfg, splits["train"].items, scheme)
    md, info = data_summary(splits, vocab, counts, None)
    assert info["train"]["repaired_tags"] == 2 and "--repair-bio" in md


def _malformed(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name, text, extra, needles", [
    ("cols.conll", "Mary B-PER\nvisited O\nRome B-LOC x\n", [],
     ["cols.conll:3", "Expected 2 columns like line 1, found 3"]),
    ("scheme.conll", "Mary B-PER\nvisited O\nRome S-LOC\n", ["--set", "data.scheme=BIO"],
     ["scheme.conll:3", "'S-LOC' is not a valid BIO tag"]),
    ("stray.conll", "Mary B-PER\nvisited O\nRome B-LOC\n\nin O\nNew I-LOC\nYork I-LOC\n", [],
     ["stray.conll:6", "'I-LOC' after 'O' does not continue", "--repair-bio"]),
    ("empty.jsonl", '{"tokens": ["a"], "tags": ["O"]}\n{"tokens": [], "tags": []}\n', [],
     ["empty.jsonl:2", "Empty sentence"]),
    ("lengths.jsonl", '{"tokens": ["Mary", "ran"], "tags": ["B-PER", "O", "O"]}\n', [],
     ["lengths.jsonl:1", "2 tokens but 3 tags"]),
    ("bad.conllu", "# text = hi\n1\thi\thi\tINTJ\n", [],
     ["bad.conllu:2", "Expected 10 tab-separated columns"]),
])
def test_malformed_input_is_one_clear_error(tmp_path, capsys, name, text, extra, needles):
    path = _malformed(tmp_path, name, text)
    code, _, err = run_cli(capsys, ["train", "tagging", "--data", path, "--out", tmp_path / "r",
                                    "--reports", tmp_path / "rep", *extra])
    assert code == 2
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("elman: error:")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not (tmp_path / "r").exists()  # nothing written before the data is valid


def test_unknown_tag_in_validation_names_the_line(tmp_path, capsys, tiny_ner):
    validation = _malformed(tmp_path, "v.conll", "Mary B-PER\n\nin O\nEurope B-EVENT\n")
    code, _, err = run_cli(capsys, ["train", "tagging", "--data", tiny_ner["train"],
                                    "--validation", validation, "--out", tmp_path / "r"])
    assert code == 2 and "Traceback" not in err
    assert "v.conll:3" in err and "entity type 'EVENT'" in err and "token 2" in err


def test_skip_bad_rows_is_refused_for_tagging(tmp_path, capsys, tiny_ner):
    code, _, err = run_cli(capsys, ["train", "tagging", "--data", tiny_ner["train"],
                                    "--skip-bad-rows"])
    assert code == 2 and "--repair-bio" in err
