"""Length-bucketed, seeded batch plans and the tf.data pipeline that serves them.

A plan is a list of index arrays, one per batch, fixed by (seed, epoch): the same
seed gives the same batches in the same order, so an interrupted run resumes on the
exact batches it would have seen. Bucketing sorts examples by length inside large
shuffled windows, so a batch holds sentences of similar length and little padding.
"""

import numpy as np
import tensorflow as tf

WINDOW_BATCHES = 50  # a sorting window holds this many batches


def plan_epoch(lengths, batch_size, seed, epoch, bucketing=True, shuffle=True):
    """Returns the batches (arrays of example indices) of one epoch.

    The number of batches depends only on the number of examples and the batch size.
    """
    lengths = np.asarray(lengths)
    n = len(lengths)
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(n) if shuffle else np.arange(n)
    batches = []
    window = batch_size * WINDOW_BATCHES if bucketing else n
    for start in range(0, n, max(window, 1)):
        chunk = order[start:start + window]
        if bucketing:
            chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size))
    if shuffle:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def plan_eval(lengths, batch_size):
    """Batches for evaluation: sorted by length (little padding), no shuffling."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def _pad(component, max_len=None):
    if isinstance(component, tf.RaggedTensor):
        dense = component.to_tensor(default_value=0)
        if max_len is not None:
            dense = dense[:, :max_len]
        pad = tf.maximum(1 - tf.shape(dense)[1], 0)  # at least one position
        return tf.pad(dense, [[0, 0], [0, pad]] + [[0, 0]] * (len(dense.shape) - 2))
    return component


def dataset_from_plan(features, targets, batches, weights=None):
    """A tf.data pipeline that gathers and pads each planned batch.

    Args:
        features: a tf.RaggedTensor (or tuple of them) of token ids, one row per example.
        targets: a tf.Tensor or tf.RaggedTensor of targets per example, or None.
        batches: list of index arrays (a plan, possibly several epochs long).
        weights: optional per-example tensor, gathered like targets.

    Returns:
        tf.data.Dataset of (x, y) or (x, y, w) padded batches (or x when targets is None).
    """
    flat = np.concatenate(batches) if batches else np.zeros([0], np.int64)
    lengths = np.array([len(b) for b in batches], np.int64)
    index = tf.RaggedTensor.from_row_lengths(flat.astype(np.int64), lengths)
    ds = tf.data.Dataset.from_tensor_slices(index)

    def gather(idx):
        x = tf.nest.map_structure(lambda c: _pad(tf.gather(c, idx)), features)
        if targets is None:
            return x
        y = _pad(tf.gather(targets, idx))
        if weights is None:
            return x, y
        return x, y, tf.gather(weights, idx)

    ds = ds.map(gather, num_parallel_calls=1, deterministic=True)
    options = tf.data.Options()
    options.deterministic = True
    options.autotune.enabled = False  # avoids the epoch-start stall (see NOTES-tensorflow)
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return ds.prefetch(2).with_options(options)
