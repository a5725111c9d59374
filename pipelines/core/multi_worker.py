"""The training loop used with `--strategy multi-worker`.

`model.fit` under `tf.distribute.MultiWorkerMirroredStrategy` is broken in Keras 3
(keras-team/keras#20585), so `elman.core.train.fit` runs the epochs with this
loop instead: the same planned batches, the same callbacks (per-epoch commit, best
weights, early stopping, NaN stop), so resume and reports work as with `fit`.

Batches: each planned batch is the *global* batch (`train.batch_size` examples).
It is split into `num_replicas_in_sync` contiguous slices (bucketing keeps their
lengths alike); worker w feeds the slices of its own replicas. Every worker builds
the same plan from the same seed, so no data moves between workers. The loss of a
replica is its examples' loss sum divided by the global example count of the step
(what `tf.nn.compute_average_loss(per_example, global_batch_size)` computes), and
the optimizer sums the replicas' gradients (all-reduce), which gives the gradient of
the global batch mean whatever the split.

Gradient clipping (`global_clipnorm`) is applied by the Keras optimizer to each
replica's share before the all-reduce; with one replica per worker and few workers
the difference from clipping the summed gradient is small.
"""

import math

import tensorflow as tf


def _split_for_replicas(make_dataset, replicas):
    """A dataset function giving each input pipeline the slices of its replicas."""

    def dataset_fn(context):
        local = replicas // context.num_input_pipelines
        first = context.input_pipeline_id * local

        def split(*element):
            element = element[0] if len(element) == 1 else element
            n = tf.shape(tf.nest.flatten(element)[0])[0]
            parts = [tf.nest.map_structure(
                lambda t, r=r: t[(n * r) // replicas:(n * (r + 1)) // replicas], element)
                for r in range(first, first + local)]
            out = tf.data.Dataset.from_tensors(parts[0])
            for part in parts[1:]:
                out = out.concatenate(tf.data.Dataset.from_tensors(part))
            return out

        # no auto-sharding here: each input pipeline takes its own replicas' slices
        return make_dataset().flat_map(split)

    return dataset_fn


def _unpack(batch):
    if isinstance(batch, tuple) and len(batch) in (2, 3):
        return batch[0], batch[1], batch[2] if len(batch) == 3 else None
    return batch, None, None


def fit_epochs(model, strategy, dataset, steps, initial_epoch, epochs, validation, callbacks,
               log=print, tensorboard_dir=None):
    """Runs epochs `initial_epoch`..`epochs` - 1 of a compiled model built under `strategy`.

    Args:
        model: compiled keras.Model whose variables were created under `strategy`.
        strategy: tf.distribute.Strategy (MultiWorkerMirroredStrategy).
        dataset: tf.data.Dataset of global (x, y[, w]) batches, `steps` per epoch, for
            all remaining epochs one after the other.
        steps: int, batches per epoch.
        initial_epoch: int, the first epoch to run (0-based).
        epochs: int, the epoch count to reach.
        validation: tf.data.Dataset of global validation batches, or None.
        callbacks: list of keras.callbacks.Callback; the hooks fit would call
            (on_epoch_begin, on_train_batch_end with the loss, on_epoch_end with the
            logs) are called here, and `model.stop_training` is honoured.
        log: callable for progress messages.
        tensorboard_dir: folder for TensorBoard scalars, or None.
    """
    replicas = strategy.num_replicas_in_sync
    train_data = strategy.distribute_datasets_from_function(
        _split_for_replicas(lambda: dataset, replicas))
    val_data = val_steps = None
    if validation is not None:
        val_steps = int(validation.cardinality())
        val_data = strategy.distribute_datasets_from_function(
            _split_for_replicas(lambda: validation, replicas))
    train_step, test_step, any_worker = _steps(model, strategy)
    writers = None
    if tensorboard_dir is not None:
        writers = {k: tf.summary.create_file_writer(str(tensorboard_dir / k))
                   for k in ("train", "validation")}
    for callback in callbacks:
        callback.set_model(model)
    model.stop_training = False
    iterator = iter(train_data)
    for epoch in range(initial_epoch, epochs):
        for callback in callbacks:
            callback.on_epoch_begin(epoch)
        logs = _train_epoch(model, train_step, iterator, steps, callbacks)
        if model.stop_training:
            break
        if val_data is not None:
            logs.update(_validate(model, test_step, val_data, val_steps, callbacks))
        log(f"epoch {epoch + 1}/{epochs} - " + " - ".join(
            f"{k}: {v:.4f}" for k, v in sorted(logs.items())))
        if writers is not None:
            _write_scalars(writers, logs, epoch)
        for callback in callbacks:
            callback.on_epoch_end(epoch, logs)
        # stop together: a time budget may run out on one worker only, and a worker left
        # alone would wait for the others forever
        model.stop_training = bool(any_worker(tf.constant(bool(model.stop_training))))
        if model.stop_training:
            break


def _steps(model, strategy):
    """The compiled distributed steps: (train_step, test_step, any_worker).

    Each step runs one global batch on every replica and returns the summed loss and
    example count; `any_worker(flag)` is True when the flag is set on any worker.
    """
    replicas = strategy.num_replicas_in_sync
    optimizer = model.optimizer
    total = tf.distribute.ReduceOp.SUM

    def replica_losses(x, y, w, training):
        context = tf.distribute.get_replica_context()
        n = tf.shape(tf.nest.flatten(y)[0])[0]
        n_all = context.all_reduce(total, n)
        y_pred = model(x, training=training)
        # compute_loss returns the replica's mean loss divided by the replica count
        # (Keras' own scaling under tf.distribute); undo it to get the plain mean
        mean = model.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=w,
                                  training=training) * replicas
        loss_sum = mean * tf.cast(n, mean.dtype)
        return y_pred, loss_sum, loss_sum / tf.cast(tf.maximum(n_all, 1), mean.dtype), n

    def train_replica(batch):
        x, y, w = _unpack(batch)
        with tf.GradientTape() as tape:
            y_pred, loss_sum, loss, n = replica_losses(x, y, w, True)
            scaled = optimizer.scale_loss(loss)  # loss scaling for mixed_float16
        variables = model.trainable_variables
        optimizer.apply(tape.gradient(scaled, variables), variables)
        model.compute_metrics(x, y, y_pred, sample_weight=w)
        return loss_sum, n

    def test_replica(batch):
        x, y, w = _unpack(batch)
        y_pred, loss_sum, _, n = replica_losses(x, y, w, False)
        model.compute_metrics(x, y, y_pred, sample_weight=w)
        return loss_sum, n

    def reduced(fn):
        @tf.function
        def step(iterator):
            loss_sum, n = strategy.run(fn, args=(next(iterator),))
            return (strategy.reduce(total, loss_sum, axis=None),
                    strategy.reduce(total, n, axis=None))
        return step

    @tf.function
    def any_worker(flag):
        votes = strategy.run(lambda: tf.cast(flag, tf.int32))
        return strategy.reduce(total, votes, axis=None) > 0

    return reduced(train_replica), reduced(test_replica), any_worker


def _metric_values(model):
    values = {k: float(v) for k, v in model.get_metrics_result().items() if k != "loss"}
    for metric in model.metrics:
        metric.reset_state()
    return values


def _train_epoch(model, train_step, iterator, steps, callbacks):
    """One epoch of `steps` batches; returns the epoch's logs (mean loss, metrics)."""
    for metric in model.metrics:
        metric.reset_state()
    loss_sum, count = 0.0, 0
    for batch in range(steps):
        s, n = train_step(iterator)
        loss_sum, count = loss_sum + float(s), count + int(n)
        step_loss = float(s) / max(int(n), 1)
        for callback in callbacks:
            callback.on_train_batch_end(batch, {"loss": step_loss})
        if model.stop_training or not math.isfinite(step_loss):
            break
    if model.stop_training:
        return {}
    return {"loss": loss_sum / max(count, 1), **_metric_values(model)}


def _validate(model, test_step, val_data, val_steps, callbacks):
    """The validation logs (val_loss and val_ metrics) over `val_steps` batches."""
    for callback in callbacks:
        callback.on_test_begin()
    val_iterator = iter(val_data)
    v_sum, v_count = 0.0, 0
    for _ in range(val_steps):
        s, n = test_step(val_iterator)
        v_sum, v_count = v_sum + float(s), v_count + int(n)
    logs = {"val_loss": v_sum / max(v_count, 1)}
    logs.update({"val_" + k: v for k, v in _metric_values(model).items()})
    for callback in callbacks:
        callback.on_test_end()
    return logs


def _write_scalars(writers, logs, epoch):
    for name, writer in writers.items():
        with writer.as_default():
            for key, value in logs.items():
                if key.startswith("val_") == (name == "validation"):
                    tf.summary.scalar("epoch_" + key.removeprefix("val_"), value, step=epoch)
