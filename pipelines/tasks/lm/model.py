"""The language model's wiring from the config: the stateful training model and its
non-stateful inference copy (token ids in, next-token logits out)."""


def build_model(cfg, vocabulary_size, stateful):
    """A `LanguageModel` of the config's size (not built).

    Args:
        cfg: LMConfig.
        vocabulary_size: int, ids including padding and `[UNK]`.
        stateful: bool, carry the recurrent state across batches (TBPTT training).
    """
    from elman.models.language_model import LanguageModel

    return LanguageModel(vocabulary_size, embedding_dim=cfg.model.embedding_dim,
                         cell=cfg.model.cell, units=cfg.model.units,
                         num_layers=cfg.model.num_layers, dropout=cfg.model.dropout,
                         stateful=stateful, name="language_model")


def build_and_compile(cfg, vocabulary_size):
    """A new built, compiled stateful model for TBPTT training (the house Adam).

    Args:
        cfg: LMConfig.
        vocabulary_size: int.
    """
    import keras

    from elman.core.train import adam

    model = build_model(cfg, vocabulary_size, stateful=True)
    model.build((None, None))
    model.compile(
        optimizer=adam(cfg.train),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0))
    return model


def inference_copy(cfg, trained, vocabulary_size):
    """A non-stateful copy of the trained weights (no optimizer), saved as model.keras.

    Args:
        cfg: LMConfig.
        trained: the trained stateful `LanguageModel`.
        vocabulary_size: int.
    """
    model = build_model(cfg, vocabulary_size, stateful=False)
    model.build((None, None))
    source = trained.trainable_weights
    target = model.trainable_weights
    if [tuple(w.shape) for w in source] != [tuple(w.shape) for w in target]:
        raise RuntimeError("the inference model's weights do not match the trained model's")
    for new, old in zip(target, source):
        new.assign(old)
    return model
