"""The language model's vocabulary: id ↔ token, encoding streams and prefixes, detokenizing.

The vocabulary is a list whose index is the token id, in the same shape as
`keras.layers.TextVectorization.get_vocabulary()`: id 0 is padding (`""`), id 1
is the out-of-vocabulary token (`"[UNK]"`), then the tokens seen in training,
most frequent first, ties broken by the token's code points. Build it on the
training split only and encode every split with it; a run folder keeps it as
`vocabulary.json`. At subword level the tokens are SentencePiece pieces, the model
learned on the training text alone and kept as `subword.model`.
"""

import collections
import json
from pathlib import Path

import numpy as np

from elman.core.html import write_bytes_atomic, write_text_atomic
from elman.errors import UserError
from elman.text.splitters import EOL_TOKEN, text_units, tokenize_lines

PAD_TOKEN = ""  # id 0
OOV_TOKEN = "[UNK]"  # id 1
VOCABULARY_FILE = "vocabulary.json"
SUBWORD_FILE = "subword.model"  # subword level: the SentencePiece model (its own format)


def build_vocabulary(tokens, max_size=None, min_count=1):
    """Build the id → token list from the training token stream.

    Order: padding `""` (id 0), `"[UNK]"` (id 1), then tokens by count
    descending, ties by the token string ascending, so the same tokens always
    give the same ids.

    Args:
        tokens: iterable of str, the training token stream.
        max_size: int or None, the largest vocabulary size, the two reserved
            ids included; None for no cap. Default None.
        min_count: int, tokens seen fewer times are left out (they map to
            `"[UNK]"`). Default 1.

    Returns:
        list of str; the index of a token is its id.

    Example:

    ```python
    build_vocabulary(["b", "a", "b", "c"])  # ['', '[UNK]', 'b', 'a', 'c']
    ```
    """
    if max_size is not None and (
        isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 3
    ):
        raise ValueError(
            f"Expected max_size to be None or an integer >= 3. Received: max_size={max_size!r}"
        )
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise ValueError(
            f"Expected min_count to be an integer >= 1. Received: min_count={min_count!r}"
        )
    counts = collections.Counter(tokens)
    for reserved in (PAD_TOKEN, OOV_TOKEN):
        counts.pop(reserved, None)
    ranked = sorted(
        (token for token, count in counts.items() if count >= min_count),
        key=lambda token: (-counts[token], token),
    )
    if max_size is not None:
        ranked = ranked[: max_size - 2]
    return [PAD_TOKEN, OOV_TOKEN] + ranked


def encode_tokens(tokens, vocabulary):
    """Map tokens to ids; tokens not in `vocabulary` get the OOV id 1.

    Args:
        tokens: iterable of str.
        vocabulary: list of str, from `build_vocabulary`.

    Returns:
        numpy int32 array of ids.

    Example:

    ```python
    encode_tokens(["b", "z"], ["", "[UNK]", "b"])  # array([2, 1])
    ```
    """
    index = {token: i for i, token in enumerate(vocabulary) if i >= 2}
    return np.fromiter((index.get(token, 1) for token in tokens), dtype=np.int32)


def decode_ids(ids, vocabulary):
    """Map ids back to tokens.

    Args:
        ids: iterable of int.
        vocabulary: list of str, from `build_vocabulary`.

    Returns:
        list of str.

    Example:

    ```python
    decode_ids([2, 1], ["", "[UNK]", "b"])  # ['b', '[UNK]']
    ```
    """
    return [vocabulary[int(i)] for i in ids]


def encode_stream(tokens, vocabulary):
    """Token stream → ids, with an `<eol>` first so that the first token is predicted too."""
    return encode_tokens([EOL_TOKEN] + list(tokens), vocabulary)


def encode_prefix(text, text_cfg, vocabulary, pieces=None):
    """A generation prefix → (tokens, ids): `<eol>` (a line starts), then the text's tokens.

    The text gets no `<eol>` at its end: generation continues the line.

    Args:
        text: str, the prefix.
        text_cfg: LMTextConfig, how the run tokenized its text.
        vocabulary: list of str.
        pieces: the run's `PieceSplitter` at subword level, else None.
    """
    tokens = tokenize_lines([text], level=text_cfg.level, lowercase=text_cfg.lowercase,
                            unit=text_cfg.unit, pieces=pieces)[:-1] if text.strip() else []
    return tokens, encode_tokens([EOL_TOKEN] + tokens, vocabulary)


def unknown_tokens(tokens, vocabulary):
    """The tokens the vocabulary does not know (read as `[UNK]`), in order."""
    known = set(vocabulary[2:])
    return [t for t in tokens if t not in known]


def detokenize(tokens, level):
    """Tokens → text: characters joined directly, words by spaces, subword pieces as
    SentencePiece joins them (`▁` a space); `<eol>` becomes a newline."""
    lines, current = [], []
    for token in tokens:
        if token == EOL_TOKEN:
            lines.append(current)
            current = []
        else:
            current.append(token)
    lines.append(current)
    if level == "subword":
        from elman.text.pieces import join_pieces

        return "\n".join(join_pieces(line) for line in lines)
    glue = "" if level == "character" else " "
    return "\n".join(glue.join(line) for line in lines)


def learn_subword(lines, text_cfg):
    """The SentencePiece model (bytes) of the training lines, learned on the texts the
    stream is made of (lines or paragraphs, lower-cased when the run lower-cases)."""
    from elman.text.pieces import learn_pieces

    return learn_pieces(text_units(lines, text_cfg.unit, text_cfg.lowercase),
                        text_cfg.vocabulary_size, text_cfg.algorithm,
                        text_cfg.character_coverage, text_cfg.normalization)


def write_subword(run_dir, model):
    """Writes `subword.model` (the SentencePiece model's bytes) to a run folder atomically."""
    write_bytes_atomic(Path(run_dir) / SUBWORD_FILE, model)


def read_subword(run_dir):
    """The `PieceSplitter` of the SentencePiece model saved in a run folder."""
    from elman.text.pieces import PieceSplitter

    path = Path(run_dir) / SUBWORD_FILE
    if not path.is_file():
        raise UserError(f"the run has no {SUBWORD_FILE} (its subword model)", path=run_dir)
    try:
        return PieceSplitter(path.read_bytes())
    except (RuntimeError, OSError) as err:
        raise UserError(f"{SUBWORD_FILE} is damaged: {err}", path=path) from None


def write_vocabulary(run_dir, vocabulary):
    """Writes `vocabulary.json` (the id → token list) to a run folder atomically."""
    write_text_atomic(Path(run_dir) / VOCABULARY_FILE,
                      json.dumps(vocabulary, ensure_ascii=False, indent=0) + "\n")


def read_vocabulary(run_dir):
    """The id → token list saved in a run folder."""
    path = Path(run_dir) / VOCABULARY_FILE
    if not path.is_file():
        raise UserError(f"the run has no {VOCABULARY_FILE}", path=run_dir)
    try:
        vocabulary = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UserError(f"{VOCABULARY_FILE} is damaged: {err}", path=path) from None
    if not isinstance(vocabulary, list) or len(vocabulary) < 3:
        raise UserError(f"{VOCABULARY_FILE} is not a vocabulary list", path=path)
    return vocabulary
