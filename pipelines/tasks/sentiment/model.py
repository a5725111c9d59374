"""The sentiment task's models: the classifier from its config, the raw-text inference
model (one classifier or an averaged ensemble), and masked-word pretraining."""

import dataclasses


def bigram_pairs(cfg, train_ids, vocabulary_size):
    """The known token-pair codes for `features.bigrams` (None when it is off), chosen on
    the training texts' token ids (a ragged tensor, or the dict with "token_ids")."""
    if not cfg.features.bigrams:
        return None
    from elman.models.token_bigrams import frequent_pairs

    if isinstance(train_ids, dict):
        train_ids = train_ids["token_ids"]
    f = cfg.features
    return frequent_pairs(train_ids.to_list(), vocabulary_size, f.bigram_min_count,
                          f.max_bigrams)


def classifier_from_config(cfg, vocabulary_size, num_classes, char_vocabulary_size=0,
                           embeddings_initializer="uniform", name="sentiment_classifier",
                           bigram_pairs=None):
    """The SentimentClassifier a SentimentConfig describes (not compiled); `bigram_pairs`
    (from `bigram_pairs`) is needed when `features.bigrams` is on."""
    if cfg.features.bigrams and bigram_pairs is None:
        raise ValueError("features.bigrams needs the pair codes: pass bigram_pairs")
    from elman.models.sentiment_classifier import SentimentClassifier

    e, h = cfg.encoder, cfg.head
    return SentimentClassifier(
        vocabulary_size, num_classes, embedding_dim=cfg.embedding.dim, cell=e.cell,
        units=e.units, num_layers=e.num_layers, bidirectional=e.bidirectional,
        dropout=e.dropout, merge_mode=e.merge_mode, recurrent_dropout=e.recurrent_dropout,
        pooling=h.pooling, attention_units=h.attention_units, hidden=h.hidden,
        head_dropout=h.dropout,
        embeddings_initializer=embeddings_initializer,
        embedding_trainable=cfg.embedding.trainable, word_dropout=cfg.embedding.dropout,
        unk_dropout=cfg.embedding.unk_dropout, char_features=cfg.chars.features,
        char_vocabulary_size=char_vocabulary_size, char_embedding_dim=cfg.chars.embedding_dim,
        char_units=cfg.chars.units, char_kernel_size=cfg.chars.kernel_size,
        adversarial=cfg.embedding.adversarial,
        virtual_adversarial=cfg.embedding.virtual_adversarial, rdrop=h.rdrop,
        bigram_pairs=bigram_pairs if cfg.features.bigrams else None,
        bigram_dim=cfg.features.bigram_dim, lm_weight=h.lm_weight, lm_words=h.lm_words,
        lm_hidden=h.lm_hidden, rcnn=h.rcnn, mixup=h.mixup, name=name)


def build_inference_model(tokenizer, classifiers, char_ids=None):
    """Raw strings in, class probabilities out.

    Args:
        tokenizer: the tokenizer layer (TextTokenizer or SubwordTokenizer).
        classifiers: one SentimentClassifier, or a list of them (an ensemble: the
            probabilities are averaged).
        char_ids: the CharIds layer when the classifiers use char features.
    """
    import keras

    if not isinstance(classifiers, (list, tuple)):
        classifiers = [classifiers]
    text = keras.Input(shape=(), dtype="string", name="text")
    ids = tokenizer(text)
    if char_ids is not None:
        ids = {"token_ids": ids, "char_ids": char_ids(text)}
    outputs = [classifier(ids) for classifier in classifiers]
    probs = outputs[0] if len(outputs) == 1 else keras.layers.Average(name="ensemble")(outputs)
    return keras.Model(text, probs, name="sentiment_inference")


