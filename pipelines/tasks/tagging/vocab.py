"""A tagging run's vocabularies: word, char, bigram and tag ids, built on the training
split.

They are written to the run folder as `words.txt`, `chars.txt`, `tags.txt`, with
`features.bigrams` also `bigrams.txt` (one entry per line; the line number is the id),
and `tagging.json` (the input scheme, the case settings and which token features the
model reads), so that a run folder alone can tag new text.
"""

import dataclasses
import json
from collections import Counter
from pathlib import Path

from elman.core.html import write_text_atomic
from elman.errors import UserError
from elman.tasks.tagging.features import bigram_strings, sentence_bigrams, shape_id
from elman.tasks.tagging.schemes import from_bio

PAD, OOV = "", "[UNK]"
_TO_BIO = {"E-": "I-", "S-": "B-"}  # a BIOES model's tag prefixes read as BIO


def _usable(token):
    # Vocabulary files hold one entry per line: an entry with a line break cannot be
    # written, so such a token (possible only in JSON input) stays out (maps to OOV).
    return "\n" not in token and "\r" not in token


@dataclasses.dataclass
class Vocabularies:
    """Word, char, bigram and tag ids of a run, and how tokens are normalised before lookup."""

    words: list  # id → word; 0 padding, 1 OOV
    chars: list  # id → char; 0 padding, 1 OOV
    tags: list  # id → tag the model predicts (entity tags in `encoding`)
    scheme: str  # the input scheme (one of schemes.SCHEMES), or "none" for free tags
    lowercase: bool = False
    char_lowercase: bool = False
    max_word_length: int = 20
    bigrams: list = None  # id → bigram ("北 京"); 0 padding, 1 OOV; None: no bigram feature
    shape: bool = False  # whether the model reads each token's shape id
    encoding: str = "BIO"  # the entity tags the model learns: BIO or BIOES (`head.tags`)

    def __post_init__(self):
        self._word_index = {w: i for i, w in enumerate(self.words)}
        self._bigram_index = {b: i for i, b in enumerate(self.bigrams or ())}
        self._char_index = {c: i for i, c in enumerate(self.chars)}
        self._tag_index = {t: i for i, t in enumerate(self.tags)}

    @property
    def entity(self):
        """bool, whether the tags are entity tags (BIO inside) or free labels."""
        return self.scheme != "none"

    def word_id(self, token):
        """The id of a token's word (1, OOV, when the vocabulary lacks it)."""
        return self._word_index.get(token.lower() if self.lowercase else token, 1)

    def char_ids(self, token):
        """The ids of a token's first `max_word_length` chars (1 for unknown chars)."""
        text = token.lower() if self.char_lowercase else token
        return [self._char_index.get(c, 1) for c in text[: self.max_word_length]]

    def bigram_ids(self, tokens):
        """The (left, right) bigram ids of each token of a sentence (1 for unknown
        bigrams); the tokens are lower-cased first when the word vocabulary is."""
        looked = [t.lower() for t in tokens] if self.lowercase else tokens
        return [(self._bigram_index.get(left, 1), self._bigram_index.get(right, 1))
                for left, right in bigram_strings(looked)]

    @staticmethod
    def shape_id(token):
        """The shape id of a raw token (`features.SHAPES`)."""
        return shape_id(token)

    def tag_id(self, tag):
        """The id of a tag among the model's (`encoding` for entity tags)."""
        return self._tag_index[tag]

    def model_tags(self, tags):
        """A sentence's tags (BIO for entity tags) as the model learns them: the same,
        or converted to BIOES when `encoding` is BIOES."""
        if self.entity and self.encoding == "BIOES":
            return from_bio(tags, "BIOES")
        return list(tags)

    def tag_names(self, ids):
        """The model's tag ids → tags, entity tags in BIO: a BIOES model's E-X is read
        as I-X and its S-X as B-X (the in-graph export does the same)."""
        names = [self.tags[i] for i in ids]
        if not (self.entity and self.encoding == "BIOES"):
            return names
        return [_TO_BIO.get(t[:2], t[:2]) + t[2:] for t in names]

    def save(self, run_dir):
        """Writes words.txt, chars.txt, tags.txt (bigrams.txt) and tagging.json to `run_dir`."""
        run_dir = Path(run_dir)
        names = ("words", "chars", "tags") + (("bigrams",) if self.bigrams is not None else ())
        for name in names:
            write_text_atomic(run_dir / f"{name}.txt", "\n".join(getattr(self, name)) + "\n")
        settings = {"scheme": self.scheme, "lowercase": self.lowercase,
                    "char_lowercase": self.char_lowercase,
                    "max_word_length": self.max_word_length, "format": 1,
                    "bigrams": self.bigrams is not None, "shape": self.shape,
                    "encoding": self.encoding}
        write_text_atomic(run_dir / "tagging.json", json.dumps(settings, indent=1,
                                                               sort_keys=True) + "\n")

    @classmethod
    def load(cls, run_dir):
        """Reads the vocabularies a run folder holds (a UserError when they are damaged)."""
        run_dir = Path(run_dir)
        try:
            settings = json.loads((run_dir / "tagging.json").read_text(encoding="utf-8"))
            names = ("words", "chars", "tags") + (
                ("bigrams",) if settings.get("bigrams") else ())
            lists = {name: (run_dir / f"{name}.txt").read_text(encoding="utf-8")
                     .split("\n")[:-1] for name in names}
        except (OSError, ValueError) as err:
            raise UserError(f"the run's vocabulary files are missing or damaged ({err}); "
                            "expected words.txt, chars.txt, tags.txt, tagging.json (and "
                            "bigrams.txt with features.bigrams)", path=run_dir) from None
        return cls(lists["words"], lists["chars"], lists["tags"], settings["scheme"],
                   settings["lowercase"], settings["char_lowercase"],
                   settings["max_word_length"], lists.get("bigrams"),
                   bool(settings.get("shape", False)), settings.get("encoding", "BIO"))


