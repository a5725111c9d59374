import numpy as np
import tensorflow as tf

from elman.core.batching import dataset_from_plan, plan_epoch, plan_eval


def test_plan_is_seeded_covers_every_example_once_and_has_a_fixed_batch_count():
    lengths = np.random.default_rng(0).integers(1, 60, size=1003)
    a = plan_epoch(lengths, 32, seed=7, epoch=2)
    b = plan_epoch(lengths, 32, seed=7, epoch=2)
    c = plan_epoch(lengths, 32, seed=7, epoch=3)
    assert all((x == y).all() for x, y in zip(a, b))
    assert any(len(x) != len(y) or (x != y).any() for x, y in zip(a, c))
    for plan in (a, c):
        assert sorted(np.concatenate(plan).tolist()) == list(range(1003))
    assert len(a) == len(c) == len(plan_epoch(lengths, 32, seed=1, epoch=9))


def test_bucketing_cuts_padding():
    lengths = np.random.default_rng(1).integers(1, 100, size=2000)

    def padded(plan):
        return sum(len(b) * lengths[b].max() for b in plan)

    bucketed = padded(plan_epoch(lengths, 32, 0, 0, bucketing=True))
    plain = padded(plan_epoch(lengths, 32, 0, 0, bucketing=False))
    assert bucketed < 0.7 * plain
    assert bucketed >= lengths.sum()


def test_dataset_gathers_and_pads_planned_batches():
    ids = tf.ragged.constant([[1, 2, 3], [4], [5, 6]], dtype=tf.int64)
    y = tf.constant([0, 1, 0])
    plan = plan_eval([3, 1, 2], batch_size=2)
    batches = list(dataset_from_plan(ids, y, plan))
    assert batches[0][0].numpy().tolist() == [[4, 0], [5, 6]]
    assert batches[0][1].numpy().tolist() == [1, 0]
    assert batches[1][0].numpy().tolist() == [[1, 2, 3]]
