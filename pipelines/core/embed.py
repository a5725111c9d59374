"""Starting vectors for an embedding: pretrained word vectors (word2vec/GloVe text files)
read into a matrix, or word2vec vectors learned on the training texts themselves."""

import dataclasses
import time
import zlib

import numpy as np

from elman.errors import UserError
from elman.core.data import read_text_file


@dataclasses.dataclass
class Coverage:
    """How much of the vocabulary a pretrained file covered."""

    path: str
    found: int
    vocabulary: int  # tokens in the vocabulary (padding and OOV excluded)
    found_lowercased: int  # found only after lower-casing
    learned: bool = False  # the vectors were learned on the training texts (train_vectors)

    @property
    def share(self):
        return self.found / self.vocabulary if self.vocabulary else 0.0

    def describe(self, unit="tokens"):
        """The report's sentence on where the starting vectors came from."""
        if self.learned:
            return (f"Word vectors learned on {self.path} start the embedding: "
                    f"{self.found:,} of {self.vocabulary:,} vocabulary {unit} have one "
                    f"({100 * self.share:.1f}%; the others start random).")
        return (f"Pretrained vectors `{self.path}` cover {self.found:,} of "
                f"{self.vocabulary:,} vocabulary {unit} ({100 * self.share:.1f}%; "
                f"{self.found_lowercased:,} only after lower-casing).")


def read_pretrained(path, vocabulary, dim, seed=0):
    """Reads word2vec/GloVe text vectors for a vocabulary.

    Accepts GloVe lines (`token v1 ... vD`) and word2vec text files (the same, after a
    `count dim` header line). Tokens missing from the file get small random vectors;
    row 0 (padding) is zero.

    Args:
        path: str, the vectors file.
        vocabulary: list of str, id → token (index 0 padding, 1 OOV).
        dim: int, the expected vector size.
        seed: int, seeds the random vectors of missing tokens.

    Returns:
        (matrix [len(vocabulary), dim] float32, Coverage)
    """
    text = read_text_file(path)
    wanted = {t: i for i, t in enumerate(vocabulary) if i >= 2}
    lowered = {}
    for t, i in wanted.items():
        lowered.setdefault(t.lower(), []).append(i)
    rng = np.random.default_rng(seed)
    matrix = rng.normal(0.0, 0.1, size=(len(vocabulary), dim)).astype("float32")
    matrix[0] = 0.0
    exact, by_lower = set(), set()
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.rstrip().split(" ")
        if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
            if int(parts[1]) != dim:
                raise UserError(f"vectors have {parts[1]} dimensions but embedding.dim is {dim}",
                                path=path, line=1)
            continue
        if len(parts) < 2:
            continue
        token, values = parts[0], parts[1:]
        if len(values) != dim:
            raise UserError(f"expected {dim} numbers after the token, found {len(values)} "
                            "(set embedding.dim to the file's dimension)", path=path, line=number)
        if token not in wanted and token.lower() not in lowered:
            continue
        try:
            vector = np.asarray(values, dtype="float32")
        except ValueError:
            raise UserError("expected numbers after the token", path=path, line=number) from None
        if token in wanted:
            matrix[wanted[token]] = vector
            exact.add(wanted[token])
        for i in lowered.get(token.lower(), []):
            if i not in exact and i not in by_lower:
                matrix[i] = vector
                by_lower.add(i)
    by_lower -= exact
    return matrix, Coverage(str(path), len(exact | by_lower), len(wanted), len(by_lower))


def _stable_hash(text):
    # gensim seeds each word's starting vector from hashfxn(word + seed); Python's own
    # hash() of a str changes between processes, so runs would not repeat
    return zlib.crc32(text.encode("utf-8"))