def tag_list(train_tags, entity, encoding="BIO"):
    """The tag set: `O` + B-/I- (BIOES: B-/I-/E-/S-) of each type seen in train (entity
    tags, given in BIO), or the sorted labels (free tags)."""
    seen = {t for tags in train_tags for t in tags}
    if not entity:
        return sorted(seen)
    types = sorted({t[2:] for t in seen if t != "O"})
    prefixes = "BIES" if encoding == "BIOES" else "BI"
    return ["O"] + [f"{p}-{t}" for t in types for p in prefixes]


def bigram_list(cfg, train_sentences):
    """The bigram vocabulary (padding, OOV, then by descending count) of the training
    sentences: bigrams seen at least `features.bigram_min_count` times, at most
    `features.max_bigrams` entries in all.

    Args:
        cfg: TaggingConfig.
        train_sentences: list of {"tokens", ...} dicts, the training split's items.
    """
    counts = Counter()
    for sentence in train_sentences:
        tokens = sentence["tokens"]
        counts.update(sentence_bigrams([t.lower() for t in tokens] if cfg.vocabulary.lowercase
                                       else tokens))
    ranked = sorted((b for b, n in counts.items()
                     if n >= cfg.features.bigram_min_count and _usable(b)),
                    key=lambda b: (-counts[b], b))
    return [PAD, OOV] + ranked[: max(cfg.features.max_bigrams - 2, 0)]


def build_vocabularies(cfg, train_sentences, scheme):
    """Builds the word, char, tag (and bigram) vocabularies on the training sentences only.

    Args:
        cfg: TaggingConfig.
        train_sentences: list of {"tokens", "tags"} dicts, the training split's items.
        scheme: str or None, the input scheme (None for free tags).

    Returns:
        (Vocabularies, Counter of the training words as looked up)
    """
    words = Counter()
    chars = Counter()
    for sentence in train_sentences:
        for token in sentence["tokens"]:
            words[token.lower() if cfg.vocabulary.lowercase else token] += 1
            chars.update((token.lower() if cfg.chars.lowercase else token)
                         [: cfg.chars.max_word_length])
    ranked = sorted((w for w, n in words.items()
                     if n >= cfg.vocabulary.min_count and _usable(w)),
                    key=lambda w: (-words[w], w))
    ranked = ranked[: max(cfg.vocabulary.max_words - 2, 0)]
    char_list = sorted((c for c in chars if _usable(c)), key=lambda c: (-chars[c], c))
    if scheme is None and cfg.head.tags != "BIO":
        raise UserError(f"head.tags = \"{cfg.head.tags}\" needs entity tags (O, B-X, I-X, "
                        "...); these tags are free labels: leave head.tags at \"BIO\"")
    tags = tag_list([s["tags"] for s in train_sentences], scheme is not None, cfg.head.tags)
    bigrams = bigram_list(cfg, train_sentences) if cfg.features.bigrams else None
    return Vocabularies([PAD, OOV] + ranked, [PAD, OOV] + char_list, tags,
                        scheme or "none", cfg.vocabulary.lowercase, cfg.chars.lowercase,
                        cfg.chars.max_word_length, bigrams, cfg.features.shape,
                        cfg.head.tags), words
