"""Language-model data stage: text file → token stream → vocabulary → ids → TBPTT batches.

The vocabulary is a list whose index is the token id, in the same shape as
`keras.layers.TextVectorization.get_vocabulary()`: id 0 is padding (`""`), id 1
is the out-of-vocabulary token (`"[UNK]"`), then the tokens seen in training,
most frequent first, ties broken by the token's code points. Build it on the
training split only and encode every split with it.
"""

import collections
import pathlib
import re

import numpy as np

from elman.errors import UserError

PAD_TOKEN = ""  # id 0
OOV_TOKEN = "[UNK]"  # id 1
EOL_TOKEN = "<eol>"  # ends each line or paragraph of the token stream
LEVELS = ("word", "character")
UNITS = ("line", "paragraph")

# A word (letters/digits/underscore, with inner apostrophes or hyphens kept:
# "don't", "state-of-the-art") or one punctuation/symbol character.
_WORD_PATTERN = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]")


def read_text_lines(path):
    """Read a UTF-8 text file as a list of lines (without line endings).

    A leading byte-order mark is dropped; `\\r\\n` and `\\n` both end a line.

    Args:
        path: str or path-like, the text file.

    Returns:
        list of str, one entry per line of the file.

    Raises:
        UserError: the file is missing, is not a file, is not valid UTF-8 (with
            the line of the first bad byte), or holds no non-blank text.

    Example:

    ```python
    lines = read_text_lines("data/lm/train.txt")
    ```
    """
    path = pathlib.Path(path)
    if not path.exists():
        raise UserError("text file not found", path=path)
    if not path.is_file():
        raise UserError("expected a text file, found a directory or special file", path=path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise UserError(
            f"file is not valid UTF-8 (byte 0x{raw[error.start]:02x} at offset "
            f"{error.start}); save it as UTF-8",
            path=path,
            line=line,
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise UserError("file is empty (no non-blank text)", path=path)
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if lines and lines[-1] == "" and text.endswith("\n"):
        lines.pop()
    return lines


def tokenize_lines(lines, level="word", lowercase=False, unit="line", eol_token=EOL_TOKEN):
    """Turn lines of text into one token stream with an end-of-line token after each unit.

    Word level splits punctuation off words (`"Hello, world!"` → `Hello , world !`)
    and keeps inner apostrophes and hyphens (`don't`, `well-known`); text
    without spaces (Chinese, Japanese) stays one token per run, so segment it
    first or use character level. Character level keeps every character,
    spaces included. Blank lines hold no tokens: with `unit="line"` they add
    nothing, with `unit="paragraph"` they separate paragraphs.

    Args:
        lines: list of str, the text, one entry per line.
        level: str, `"word"` or `"character"`. Default `"word"`.
        lowercase: bool, lower-case the text first. Default False.
        unit: str, `"line"` (one `eol_token` after each non-blank line) or
            `"paragraph"` (the lines of a paragraph joined by a space, one
            `eol_token` after each paragraph). Default `"line"`.
        eol_token: str, the end-of-line token. Default `"<eol>"`.

    Returns:
        list of str, the token stream.

    Example:

    ```python
    tokenize_lines(["Hi, you.", "", "Bye!"])
    # ['Hi', ',', 'you', '.', '<eol>', 'Bye', '!', '<eol>']
    ```
    """
    if level not in LEVELS:
        raise ValueError(f"Expected level to be one of {set(LEVELS)}. Received: level={level!r}")
    if unit not in UNITS:
        raise ValueError(f"Expected unit to be one of {set(UNITS)}. Received: unit={unit!r}")
    if not isinstance(eol_token, str) or not eol_token or eol_token in (PAD_TOKEN, OOV_TOKEN):
        raise ValueError(
            f"Expected eol_token to be a non-empty string other than {OOV_TOKEN!r}. "
            f"Received: eol_token={eol_token!r}"
        )
    if unit == "line":
        units = [line for line in lines if line.strip()]
    else:
        units, current = [], []
        for line in list(lines) + [""]:
            if line.strip():
                current.append(line.strip())
            elif current:
                units.append(" ".join(current))
                current = []
    tokens = []
    for text in units:
        if lowercase:
            text = text.lower()
        if level == "word":
            tokens.extend(_WORD_PATTERN.findall(text))
        else:
            tokens.extend(text)
        tokens.append(eol_token)
    return tokens


def load_token_stream(path, level="word", lowercase=False, unit="line", eol_token=EOL_TOKEN):
    """Read a UTF-8 text file and tokenize it (`read_text_lines` + `tokenize_lines`).

    Args:
        path: str or path-like, the text file.
        level: str, `"word"` or `"character"`. Default `"word"`.
        lowercase: bool, lower-case the text first. Default False.
        unit: str, `"line"` or `"paragraph"`. Default `"line"`.
        eol_token: str, the end-of-line token. Default `"<eol>"`.

    Returns:
        list of str, the token stream.

    Raises:
        UserError: as `read_text_lines`.

    Example:

    ```python
    train_tokens = load_token_stream("data/lm/train.txt", level="character")
    ```
    """
    return tokenize_lines(
        read_text_lines(path), level=level, lowercase=lowercase, unit=unit, eol_token=eol_token
    )


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


def make_tbptt_dataset(ids, batch_size, chunk_len, drop_remainder=False):
    """Lay a token stream out as `batch_size` parallel streams cut into consecutive chunks.

    The stream is cut into `batch_size` contiguous pieces of `S = (len(ids) - 1)
    // batch_size` tokens; row `b` of every batch continues row `b` of the
    previous batch, so a stateful `LanguageModel` can carry its state across
    batches. Batch `k` is `(x, y)` with `x = streams[:, k*K:(k+1)*K]` and `y`
    the same positions one token later in the original stream (the true next
    token, also at the end of a piece). At most `batch_size - 1` tokens at the
    end of `ids` are not used. Batches come in order (no shuffling).

    Args:
        ids: 1-D array-like of int, the encoded token stream.
        batch_size: int, the number of parallel streams.
        chunk_len: int, the number of time steps K per batch (the truncation
            length of back-propagation through time).
        drop_remainder: bool, drop the last batch when it is shorter than
            `chunk_len` (for fixed shapes). Default False.

    Returns:
        `tf.data.Dataset` of `(x, y)` int32 pairs, each `[batch_size, <= chunk_len]`.

    Example:

    ```python
    make_tbptt_dataset(np.arange(1, 14), batch_size=2, chunk_len=4)
    # x: [[1 2 3 4] [7 8 9 10]], y: [[2 3 4 5] [8 9 10 11]]
    # x: [[5 6] [11 12]],        y: [[6 7] [12 13]]
    ```
    """
    import tensorflow as tf

    for arg_name, value in (("batch_size", batch_size), ("chunk_len", chunk_len)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(
                f"Expected {arg_name} to be an integer >= 1. Received: {arg_name}={value!r}"
            )
    ids = np.asarray(ids)
    if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(
            f"Expected ids to be a 1-D array of integers. Received: shape={ids.shape}, "
            f"dtype={ids.dtype}"
        )
    stream_len = (len(ids) - 1) // batch_size
    if stream_len < 1:
        raise ValueError(
            f"Expected at least batch_size + 1 = {batch_size + 1} token ids. "
            f"Received: {len(ids)} ids"
        )
    used = stream_len * batch_size
    x = ids[:used].reshape(batch_size, stream_len).astype(np.int32)
    y = ids[1 : used + 1].reshape(batch_size, stream_len).astype(np.int32)
    num_chunks = stream_len // chunk_len if drop_remainder else -(-stream_len // chunk_len)
    if num_chunks < 1:
        raise ValueError(
            f"Expected streams of at least chunk_len={chunk_len} tokens with "
            f"drop_remainder=True. Received: {stream_len} tokens per stream"
        )
    chunks_x = [x[:, k * chunk_len : (k + 1) * chunk_len] for k in range(num_chunks)]
    chunks_y = [y[:, k * chunk_len : (k + 1) * chunk_len] for k in range(num_chunks)]
    full = [k for k in range(num_chunks) if chunks_x[k].shape[1] == chunk_len]
    dataset = None
    if full:
        dataset = tf.data.Dataset.from_tensor_slices(
            (np.stack([chunks_x[k] for k in full]), np.stack([chunks_y[k] for k in full]))
        )
    if len(full) < num_chunks:  # the shorter last chunk
        last = tf.data.Dataset.from_tensors((chunks_x[-1], chunks_y[-1]))
        dataset = last if dataset is None else dataset.concatenate(last)
    options = tf.data.Options()
    options.deterministic = True
    # Autotune's optimisation loop stalls the start of every epoch on CPU.
    options.autotune.enabled = False
    return dataset.with_options(options)
