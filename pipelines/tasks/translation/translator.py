"""Strings ↔ ids for translation, and `Translator`: a trained model with its tokenizers
and decoders, source strings in, translated strings out (also as a SavedModel)."""

import json
from pathlib import Path

from elman.core.html import write_text_atomic
from elman.errors import UserError
from elman.tasks.translation.config import END, START

TOKENIZERS_FILE = "tokenizers.json"


def _join_rule(level, lang=""):
    """How target tokens become text: (separator, [(RE2 pattern, replacement), ...]).

    Word level glues word-internal hyphens and typographic apostrophes (peut-être, l’a),
    closing marks to the word before them (`vieux .` → `vieux.`) and opening marks to the
    word after them. French (`lang` fr…) keeps its space before ! ? ; : and », and after «.
    """
    if level == "char":
        return "", []
    if level == "cjk":  # no spaces around Han/kana/Hangul and full-width punctuation
        han = r"[\p{Han}\x{3040}-\x{30ff}\x{ac00}-\x{d7af}\x{3000}-\x{303f}\x{ff00}-\x{ffef}]"
        return " ", [(f" ?({han}) ?", r"\1")]
    french = (lang or "").lower().startswith("fr")
    closing, opening = (r".,)\]}…", r"(\[{¿¡") if french else (r".,!?;:)\]}%…»", r"(\[{¿¡«")
    return " ", [(r"([\p{L}\p{N}]) ([-’]) ", r"\1\2"),
                 (f" ([{closing}])", r"\1"), (f"([{opening}]) ", r"\1")]


def ids_to_tokens(ids, vocabulary, start_id, end_id):
    """Decoded ids `[batch, T]` → ragged string tokens, cut at the first end or padding.

    A start token in the output (never expected) is dropped. Runs in graph or eager mode.

    Args:
        ids: int tensor or array `[batch, T]`.
        vocabulary: list of str, the target vocabulary.
        start_id, end_id: int, the reserved target tokens.
    """
    import tensorflow as tf

    ids = tf.cast(ids, tf.int32)
    stop = tf.logical_or(tf.equal(ids, end_id), tf.equal(ids, 0))
    before_end = tf.equal(tf.cumsum(tf.cast(stop, tf.int32), axis=1), 0)
    keep = tf.logical_and(before_end, tf.not_equal(ids, start_id))
    return tf.gather(tf.constant(vocabulary), tf.ragged.boolean_mask(ids, keep))


def tokens_to_text(tokens, level, lang=""):
    """Ragged string tokens → one string per row, joined by the target level's rule.

    Subword pieces carry their own spacing (`elman.text.subword.detokenize_pieces`);
    word, cjk and char tokens are joined by `_join_rule`.

    Args:
        tokens: ragged string tensor `[batch, None]`.
        level: str, the target tokenizer's level (cjk, word, char or subword).
        lang: str, the target language code (French keeps its spaces). Default "".
    """
    import tensorflow as tf

    if level == "subword":
        from elman.text.subword import detokenize_pieces

        return detokenize_pieces(tokens)
    separator, rules = _join_rule(level, lang)
    text = tf.strings.reduce_join(tokens, axis=1, separator=separator)
    for pattern, replacement in rules:
        text = tf.strings.regex_replace(text, pattern, replacement)
    return text


def caps_graph(source_ids, decoding):
    """`decoding.length_caps` in TensorFlow ops (the same float32 arithmetic).

    Args:
        source_ids: int tensor `[batch, S]`, 0 = padding.
        decoding: dict with max_len_ratio, max_len_offset and max_len.
    """
    import tensorflow as tf

    lengths = tf.cast(tf.math.count_nonzero(source_ids, axis=1), tf.float32)
    caps = tf.cast(tf.math.ceil(tf.constant(decoding["max_len_ratio"], tf.float32) * lengths),
                   tf.int32) + decoding["max_len_offset"]
    if decoding.get("max_len"):
        caps = tf.minimum(caps, decoding["max_len"])
    return tf.maximum(caps, 1)


