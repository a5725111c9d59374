"""SentencePiece in plain Python (no TensorFlow): learning a model, text → pieces → text.

`learn_pieces` trains the model every subword tokenizer uses (`elman.text.subword`'s
Keras layer, and the language model, which tokenizes in Python before TensorFlow
loads). Ids 0-3 are `<pad>`, `<unk>`, `<s>`, `</s>`, then the pieces. A piece keeps
the space before it as `▁`, so `join_pieces` gives back the (NFKC-normalised) text.
"""

import io

ALGORITHMS = ("unigram", "bpe")
SPACE_MARK = "\u2581"  # "▁": SentencePiece's mark of a piece that starts a word
SPECIAL = ("<pad>", "<unk>", "<s>", "</s>")  # ids 0-3
NORMALIZATIONS = ("nmt_nfkc", "nfkc", "identity")  # SentencePiece's built-in rules


def learn_pieces(lines, vocabulary_size, algorithm="unigram", character_coverage=1.0,
                 normalization="nmt_nfkc"):
    """Trains a SentencePiece model on some lines of text; returns its serialized bytes.

    One thread, no sampling of sentences and no shuffling, so the same lines always give
    the same model. A corpus too small for `vocabulary_size` gets the largest vocabulary
    it supports instead of an error. Blank lines are left out.

    Args:
        lines: list of str, the training text (already lower-cased if wanted).
        vocabulary_size: int, the pieces wanted, ids 0-3 included.
        algorithm: str, "unigram" or "bpe". Default "unigram".
        character_coverage: float, the share of the characters kept as pieces (the
            rarest of the rest map to `<unk>`). Default 1.0.
        normalization: str, the rule applied to text before it is split, kept in the
            model so tokenizing applies it too: "nmt_nfkc" (NFKC plus some control
            characters removed), "nfkc", or "identity" (the characters as written, so
            full-width Chinese punctuation stays full-width). Runs of spaces are folded
            and leading and trailing spaces dropped whatever the rule. Default "nmt_nfkc".
    """
    import sentencepiece as spm

    if algorithm not in ALGORITHMS:
        raise ValueError(f"Expected algorithm to be one of {set(ALGORITHMS)}. "
                         f"Received: algorithm={algorithm!r}")
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"Expected normalization to be one of {set(NORMALIZATIONS)}. "
                         f"Received: normalization={normalization!r}")
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise ValueError("Expected training texts to learn subwords from. Received none.")
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buffer, model_type=algorithm,
        vocab_size=vocabulary_size, hard_vocab_limit=False,
        character_coverage=character_coverage, normalization_rule_name=normalization,
        pad_id=0, unk_id=1, bos_id=2, eos_id=3,
        pad_piece=SPECIAL[0], unk_piece=SPECIAL[1], bos_piece=SPECIAL[2],
        eos_piece=SPECIAL[3], input_sentence_size=0, shuffle_input_sentence=False,
        num_threads=1, max_sentence_length=1 << 16, minloglevel=2)
    return buffer.getvalue()


class PieceSplitter:
    """Splits text into the pieces of a SentencePiece model (a callable: str → list of str).

    A run of characters the model does not know comes back as one piece holding them,
    which a vocabulary of known pieces then reads as unknown.

    Args:
        model: bytes, a serialized SentencePiece model (`learn_pieces`).

    Example:
        >>> split = PieceSplitter(learn_pieces(["the cat sat"] * 20, 20))
        >>> split("the cat")
        ['▁the', '▁cat']
    """

    def __init__(self, model):
        import sentencepiece as spm

        self.model = bytes(model)
        self._processor = spm.SentencePieceProcessor(model_proto=self.model)

    @property
    def size(self):
        """int, the model's number of ids (the four special ones included)."""
        return self._processor.get_piece_size()

    def __call__(self, text):
        return self._processor.encode(text, out_type=str)


def join_pieces(pieces):
    """Pieces → text: concatenated, each `▁` a space, the leading one dropped (the rule of
    `elman.text.subword.detokenize_pieces`, in Python).

    Example:
        >>> join_pieces(["▁Il", "▁est", "▁vie", "ux", "."])
        'Il est vieux.'
    """
    text = "".join(pieces).replace(SPACE_MARK, " ")
    return text[1:] if text.startswith(" ") else text
