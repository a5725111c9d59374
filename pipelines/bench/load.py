"""A bounded loopback load test of `elman serve`: batching on against batching off.

For each run, the same `requests` predict requests (one text each) are sent from 1, 8
and 64 concurrent clients (threads, one keep-alive connection each) to two servers
running side by side: `elman serve --max-batch 64` (batching on) and `--max-batch 1`
(off), each row measured on, then off, back to back. Each server is its own process,
so the clients never share the server's interpreter lock.
Every answer is compared with the single-request answer (the text sent alone before
the load starts): labels, tokens, tags and entities must be equal, numbers equal within
`TOLERANCE` (a merged batch sums float32 products in another order); the report gives
requests/s and p50/p99 latency per setting and the batching speedup. Target: with 64
clients, batching on gives >= 5x the requests/s.

Nothing here is a test: `elman bench` runs it (not with --quick) against the demo runs
(`make demo`), or against tiny toy runs it trains when those are absent.
"""

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

TARGET = 5.0
#: numbers may differ from the single-request answer by this much: a merged batch sums
#: float32 products in another order (other matrix shapes), which moves the 6th decimal
TOLERANCE = 1e-5
TEXTS = [
    "the food was great", "terrible service and a rude waiter", "Mary visited Paris in May",
    "John works for the United Nations in Geneva", "i loved the quiet garden",
    "the battery died after two days, which was disappointing", "a lovely warm place",
    "Alice and Bob met in London last year", "not bad at all", "the screen was sharp",
    "the staff were kind but the room was dirty", "Peter moved to Berlin",
    "i would never come back here again", "the camera was disappointing",
    "Google opened an office in Tokyo", "what a wonderful evening",
    "the soup was cold and the bread was stale", "Anna studies physics in Rome",
    "great value for the price", "the delivery took three weeks",
    "Microsoft and Apple both announced new phones", "simply the best film this year",
    "the plot was dull and far too long", "Maria flew from Madrid to Lisbon",
    "i hated the noise", "friendly people and fast service",
    "the hotel in Paris was overpriced", "Tom lives near the river",
    "an honest, moving story", "the keyboard broke within a week",
    "the museum in Amsterdam was crowded", "everything about it was perfect",
]


def _percentile(values, q):
    ordered = sorted(values)
    if not ordered:
        return None
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


class ServerProcess:
    """`elman serve RUNS --port 0 ...` in a child process; `url` once it listens.

    Args:
        run_dirs: list of run folders.
        max_batch: int, --max-batch.
        max_wait_ms: float, --max-wait-ms.
        start_timeout: float, seconds to wait for the server to listen.
    """

    def __init__(self, run_dirs, max_batch, max_wait_ms, start_timeout=600.0):
        command = [sys.executable, "-m", "elman.cli", "serve", *map(str, run_dirs),
                   "--port", "0", "--max-batch", str(max_batch),
                   "--max-wait-ms", str(max_wait_ms), "--max-batch-request", "64"]
        env = dict(os.environ, PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="3")
        env.pop("ELMAN_API_KEY", None)
        self.errors = tempfile.TemporaryFile(mode="w+")  # a pipe could fill and block it
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.errors,
                                        text=True, env=env)
        self.url = None
        deadline = time.monotonic() + start_timeout
        while self.url is None and time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            found = re.search(r" at (http://[^ ]+?)/? \(", line)
            self.url = found.group(1) if found else None
        if self.url is None:
            self.stop()
            self.errors.seek(0)
            error = self.errors.read().strip().splitlines()
            raise RuntimeError("elman serve did not start: " + (error[-1] if error else "?"))

    def stop(self):
        """Stops the server (SIGTERM, then kill after 30 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.errors.close()


class _Client:
    """One keep-alive HTTP/1.1 connection to the server (one per client thread).

    The standard library's client, one per thread: at 64 concurrent clients an
    asyncio httpx pool spent more time assigning requests to connections than the
    server spent answering them, and the load test measured the client.
    """

    def __init__(self, url):
        host, _, port = url.removeprefix("http://").rpartition(":")
        self.conn = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=300)

    def predict(self, name, text):
        """(status, the one prediction or None, seconds) of a one-text request."""
        body = json.dumps({"instances": [text]}, ensure_ascii=False).encode("utf-8")
        began = time.perf_counter()
        self.conn.request("POST", f"/v1/models/{name}:predict", body=body,
                          headers={"Content-Type": "application/json"})
        response = self.conn.getresponse()
        data = response.read()
        seconds = time.perf_counter() - began
        answer = json.loads(data)["predictions"][0] if response.status == 200 else None
        return response.status, answer, seconds

    def close(self):
        """Closes the connection."""
        self.conn.close()


def difference(got, want):
    """The largest difference between two JSON answers' numbers, or None when anything
    else differs (a label, a token, a tag, an entity, the structure)."""
    if isinstance(want, bool) or isinstance(got, bool):
        return 0.0 if got is want else None
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return abs(float(got) - float(want))
    if isinstance(want, dict) and isinstance(got, dict):
        if list(got) != list(want):
            return None
        parts = [difference(got[k], want[k]) for k in want]
    elif isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return None
        parts = [difference(g, w) for g, w in zip(got, want)]
    else:
        return 0.0 if got == want else None
    return None if None in parts else max(parts, default=0.0)


def _load(url, name, texts, requests, clients, expected):
    """`requests` one-text requests from `clients` threads; requests/s, latency, checks."""
    lock = threading.Lock()
    counter = iter(range(requests))
    latencies, problems = [], {"errors": 0, "mismatches": 0, "max_difference": 0.0}
    barrier = threading.Barrier(clients + 1)

    def worker():
        client = _Client(url)
        barrier.wait()
        try:
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                text = texts[i % len(texts)]
                code, answer, seconds = client.predict(name, text)
                with lock:
                    latencies.append(seconds)
                    if code != 200:
                        problems["errors"] += 1
                    else:
                        gap = difference(answer, expected[text])
                        if gap is None or gap > TOLERANCE:
                            problems["mismatches"] += 1
                        else:
                            problems["max_difference"] = max(problems["max_difference"], gap)
        finally:
            client.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    return {"requests": requests, "seconds": round(wall, 3),
            "requests_per_s": round(requests / wall, 1),
            "p50_ms": round(1000 * _percentile(latencies, 50), 2),
            "p99_ms": round(1000 * _percentile(latencies, 99), 2), **problems}


def _single_answers(url, name, texts):
    """Each text's answer when it is sent alone."""
    client = _Client(url)
    try:
        out = {}
        for text in texts:
            code, answer, _ = client.predict(name, text)
            if code != 200:
                raise RuntimeError(f"{name} answered {code} for {text!r}")
            out[text] = answer
        return out
    finally:
        client.close()


