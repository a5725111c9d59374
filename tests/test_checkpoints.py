"""Committed epochs carry checksums; a damaged newest commit falls back to the one before."""

import json

import pytest

from elman.core.checkpoints import KEEP_COMMITS, commit_epoch, read_state
from elman.errors import UserError


def _commit(ckpt, epoch, best_epoch):
    (ckpt / f"epoch-{epoch:03d}.keras").write_bytes(b"model %d" % epoch)
    best = f"best-epoch-{best_epoch:03d}.weights.h5"
    if not (ckpt / best).exists():
        (ckpt / best).write_bytes(b"weights %d" % best_epoch)
    state = {"epoch": epoch, "best_epoch": best_epoch, "history": {"loss": [1.0] * epoch},
             "files": {"model": f"epoch-{epoch:03d}.keras", "best": best}}
    commit_epoch(ckpt, state, state["files"])


@pytest.fixture
def run(tmp_path):
    ckpt = tmp_path / "checkpoints"
    ckpt.mkdir()
    for epoch, best in ((1, 1), (2, 2), (3, 2), (4, 4)):
        _commit(ckpt, epoch, best)
    return tmp_path


def test_only_the_last_commits_are_kept(run):
    names = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert KEEP_COMMITS == 2
    assert names == ["best-epoch-002.weights.h5", "best-epoch-004.weights.h5",
                     "epoch-003.keras", "epoch-004.keras", "state-epoch-003.json",
                     "state-epoch-004.json", "state.json"]


def test_intact_run_reads_the_newest_commit_silently(run):
    notices = []
    assert read_state(run, notices.append)["epoch"] == 4
    assert notices == []


@pytest.mark.parametrize("damage", ["truncate-model", "change-best", "delete-model",
                                    "truncate-state"])
def test_damaged_newest_commit_falls_back_to_the_previous(run, damage):
    ckpt = run / "checkpoints"
    if damage == "truncate-model":
        (ckpt / "epoch-004.keras").write_bytes(b"mod")
    elif damage == "change-best":
        (ckpt / "best-epoch-004.weights.h5").write_bytes(b"weights 5")
    elif damage == "delete-model":
        (ckpt / "epoch-004.keras").unlink()
    else:  # a state.json cut mid-write and the epoch's own state file too
        for name in ("state.json", "state-epoch-004.json"):
            text = (ckpt / name).read_text()
            (ckpt / name).write_text(text[: len(text) // 2])
    notices = []
    state = read_state(run, notices.append)
    assert state["epoch"] == 3 and state["files"]["best"] == "best-epoch-002.weights.h5"
    assert len(notices) == 1 and "resuming from the intact commit of epoch 3" in notices[0]


def test_no_intact_commit_is_one_clear_error(run):
    ckpt = run / "checkpoints"
    for name in ("epoch-003.keras", "epoch-004.keras"):
        (ckpt / name).write_bytes(b"")
    with pytest.raises(UserError, match="no intact checkpoint to resume from"):
        read_state(run)


def test_nothing_committed_is_none(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    assert read_state(tmp_path) is None


def test_commit_records_sha256_of_each_file(run):
    import hashlib

    state = json.loads((run / "checkpoints" / "state.json").read_text())
    for name, digest in state["checksums"].items():
        assert hashlib.sha256((run / "checkpoints" / name).read_bytes()).hexdigest() == digest
    assert set(state["checksums"]) == {"epoch-004.keras", "best-epoch-004.weights.h5"}
