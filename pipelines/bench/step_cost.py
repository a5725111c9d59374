"""Where a short training step's time goes: a fixed cost per step against a cost per token.

`python -m elman.bench.step_cost` (issue 20). The bench's model (the keras-io recipe's
sizes: embedding 128, BiLSTM 64, dense 64) is trained on batches of one shape,
B sentences × L tokens, for several B at a fixed L. A least-squares line through the
step times, t(B) = fixed + per_row × B, splits a step into what it pays whatever its
size (Python, the tf.function call, the optimizer's per-variable updates, callbacks)
and what grows with its rows (the recurrent kernels). Then the same epoch of real,
bucketed toy batches is timed under the settings that change the fixed part:

- `fit` with no callbacks;
- with a callback that reads the loss after every batch (as the NaN stop does), which
  makes every step wait for the previous one to finish;
- with `steps_per_execution` 4 and 16 (several steps per tf.function call);
- compiled with XLA (`jit_compile=True`), one compilation per batch shape (the warm-up
  epoch compiles every shape of the timed epoch, so compile time is not in the rate);
- token-budget batches (`train.batch_tokens`) at the example batches' mean padded size,
  and at 2,000 tokens.

All rows run in one process, side by side, best of `repeats`.

The first measurement run before issue 20's fixes; the layers-and-optimizer rows
(`python -m elman.bench.step_cost --layers` runs only those) train the same model
three ways, rounds alternating: Keras' LSTM and Adam (elman before the fixes), elman's
right-padded LSTM with Keras' Adam, and elman's right-padded LSTM with its fused Adam.
"""

import sys
import time

DIMS = (128, 64, 64)  # embedding, units, dense hidden


def _model(vocab, steps_per_execution=1, jit_compile=False):
    from elman.bench.rows import _ours

    model = _ours(vocab, *DIMS)
    model.compile(optimizer=model.optimizer, loss=model.loss, metrics=["accuracy"],
                  steps_per_execution=steps_per_execution, jit_compile=jit_compile)
    return model