def _within_budget(lengths, epochs, max_tokens, seed):
    """(kept, passes) that read at most `max_tokens` tokens in all, given each text's
    length: every text (kept None) for fewer passes when one pass fits, else a seeded
    share of them (their sorted positions in `lengths`) for one pass."""
    total = int(sum(lengths))
    if max_tokens is None or total * epochs <= max_tokens:
        return None, epochs
    if total <= max_tokens:
        return None, max(1, max_tokens // total)
    order = np.random.default_rng(seed).permutation(len(lengths))
    kept, count = [], 0
    for index in order:
        if count + lengths[index] > max_tokens:
            break
        kept.append(int(index))
        count += lengths[index]
    return sorted(kept), 1


def _ints(row):
    return row.tolist() if hasattr(row, "tolist") else row


class _IdTexts:
    """The training texts as word2vec reads them, each a list of str token ids (padding
    dropped, empty texts skipped), made afresh on each pass, so that only the ids are
    held, never a string per token; `kept`: the positions among the non-empty texts to
    read (None: all)."""

    def __init__(self, id_rows, vocabulary_size, kept=None):
        self.id_rows, self.kept = id_rows, None if kept is None else set(kept)
        self.names = [str(i) for i in range(vocabulary_size)]

    def __iter__(self):
        position = 0
        for row in self.id_rows:
            words = [self.names[i] for i in _ints(row) if i != 0]
            if not words:
                continue
            if self.kept is None or position in self.kept:
                yield words
            position += 1


class RaggedRows:
    """The rows of a ragged id matrix (its flat values and row splits, NumPy), one at a
    time: word2vec's input without a Python list per text."""

    def __init__(self, ragged):
        self.values = ragged.flat_values.numpy()
        self.splits = ragged.row_splits.numpy()

    def __iter__(self):
        for start, end in zip(self.splits[:-1], self.splits[1:]):
            yield self.values[start:end]


def train_vectors(id_rows, vocabulary_size, dim, method="skipgram", epochs=10, window=5,
                  seed=0, max_tokens=None):
    """Word vectors learned on the training texts themselves (word2vec, gensim), to start
    the embedding from instead of random vectors: no outside text is read.

    Each training text is its sequence of token ids as the run's own tokenizer or
    vocabulary gives them (so the vectors fit the vocabulary exactly, `[UNK]` included);
    word2vec then learns, with negative sampling (10 noise words) and frequent-word
    down-sampling (1e-3), a vector per id from the ids within `window` positions. One
    worker thread and a process-independent hash make the vectors depend on the seed
    only.

    Args:
        id_rows: the training texts' token ids (0 is padding and is dropped): a list of
            int sequences, or any iterable that gives them afresh each time it is read
            (`RaggedRows`), since it is read once per pass and nothing is copied.
        vocabulary_size: int, rows of the matrix.
        dim: int, the vector size.
        method: str, "skipgram" (predict the context from the word) or "cbow" (the word
            from its averaged context).
        epochs: int, passes over the texts.
        window: int, context positions on each side.
        seed: int, seeds word2vec and the random vectors of ids the texts never hold.
        max_tokens: int or None, the most tokens word2vec reads in all passes together:
            on a corpus where `epochs` passes would read more, it makes as many whole
            passes as fit (at least one), and on one where even one pass would, one pass
            over a seeded share of the texts. The coverage's source says which. Default
            None (no limit).

    Returns:
        (matrix [vocabulary_size, dim] float32, Coverage): row 0 (padding) is zero, ids the
        texts never hold get small random vectors (as `read_pretrained` gives missing
        tokens); the coverage counts the learned rows among ids 2 and up.
    """
    from gensim.models import Word2Vec

    lengths, largest = [], 0
    for row in id_rows:
        row = _ints(row)
        largest = max(largest, max(row, default=0))
        length = len(row) - row.count(0)
        if length:
            lengths.append(length)
    if not lengths:
        raise UserError("embedding.train_vectors: the training texts hold no tokens")
    if largest >= vocabulary_size:
        raise ValueError(f"token id {largest} is outside the vocabulary of {vocabulary_size}")
    kept, passes = _within_budget(lengths, epochs, max_tokens, seed)
    model = Word2Vec(_IdTexts(id_rows, vocabulary_size, kept), vector_size=dim,
                     window=window, min_count=1, sg=int(method == "skipgram"), negative=10,
                     sample=1e-3, epochs=passes, workers=1, seed=seed, hashfxn=_stable_hash)
    rng = np.random.default_rng(seed)
    matrix = rng.normal(0.0, 0.1, size=(vocabulary_size, dim)).astype("float32")
    matrix[0] = 0.0
    rows = np.asarray([int(key) for key in model.wv.index_to_key])  # gensim's row order
    matrix[rows] = model.wv.vectors
    learned = int((rows >= 2).sum())
    name = {"skipgram": "skip-gram", "cbow": "CBOW"}[method]
    budget = ""
    if passes < epochs or kept is not None:
        budget = (f" of {epochs} asked" if kept is None else
                  f" over {len(kept):,} of the {len(lengths):,} texts") + (
            f", within embedding.vector_max_tokens = {max_tokens:,}")
    epochs_read = f"{passes} epoch" + ("s" if passes != 1 else "")
    return matrix, Coverage(f"the training texts (word2vec {name}, {epochs_read}{budget}, "
                            f"window {window})", learned, max(vocabulary_size - 2, 0), 0, True)


def recentre_vectors(matrix, components=0, std=0.0):
    """Starting vectors with their shared directions taken out, and rescaled.

    Word2vec vectors share a large common direction: on IMDB's training reviews the mean
    vector's norm is 0.92 of the mean vector norm, so every word looks alike to the
    encoder. "All-but-the-top" (Mu and Viswanath 2018) subtracts the mean vector and the
    projection on the `components` leading principal directions; `std` then scales the
    result to that element standard deviation (Keras' random embedding, uniform in
    ±0.05, has 0.029). Row 0 (padding) stays zero; the statistics are taken over every
    other row.

    Args:
        matrix: float array [vocabulary_size, dim].
        components: int, principal directions removed after the mean (0: the mean only;
            -1 removes nothing, so `std` only rescales).
        std: float, the element standard deviation after; 0 keeps the scale.

    Returns:
        A new float32 matrix of the same shape.
    """
    rows = np.asarray(matrix, dtype="float64")[1:]
    if rows.shape[0] < 2:
        raise UserError("embedding.vector_centre and embedding.vector_std need at least two "
                        "vectors to reshape")
    if components >= 0:
        rows = rows - rows.mean(axis=0)
    if components > 0:
        _, _, directions = np.linalg.svd(rows, full_matrices=False)
        top = directions[:components]
        rows = rows - (rows @ top.T) @ top
    if std:
        spread = rows.std()
        if spread > 0:
            rows = rows * (std / spread)
    out = np.zeros(np.shape(matrix), dtype="float32")
    out[1:] = rows
    return out


def check_starting_vectors(embedding):
    """Refuses `embedding.pretrained` together with `embedding.train_vectors`, and
    `vector_centre` / `vector_std` without starting vectors or with too many directions."""
    if embedding.pretrained and embedding.train_vectors != "none":
        raise UserError("embedding.pretrained and embedding.train_vectors both give the "
                        "embedding its starting vectors; set one of them")
    reshaped = embedding.vector_centre >= 0 or embedding.vector_std
    if reshaped and not embedding.pretrained and embedding.train_vectors == "none":
        raise UserError("embedding.vector_centre and embedding.vector_std reshape starting "
                        "vectors; set embedding.train_vectors or embedding.pretrained too")
    if embedding.vector_centre < -1:
        raise UserError("embedding.vector_centre must be -1 (off), 0 (the mean only) or a "
                        f"number of leading directions to remove; got {embedding.vector_centre}")
    if embedding.vector_centre >= embedding.dim:
        raise UserError(f"embedding.vector_centre removes that many of the {embedding.dim} "
                        f"directions the vectors have; it must be below embedding.dim, got "
                        f"{embedding.vector_centre}")


def starting_vectors(embedding, vocabulary, id_rows, seed, log=print):
    """The embedding's starting matrix and its Coverage: read from `embedding.pretrained`,
    learned on the training texts (`embedding.train_vectors`), or (None, None) for
    random vectors.

    Args:
        embedding: the task's embedding settings (`pretrained`, `dim`, `train_vectors`,
            `vector_epochs`, `vector_window`, `vector_max_tokens`; `vector_centre` and
            `vector_std` then reshape the matrix, `recentre_vectors`).
        vocabulary: list of str, id → token (0 padding, 1 OOV).
        id_rows: callable giving the training texts' token id rows (called only for
            `train_vectors`).
        seed: int.
        log: callable for the one progress line.
    """
    matrix, coverage = _starting_matrix(embedding, vocabulary, id_rows, seed, log)
    centre, std = embedding.vector_centre, embedding.vector_std
    if matrix is not None and (centre >= 0 or std):
        matrix = recentre_vectors(matrix, centre, std)
        done = [f"centred (mean and {centre} leading directions removed)"] if centre >= 0 else []
        log("starting vectors " + ", ".join(done + ([f"scaled to sd {std:g}"] if std else [])))
    return matrix, coverage


def _starting_matrix(embedding, vocabulary, id_rows, seed, log):
    if embedding.pretrained:
        matrix, coverage = read_pretrained(embedding.pretrained, vocabulary, embedding.dim, seed)
        log(f"pretrained vectors cover {coverage.found:,} of {coverage.vocabulary:,} "
            f"vocabulary entries ({100 * coverage.share:.1f}%)")
        return matrix, coverage
    if embedding.train_vectors == "none":
        return None, None
    began = time.perf_counter()
    matrix, coverage = train_vectors(id_rows(), len(vocabulary), embedding.dim,
                                     embedding.train_vectors, embedding.vector_epochs,
                                     embedding.vector_window, seed,
                                     embedding.vector_max_tokens)
    log(f"word vectors learned on the training texts for {coverage.found:,} of "
        f"{coverage.vocabulary:,} vocabulary entries in {time.perf_counter() - began:.0f} s")
    return matrix, coverage