def ragged_ids(tokenizer, texts):
    """Texts → ragged int64 ids with the tokenizer (tokenized inside tf.data, in chunks)."""
    import tensorflow as tf

    if not texts:
        return tf.ragged.constant([], dtype=tf.int64, ragged_rank=1)
    ds = tf.data.Dataset.from_tensor_slices(tf.constant(texts, dtype=tf.string))
    parts = list(ds.batch(4096).map(tokenizer.ragged_ids))
    return tf.concat(parts, axis=0) if len(parts) > 1 else parts[0]


def shift(ids, start_id, end_id):
    """Target ids → (decoder input: start + ids, decoder output: ids + end)."""
    import tensorflow as tf

    n = ids.nrows()
    ones = tf.ones([n], tf.int64)
    start = tf.RaggedTensor.from_row_lengths(tf.fill([n], tf.constant(start_id, tf.int64)), ones)
    end = tf.RaggedTensor.from_row_lengths(tf.fill([n], tf.constant(end_id, tf.int64)), ones)
    return tf.concat([start, ids], axis=1), tf.concat([ids, end], axis=1)


def decoding_settings(cfg):
    """The decoding dict a run keeps in tokenizers.json (from a TranslationConfig)."""
    d = cfg.decoding
    return {"max_len_ratio": d.max_len_ratio, "max_len_offset": d.max_len_offset,
            "max_len": d.max_len, "batch_size": d.batch_size,
            "length_penalty": d.length_penalty}


def write_tokenizers(run_dir, source_tok, target_tok, decoding):
    """Writes tokenizers.json and the two vocabulary files to the run folder."""
    run_dir = Path(run_dir)
    write_text_atomic(run_dir / TOKENIZERS_FILE, json.dumps(
        {"source": source_tok.get_config(), "target": target_tok.get_config(),
         "start": START, "end": END, "decoding": decoding}, indent=1, sort_keys=True,
        ensure_ascii=False) + "\n")
    write_text_atomic(run_dir / "source_vocabulary.txt",
                      "\n".join(source_tok.get_vocabulary()) + "\n")
    write_text_atomic(run_dir / "target_vocabulary.txt",
                      "\n".join(target_tok.get_vocabulary()) + "\n")


def tokenizer_from_saved(config):
    """A TextTokenizer, or a SubwordTokenizer (its config holds a `model`), from its config."""
    if "model" in config:
        from elman.text.subword import SubwordTokenizer

        return SubwordTokenizer.from_config(config)
    from elman.text.tokenize import TextTokenizer

    return TextTokenizer.from_config(config)


def read_tokenizers(run_dir):
    """A run's (source tokenizer, target tokenizer, decoding dict) from tokenizers.json."""
    path = Path(run_dir) / TOKENIZERS_FILE
    if not path.is_file():
        raise UserError("the run has no tokenizers.json", path=run_dir)
    info = json.loads(path.read_text(encoding="utf-8"))
    return (tokenizer_from_saved(info["source"]), tokenizer_from_saved(info["target"]),
            info["decoding"])


