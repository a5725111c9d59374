"""Multi-worker helpers: TF_CONFIG, chief-only writes and a local launcher.

`tf.distribute.MultiWorkerMirroredStrategy` reads the cluster from the `TF_CONFIG`
environment variable, one per process:

    {"cluster": {"worker": ["10.0.0.1:12345", "10.0.0.2:12345"]},
     "task": {"type": "worker", "index": 0}}

Worker 0 (or the task of type "chief", when the cluster names one) is the chief: it
alone writes the run folder and the report. The other workers run the same
training in lockstep and write into temporary folders that are removed when they
finish (`worker_dirs`).

`launch` starts N copies of a command on this machine (ports on 127.0.0.1), each
with its own TF_CONFIG, waits for them with a deadline and stops them by process id.
Run it as a program to try multi-worker training on one machine:

    elman distributed --workers 2 -- \\
        elman train sentiment --strategy multi-worker --out runs/sentiment/mw
"""

import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from elman.errors import UserError


def free_ports(count, host="127.0.0.1"):
    """Returns `count` distinct TCP ports that were free on `host` a moment ago."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((host, 0))
            sockets.append(sock)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for sock in sockets:
            sock.close()


def tf_config(addresses, index, task_type="worker"):
    """The TF_CONFIG dict of one worker of a cluster of `addresses` ("host:port")."""
    return {"cluster": {"worker": list(addresses)}, "task": {"type": task_type, "index": index}}


def read_tf_config(environ=None):
    """Parses TF_CONFIG from the environment; None when it is not set."""
    raw = (environ if environ is not None else os.environ).get("TF_CONFIG")
    if not raw:
        return None
    try:
        value = json.loads(raw)
        task = value["task"]
        value["cluster"][task["type"]][int(task["index"])]
    except (ValueError, KeyError, TypeError, IndexError):
        raise UserError("TF_CONFIG is not valid: expected JSON like {\"cluster\": {\"worker\": "
                        "[\"host:port\", ...]}, \"task\": {\"type\": \"worker\", \"index\": 0}}; "
                        f"got {raw[:200]!r}") from None
    return value


def is_chief(config=None):
    """Whether this process is the chief: type "chief", or worker 0 if there is no chief.

    Args:
        config: dict, a parsed TF_CONFIG; default: read from the environment (no
            TF_CONFIG means a single process, which is its own chief).
    """
    config = config if config is not None else read_tf_config()
    if config is None:
        return True
    task = config["task"]
    if task["type"] == "chief":
        return True
    return task["type"] == "worker" and int(task["index"]) == 0 and \
        "chief" not in config["cluster"]


def worker_dirs(run_dir, report_dir, resume=False):
    """Where this worker writes: the real folders on the chief, temporary ones elsewhere.

    Returns (run_dir, report_dir, cleanup): call `cleanup()` when the worker is done
    (it removes the temporary folders; a no-op on the chief). With `resume`, a
    non-chief worker starts from a copy of the chief's run folder, which must be
    readable from every worker (shared storage).
    """
    if is_chief():
        return Path(run_dir), Path(report_dir), lambda: None
    task = read_tf_config()["task"]
    root = Path(tempfile.mkdtemp(prefix=f"elman-{task['type']}{task['index']}-"))

    def cleanup():
        shutil.rmtree(root, ignore_errors=True)

    report_dir = Path(report_dir)  # reports/TASK/RUN: the index goes two folders up
    tmp_run = root / "run"
    tmp_report = root / "reports" / report_dir.parent.name / report_dir.name
    if resume:
        if not (Path(run_dir) / "checkpoints" / "state.json").is_file():
            cleanup()
            raise UserError("a non-chief worker resumes from the chief's run folder, which "
                            "must be readable here (shared storage); it is not", path=run_dir)
        shutil.copytree(run_dir, tmp_run)
    return tmp_run, tmp_report, cleanup


@dataclasses.dataclass
class WorkerResult:
    """How one launched worker ended."""

    index: int
    pid: int
    returncode: int  # None when it had to be stopped
    log: Path  # the worker's combined stdout and stderr
    stopped: bool  # stopped by the launcher (deadline reached, or another worker failed)


def _stop(procs, grace=5.0):
    """Stops the still-running workers by their process ids: SIGTERM, then SIGKILL."""
    alive = [p for p in procs if p.poll() is None]
    for proc in alive:
        try:
            os.kill(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    end = time.monotonic() + grace
    for proc in alive:
        try:
            proc.wait(timeout=max(end - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)


def launch(argv, workers=2, deadline_s=600.0, log_dir=None, env=None, cwd=None,
           host="127.0.0.1"):
    """Runs `workers` copies of `argv` as one cluster on this machine.

    Every worker gets its own TF_CONFIG (free ports on `host`). When a worker fails,
    the others are stopped (they would wait for it forever); at the deadline all
    are stopped. Workers are stopped by process id (SIGTERM, then SIGKILL).

    Args:
        argv: list of str, the command every worker runs.
        workers: int, number of worker processes. Default 2.
        deadline_s: float, seconds before the launcher stops all workers. Default 600.
        log_dir: folder for `worker-N.log` files. Default: a new temporary folder.
        env: dict of extra environment variables. Default None.
        cwd: working directory. Default: the current one.
        host: str, the address the workers listen on. Default "127.0.0.1".

    Returns:
        list of WorkerResult, worker 0 (the chief) first.
    """
    log_dir = Path(log_dir or tempfile.mkdtemp(prefix="elman-workers-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    addresses = [f"{host}:{port}" for port in free_ports(workers, host)]
    procs, logs = [], []
    try:
        for index in range(workers):
            worker_env = dict(os.environ, **(env or {}))
            worker_env["TF_CONFIG"] = json.dumps(tf_config(addresses, index))
            log = log_dir / f"worker-{index}.log"
            with open(log, "wb") as handle:
                procs.append(subprocess.Popen(argv, env=worker_env, cwd=cwd, stdout=handle,
                                              stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL))
            logs.append(log)
        end = time.monotonic() + deadline_s
        while any(p.poll() is None for p in procs):
            if time.monotonic() > end or any(p.poll() not in (None, 0) for p in procs):
                break
            time.sleep(0.1)
        running = {p.pid for p in procs if p.poll() is None}
        _stop(procs)
        return [WorkerResult(i, p.pid, None if p.pid in running else p.returncode, logs[i],
                             p.pid in running) for i, p in enumerate(procs)]
    except BaseException:
        _stop(procs)
        raise


def run_launcher(command, workers=2, deadline=3600.0, logs=None, log=print):
    """`elman distributed --workers N [--deadline S] [--logs DIR] -- COMMAND ...`.

    Runs COMMAND as N multi-worker processes on this machine (one TF_CONFIG each),
    prints each worker's outcome and the chief's log tail; returns 0 when all exit 0.
    """
    if not command:
        raise UserError("give the command to run after --, e.g. elman distributed "
                        "--workers 2 -- elman train sentiment --strategy multi-worker")
    results = launch(command, workers, deadline, logs)
    for r in results:
        state = "stopped by the launcher" if r.stopped else f"exit code {r.returncode}"
        log(f"worker {r.index} (pid {r.pid}): {state}; log {r.log}")
    log(results[0].log.read_text(encoding="utf-8", errors="replace")[-4000:])
    return 0 if all(r.returncode == 0 for r in results) else 1
