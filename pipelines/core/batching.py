"""Length-bucketed, seeded batch plans and the tf.data pipeline that serves them.

A plan is a list of index arrays, one per batch, fixed by (seed, epoch): the same
seed gives the same batches in the same order, so an interrupted run resumes on the
exact batches it would have seen. Bucketing sorts examples by length inside large
shuffled windows, so a batch holds sentences of similar length and little padding.
With `train.batch_tokens` the batches hold a token budget instead of a fixed number of
examples (`plan_tokens`).
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


def plan_tokens(lengths, batch_tokens, seed, epoch, multiple=1, shuffle=True):
    """Returns the token-budget batches (arrays of example indices) of one epoch.

    Examples are sorted by length (ties in a seeded random order that changes every
    epoch) and cut into runs whose padded size — rows × the longest row — stays within
    `batch_tokens`: short sentences come in large batches, long ones in small. A batch's
    row count is a multiple of `multiple` (the replica count, so every replica gets the
    same number of rows); when not even `multiple` rows fit, the batch takes `multiple`
    rows anyway (one sentence longer than the budget goes alone). Only the batch cut
    last (the longest sentences) may hold a row count that is not a multiple, when the
    examples run out. The batches are then shuffled.

    The cut points depend only on the sorted lengths, so every epoch has the same number
    of batches with the same shapes; the seed and epoch choose which sentences of equal
    length share a batch, and the batch order.

    Args:
        lengths: sequence of int, real tokens of each example (0 pads to 1 position).
        batch_tokens: int, the token budget of a (global) batch.
        seed: int, the run's seed.
        epoch: int, the epoch (0-based).
        multiple: int, rows per batch are a multiple of this. Default 1.
        shuffle: bool, random ties and batch order. Default True.
    """
    lengths = np.maximum(np.asarray(lengths, np.int64), 1)
    n = len(lengths)
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(n) if shuffle else np.arange(n)
    order = order[np.argsort(lengths[order], kind="stable")]
    ends = _token_budget_ends(lengths[order], int(batch_tokens), max(int(multiple), 1))
    batches = [order[start:end] for start, end in zip([0] + ends[:-1], ends)]
    if shuffle:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def _token_budget_ends(sorted_lengths, budget, multiple):
    """End offsets of the batches cut greedily from ascending lengths under `budget`."""
    n, ends, start = len(sorted_lengths), [], 0
    while start < n:
        # rows k fit while k × (the k-th length) <= budget; that product grows with k
        most = min(n - start, max(budget // int(sorted_lengths[start]), 1))
        padded = np.arange(1, most + 1) * sorted_lengths[start:start + most]
        rows = int(np.searchsorted(padded, budget, side="right"))
        rows = max(rows - rows % multiple, multiple)
        start = min(start + rows, n)
        ends.append(start)
    return ends


def plan_training(lengths, train_cfg, epoch, replicas=1):
    """The training batches of one epoch under a TrainConfig.

    `train.batch_tokens` > 0: token-budget batches (`plan_tokens`, rows a multiple of
    `replicas`); otherwise `train.batch_size` examples a batch (`plan_epoch`).
    """
    from elman.errors import UserError

    budget = getattr(train_cfg, "batch_tokens", 0)
    if not budget:
        return plan_epoch(lengths, train_cfg.batch_size, train_cfg.seed, epoch,
                          train_cfg.bucketing)
    if not train_cfg.bucketing:
        raise UserError("train.batch_tokens batches sentences of similar length together; "
                        "it needs train.bucketing = true")
    return plan_tokens(lengths, budget, train_cfg.seed, epoch, multiple=replicas)


def describe_batching(train_cfg):
    """How training batches are formed, for run.json and the report (JSON-ready dict)."""
    from elman.config import length_multiple

    budget = getattr(train_cfg, "batch_tokens", 0)
    if hasattr(train_cfg, "chunk_length"):  # the language model's TBPTT streams
        return {"mode": "streams", "batch_size": train_cfg.batch_size,
                "chunk_length": train_cfg.chunk_length}
    compiled = {"xla": bool(getattr(train_cfg, "xla", False)),
                "length_multiple": length_multiple(train_cfg),
                "steps_per_execution": int(getattr(train_cfg, "steps_per_execution", 1))}
    if budget:
        return {"mode": "tokens", "batch_tokens": int(budget), **compiled}
    return {"mode": "examples", "batch_size": train_cfg.batch_size,
            "bucketing": bool(getattr(train_cfg, "bucketing", False)), **compiled}


def plan_stats(plan, lengths, multiple=1):
    """Batches per epoch, mean rows, mean real and padded tokens of a plan (a dict);
    padded lengths are rounded up to `multiple` as `dataset_from_plan` pads them."""
    if not plan:
        return {"batches_per_epoch": 0}
    lengths = np.asarray(lengths, np.int64)
    rows = np.array([len(b) for b in plan], np.float64)
    real = np.array([lengths[b].sum() for b in plan], np.float64)
    padded = np.array([len(b) * _round_up(max(int(lengths[b].max()), 1), multiple)
                       for b in plan], np.float64)
    return {"batches_per_epoch": len(plan), "mean_examples_per_batch": float(rows.mean()),
            "mean_real_tokens_per_batch": float(real.mean()),
            "mean_padded_tokens_per_batch": float(padded.mean())}


def plan_eval(lengths, batch_size):
    """Batches for evaluation: sorted by length (little padding), no shuffling."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def _round_up(size, multiple):
    return (size + multiple - 1) // multiple * multiple