class _ReadLoss:
    """A callback that reads the loss after every batch (what a NaN check does)."""

    def __new__(cls):
        import keras

        class ReadLoss(keras.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                float((logs or {}).get("loss", 0.0))

        return ReadLoss()


def _best(function, repeats):
    function()  # warm-up (tracing)
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        function()
        times.append(time.perf_counter() - began)
    return min(times)


def fixed_and_per_row(vocab, length=20, rows=(4, 8, 16, 32, 64, 128), steps=30, repeats=3,
                      jit_compile=False):
    """(fixed seconds per step, seconds per row, [(rows, seconds per step)])."""
    import numpy as np
    import tensorflow as tf

    model = _model(vocab, jit_compile=jit_compile)
    rng = np.random.default_rng(0)
    points = []
    for b in rows:
        x = tf.constant(rng.integers(2, vocab, (b, length)), tf.int32)
        y = tf.constant(rng.integers(0, 2, (b,)), tf.int32)
        ds = tf.data.Dataset.from_tensors((x, y)).repeat(steps)
        seconds = _best(lambda: model.fit(ds, epochs=1, verbose=0), repeats)
        points.append((b, seconds / steps))
    slope, intercept = np.polyfit([p[0] for p in points], [p[1] for p in points], 1)
    return float(intercept), float(slope), points


def _epoch(model, ids, y, plan, callbacks):
    from elman.core.batching import dataset_from_plan

    return lambda: model.fit(dataset_from_plan(ids, y, plan), epochs=1, verbose=0,
                             callbacks=callbacks, shuffle=False)


def settings_rows(ids, labels, lengths, vocab, batch=32, repeats=3, seed=1234):
    """Tokens/s of one bucketed epoch under each setting (see the module docstring)."""
    import numpy as np
    import tensorflow as tf

    from elman.core.batching import plan_epoch, plan_tokens

    y = tf.constant(labels, tf.int32)
    examples = plan_epoch(lengths, batch, seed, 0)
    padded = np.mean([len(b) * lengths[b].max() for b in examples])
    tokens = int(np.sum(lengths))
    out = {}
    for name, spe, jit, callbacks, plan in (
            ("no callbacks", 1, False, [], examples),
            ("loss read after every batch", 1, False, [_ReadLoss()], examples),
            ("steps_per_execution 4", 4, False, [_ReadLoss()], examples),
            ("steps_per_execution 16", 16, False, [_ReadLoss()], examples),
            ("XLA (jit_compile)", 1, True, [_ReadLoss()], examples),
            (f"token budget {int(padded)} (same mean padded tokens)", 1, False,
             [_ReadLoss()], plan_tokens(lengths, int(padded), seed, 0)),
            ("token budget 2000", 1, False, [_ReadLoss()],
             plan_tokens(lengths, 2000, seed, 0))):
        seconds = _best(_epoch(_model(vocab, spe, jit), ids, y, plan, callbacks), repeats)
        out[name] = {"seconds": round(seconds, 3), "tokens_per_s": round(tokens / seconds),
                     "steps": len(plan)}
    return out


def layers_and_optimizer_rows(ids, labels, lengths, vocab, batch=32, rounds=3, seed=1234):
    """Tokens/s of one bucketed epoch of the bench's model built three ways: Keras' LSTM
    and Adam (elman before issue 20), elman's right-padded LSTM with Keras' Adam, and
    elman's right-padded LSTM with the fused Adam (elman now). Same data, batches and
    sizes; rounds alternate between the three, and each keeps its best round."""
    import contextlib

    import keras
    import tensorflow as tf

    from elman.bench.rows import _ours
    from elman.bench.timing import batch_clock, steady_rate, warm_up_plan
    from elman.core.batching import dataset_from_plan, plan_epoch
    from elman.models import encoders

    @contextlib.contextmanager
    def keras_cells():
        saved = encoders._CELLS
        encoders._CELLS = {"lstm": keras.layers.LSTM, "gru": keras.layers.GRU,
                           "rnn": keras.layers.SimpleRNN}
        try:
            yield
        finally:
            encoders._CELLS = saved

    y = tf.constant(labels, tf.int32)
    variants = {}
    for name, cells, fused in (("Keras LSTM + Keras Adam", keras_cells, False),
                               ("padded LSTM + Keras Adam", contextlib.nullcontext, False),
                               ("padded LSTM + fused Adam (elman)", contextlib.nullcontext,
                                True)):
        with cells():
            model = _ours(vocab, *DIMS)
        if not fused:
            model.compile(optimizer=keras.optimizers.Adam(1e-3),
                          loss="sparse_categorical_crossentropy")
        model.fit(dataset_from_plan(ids, y, warm_up_plan(lengths, batch)), verbose=0,
                  shuffle=False)
        variants[name] = (model, [])
    for r in range(rounds):
        plan = plan_epoch(lengths, batch, seed, r)
        tokens = [int(lengths[b].sum()) for b in plan]
        for model, rates in variants.values():
            clock = batch_clock()
            model.fit(dataset_from_plan(ids, y, plan), epochs=1, verbose=0, callbacks=[clock],
                      shuffle=False)
            rates.append(steady_rate(clock, tokens))
    return {name: {"tokens_per_s": round(max(rates)), "rounds": [round(x) for x in rates]}
            for name, (_, rates) in variants.items()}


def main(argv=None):
    """Prints the measurements on SST-2's training sentences (the toy data without it);
    `--layers`: only the layers-and-optimizer rows."""
    layers_only = "--layers" in (sys.argv[1:] if argv is None else argv)
    from elman.bench.suite import _bench_data

    ids, labels, lengths, tokenizer, _, _ = _bench_data(False, {"skipped": {}}, print)
    vocab = tokenizer.vocabulary_size
    for jit in () if layers_only else (False, True):
        fixed, per_row, points = fixed_and_per_row(vocab, jit_compile=jit)
        print(f"{'XLA' if jit else 'graph'}: one step of B rows × 20 tokens: "
              f"{1000 * fixed:.2f} ms fixed + {1000 * per_row:.3f} ms per row (least "
              f"squares over B = {', '.join(str(b) for b, _ in points)})")
        for b, seconds in points:
            print(f"  B = {b:3d}: {1000 * seconds:7.2f} ms a step, "
                  f"{100 * fixed / seconds:4.1f}% of it fixed")
    rows = layers_and_optimizer_rows(ids, labels, lengths, vocab)
    base = rows["Keras LSTM + Keras Adam"]["tokens_per_s"]
    for name, row in rows.items():
        print(f"{name:34s} {row['tokens_per_s']:>8,} tokens/s  ({row['tokens_per_s'] / base:.2f}x; "
              f"rounds {', '.join(f'{x:,}' for x in row['rounds'])})")
    if layers_only:
        return
    for name, row in settings_rows(ids, labels, lengths, vocab).items():
        print(f"{name:30s} {row['tokens_per_s']:>8,} tokens/s  ({row['seconds']:.2f} s for "
              f"{row['steps']} steps)")


if __name__ == "__main__":
    main()
