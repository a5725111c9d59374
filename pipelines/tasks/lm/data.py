"""Language-model data: text files → Splits of lines → token streams → TBPTT batches.

The items of a language-model `Split` are the lines of its text (blank lines
included: they separate paragraphs); `token_stream` turns them into one token
stream with an `<eol>` token after each line or paragraph. Validation, when no
file is given, is the last `data.validation_fraction` of the training file's
non-blank lines (the text's order matters, so it is not a random carve).
"""


import numpy as np

from elman.core.split import Split, sha256
from elman.errors import UserError
from elman.text.splitters import EOL_TOKEN, tokenize_lines


def read_text_lines(path, encoding="utf-8"):
    """Read a text file (UTF-8 unless `encoding` names another) as a list of lines
    (without line endings).

    A leading byte-order mark is dropped; `\\r\\n` and `\\n` both end a line.

    Args:
        path: str or path-like, the text file.
        encoding: str, the file's text encoding (`data.encoding`). Default "utf-8".

    Returns:
        list of str, one entry per line of the file.

    Raises:
        UserError: the file is missing, is not a file, is not of the encoding (with
            the line of the first bad byte), or holds no non-blank text.

    Example:

    ```python
    lines = read_text_lines("data/lm/train.txt")
    ```
    """
    from elman.core.encodings import read_lines

    lines = read_lines(path, encoding, "a text file")
    if not any(line.strip() for line in lines):
        raise UserError("file is empty (no non-blank text)", path=path)
    return lines


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


def token_stream(lines, text_cfg, pieces=None):
    """The token stream of some lines of text, tokenized as the run's config says.

    Args:
        lines: list of str (a Split's items).
        text_cfg: LMTextConfig.
        pieces: the run's `elman.text.pieces.PieceSplitter` at subword level, else None.

    Returns:
        list of str, an `<eol>` after each line (or paragraph).
    """
    return tokenize_lines(lines, level=text_cfg.level, lowercase=text_cfg.lowercase,
                          unit=text_cfg.unit, pieces=pieces)


def _text_split(name, lines, source, digest):
    return Split(name, lines, source, digest,
                 counts={"lines": sum(1 for line in lines if line.strip())})


def _train_and_validation(data_cfg):
    """The train and validation Splits: two files, or the tail of train held out."""
    lines = read_text_lines(data_cfg.train, data_cfg.encoding)
    digest = sha256(data_cfg.train)
    if data_cfg.validation:
        return (_text_split("train", lines, data_cfg.train, digest),
                _text_split("validation", read_text_lines(data_cfg.validation, data_cfg.encoding),
                            data_cfg.validation, sha256(data_cfg.validation)))
    filled = [i for i, line in enumerate(lines) if line.strip()]
    held = int(round(data_cfg.validation_fraction * len(filled)))
    if len(filled) < 2 or held < 1:
        raise UserError(f"the training text has {len(filled)} non-blank lines, too few to "
                        "hold some out for validation; give --validation FILE",
                        path=data_cfg.train)
    cut = filled[-held]
    return (_text_split("train", lines[:cut], f"{data_cfg.train} (lines 1-{cut})", digest),
            _text_split("validation", lines[cut:],
                        f"{data_cfg.train} (lines {cut + 1}-{len(lines)})", digest))


def load_data(cfg):
    """Reads and tokenizes the train/validation/test files (no TensorFlow); fails fast.

    At subword level the SentencePiece model is learned on the training split's text
    alone (`elman.tasks.lm.vocabulary.learn_subword`), then tokenizes every split.

    Args:
        cfg: LMConfig.

    Returns:
        (splits, streams, pieces): dict name → `Split` of lines for "train",
        "validation" and, when given, "test"; dict name → its token stream; the
        `PieceSplitter` at subword level, else None. Each split's counts hold its
        non-blank "lines" and its "tokens".
    """
    if not cfg.data.train:
        raise UserError("give a training text file: --data FILE (or data.train in the config)")
    train, validation = _train_and_validation(cfg.data)
    splits = {"train": train, "validation": validation}
    if cfg.data.test:
        test = read_text_lines(cfg.data.test, cfg.data.encoding)
        splits["test"] = _text_split("test", test, cfg.data.test, sha256(cfg.data.test))
    pieces = None
    if cfg.text.level == "subword":
        from elman.tasks.lm.vocabulary import learn_subword
        from elman.text.pieces import PieceSplitter

        pieces = PieceSplitter(learn_subword(train.items, cfg.text))
    streams = tokenize_splits(splits, cfg.text, pieces)
    if len(streams["train"]) < cfg.train.batch_size:
        raise UserError(f"the training text has {len(streams['train'])} tokens, too few "
                        f"for train.batch_size={cfg.train.batch_size} parallel streams; lower "
                        "train.batch_size or give more text", path=cfg.data.train)
    return splits, streams, pieces


def tokenize_splits(splits, text_cfg, pieces=None):
    """{name: token stream} of every split; each split's counts get its "tokens"."""
    streams = {}
    for name, split in splits.items():
        streams[name] = token_stream(split.items, text_cfg, pieces)
        split.counts["tokens"] = len(streams[name])
    return streams


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
