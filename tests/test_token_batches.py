"""Token-budget batches (`train.batch_tokens`, elman.core.batching.plan_tokens).

Oracles written here, not taken from the planner: coverage and the budget are checked
batch by batch; "similar lengths" is checked as non-overlapping length ranges and
against a brute-force minimum of the number of batches (every grouping of a few
examples enumerated); a run with the setting, stopped after every epoch and resumed,
ends with exactly the weights of an uninterrupted one.
"""

import functools
import json

import numpy as np
import pytest

from elman import config as config_lib
from elman.core.batching import plan_tokens, plan_training
from elman.errors import UserError


def _padded(batch, lengths):
    return len(batch) * max(int(np.max(lengths[batch])), 1)


def _lengths(n=997, seed=0):
    return np.random.default_rng(seed).integers(0, 60, size=n)


@pytest.mark.parametrize("multiple", [1, 2, 3])
def test_every_example_once_and_no_batch_over_budget(multiple):
    lengths = _lengths()
    lengths[:5] = [150, 90, 61, 200, 75]  # longer than the budget (or than half of it)
    budget = 120
    for seed, epoch in ((1, 0), (1, 1), (9, 4)):
        plan = plan_tokens(lengths, budget, seed, epoch, multiple=multiple)
        flat = np.concatenate(plan)
        assert sorted(flat.tolist()) == list(range(len(lengths)))
        short = 0
        for batch in plan:
            short += bool(len(batch) % multiple)  # only the examples' tail may be uneven
            if _padded(batch, lengths) > budget:  # not even `multiple` rows fit (or the tail)
                assert len(batch) <= multiple
                assert multiple * max(int(lengths[batch].max()), 1) > budget
        assert short == (1 if len(lengths) % multiple else 0)


def test_a_sentence_longer_than_the_budget_goes_alone():
    lengths = np.array([3, 4, 50, 2, 70, 5])
    plan = plan_tokens(lengths, 20, seed=0, epoch=0)
    alone = [b.tolist() for b in plan if len(b) == 1 and lengths[b[0]] > 20]
    assert sorted(alone) == [[2], [4]]
    assert all(_padded(b, lengths) <= 20 for b in plan if lengths[b].max() <= 20)


def test_same_seed_same_plan_other_seed_or_epoch_other_order():
    lengths = _lengths()
    a = plan_tokens(lengths, 200, seed=7, epoch=2)
    b = plan_tokens(lengths, 200, seed=7, epoch=2)
    assert len(a) == len(b) and all((x == y).all() for x, y in zip(a, b))
    for other in (plan_tokens(lengths, 200, seed=8, epoch=2),
                  plan_tokens(lengths, 200, seed=7, epoch=3)):
        assert np.concatenate(other).tolist() != np.concatenate(a).tolist()
        # the batch count is the same every epoch (fit needs a fixed steps_per_epoch)
        assert len(other) == len(a)
    # which sentences of equal length share a batch changes too, not only the order
    assert {tuple(sorted(x)) for x in a} != {
        tuple(sorted(x)) for x in plan_tokens(lengths, 200, seed=8, epoch=2)}


def test_batches_hold_similar_lengths():
    """No two batches' length ranges overlap (beyond a shared end point): a batch takes
    a run of the examples sorted by length. Short sentences come in large batches."""
    lengths = _lengths()
    plan = plan_tokens(lengths, 300, seed=3, epoch=1)
    ranges = [(int(lengths[b].min()), int(lengths[b].max())) for b in plan]
    for i, (lo, hi) in enumerate(ranges):
        for lo2, hi2 in ranges[i + 1:]:
            assert hi <= lo2 or hi2 <= lo, (lo, hi, lo2, hi2)
    by_length = sorted(plan, key=lambda b: lengths[b].max())
    assert len(by_length[0]) > 5 * len(by_length[-1])
    real = sum(int(lengths[b].sum()) for b in plan)
    padded = sum(_padded(b, lengths) for b in plan)
    assert real / padded > 0.9


def _fewest_batches(lengths, budget):
    """Brute force: the fewest groups of the examples within the budget (a group over
    the budget only as one sentence), over every set partition (bitmask DP)."""
    n = len(lengths)
    fits = {}
    for mask in range(1, 1 << n):
        rows = [int(lengths[i]) for i in range(n) if mask >> i & 1]
        fits[mask] = len(rows) == 1 or len(rows) * max(max(rows), 1) <= budget

    @functools.lru_cache(maxsize=None)
    def fewest(mask):
        if not mask:
            return 0
        lowest, best, sub = mask & -mask, n, mask
        while sub:
            if sub & lowest and fits[sub]:
                best = min(best, 1 + fewest(mask ^ sub))
            sub = (sub - 1) & mask
        return best

    return fewest((1 << n) - 1)