def run_load(run_dirs, requests=2000, clients=(1, 8, 64), max_batch=64, max_wait_ms=5.0,
             texts=None, log=print):
    """The load test: every run, batching on and off, at each client count.

    Args:
        run_dirs: list of run folders (each is loaded by both servers).
        requests: int, requests per (run, setting, client count).
        clients: tuple of int, concurrent clients.
        max_batch: int, --max-batch of the batching server.
        max_wait_ms: float, --max-wait-ms of both servers.
        texts: list of str or None (default: 32 short English sentences), cycled.
        log: callable for progress lines.

    Returns:
        dict {"requests", "clients", "max_batch", "max_wait_ms", "target", "models":
        {name: [{"clients", "on", "off", "speedup"}]}, "speedup_at_most_clients",
        "meets_target", "errors", "mismatches", "mean_requests_per_model_call"}.
    """
    from elman.serve.models import check_runs

    texts = list(texts or TEXTS)
    names = list(check_runs(run_dirs))  # the names the servers give the runs
    servers = {}
    try:
        for setting, batch in (("on", max_batch), ("off", 1)):
            log(f"load: starting elman serve --max-batch {batch} ({', '.join(names)})")
            servers[setting] = ServerProcess(run_dirs, batch, max_wait_ms)
        measured = {name: _measure(servers, name, texts, requests, clients, log)
                    for name in names}
        batches = {name: _mean_batch(servers["on"].url, name) for name in names}
    finally:
        for server in servers.values():
            server.stop()
    result = _summary(measured, names, requests, clients, max_batch, max_wait_ms)
    result["mean_requests_per_model_call"] = batches
    return result


def _measure(servers, name, texts, requests, clients, log):
    """One model's rows: each client count, batching on then off, back to back."""
    expected = _single_answers(servers["off"].url, name, texts)
    out = {}
    for count in clients:
        for setting, server in servers.items():
            row = _load(server.url, name, texts, requests, count, expected)
            out[(setting, count)] = row
            log(f"load: {name} batching {setting:3s} {count:3d} clients: "
                f"{row['requests_per_s']:8.1f} req/s  p50 {row['p50_ms']:.1f} ms  "
                f"p99 {row['p99_ms']:.1f} ms  errors {row['errors']}  "
                f"mismatches {row['mismatches']}  largest number difference "
                f"{row['max_difference']:.2g}")
    return out


def _mean_batch(url, name):
    """Requests per model call on the batching server, from its /metrics."""
    with urllib.request.urlopen(url + "/metrics", timeout=30) as response:
        text = response.read().decode("utf-8")
    values = {}
    for kind in ("sum", "count"):
        found = re.search(rf'^elman_batch_requests_{kind}{{model="{re.escape(name)}"}} (\S+)$',
                          text, re.M)
        values[kind] = float(found.group(1)) if found else 0.0
    return round(values["sum"] / values["count"], 2) if values["count"] else None


