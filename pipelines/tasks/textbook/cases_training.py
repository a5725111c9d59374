"""Cases F and G: a bidirectional layer and a small encoder–decoder (F), and an RNN
language model (G), each fitted with a few Adam steps.

Case F shows the state size of `Bidirectional(SimpleRNN(3))` and the lengths of
a seq2seq pair (8 characters in, 6 tokens out), decoded greedily. Case G shows
per-step cross-entropy, the shared-weight gradient identity, truncated BPTT and
greedy generation that carries the state instead of re-running the prefix.
"""

from elman.tasks.textbook.common import DTYPE, to_py


def _seeded(seed):
    """Seeded kernel and recurrent initializers for a recurrent layer."""
    import keras

    return {"kernel_initializer": keras.initializers.GlorotUniform(seed=seed),
            "recurrent_initializer": keras.initializers.Orthogonal(seed=seed + 1)}


def _train(loss_fn, variables, steps, lr):
    """A few Adam steps in one compiled function; returns the last loss."""
    import keras
    import tensorflow as tf

    opt = keras.optimizers.Adam(learning_rate=lr)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn()
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    loss = None
    for _ in range(steps):
        loss = step()
    return float(loss_fn())


# ----------------------------------------------------------------------------- Case F


def _bidirectional(src_vocab, src_ids):
    """`Bidirectional(SimpleRNN(3))` on the source: shape, and forward-then-backward order."""
    import keras
    import numpy as np

    emb = keras.layers.Embedding(len(src_vocab), 4, name="bi_embedding",
                                 embeddings_initializer=keras.initializers.RandomUniform(seed=0))
    bi = keras.layers.Bidirectional(
        keras.layers.SimpleRNN(3, return_sequences=True, **_seeded(1)), name="bidirectional")
    x = emb(src_ids)
    out = bi(x).numpy()
    fwd = bi.forward_layer(x).numpy()
    bwd = bi.backward_layer(x).numpy()[:, ::-1]  # go_backwards: reverse back to positions
    split_ok = bool(np.allclose(out[..., :3], fwd, atol=1e-6)
                    and np.allclose(out[..., 3:], bwd, atol=1e-6))
    return {"units_per_direction": 3, "input_length": int(src_ids.shape[1]),
            "output_shape": list(out.shape), "per_position": int(out.shape[-1]),
            "concat_is_forward_then_backward": split_ok,
            "position_0": to_py(out[0, 0])}


def _seq2seq_layers(src_vocab, tgt_vocab, units=16):
    """The encoder–decoder's layers: embeddings, GRU encoder and decoder, projection."""
    import keras

    uniform = keras.initializers.RandomUniform
    enc_emb = keras.layers.Embedding(len(src_vocab), 8, name="enc_embedding",
                                     embeddings_initializer=uniform(seed=2))
    encoder = keras.layers.GRU(units, return_state=True, name="encoder", **_seeded(3))
    dec_emb = keras.layers.Embedding(len(tgt_vocab), 8, name="dec_embedding",
                                     embeddings_initializer=uniform(seed=5))
    decoder = keras.layers.GRU(units, return_sequences=True, return_state=True, name="decoder",
                               **_seeded(6))
    proj = keras.layers.Dense(len(tgt_vocab), name="projection",
                              kernel_initializer=keras.initializers.GlorotUniform(seed=8))
    return enc_emb, encoder, dec_emb, decoder, proj


def _seq2seq(src_vocab, src_ids, target, tgt_vocab, steps=30, cap=10):
    """Fits the encoder–decoder to the one pair, then decodes greedily.

    Returns:
        tuple (final_loss, decoded): the loss after `steps` Adam steps and the
        decoded tokens (start token, own previous prediction fed back, stop at
        <eos> or after `cap` tokens).
    """
    import keras
    import numpy as np
    import tensorflow as tf

    enc_emb, encoder, dec_emb, decoder, proj = _seq2seq_layers(src_vocab, tgt_vocab)
    dec_in = np.array([[tgt_vocab.index(t) for t in ["<start>"] + target[:-1]]], dtype="int32")
    dec_out = np.array([[tgt_vocab.index(t) for t in target]], dtype="int32")

    def logits_fn():
        _, state = encoder(enc_emb(src_ids))
        seq, _ = decoder(dec_emb(dec_in), initial_state=state)
        return proj(seq)

    logits_fn()
    scce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    variables = (enc_emb.trainable_variables + encoder.trainable_variables
                 + dec_emb.trainable_variables + decoder.trainable_variables
                 + proj.trainable_variables)
    final_loss = _train(lambda: scce(dec_out, logits_fn()), variables, steps, 0.1)

    _, state = encoder(enc_emb(src_ids))
    token, decoded = tgt_vocab.index("<start>"), []
    for _ in range(cap):  # state carried forward; the prefix is never re-run
        seq, state = decoder(dec_emb(np.array([[token]], dtype="int32")), initial_state=state)
        token = int(tf.argmax(proj(seq)[0, -1]))
        decoded.append(tgt_vocab[token])
        if decoded[-1] == "<eos>":
            break
    return final_loss, decoded