def test_as_few_batches_as_any_grouping():
    rng = np.random.default_rng(5)
    for _ in range(60):
        lengths = rng.integers(0, 9, size=int(rng.integers(2, 8)))
        budget = int(rng.integers(3, 20))
        assert len(plan_tokens(lengths, budget, 0, 0)) == _fewest_batches(lengths, budget)


def test_plan_training_picks_the_rule_from_the_config():
    lengths = _lengths(200)
    cfg = config_lib.load_config("sentiment", overrides=["train.batch_tokens=256"])
    assert cfg.train.batch_tokens == 256
    tokens = plan_training(lengths, cfg.train, 3, replicas=2)
    assert [b.tolist() for b in tokens] == [
        b.tolist() for b in plan_tokens(lengths, 256, cfg.train.seed, 3, multiple=2)]
    plain = config_lib.load_config("sentiment")
    assert plain.train.batch_tokens == 0
    assert {len(b) for b in plan_training(lengths, plain.train, 3)} == {32, 200 % 32}


@pytest.mark.parametrize("task, overrides, message", [
    ("sentiment", ["train.batch_tokens=-1"], "'train.batch_tokens' must be at least 0"),
    ("tagging", ["train.batch_tokens=100", "train.bucketing=false"],
     "it needs train.bucketing = true"),
])
def test_bad_settings_are_one_clear_error(task, overrides, message):
    with pytest.raises(UserError, match=message):
        config_lib.load_config(task, overrides=overrides)


def test_translation_has_it_and_the_language_model_refuses_it():
    cfg = config_lib.load_config("translation", overrides=["train.batch_tokens=500"])
    assert cfg.train.batch_tokens == 500
    from elman import tasks

    lm = config_lib.load_config("lm", overrides=["train.batch_tokens=500"])
    with pytest.raises(UserError, match="not available for the language model"):
        tasks.get("lm").check(lm)


@pytest.mark.slow
def test_tagging_with_token_batches_trains_and_resumes_exactly(tmp_path, capsys):
    """Two epochs in one go, or one per invocation (stopped by train.max_minutes, then
    --resume): the same weights, optimizer state and history with token batches; the
    run records the batching it used."""
    from tests.test_oracles_runs import straight_then_resumed_tagging

    log = straight_then_resumed_tagging(tmp_path, capsys, "train.batch_tokens=24")
    assert "token-budget batches: at most 24 padded tokens a batch" in log

    run_info = json.loads((tmp_path / "straight" / "run.json").read_text(encoding="utf-8"))
    assert run_info["batching"] == {"mode": "tokens", "batch_tokens": 24, "xla": False,
                                    "length_multiple": 1, "steps_per_execution": 1}
    report = tmp_path / "reports" / "tagging" / "straight"
    metrics = json.loads((report / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["reproducibility"]["device"]["batching"] == ("mode tokens, batch_tokens 24, "
                                                               "xla False, length_multiple 1, "
                                                               "steps_per_execution 1")
    stats = metrics["batching"]
    assert stats["mode"] == "tokens" and stats["mean_padded_tokens_per_batch"] <= 24
    assert stats["batches_per_epoch"] < 30 / 2  # several sentences a batch
    assert "token budget of 24 padded tokens" in (report / "report.md").read_text(
        encoding="utf-8")


MIRRORED = r"""
import json, sys
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from elman.core import batching
planned = []
original = batching.plan_tokens
def recording(*args, **kwargs):
    plan = original(*args, **kwargs)
    planned.append([kwargs.get("multiple", 1), [len(b) for b in plan]])
    return plan
batching.plan_tokens = recording
from elman.cli import main
code = main(sys.argv[1:])
print(json.dumps(planned))
sys.exit(code)
"""


@pytest.mark.slow
def test_mirrored_token_batches_split_evenly_across_two_replicas(tmp_path, tiny_sentiment):
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT, TINY_SETTINGS

    done = subprocess.run(
        [sys.executable, "-c", MIRRORED, "train", "sentiment", "--strategy", "mirrored",
         "--data", str(tiny_sentiment["train"]), "--validation",
         str(tiny_sentiment["validation"]), "--out", str(tmp_path / "run"),
         "--reports", str(tmp_path / "reports"), *TINY_SETTINGS,
         "--set", "train.batch_tokens=20"],
        cwd=ROOT, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CI="1"),
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "strategy mirrored: 2 replica(s)" in done.stdout
    planned = json.loads(done.stdout.strip().splitlines()[-1])
    assert planned and all(multiple == 2 for multiple, _ in planned)
    for _, rows in planned:  # 60 training sentences: every batch splits evenly
        assert sum(rows) == 60 and all(r % 2 == 0 for r in rows)
