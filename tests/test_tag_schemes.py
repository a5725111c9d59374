"""Tag schemes: BIO/IOB1/BIOES conversions, validation, repair, spans."""

import random

import pytest

from elman.tasks.tagging.schemes import (bio_spans, detect_scheme, from_bio, normalize_scheme,
                                         repair_bio, split_tag, to_bio, validate_bio)

# The same sentence in each scheme: "John Smith | Paris | Lyon Berlin(LOC,LOC adjacent) | x | Bob".
BIO = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "O", "B-PER"]
IOB1 = ["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-LOC", "O", "I-PER"]
BIOES = ["B-PER", "E-PER", "O", "S-LOC", "B-LOC", "E-LOC", "O", "S-PER"]


def test_split_tag():
    assert split_tag("O") == ("O", "")
    assert split_tag("B-PER") == ("B", "PER")
    assert split_tag("I-DATE-TIME") == ("I", "DATE-TIME")
    for bad in ["X-PER", "PER", "B-", "B_PER", "", "o"]:
        with pytest.raises(ValueError, match="is not a valid tag"):
            split_tag(bad)
    with pytest.raises(ValueError, match="not a valid BIO tag"):
        split_tag("S-PER", "BIO")
    assert normalize_scheme("iob2") == "BIO" and normalize_scheme("IOBES") == "BIOES"
    with pytest.raises(ValueError, match="Expected scheme to be one of"):
        normalize_scheme("BILOU")


def test_spans():
    assert bio_spans(BIO) == [("PER", 0, 2), ("LOC", 3, 4), ("LOC", 4, 6), ("PER", 7, 8)]
    assert bio_spans(IOB1) == bio_spans(BIO) == bio_spans(BIOES)
    # conlleval reading of ill-formed sequences: I- after O or another type starts a chunk.
    assert bio_spans(["O", "I-PER", "I-PER"]) == [("PER", 1, 3)]
    assert bio_spans(["B-PER", "I-LOC", "I-LOC"]) == [("PER", 0, 1), ("LOC", 1, 3)]
    assert bio_spans(["I-PER"]) == [("PER", 0, 1)]
    assert bio_spans([]) == []


def test_conversions():
    assert to_bio(IOB1, "IOB1") == BIO
    assert to_bio(BIOES, "BIOES") == BIO
    assert to_bio(BIO, "IOB2") == BIO
    assert from_bio(BIO, "IOB1") == IOB1
    assert from_bio(BIO, "BIOES") == BIOES
    assert from_bio(["O", "I-PER", "I-LOC"], "BIOES") == ["O", "S-PER", "S-LOC"]
    with pytest.raises(ValueError, match="Position 1: Tag 'S-LOC' is not a valid BIO tag"):
        from_bio(["O", "S-LOC"], "BIOES")
    with pytest.raises(ValueError, match="not a valid IOB1 tag"):
        to_bio(["E-PER"], "IOB1")


def _random_valid(scheme, rng, length):
    spans, position = [], 0
    while position < length:
        if rng.random() < 0.4:
            position += 1
            continue
        size = rng.randint(1, 3)
        end = min(length, position + size)
        spans.append((rng.choice(["PER", "LOC"]), position, end))
        position = end
    tags = ["O"] * length
    for type_, start, end in spans:
        tags[start:end] = [f"B-{type_}"] + [f"I-{type_}"] * (end - start - 1)
    return from_bio(tags, scheme)


@pytest.mark.parametrize("scheme", ["BIO", "IOB1", "BIOES"])
def test_round_trips(scheme):
    rng = random.Random(0)
    for _ in range(300):
        tags = _random_valid(scheme, rng, rng.randint(0, 9))
        bio = to_bio(tags, scheme)
        assert from_bio(bio, scheme) == tags
        assert bio_spans(bio) == bio_spans(tags)
        assert validate_bio(bio) == []