def case_f():
    """Case F: Bidirectional(SimpleRNN(3)) gives 6 numbers per position; seq2seq lengths 8 → 6.

    The encoder–decoder (GRU, width 16) is fitted to the one pair, then decoded
    greedily: start token, own previous prediction fed back, stop at <eos> or the cap.

    Returns:
        dict with `bidirectional` and `seq2seq`.
    """
    import numpy as np

    source = "我爱自然语言处理"
    chars = list(source)
    target = ["I", "love", "natural", "language", "processing", "<eos>"]
    src_vocab = sorted(set(chars))
    tgt_vocab = ["<start>", "<eos>", "I", "love", "natural", "language", "processing"]
    src_ids = np.array([[src_vocab.index(c) for c in chars]], dtype="int32")

    bidirectional = _bidirectional(src_vocab, src_ids)
    steps, cap = 30, 10
    final_loss, decoded = _seq2seq(src_vocab, src_ids, target, tgt_vocab, steps=steps, cap=cap)
    return {"bidirectional": bidirectional,
            "seq2seq": {"source": source, "source_tokens": chars, "input_length": len(chars),
                        "target_tokens": target, "output_length": len(target),
                        "train_steps": steps, "optimizer": "Adam(0.1)", "final_loss": final_loss,
                        "length_cap": cap,
                        "decoded": decoded, "stopped_at_eos": bool(decoded)
                        and decoded[-1] == "<eos>", "decoded_matches_target": decoded == target}}


# ----------------------------------------------------------------------------- Case G


class _TinyLM:
    """Case G's language model: `Embedding(4)` → `SimpleRNN(8)` → `Dense`, float64, seeded."""

    def __init__(self, vocab_size):
        import keras

        self.emb = keras.layers.Embedding(vocab_size, 4, dtype=DTYPE, name="lm_embedding",
                                          embeddings_initializer=keras.initializers.RandomUniform(
                                              -0.5, 0.5, seed=10))
        self.rnn = keras.layers.SimpleRNN(8, return_sequences=True, return_state=True,
                                          dtype=DTYPE, name="lm_rnn", **_seeded(11))
        self.head = keras.layers.Dense(vocab_size, dtype=DTYPE, name="lm_head",
                                       kernel_initializer=keras.initializers.GlorotUniform(
                                           seed=13))
        self.scce = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None,
                                                               dtype=DTYPE)

    def __call__(self, x, state=None):
        """Logits for every position, and the last state."""
        seq, last = self.rnn(self.emb(x), initial_state=None if state is None else [state])
        return self.head(seq), last

    @property
    def weights(self):
        return (self.emb.trainable_variables + self.rnn.trainable_variables
                + self.head.trainable_variables)


def _shared_weight_check(lm, inp, tgt):
    """Per-step losses, and the summed loss's gradient against the sum of per-step gradients.

    Returns:
        tuple (per_step, total, grad_check): the per-step loss tensor, the summed
        loss tensor, and a dict with `weights`, `max_abs_diff`, `max_abs_grad`, `equal`.
    """
    import tensorflow as tf

    weights = lm.weights
    names = [w.path for w in weights]
    with tf.GradientTape(persistent=True) as tape:
        logits, _ = lm(inp)
        per_step = lm.scce(tgt, logits)[0]
        parts = [per_step[t] for t in range(per_step.shape[0])]  # sliced on the tape
        total = tf.reduce_sum(per_step)

    def dense(grads):  # IndexedSlices (embedding) to tensors; an unused weight's None to zeros
        return [tf.zeros_like(w) if g is None else tf.convert_to_tensor(g)
                for g, w in zip(grads, weights)]

    g_total = dense(tape.gradient(total, weights))
    g_steps = [dense(tape.gradient(part, weights)) for part in parts]
    del tape
    diffs = [float(tf.reduce_max(tf.abs(gt - tf.add_n([gs[k] for gs in g_steps]))))
             for k, gt in enumerate(g_total)]
    scale = max(float(tf.reduce_max(tf.abs(g))) for g in g_total)
    grad_check = {"weights": names, "max_abs_diff": max(diffs), "max_abs_grad": scale,
                  "equal": max(diffs) <= 1e-12 * max(1.0, scale)}
    return per_step, total, grad_check


