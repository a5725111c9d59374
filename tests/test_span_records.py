"""JSON records of raw text with entity spans (CLUENER, doccano) read as tagged tokens.

The expected tokens and tags are written out by hand from the record's text and
offsets; the reader under test never supplies them.
"""

import json

import pytest

from elman.errors import UserError
from elman.tasks.tagging import json_records


def _write(tmp_path, records, name="train.json"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    return path


def _read(path, **options):
    stats = {}
    sentences = json_records.read_jsonl(path, guess_keys=True, scheme="auto", stats=stats,
                                        **options)
    return [list(zip(s["tokens"], s["tags"])) for s in sentences], stats


def test_cluener_record_one_character_per_token(tmp_path):
    # 上海华星公司的张伟说: 上海 0-1 (address), 华星公司 2-5 (company),
    # 张伟 7-8 (name)
    record = {"text": "上海华星公司的张伟说",
              "label": {"address": {"上海": [[0, 1]]}, "company": {"华星公司": [[2, 5]]},
                        "name": {"张伟": [[7, 8]]}}}
    sentences, stats = _read(_write(tmp_path, [record]))
    assert sentences == [[("上", "B-address"), ("海", "I-address"), ("华", "B-company"),
                          ("星", "I-company"), ("公", "I-company"), ("司", "I-company"),
                          ("的", "O"), ("张", "B-name"), ("伟", "I-name"), ("说", "O")]]
    assert stats["span_records"] == 1 and stats["sentences"] == 1 and stats["tokens"] == 10
    assert stats.get("tokens_split_at_entity_edges", 0) == 0


def test_cluener_surface_listed_twice_and_latin_words_whole(tmp_path):
    # "张伟和张伟在NBA" : 张伟 at 0-1 and 3-4; NBA at 6-8 (organization), a Latin word whole
    record = {"text": "张伟和张伟在NBA",
              "label": {"name": {"张伟": [[0, 1], [3, 4]]},
                        "organization": {"NBA": [[6, 8]]}}}
    sentences, _ = _read(_write(tmp_path, [record]))
    assert sentences == [[("张", "B-name"), ("伟", "I-name"), ("和", "O"), ("张", "B-name"),
                          ("伟", "I-name"), ("在", "O"), ("NBA", "B-organization")]]


def test_doccano_spans_over_english_text(tmp_path):
    # "Anna Berg joined Nordic Rail in Oslo." : [0, 9) PER, [17, 28) ORG, [32, 36) LOC
    records = [{"text": "Anna Berg joined Nordic Rail in Oslo.",
                "label": [[17, 28, "ORG"], [0, 9, "PER"], [32, 36, "LOC"]]},
               {"text": "It rained.", "label": []},
               {"text": "Mei Chen left.",
                "label": [{"start_offset": 0, "end_offset": 8, "label": "PER"}]}]
    sentences, stats = _read(_write(tmp_path, records, "train.jsonl"))
    assert sentences == [
        [("Anna", "B-PER"), ("Berg", "I-PER"), ("joined", "O"), ("Nordic", "B-ORG"),
         ("Rail", "I-ORG"), ("in", "O"), ("Oslo", "B-LOC"), (".", "O")],
        [("It", "O"), ("rained", "O"), (".", "O")],
        [("Mei", "B-PER"), ("Chen", "I-PER"), ("left", "O"), (".", "O")]]
    assert stats["span_records"] == 3 and stats["scheme"] == "BIO"


def test_span_edge_inside_a_token_cuts_it_and_counts(tmp_path):
    # "买iPhone8手机" : the product is "iPhone" [1, 7); the raw token is "iPhone8"
    record = {"text": "买iPhone8手机", "label": [[1, 7, "product"]]}
    sentences, stats = _read(_write(tmp_path, [record]))
    assert sentences == [[("买", "O"), ("iPhone", "B-product"), ("8", "O"), ("手", "O"),
                          ("机", "O")]]
    assert stats["tokens_split_at_entity_edges"] == 1


def test_named_keys_are_used_as_given(tmp_path):
    path = _write(tmp_path, [{"content": "北京很大", "entities": [[0, 2, "LOC"]]}])
    stats = {}
    out = json_records.read_jsonl(path, tokens_key="content", tags_key="entities", stats=stats)
    assert [(s["tokens"], s["tags"]) for s in out] == [(["北", "京", "很", "大"],
                                                       ["B-LOC", "I-LOC", "O", "O"])]


def test_overlapping_spans_fail_or_keep_the_longer_when_repairing(tmp_path):
    # 北京大学 [0, 4) ORG holds 北京 [0, 2) LOC
    record = {"text": "他在北京大学", "label": [[2, 4, "LOC"], [2, 6, "ORG"]]}
    path = _write(tmp_path, [{"text": "你好", "label": []}, record])
    with pytest.raises(UserError) as caught:
        _read(path)
    assert caught.value.line == 2 and "overlaps" in str(caught.value)
    assert "--repair-bio" in str(caught.value)
    sentences, stats = _read(path, repair=True)
    assert sentences[1] == [("他", "O"), ("在", "O"), ("北", "B-ORG"), ("京", "I-ORG"),
                            ("大", "I-ORG"), ("学", "I-ORG")]
    assert stats["overlapping_spans"] == 1


def test_duplicate_spans_are_one_entity_and_counted(tmp_path):
    record = {"text": "北京很大", "label": [[0, 2, "LOC"], [0, 2, "LOC"]]}
    sentences, stats = _read(_write(tmp_path, [record]))
    assert sentences == [[("北", "B-LOC"), ("京", "I-LOC"), ("很", "O"), ("大", "O")]]
    assert stats["duplicate_spans"] == 1


@pytest.mark.parametrize("label, expected", [
    # CLUENER's end is included: offsets written with the end excluded read one more char
    ({"name": {"张伟": [[0, 2]]}}, "reads '张伟说'"),
    ([[0, 9, "PER"]], "outside the text's 3 characters"),
    ([[2, 2, "PER"]], "or empty"),
    ([[0, 2, "PER NAME"]], "without spaces"),
    ([[0, 2]], "Expected a span [start, end, type]"),
    ([["0", 2, "PER"]], "Expected a span [start, end, type]"),
    ({"name": {"张伟": [0, 1]}}, "Expected [start, end] offsets"),
])
def test_bad_spans_name_the_line(tmp_path, label, expected):
    path = _write(tmp_path, [{"text": "你好", "label": []},
                             {"text": "张伟说", "label": label}])
    with pytest.raises(UserError) as caught:
        _read(path)
    assert caught.value.line == 2
    assert expected in str(caught.value)


def test_text_of_spaces_only_is_an_empty_sentence(tmp_path):
    with pytest.raises(UserError, match="holds no token"):
        _read(_write(tmp_path, [{"text": "   ", "label": []}]))


def test_a_string_with_one_tag_per_character(tmp_path):
    records = [{"text": "北京很大", "label": ["B-LOC", "I-LOC", "O", "O"]},
               # the space inside the name is no token; the name stays one entity
               {"text": "Li Na赢了", "label": ["B-PER", "I-PER", "I-PER", "I-PER", "I-PER",
                                              "O", "O"]},
               {"text": "好 的", "label": ["O", "O", "O"]}]
    sentences, stats = _read(_write(tmp_path, records))
    assert sentences == [
        [("北", "B-LOC"), ("京", "I-LOC"), ("很", "O"), ("大", "O")],
        [("L", "B-PER"), ("i", "I-PER"), ("N", "I-PER"), ("a", "I-PER"), ("赢", "O"),
         ("了", "O")],
        [("好", "O"), ("的", "O")]]
    assert stats["space_characters"] == 2 and stats["tokens"] == 12
    bad = _write(tmp_path, [{"text": "北京", "label": ["O", "O"]},
                            {"text": "a 京", "label": ["O", "B-LOC", "I-LOC"]}], "bad.json")
    with pytest.raises(UserError, match="Character 2 is a space tagged 'B-LOC'") as caught:
        _read(bad)
    assert caught.value.line == 2


def _ls_span(start, end, surface, kind):
    return {"start": start, "end": end, "text": surface, "labels": [kind]}


def test_label_studio_json_min_and_full_exports(tmp_path):
    # "Ada Lovelace met Babbage in London": Ada Lovelace 0-12, Babbage 17-24, London 28-34
    text = "Ada Lovelace met Babbage in London"
    spans = [_ls_span(0, 12, "Ada Lovelace", "PER"), _ls_span(17, 24, "Babbage", "PER"),
             _ls_span(28, 34, "London", "LOC")]
    expected = [[("Ada", "B-PER"), ("Lovelace", "I-PER"), ("met", "O"), ("Babbage", "B-PER"),
                 ("in", "O"), ("London", "B-LOC")]]
    # JSON-MIN: one array of {"text", "label": [{start, end, text, labels}], ...}
    path = tmp_path / "min.json"
    path.write_text(json.dumps([{"id": 7, "text": text, "label": spans, "annotator": 1}]),
                    encoding="utf-8")
    assert _read(path)[0] == expected
    # the full JSON export: data.text and the first annotation's results
    result = [{"from_name": "label", "to_name": "text", "type": "labels", "value": v}
              for v in spans]
    other = [{"type": "labels", "value": _ls_span(0, 3, "Ada", "ORG")}]
    task = {"id": 7, "data": {"text": text},
            "annotations": [{"was_cancelled": True, "result": other},
                            {"result": result + [{"type": "choices", "value": {}}]},
                            {"result": other}]}
    full = tmp_path / "full.json"
    full.write_text(json.dumps([task]), encoding="utf-8")
    sentences, stats = _read(full)
    assert sentences == expected and stats["other_annotations"] == 1
    # a surface that does not read so at its offsets, and a task with no annotation
    bad = dict(task, annotations=[{"result": [{"type": "labels",
                                               "value": _ls_span(0, 3, "Bob", "PER")}]}])
    with pytest.raises(UserError, match="'Bob' at \\[0, 3\\) reads 'Ada'"):
        _read(_write(tmp_path, [bad], "bad.json"))
    with pytest.raises(UserError, match="has no annotation") as err:
        _read(_write(tmp_path, [dict(task, annotations=[])], "none.json"))
    assert err.value.line == 1


def test_prodigy_records_read_their_spans_and_skip_rejected_ones(tmp_path):
    # "Mei Chen visited Oslo": Mei Chen 0-8, Oslo 17-21; Prodigy's tokens are dicts
    text = "Mei Chen visited Oslo"
    tokens = [{"text": t, "start": text.index(t), "end": text.index(t) + len(t), "id": i}
              for i, t in enumerate(text.split())]
    accepted = {"text": text, "tokens": tokens, "answer": "accept",
                "spans": [{"start": 0, "end": 8, "token_start": 0, "token_end": 1,
                           "label": "PERSON"},
                          {"start": 17, "end": 21, "token_start": 3, "token_end": 3,
                           "label": "GPE", "text": "Oslo"}]}
    rejected = dict(accepted, answer="reject")
    ignored = dict(accepted, answer="ignore")
    nothing = {"text": "It rained", "tokens": tokens[:0], "answer": "accept", "spans": []}
    sentences, stats = _read(_write(tmp_path, [accepted, rejected, ignored, nothing]))
    assert sentences == [[("Mei", "B-PERSON"), ("Chen", "I-PERSON"), ("visited", "O"),
                          ("Oslo", "B-GPE")], [("It", "O"), ("rained", "O")]]
    assert stats["rejected_records"] == 2 and stats["sentences"] == 2