def test_validate_bio():
    assert validate_bio(BIO) == []
    assert validate_bio(["I-PER"]) == [
        (0, "'I-PER' at the start does not continue an entity of type PER")]
    assert validate_bio(["O", "I-PER"]) == [
        (1, "'I-PER' after 'O' does not continue an entity of type PER")]
    assert [p for p, _ in validate_bio(["B-LOC", "I-PER", "B-PER", "I-PER", "I-LOC"])] == [1, 4]
    assert validate_bio(["O", "I-PER"], strict=False) == []
    problems = validate_bio(["O", "X-PER", "S-PER"], strict=False)
    assert [p for p, _ in problems] == [1, 2]
    assert "'X-PER' is not a valid BIO tag" in problems[0][1]


def test_repair_bio():
    assert repair_bio(BIO) == (BIO, 0)
    assert repair_bio(["O", "I-PER", "I-PER", "I-LOC", "B-LOC", "I-LOC"]) == (
        ["O", "B-PER", "I-PER", "B-LOC", "B-LOC", "I-LOC"], 2)
    assert repair_bio(["I-MISC"]) == (["B-MISC"], 1)
    with pytest.raises(ValueError):
        repair_bio(["O", "E-PER"])


def test_detect_scheme():
    assert detect_scheme([BIO, ["O"]]) == "BIO"
    assert detect_scheme([IOB1, ["O", "I-MISC"]]) == "IOB1"
    assert detect_scheme([BIO, BIOES]) == "BIOES"
    assert detect_scheme([["O", "O"], []]) == "BIO"
    # An ill-formed BIO corpus (a stray I- next to B- starts) stays BIO.
    assert detect_scheme([["B-PER", "O", "I-LOC"]]) == "BIO"
    with pytest.raises(ValueError):
        detect_scheme([["O", "PER"]])


def test_io_tags_bare_types_read_as_runs():
    # Few-NERD's IO tags: a bare type on each entity token, a run of one type is one entity
    from fractions import Fraction

    from elman.tasks.tagging.schemes import io_like, misfits
    from elman.tasks.tagging.scoring import score_split

    io = ["person-actor", "person-actor", "O", "art-film", "O", "location-GPE"]
    assert to_bio(io, "IO") == ["B-person-actor", "I-person-actor", "O", "B-art-film", "O",
                                "B-location-GPE"]
    assert from_bio(to_bio(io, "IO"), "io") == io and misfits(io, "IO") == []
    # two adjacent entities of one type cannot be told apart in IO: written as one run
    assert from_bio(["B-X", "I-X", "B-X", "O"], "IO") == ["X", "X", "X", "O"]
    assert split_tag("art-film", "IO") == ("I", "art-film")
    with pytest.raises(ValueError, match="not a valid IO tag"):
        split_tag("art film", "IO")
    assert io_like([io, ["O", "O", "O"]])  # 4 of 9 entity tokens: O on more than half
    assert not io_like([["NOUN", "VERB", "O"]])  # O on a third: free tags (POS)
    assert not io_like([["O", "O", "B-PER", "art-film"]])  # a prefixed tag: not IO
    assert not io_like([["O", "O"]])  # no entity at all
    # scored as IOB1 spans: gold person-actor (0-2) and art-film (3); predicted the first
    # right and location-GPE at 5 spurious: P = 1/2, R = 1/2
    sentence = {"tokens": list("abcdef"), "tags": to_bio(io[:5] + ["O"], "IO"), "source": "x"}
    predicted = ["B-person-actor", "I-person-actor", "O", "O", "O", "B-location-GPE"]
    result = score_split("validation", [sentence], [predicted], "IO")
    assert Fraction(result.extra["fraction"]["precision"]) == Fraction(1, 2)
    assert Fraction(result.extra["fraction"]["recall"]) == Fraction(1, 2)
    assert result.extra["predicted"][0] == ["person-actor", "person-actor", "O", "O", "O",
                                           "location-GPE"]  # written as the file writes
