"""The sentiment task's data: labelled texts (elman.core.data) and pretraining texts."""

from elman.core import data as data_stage
from elman.errors import UserError


def token_ids(tokenizer, texts):
    """Token ids of `texts` as a RaggedTensor, tokenized inside a tf.data pipeline."""
    import tensorflow as tf

    ds = tf.data.Dataset.from_tensor_slices(tf.constant(texts, dtype=tf.string))
    ds = ds.batch(2048).map(tokenizer.ragged_ids)  # tokenization inside the pipeline
    parts = list(ds)
    return tf.concat(parts, axis=0) if len(parts) > 1 else parts[0]


def pretraining_texts(cfg):
    """Checks the pretraining settings; returns the texts of `pretrain.texts` and a record.

    The record (source, SHA-256, counts) goes to the report; ([], None) when there is
    no such file. Blank lines are skipped and counted.
    """
    from elman.core.split import sha256
    from elman.tasks.lm.data import read_text_lines

    if cfg.pretrain.epochs and cfg.chars.features != "none":
        raise UserError("pretrain.epochs needs chars.features = \"none\" (a hidden word's "
                        "chars would give it away)")
    if not (cfg.pretrain.epochs and cfg.pretrain.texts):
        return [], None
    lines = read_text_lines(cfg.pretrain.texts, cfg.data.encoding)
    texts = [line for line in lines if line.strip()]
    return texts, {"split": "pretraining texts", "source": str(cfg.pretrain.texts),
                   "sha256": sha256(cfg.pretrain.texts), "texts": len(texts),
                   "blank_lines_skipped": len(lines) - len(texts)}


def load_data(cfg):
    """train/validation(/test) Splits of labelled texts; validation carved when not given."""
    return data_stage.load_classification_splits(cfg.data, cfg.train.seed)