class Translator:
    """A trained run in memory: tokenizers + Seq2SeqTranslator + decoders, strings in and out.

    Args:
        model: a built Seq2SeqTranslator.
        source_tokenizer: TextTokenizer of the source side.
        target_tokenizer: TextTokenizer of the target side (START and END reserved).
        decoding: dict with max_len_ratio, max_len_offset, max_len, batch_size,
            length_penalty.
        target_lang: str, the target language code (detokenization rules). Default "".
    """

    def __init__(self, model, source_tokenizer, target_tokenizer, decoding, target_lang=""):
        self.model = model
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.decoding = dict(decoding)
        vocabulary = target_tokenizer.get_vocabulary()
        self.vocabulary = vocabulary
        self.start_id, self.end_id = vocabulary.index(START), vocabulary.index(END)
        self.level = target_tokenizer.level
        self.target_lang = target_lang

    @classmethod
    def from_run(cls, run_dir):
        """Loads a finished run folder (model.keras + tokenizers.json)."""
        from elman.core import runs

        run_info = runs.read_run(run_dir, "translation")
        source_tok, target_tok, decoding = read_tokenizers(run_dir)
        return cls(runs.load_model(run_dir), source_tok, target_tok, decoding,
                   run_info.get("target_lang", ""))

    def caps_kwargs(self):
        """The length caps as keyword arguments of the decoders."""
        d = self.decoding
        return {"max_len": d.get("max_len") or None, "max_len_ratio": d["max_len_ratio"],
                "max_len_offset": d["max_len_offset"]}

    def decode_ids(self, source_ids, beam_width=0, return_attention=False):
        """Padded source ids `[batch, S]` → decoded ids `[batch, T]` (numpy)."""
        from elman.tasks.translation.decoding import beam_search_decode, greedy_decode

        if beam_width and beam_width > 0:
            return beam_search_decode(self.model, source_ids, self.start_id, self.end_id,
                                      beam_width=beam_width,
                                      length_penalty=self.decoding["length_penalty"],
                                      **self.caps_kwargs())
        return greedy_decode(self.model, source_ids, self.start_id, self.end_id,
                             return_attention=return_attention, **self.caps_kwargs())

    def tokens(self, ids):
        """Decoded ids → list of lists of str target tokens."""
        ragged = ids_to_tokens(ids, self.vocabulary, self.start_id, self.end_id)
        return [[t.decode("utf-8") for t in row] for row in ragged.to_list()]

    def texts(self, ids):
        """Decoded ids → list of str translations."""
        ragged = ids_to_tokens(ids, self.vocabulary, self.start_id, self.end_id)
        return [t.decode("utf-8")
                for t in tokens_to_text(ragged, self.level, self.target_lang).numpy()]

    def translate_ids(self, source_ragged, beam_width=0, batch_size=None):
        """Decodes ragged source ids in length-sorted batches; returns padded ids per row."""
        import numpy as np
        import tensorflow as tf

        from elman.core.batching import plan_eval

        lengths = source_ragged.row_lengths().numpy()
        rows = [None] * len(lengths)
        for batch in plan_eval(lengths, batch_size or self.decoding["batch_size"]):
            dense = tf.gather(source_ragged, batch).to_tensor(default_value=0).numpy()
            if dense.shape[1] == 0:
                dense = np.zeros([len(batch), 1], np.int64)
            ids = self.decode_ids(dense, beam_width)
            for i, row in zip(batch, ids):
                rows[i] = row
        width = max((len(r) for r in rows), default=0)
        out = np.zeros([len(rows), width], np.int32)
        for i, row in enumerate(rows):
            out[i, :len(row)] = row
        return out

    def translate(self, texts, beam_width=0):
        """Raw source strings → translated strings (batched, order kept)."""
        source = ragged_ids(self.source_tokenizer, list(texts))
        return self.texts(self.translate_ids(source, beam_width))

    def serving_function(self):
        """A graph function: 1-D string tensor of sources → 1-D string tensor of translations.

        Tokenizes with the source TextTokenizer, decodes with the compiled greedy loop
        of `decoding.greedy_decode` (same caps) and detokenizes with `tokens_to_text`.
        """
        import tensorflow as tf

        from elman.tasks.translation.decoding import _greedy_function

        greedy = _greedy_function(self.model)
        decoding, vocabulary, level = self.decoding, self.vocabulary, self.level
        lang = self.target_lang
        start_id, end_id, tokenizer = self.start_id, self.end_id, self.source_tokenizer

        def serve(texts):
            source = tf.cast(tokenizer(texts), tf.int32)
            ids = greedy(source, caps_graph(source, decoding), tf.constant(start_id),
                         tf.constant(end_id))
            return tokens_to_text(ids_to_tokens(ids, vocabulary, start_id, end_id), level, lang)

        return serve

    def export(self, path):
        """Writes a SavedModel whose `serve` signature maps source strings to translations."""
        import keras
        import tensorflow as tf

        archive = keras.export.ExportArchive()
        if not self.source_tokenizer.built:
            self.source_tokenizer.build()
        archive.track(self.model)
        archive.track(self.source_tokenizer)
        archive.add_endpoint("serve", self.serving_function(),
                             input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
        archive.write_out(str(path), verbose=False)