def _pad(component, max_len=None, multiple=1):
    """A ragged batch as a dense, zero-padded tensor: at least one position, and every
    ragged axis (length, char width) padded up to a multiple of `multiple`."""
    if isinstance(component, tf.RaggedTensor):
        dense = component.to_tensor(default_value=0)
        if max_len is not None:
            dense = dense[:, :max_len]
        shape = tf.shape(dense)
        pads = [[0, 0]]
        for axis in range(1, len(dense.shape)):
            size = tf.maximum(shape[axis], 1) if axis == 1 else shape[axis]
            pads.append([0, _round_up(size, multiple) - shape[axis]])
        return tf.pad(dense, pads)
    return component


def dataset_from_plan(features, targets, batches, weights=None, multiple=1):
    """A tf.data pipeline that gathers and pads each planned batch.

    Args:
        features: a tf.RaggedTensor (or tuple of them) of token ids, one row per example.
        targets: a tf.Tensor or tf.RaggedTensor of targets per example, or None.
        batches: list of index arrays (a plan, possibly several epochs long).
        weights: optional per-example tensor, gathered like targets.
        multiple: int, every padded axis (length, char width) is padded up to a multiple
            of this (`train.length_multiple`): XLA compiles one program per batch
            shape, so fewer distinct lengths mean fewer compilations. Default 1.

    Returns:
        tf.data.Dataset of (x, y) or (x, y, w) padded batches (or x when targets is None).
    """
    flat = np.concatenate(batches) if batches else np.zeros([0], np.int64)
    lengths = np.array([len(b) for b in batches], np.int64)
    index = tf.RaggedTensor.from_row_lengths(flat.astype(np.int64), lengths)
    ds = tf.data.Dataset.from_tensor_slices(index)

    def gather(idx):
        x = tf.nest.map_structure(lambda c: _pad(tf.gather(c, idx), multiple=multiple),
                                  features)
        if targets is None:
            return x
        y = _pad(tf.gather(targets, idx), multiple=multiple)
        if weights is None:
            return x, y
        return x, y, tf.gather(weights, idx)

    ds = ds.map(gather, num_parallel_calls=1, deterministic=True)
    options = tf.data.Options()
    options.deterministic = True
    options.autotune.enabled = False  # avoids the epoch-start stall (see NOTES-tensorflow)
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return ds.prefetch(2).with_options(options)
