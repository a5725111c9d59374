"""Committed epochs: each commit lists its files with their SHA-256, the last two commits
are kept, and reading picks the newest intact one (a truncated or changed file falls
back to the commit before it, with a notice)."""

import json
from pathlib import Path

from elman.core.html import write_text_atomic
from elman.errors import UserError

STATE = "state.json"
KEEP_COMMITS = 2  # epochs whose files are kept: the newest and the one before it


def _commit_states(ckpt_dir):
    """The per-epoch state files, newest first."""
    return sorted(Path(ckpt_dir).glob("state-epoch-*.json"), reverse=True)


def _damage(ckpt_dir, state):
    """Why a committed state cannot be used (a missing or changed file), or None."""
    from elman.core.split import sha256

    for name in (state.get("files") or {}).values():
        if name and not (Path(ckpt_dir) / name).is_file():
            return f"{name} is missing"
    for name, digest in (state.get("checksums") or {}).items():
        path = Path(ckpt_dir) / name
        if not path.is_file() or sha256(path) != digest:
            return f"{name} is damaged (its SHA-256 differs from the one committed)"
    return None


def _load_state(path):
    try:
        state = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return state if isinstance(state, dict) and "epoch" in state else None


def read_state(run_dir, log=None):
    """The newest intact committed training state of a run, or None when none was committed.

    Every commit lists its files with their SHA-256. When the newest commit's state or
    files are damaged (a truncated or changed file), the newest intact earlier commit is
    used, with a one-line notice through `log`; when commits exist but none is intact,
    a UserError says so.
    """
    ckpt_dir = Path(run_dir) / "checkpoints"
    candidates = [ckpt_dir / STATE] + _commit_states(ckpt_dir)
    if not any(path.is_file() for path in candidates):
        return None
    problems = []
    for path in candidates:
        state = _load_state(path) if path.is_file() else None
        if state is None:
            if path.is_file():
                problems.append(f"{path.name} cannot be read")
            continue
        damage = _damage(ckpt_dir, state)
        if damage is None:
            if problems and log is not None:
                log(f"notice: {'; '.join(problems)}; resuming from the intact commit of "
                    f"epoch {state['epoch']}")
            return state
        problems.append(f"epoch {state['epoch']}: {damage}")
    raise UserError("no intact checkpoint to resume from (" + "; ".join(dict.fromkeys(problems))
                    + "); start a new run", path=ckpt_dir)


def commit_epoch(ckpt_dir, state, files):
    """Commits an epoch's state: checksums of its files, the per-epoch state file, then
    state.json (each written atomically); keeps the files of the last KEEP_COMMITS commits."""
    from elman.core.split import sha256

    ckpt_dir = Path(ckpt_dir)
    state["checksums"] = {name: sha256(ckpt_dir / name) for name in files.values() if name}
    text = json.dumps(state, indent=1, sort_keys=True)
    write_text_atomic(ckpt_dir / f"state-epoch-{state['epoch']:03d}.json", text)
    write_text_atomic(ckpt_dir / STATE, text)
    kept = _commit_states(ckpt_dir)[:KEEP_COMMITS]
    used = {ckpt_dir / STATE, *kept}
    for path in kept:
        used.update(ckpt_dir / name for name in ((_load_state(path) or {}).get("files") or {}
                                                 ).values() if name)
    for path in ckpt_dir.iterdir():
        if path.name.startswith(("epoch-", "best-epoch-", "top-epoch-",
                                                     "state-epoch-")) and path not in used:
            path.unlink(missing_ok=True)