def _summary(measured, names, requests, clients, max_batch, max_wait_ms):
    models = {}
    for name in names:
        rows = []
        for count in clients:
            on, off = measured[name][("on", count)], measured[name][("off", count)]
            rows.append({"clients": count, "on": on, "off": off,
                         "speedup": round(on["requests_per_s"] / off["requests_per_s"], 2)})
        models[name] = rows
    top = [rows[-1]["speedup"] for rows in models.values()]
    every = [r[s] for rows in models.values() for r in rows for s in ("on", "off")]
    return {"requests": requests, "clients": list(clients), "max_batch": max_batch,
            "max_wait_ms": max_wait_ms, "target": TARGET, "models": models,
            "speedup_at_most_clients": min(top) if top else None,
            "meets_target": bool(top) and min(top) >= TARGET,
            "errors": sum(r["errors"] for r in every),
            "mismatches": sum(r["mismatches"] for r in every),
            "max_difference": max((r["max_difference"] for r in every), default=0.0),
            "tolerance": TOLERANCE}


def table(result):
    """The load test as terminal lines, batching on and off side by side."""
    lines = [f"serving load test: {result['requests']} requests per row, one text each; "
             f"batching on = --max-batch {result['max_batch']}, off = --max-batch 1, "
             f"--max-wait-ms {result['max_wait_ms']:g}",
             f"{'model':24s} {'clients':>7s} {'on req/s':>9s} {'p50':>8s} {'p99':>8s} "
             f"{'off req/s':>9s} {'p50':>8s} {'p99':>8s} {'speedup':>8s}"]
    for name, rows in result["models"].items():
        for row in rows:
            on, off = row["on"], row["off"]
            lines.append(f"{name[:24]:24s} {row['clients']:7d} {on['requests_per_s']:9.1f} "
                         f"{on['p50_ms']:6.1f}ms {on['p99_ms']:6.1f}ms "
                         f"{off['requests_per_s']:9.1f} {off['p50_ms']:6.1f}ms "
                         f"{off['p99_ms']:6.1f}ms {row['speedup']:7.2f}x")
    merged = result.get("mean_requests_per_model_call") or {}
    if merged:
        lines.append("requests per model call with batching on (mean over the whole run): "
                     + ", ".join(f"{k} {v}" for k, v in merged.items()))
    verdict = "meets" if result["meets_target"] else "MISSES"
    lines.append(f"speedup with {result['clients'][-1]} clients: "
                 f"{result['speedup_at_most_clients']}x (target >= {result['target']:g}x, "
                 f"{verdict}); errors {result['errors']}, answers differing from the "
                 f"single-request answer {result['mismatches']} (labels, tokens, tags and "
                 f"entities exactly, numbers within {result['tolerance']:g}; largest "
                 f"number difference {result['max_difference']:.2g})")
    return "\n".join(lines)


def _toy_runs(folder, log):
    """Tiny sentiment and tagging runs on the toy data (when no demo runs exist)."""
    from elman import api

    out = []
    for task, overrides in (("sentiment", {"train.epochs": 3}),
                            ("tagging", {"train.epochs": 3})):
        run = Path(folder) / f"{task}-toy"
        if not (run / "run.json").is_file():
            log(f"load: training a toy {task} run into {run}")
            api.train(task, out=str(run), reports=str(Path(folder) / "reports"),
                      overrides=overrides, log=lambda *a: None)
        out.append(run)
    return out


def bench_section(runs_root="runs", work_dir="runs/bench-serve", requests=2000,
                  log=print):
    """`elman bench`'s serving section: the demo sentiment and tagging runs under load.

    Args:
        runs_root: str, where `make demo` put its runs (runs/<task>/demo).
        work_dir: str, where toy runs are trained when the demo runs are absent.
        requests: int, requests per row.
        log: callable for progress lines.
    """
    demo = [Path(runs_root) / task / "demo" for task in ("sentiment", "tagging")]
    if all((run / "run.json").is_file() for run in demo):
        run_dirs = demo
    else:
        run_dirs = _toy_runs(work_dir, log)
    result = run_load(run_dirs, requests=requests, log=log)
    result["runs"] = [str(run) for run in run_dirs]
    return result


def main(argv=None):
    """`python -m elman.bench.load RUN [RUN ...] [--requests N]`: prints the table."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m elman.bench.load")
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", default="1,8,64")
    parser.add_argument("--json", help="also write the result to this file")
    args = parser.parse_args(argv)
    result = run_load(args.runs, requests=args.requests,
                      clients=tuple(int(c) for c in args.clients.split(",")))
    print(table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