def _tbptt(lm, inp, tgt, K=2):
    """Truncated BPTT with chunk length K: the state crosses the chunk boundary, the gradient
    does not. Compared with full BPTT on the same weights."""
    import tensorflow as tf

    with tf.GradientTape(persistent=True) as tape:
        x1 = lm.emb(inp[:, :K])
        tape.watch(x1)
        seq1, h1 = lm.rnn(x1)
        l1 = tf.reduce_sum(lm.scce(tgt[:, :K], lm.head(seq1)))
        seq2, _ = lm.rnn(lm.emb(inp[:, K:]), initial_state=[tf.stop_gradient(h1)])
        l2 = tf.reduce_sum(lm.scce(tgt[:, K:], lm.head(seq2)))
        tb_total = l1 + l2
    cross = tape.gradient(l2, x1)
    g_tb = tape.gradient(tb_total, lm.rnn.trainable_variables)
    del tape
    with tf.GradientTape() as tape:
        full_total = tf.reduce_sum(lm.scce(tgt, lm(inp)[0]))
    g_full = tape.gradient(full_total, lm.rnn.trainable_variables)
    return {"K": K, "loss_tbptt": float(tb_total), "loss_full": float(full_total),
            "same_loss": abs(float(tb_total) - float(full_total)) <= 1e-12,
            "cross_boundary_grad": 0.0 if cross is None else float(tf.reduce_max(tf.abs(cross))),
            "grad_difference_norm": float(tf.linalg.global_norm(
                [a - b for a, b in zip(g_tb, g_full)]))}


def _generate(lm, vocab, prefix, n_new):
    """Greedy generation twice: re-running the whole prefix at every step, and carrying the
    state. Returns (naive, carried), the two token lists."""
    import numpy as np
    import tensorflow as tf

    naive = list(prefix)
    for _ in range(n_new):  # quadratic: the whole prefix again at every step
        logits, _ = lm(np.array([[vocab.index(t) for t in naive]], dtype="int32"))
        naive.append(vocab[int(tf.argmax(logits[0, -1]))])
    logits, state = lm(np.array([[vocab.index(t) for t in prefix]], dtype="int32"))
    carried = list(prefix)
    for _ in range(n_new):  # linear: one step per token, the state carried forward
        carried.append(vocab[int(tf.argmax(logits[0, -1]))])
        logits, state = lm(np.array([[vocab.index(carried[-1])]], dtype="int32"), state)
    return naive, carried


def case_g():
    """Case G: an RNN language model on 我 / 喜欢 / 深度 / 学习.

    Per-step cross-entropy; the gradient of the summed loss on the shared weights
    equals the sum of the per-step gradients (checked numerically); truncated BPTT
    with K = 2; greedy generation re-running the prefix against carrying the state.

    Returns:
        dict with `tokens`, `per_step_loss`, `loss_sum`, `loss_mean`, `grad_check`,
        `tbptt`, `generation`.
    """
    import numpy as np
    import tensorflow as tf

    tokens = ["我", "喜欢", "深度", "学习"]
    vocab = list(tokens)
    ids = np.array([[vocab.index(t) for t in tokens]], dtype="int32")
    inp, tgt = ids[:, :-1], ids[:, 1:]
    lm = _TinyLM(len(vocab))
    lm(inp)
    per_step, total, grad_check = _shared_weight_check(lm, inp, tgt)
    tbptt = _tbptt(lm, inp, tgt, K=2)

    steps = 80
    final = _train(lambda: tf.reduce_mean(lm.scce(tgt, lm(inp)[0])), lm.weights, steps, 0.05)
    trained = [float(v) for v in lm.scce(tgt, lm(inp)[0])[0]]

    prefix = ["我"]
    naive, carried = _generate(lm, vocab, prefix, n_new=len(tokens) - 1)
    return {"tokens": tokens, "inputs": tokens[:-1], "targets": tokens[1:],
            "per_step_loss": to_py(per_step.numpy()), "loss_sum": float(total),
            "loss_mean": float(total) / int(per_step.shape[0]), "grad_check": grad_check,
            "tbptt": tbptt,
            "training": {"steps": steps, "optimizer": "Adam(0.05)", "final_mean_loss": final,
                         "per_step_loss_after": trained},
            "generation": {"prefix": prefix, "naive": naive, "carried_state": carried,
                           "identical": naive == carried, "default": "carried_state"}}
