"""The translation task's model: the Seq2SeqTranslator from its config, compiled with the
masked token accuracy, and the clean copy a run saves."""


def masked_token_accuracy():
    """A metric: token accuracy over real target positions (id 0 ignored).

    Stateful, and it ignores `sample_weight`: the mask comes from the targets, so the
    value is the same whether or not Keras passes the decoder's padding mask (it does
    without attention, not with it). The class is registered for checkpoint reloads.
    """
    import keras

    registered = keras.saving.get_registered_object("elman>MaskedTokenAccuracy")
    if registered is not None:
        return registered()

    @keras.saving.register_keras_serializable(package="elman")
    class MaskedTokenAccuracy(keras.metrics.Metric):
        def __init__(self, name="masked_token_accuracy", **kwargs):
            super().__init__(name=name, **kwargs)
            self.hits = self.add_variable(shape=(), initializer="zeros", name="hits")
            self.count = self.add_variable(shape=(), initializer="zeros", name="count")

        def update_state(self, y_true, y_pred, sample_weight=None):
            ops = keras.ops
            y_true = ops.cast(y_true, "int32")
            mask = ops.cast(ops.not_equal(y_true, 0), "float32")
            predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
            hits = ops.cast(ops.equal(predicted, y_true), "float32")
            self.hits.assign_add(ops.sum(hits * mask))
            self.count.assign_add(ops.sum(mask))

        def result(self):
            return self.hits / keras.ops.maximum(self.count, 1.0)

        def reset_state(self):
            self.hits.assign(0.0)
            self.count.assign(0.0)

    return MaskedTokenAccuracy()


def compile_translator(model, train_cfg):
    """Compiles a Seq2SeqTranslator: Adam, masked cross-entropy on logits, token accuracy.

    Args:
        model: a Seq2SeqTranslator.
        train_cfg: TrainConfig (the optimizer's settings).
    """
    import keras

    from elman.core.train import adam

    model.compile(
        optimizer=adam(train_cfg),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0),
        metrics=[masked_token_accuracy()])
    return model


def translator_from_config(cfg, source_vocabulary_size, target_vocabulary_size):
    """The compiled Seq2SeqTranslator a TranslationConfig describes.

    Args:
        cfg: TranslationConfig (model and train sections).
        source_vocabulary_size, target_vocabulary_size: int, the two vocabularies' sizes.
    """
    from elman.models.seq2seq_translator import Seq2SeqTranslator

    m = cfg.model
    return compile_translator(Seq2SeqTranslator(
        source_vocabulary_size, target_vocabulary_size, embedding_dim=m.embedding_dim,
        units=m.units, cell=m.cell, num_layers=m.num_layers, bidirectional=m.bidirectional,
        dropout=m.dropout, attention=m.attention, bridge=m.bridge, combine=m.combine,
        name="seq2seq_translator"), cfg.train)


def clean_copy(trained):
    """An uncompiled copy of a trained Seq2SeqTranslator with the same weights (saved as
    model.keras: no optimizer state, no metrics)."""
    import numpy as np

    from elman.models.seq2seq_translator import Seq2SeqTranslator

    model = Seq2SeqTranslator.from_config(trained.get_config())
    model((np.ones([1, 2], np.int32), np.ones([1, 2], np.int32)))
    model.set_weights(trained.get_weights())
    return model