def pretrain(cfg, member_cfg, corpus, encoded, vocabulary_size, initializer, pretrain_dir,
              resume, strategy, log):
    """Masked-word pretraining of the embedding and encoder; returns fit's TrainResult.

    Reads `corpus` (token ids and lengths of the training texts and any extra texts;
    no labels); the validation texts' loss picks the best epoch. It has its own
    checkpoints under `pretrain_dir`, so an interrupted run resumes inside pretraining.
    """
    from elman.models.masked_word_pretrainer import MaskedWordPretrainer
    from elman.core.batching import dataset_from_plan, plan_eval
    from elman.core.train import adam, fit, read_state

    p, e = cfg.pretrain, cfg.encoder
    train_cfg = dataclasses.replace(member_cfg, epochs=p.epochs, batch_size=p.batch_size,
                                    learning_rate=p.learning_rate, patience=p.patience,
                                    monitor="val_loss", ema=0.0, lr_decay=1.0, average_best=0,
                                    plateau=0.0,
                                    batch_tokens=0)  # pretrain.batch_size examples a batch

    def build_and_compile():
        model = MaskedWordPretrainer(
            vocabulary_size, embedding_dim=cfg.embedding.dim, cell=e.cell, units=e.units,
            num_layers=e.num_layers, bidirectional=e.bidirectional, dropout=p.dropout,
            merge_mode=e.merge_mode, rate=p.rate,
            embeddings_initializer=initializer,
            embedding_trainable=cfg.embedding.trainable, seed=member_cfg.seed,
            name="masked_word_pretrainer")
        model.compile(optimizer=adam(train_cfg))
        return model

    ids, lengths = corpus
    val_ids, _, val_lengths = encoded["validation"]  # token ids only: no char features
    validation = dataset_from_plan(val_ids, None, plan_eval(val_lengths, p.batch_size))
    log(f"pretraining the embedding and encoder on hidden words (up to {p.epochs} epochs)")
    return fit(build_and_compile, ids, None, lengths, validation, train_cfg, pretrain_dir,
               resume=resume and read_state(pretrain_dir) is not None, strategy=strategy,
               log=log)


def pretraining_row(seed, result, state=None):
    """The report's row for one member's pretraining (from its TrainResult or state.json)."""
    import math

    if result is not None:
        history, best, epochs = result.history, result.best_epoch, result.epochs_run
    elif state is not None:
        history, best, epochs = state["history"], state["best_epoch"], state["epoch"]
    else:
        return {"seed": seed, "epochs_run": None, "best_epoch": None,
                "validation_loss": None, "validation_perplexity": None}
    loss = history["val_loss"][best - 1]
    return {"seed": seed, "epochs_run": epochs, "best_epoch": best, "validation_loss": loss,
            "validation_perplexity": math.exp(loss)}


def distilled_targets(teacher_probs, labels, share, temperature=1.0):
    """The student's training targets under `head.distill` (float32, one row a text).

    Args:
        teacher_probs: (N, C) array, the teachers' mean class probabilities of each
            training text (rows summing to 1).
        labels: N int class indices (the gold labels).
        share: a in [0, 1], the teachers' part of each target.
        temperature: T > 0; the teachers' row p becomes p^(1/T) / Σ p^(1/T) first
            (T > 1 flattens it, T = 1 keeps it).

    Returns:
        (N, C) array: (1 - a)·onehot(label) + a·softened p; each row sums to 1.
    """
    import numpy as np

    probs = np.asarray(teacher_probs, np.float64)
    labels = np.asarray(labels, np.int64)
    if temperature != 1.0:  # in logs, so a tiny probability does not underflow to 0/0
        logs = np.log(np.clip(probs, 1e-30, 1.0)) / temperature
        logs -= logs.max(axis=1, keepdims=True)
        probs = np.exp(logs)
        probs /= probs.sum(axis=1, keepdims=True)
    onehot = np.zeros_like(probs)
    onehot[np.arange(len(labels)), labels] = 1.0
    return ((1.0 - share) * onehot + share * probs).astype(np.float32)
