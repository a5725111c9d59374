"""`elman serve`: a real uvicorn server on a free loopback port, started and stopped here.

Serves a tiny sentiment run (trained once per session by `elman.train`), the other
tasks' tiny runs when their predictors load, and an in-process "echo" model whose
predictor declares options (so the option checks, the per-option batches and the
per-request fallback are tested without TensorFlow timing in the way).
"""

import http.client
import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import elman
from elman import cli
from elman.errors import UserError
from tests.conftest import NEGATIVE, POSITIVE, ROOT, TINY_SETTINGS, write_csv

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")

TEXTS = ["the food was great", "terrible service", "味道很好", "a lovely warm place"]
LIMITS = {"max_batch_request": 8, "max_text_chars": 200}

#: tiny settings of the other tasks' toy presets (data paths made absolute)
OTHER_RUNS = {
    "tagging": ({"train.epochs": 6, "encoder.units": 32, "embedding.dim": 32},
                {"train": "data/tagging/en/train.conll",
                 "validation": "data/tagging/en/validation.conll"}),
    "translation": ({"train.epochs": 2, "model.units": 16, "model.embedding_dim": 16,
                     "model.attention": "luong"},
                    {"train": "data/translation/en-zh/train.tsv",
                     "validation": "data/translation/en-zh/validation.tsv"}),
    "lm": ({"train.epochs": 1, "model.units": 16, "model.embedding_dim": 16},
           {"train": "data/lm/en.txt", "validation": "data/lm/en_valid.txt"}),
}


# ---------------------------------------------------------------- runs and servers

def _train_sentiment(base):
    rows = [(t, "positive") for t in POSITIVE] + [(t, "negative") for t in NEGATIVE]
    train = write_csv(base / "train.csv", rows * 3)
    test = write_csv(base / "test.csv", rows)
    overrides = {k: int(v) for k, v in (item.split("=", 1) for item in TINY_SETTINGS[1::2])}
    elman.train("sentiment", data=str(train), validation=str(test), test=str(test),
                out=str(base / "runs" / "sentiment-tiny"), reports=str(base / "reports"),
                overrides=overrides, log=lambda *a: None)


def _train_other(base, task):
    overrides, data = OTHER_RUNS[task]
    elman.train(task, data=str(ROOT / data["train"]), validation=str(ROOT / data["validation"]),
                out=str(base / "runs" / f"{task}-tiny"), reports=str(base / "reports"),
                overrides=overrides, log=lambda *a: None)


def tiny_runs(tmp_path_factory, tasks=("sentiment",)):
    """{task: run folder} of tiny runs, trained once per test session (cached on disk)."""
    base = tmp_path_factory.getbasetemp() / "serve-runs"
    base.mkdir(exist_ok=True)
    out = {}
    for task in tasks:
        run = base / "runs" / f"{task}-tiny"
        if not (run / "run.json").is_file():
            if task == "sentiment":
                _train_sentiment(base)
            else:
                _train_other(base, task)
        out[task] = run
    return out


def reports_root(tmp_path_factory):
    """The reports folder the tiny runs wrote to."""
    return tmp_path_factory.getbasetemp() / "serve-runs" / "reports"


class EchoPredictor:
    """A predictor without TensorFlow: upper-cases texts; "boom" is a UserError."""

    task = "echo"
    options = {"repeat": (int, 1, 1, 3), "shout": (bool, False),
               "temperature": (float, 1.0, 0.0, 2.0)}

    def __init__(self):
        self.calls = []

    def predict(self, texts, repeat=1, shout=False, temperature=1.0):
        self.calls.append(list(texts))
        time.sleep(0.05)  # like a model call: requests arriving meanwhile queue up
        for i, text in enumerate(texts, start=1):
            if text == "boom":
                raise UserError(f"text {i} is 'boom'; expected anything else")
            if text == "slow":
                time.sleep(0.6)
        return [{"text": t, "echo": (t.upper() if shout else t) * repeat,
                 "temperature": temperature} for t in texts]


def echo_model():
    """A `ServedModel` around `EchoPredictor`."""
    from elman.serve.models import ServedModel
    from elman.serve.request import option_specs

    predictor = EchoPredictor()
    return ServedModel(name="echo", run_dir=Path("."), task="echo", predictor=predictor,
                       info={"task": "echo", "run_id": "echo"},
                       options=option_specs(predictor), loaded=True)


def start_server(models, reports=None, api_key=None, max_batch=64, max_wait_ms=30.0):
    """A started `ServerThread` serving `models` on a free loopback port."""
    from elman.serve.app import create_app
    from elman.serve.request import Limits
    from elman.serve.server import ServerThread

    app = create_app(models, max_batch=max_batch, max_wait_ms=max_wait_ms,
                     limits=Limits(**LIMITS), reports_root=reports, api_key=api_key)
    return ServerThread(app).start()


def serve_tiny_runs(tmp_path_factory):
    """A started server with a tiny run of each task, and the echo model.

    Returns:
        (ServerThread, {name: ServedModel}, {task: run folder}).
    """
    from elman.serve.models import load_models

    runs = tiny_runs(tmp_path_factory, ("sentiment", "tagging", "translation", "lm"))
    reports = reports_root(tmp_path_factory)
    models = load_models(list(runs.values()), reports_root=reports, log=lambda *a: None)
    models["echo"] = echo_model()
    return start_server(models, reports=reports), models, runs


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, {name: ServedModel}, {task: run folder}) of a running server."""
    server, models, runs = serve_tiny_runs(tmp_path_factory)
    yield server.url, models, runs
    server.stop()


def post(url, name, body, headers=None):
    """POSTs a predict request; `body` is a dict (sent as JSON) or raw bytes."""
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{url}/v1/models/{name}:predict", content=content, timeout=60,
                      headers={"Content-Type": "application/json", **(headers or {})})


def metric(url, name, labels):
    """The value of one Prometheus sample line (0 when absent)."""
    text = httpx.get(url + "/metrics", timeout=10).text
    label_text = ",".join(f'{k}="{v}"' for k, v in labels.items())
    match = re.search(rf"^{re.escape(name)}\{{{re.escape(label_text)}\}} (\S+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def raw_get(url, path, headers=None):
    """GET with the path sent exactly as given (no client-side normalising)."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body


def assert_error(response, status, fragment):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and fragment in body["error"], body
    assert "\n" not in body["error"]


def concurrently(count, work):
    """Runs `work(i)` for i < count from `count` threads released together."""
    barrier = threading.Barrier(count)

    def run(i):
        barrier.wait()
        return work(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


# ---------------------------------------------------------------- endpoints

def test_health_and_model_list(served):
    url, models, runs = served
    health = httpx.get(url + "/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    listed = httpx.get(url + "/v1/models").json()["models"]
    assert [m["name"] for m in listed] == list(models)
    sentiment = listed[0]
    assert sentiment["task"] == "sentiment" and sentiment["loaded"] is True
    assert sentiment["labels"] == ["negative", "positive"]
    assert sentiment["metrics"]["main_metric"] == "accuracy"


def test_one_model_has_its_config_metrics_and_time(served):
    url, _, runs = served
    name = runs["sentiment"].name
    info = httpx.get(f"{url}/v1/models/{name}").json()
    saved = json.loads((runs["sentiment"] / "config.json").read_text())
    run_json = json.loads((runs["sentiment"] / "run.json").read_text())
    assert info["config"] == saved and info["finished"] == run_json["finished"]
    assert info["metrics"]["scores"]["accuracy"] == pytest.approx(
        json.loads((reports_root_of(runs) / "sentiment" / name / "metrics.json")
                   .read_text())["scores"]["accuracy"])
    assert info["options"] == {}
    echo = httpx.get(f"{url}/v1/models/echo").json()
    assert echo["options"]["repeat"] == {"type": "integer", "default": 1, "min": 1, "max": 3}


def reports_root_of(runs):
    return runs["sentiment"].parent.parent / "reports"


def test_each_task_answers_what_its_predictor_returns(served, capsys):
    url, _, runs = served
    texts = {"sentiment": TEXTS, "tagging": ["Mary visited Paris", "John works in London"],
             "translation": ["i like tea"], "lm": ["the cat"]}
    for task, run in runs.items():
        response = post(url, run.name, {"instances": texts[task]})
        assert response.status_code == 200, response.text
        expected = elman.load(run).predict(texts[task])
        assert response.json() == {"predictions": json.loads(json.dumps(expected))}, task
    capsys.readouterr()  # and `elman predict --format json` prints the same
    assert cli.main(["predict", str(runs["sentiment"]), "--format", "json", *TEXTS]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert post(url, runs["sentiment"].name, {"instances": TEXTS}).json()["predictions"] \
        == printed


def test_task_options_are_passed_through(served):
    url, models, runs = served
    response = post(url, "echo", {"instances": ["ab"], "repeat": 2, "shout": True,
                                  "temperature": 0.5})
    assert response.json()["predictions"] == [{"text": "ab", "echo": "ABAB",
                                               "temperature": 0.5}]
    response = post(url, "echo", {"instances": ["ab"], "temperature": 1})  # int → float
    assert response.json()["predictions"][0]["temperature"] == 1.0
    for task, run in runs.items():  # every declared option: its default, then out of range
        for name, spec in models[run.name].options.items():
            body = {"instances": ["the cat"]}
            if spec.default is not None:
                assert post(url, run.name, {**body, name: spec.default}).status_code == 200
            if spec.high is not None and spec.type in (int, float):
                assert_error(post(url, run.name, {**body, name: spec.high + 1}), 400,
                             f"option '{name}' must be between")
    if "translation" in runs:  # the predictor's own check: a UserError is a 400
        assert_error(post(url, runs["translation"].name, {"instances": ["x"], "beam": -5}),
                     400, "beam")


def test_each_task_traces_what_its_predictor_traces(served):
    url, models, runs = served
    texts = {"sentiment": ["the food was great"], "tagging": ["Mary visited Paris"],
             "translation": ["i like tea", "you buy fish"], "lm": ["the cat sat"]}
    options = {"translation": {"beam": 2}, "lm": {"top": 2}}
    for task, run in runs.items():
        body = {"instances": texts[task], **options.get(task, {})}
        response = httpx.post(f"{url}/v1/models/{run.name}:trace", json=body, timeout=60)
        assert response.status_code == 200, response.text
        expected = elman.load(run).trace(texts[task], **options.get(task, {}))
        assert response.json() == {"traces": json.loads(json.dumps(expected))}, task
        assert len(response.json()["traces"]) == len(texts[task])
    bad = httpx.post(f"{url}/v1/models/{runs['sentiment'].name}:trace",
                     json={"instances": ["a"], "beam": 2}, timeout=60)
    assert_error(bad, 400, "unknown option 'beam' for a sentiment model")
    assert_error(httpx.post(f"{url}/v1/models/echo:trace", json={"instances": ["a"]},
                            timeout=60), 404, "has no reading trace")


@pytest.mark.parametrize("body, status, fragment", [
    (b"{not json", 400, "not valid JSON"),
    (b"\xff\xfe", 400, "not valid UTF-8"),
    (b"[\"a\"]", 400, "must be a JSON object"),
    ({}, 400, 'needs "instances"'),
    ({"instances": "a text"}, 400, '"instances" must be a list of texts; got a string'),
    ({"instances": {"a": 1}}, 400, "got an object"),
    ({"instances": ["fine", 3]}, 400, "instance 2 is not a string"),
    ({"instances": []}, 400, '"instances" is empty'),
    ({"instances": ["a"] * 9}, 400, "holds 9 texts; at most 8 per request"),
    ({"instances": ["x" * 201]}, 400, "instance 1 has 201 characters; at most 200"),
    ({"instances": ["a"], "beam": 2}, 400, "unknown option 'beam' for a sentiment model; "
                                           "it takes none"),
    ({"instances": [""]}, 400, "text 1 is empty"),
    ({"instances": ["   "]}, 400, "text 1 is empty"),
])
def test_bad_sentiment_requests_get_400(served, body, status, fragment):
    url, _, runs = served
    assert_error(post(url, runs["sentiment"].name, body), status, fragment)


@pytest.mark.parametrize("body, fragment", [
    ({"instances": ["a"], "repeat": 9}, "option 'repeat' must be between 1 and 3; got 9"),
    ({"instances": ["a"], "repeat": "2"}, "option 'repeat' must be an integer"),
    ({"instances": ["a"], "repeat": True}, "option 'repeat' must be an integer"),
    ({"instances": ["a"], "repeat": 1.5}, "option 'repeat' must be an integer"),
    ({"instances": ["a"], "shout": 1}, "option 'shout' must be a boolean"),
    ({"instances": ["a"], "temperature": -0.1}, "must be between 0.0 and 2.0"),
    ({"instances": ["a"], "top_k": 3}, "unknown option 'top_k' for a echo model; it takes "
                                       "repeat, shout, temperature"),
])
def test_bad_options_get_400(served, body, fragment):
    assert_error(post(served[0], "echo", body), 400, fragment)


def test_oversized_bodies_unknown_models_and_routes(served):
    url, _, runs = served
    from elman.serve.request import Limits

    limit = Limits(**LIMITS).max_body_bytes
    big = json.dumps({"instances": ["a" * 100] * ((limit // 100) + 10)}).encode()
    assert_error(post(url, runs["sentiment"].name, big), 413, "over the")
    assert_error(post(url, "nope", {"instances": ["a"]}), 404, "no model named 'nope'")
    assert_error(httpx.get(url + "/v1/models/nope"), 404, "no model named 'nope'")
    assert_error(httpx.get(url + "/nowhere"), 404, "no such page")
    assert_error(httpx.get(f"{url}/v1/models/{runs['sentiment'].name}:predict"), 404,
                 "no model named")
    assert_error(httpx.post(url + "/v1/models"), 405, "not allowed")
    assert httpx.get(url + "/healthz").status_code == 200  # still serving


# ---------------------------------------------------------------- batching

def _batch_totals(url, name):
    return (metric(url, "elman_batch_requests_count", {"model": name}),
            metric(url, "elman_batch_requests_sum", {"model": name}))


def test_concurrent_requests_share_batches_and_match_single_answers(served):
    url, _, runs = served
    name = runs["sentiment"].name
    texts = [TEXTS[i % len(TEXTS)] + ("!" * (i // len(TEXTS))) for i in range(16)]
    single = [post(url, name, {"instances": [t]}).json()["predictions"] for t in texts]
    calls_before, requests_before = _batch_totals(url, name)
    answers = concurrently(16, lambda i: post(url, name, {"instances": [texts[i]]}))
    calls_after, requests_after = _batch_totals(url, name)
    assert [a.status_code for a in answers] == [200] * 16
    batched = [a.json()["predictions"] for a in answers]
    # a text padded beside longer ones in a merged batch may differ in the 6th decimal
    # (float32 sums in another order): same labels, probabilities within 1e-5
    for got, want in zip(batched, single):
        assert [p["label"] for p in got] == [p["label"] for p in want]
        for g, w in zip(got, want):
            assert g["text"] == w["text"]
            assert set(g["probabilities"]) == set(w["probabilities"])
            for label, value in w["probabilities"].items():
                assert abs(g["probabilities"][label] - value) <= 1e-5, (label, g, w)
    assert requests_after - requests_before == 16
    assert calls_after - calls_before < 16  # some model call held more than one request
    largest = metric(url, "elman_batch_requests_bucket", {"model": name, "le": "1"})
    assert largest < metric(url, "elman_batch_requests_count", {"model": name})


def test_a_bad_request_never_poisons_its_batch(served):
    url, models, _ = served
    predictor = models["echo"].predictor
    predictor.calls.clear()
    texts = [f"text {i}" for i in range(7)] + ["boom"]
    answers = concurrently(8, lambda i: post(url, "echo", {"instances": [texts[i]]}))
    assert_error(answers[-1], 400, "text 1 is 'boom'")
    assert [a.json()["predictions"][0]["echo"] for a in answers[:-1]] == texts[:-1]
    assert any(len(call) > 1 for call in predictor.calls)  # they were merged, then retried
    sentiment = served[2]["sentiment"].name
    answers = concurrently(6, lambda i: post(url, sentiment,
                                             {"instances": ["" if i == 3 else TEXTS[i % 4]]}))
    assert [a.status_code for a in answers] == [200, 200, 200, 400, 200, 200]


def test_requests_with_different_options_get_their_own_options(served):
    url = served[0]
    answers = concurrently(6, lambda i: post(url, "echo", {"instances": ["ab"],
                                                           "repeat": 1 + i % 3}))
    assert [a.json()["predictions"][0]["echo"] for a in answers] == [
        "ab" * (1 + i % 3) for i in range(6)]


def test_health_answers_while_a_slow_batch_runs(served):
    url = served[0]
    with ThreadPoolExecutor(1) as pool:
        slow = pool.submit(post, url, "echo", {"instances": ["slow"]})
        time.sleep(0.15)
        began = time.perf_counter()
        assert httpx.get(url + "/healthz", timeout=10).status_code == 200
        assert time.perf_counter() - began < 0.4
        assert slow.result().status_code == 200


def test_metrics_count_requests_errors_latency_and_batches(served):
    url, _, runs = served
    name = runs["sentiment"].name
    ok = metric(url, "elman_requests_total", {"model": name, "code": "200"})
    bad = metric(url, "elman_errors_total", {"code": "400"})
    post(url, name, {"instances": ["fine"]})
    post(url, name, {"instances": []})
    assert metric(url, "elman_requests_total", {"model": name, "code": "200"}) == ok + 1
    assert metric(url, "elman_errors_total", {"code": "400"}) == bad + 1
    text = httpx.get(url + "/metrics").text
    for line in ("# TYPE elman_request_duration_seconds histogram",
                 "# TYPE elman_batch_requests histogram", "# TYPE elman_batch_texts histogram",
                 f'elman_model_loaded{{model="{name}"}} 1'):
        assert line in text
    assert metric(url, "elman_request_duration_seconds_bucket",
                  {"model": name, "le": "+Inf"}) >= 2


# ---------------------------------------------------------------- security

def test_api_key_guards_every_v1_call(served):
    _, models, runs = served
    name = runs["sentiment"].name
    server = start_server({name: models[name]}, api_key="s3cret")
    try:
        url = server.url
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"},
                        {"Authorization": "Basic s3cret"}):
            assert_error(httpx.get(url + "/v1/models", headers=headers), 401, "API key")
            assert_error(post(url, name, {"instances": ["a"]}, headers=headers), 401,
                         "API key")
            assert_error(httpx.get(f"{url}/v1/models/{name}", headers=headers), 401,
                         "API key")
        good = {"Authorization": "Bearer s3cret"}
        assert httpx.get(url + "/v1/models", headers=good).status_code == 200
        assert post(url, name, {"instances": ["a"]}, headers=good).status_code == 200
        assert httpx.get(url + "/healthz").status_code == 200
    finally:
        server.stop()


def test_reports_are_listed_and_served(served):
    url, _, runs = served
    rows = httpx.get(url + "/reports.json").json()["reports"]
    name = runs["sentiment"].name
    row = next(r for r in rows if r["run"] == name)
    assert row["task"] == "sentiment" and row["main_metric"] == "accuracy"
    page = httpx.get(f"{url}/reports/{row['path']}")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "Sentiment report" in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]
    for path in ("/", "/reports", "/static/app.js", "/static/style.css"):
        assert httpx.get(url + path).status_code == 200, path


@pytest.mark.parametrize("path", [
    "/reports/../../../../etc/passwd",
    "/reports/../secret.txt",
    "/reports/sentiment/../../secret.txt",
    "/reports/%2e%2e/secret.txt",
    "/reports/%2E%2E/%2e%2e/etc/passwd",
    "/reports/..%2fsecret.txt",
    "/reports/sentiment%2f..%2f..%2fsecret.txt",
    "/reports/..%5csecret.txt",
    "/reports//etc/passwd",
    "/reports/%2fetc%2fpasswd",
    "/reports/escape/secret.txt",
    "/reports/sentiment/link-out.txt",
    "/reports/.%2e/secret.txt",
])
def test_report_paths_never_leave_the_folder(served, path):
    url, _, runs = served
    reports = reports_root_of(runs)
    secret = reports.parent / "secret.txt"
    secret.write_text("SECRET\n")
    for link, target in (("escape", reports.parent), ("sentiment/link-out.txt", secret)):
        if not (reports / link).is_symlink():
            (reports / link).symlink_to(target)
    status, body = raw_get(url, path)
    assert status in (403, 404), (path, status)
    assert b"SECRET" not in body and b"root:" not in body
    assert set(json.loads(body)) == {"error"}


def test_a_symlink_inside_the_folder_is_served(served):
    url, _, runs = served
    reports = reports_root_of(runs)
    (reports / "inside.md").write_text("# inside\n")
    link = reports / "sentiment" / "inside-link.md"
    if not link.is_symlink():
        link.symlink_to(reports / "inside.md")
    assert raw_get(url, "/reports/sentiment/inside-link.md") == (200, b"# inside\n")


# ---------------------------------------------------------------- start-up

def test_bad_run_folders_stop_the_server_with_one_line(tmp_path, capsys, served):
    _, _, runs = served
    (tmp_path / "empty").mkdir()
    broken = tmp_path / "broken"
    broken.mkdir()
    for item in runs["sentiment"].iterdir():
        if item.is_file():
            (broken / item.name).write_bytes(item.read_bytes())
    (broken / "model.keras").write_bytes(b"not a keras file")
    cases = [(tmp_path / "missing", "run folder not found"),
             (tmp_path / "empty", "not an elman run folder"),
             (broken, "the model failed to load")]
    for run, message in cases:
        capsys.readouterr()
        assert cli.main(["serve", str(run), "--port", "0"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("elman: error: ") and message in err[0], err
    assert cli.main(["serve", str(runs["sentiment"]), str(runs["sentiment"]), "--port",
                     "0"]) == 2
    assert "two sentiment runs are named" in capsys.readouterr().err


def test_runs_whose_folder_names_collide_are_named_by_task(served, tmp_path):
    from elman.serve.models import check_runs

    _, _, runs = served
    if "tagging" not in runs:
        pytest.skip("no tagging run could be trained in this tree")
    for task in ("sentiment", "tagging"):
        (tmp_path / task).mkdir()
        (tmp_path / task / "demo").symlink_to(runs[task])
    names = check_runs([tmp_path / "sentiment" / "demo", tmp_path / "tagging" / "demo",
                        runs["lm" if "lm" in runs else "sentiment"]])
    assert list(names)[:2] == ["sentiment-demo", "tagging-demo"]


def test_elman_serve_command_runs_until_stopped(served, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    _, _, runs = served
    env = dict(os.environ, ELMAN_API_KEY="k", PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "elman.cli", "serve", str(runs["sentiment"]), "--port", "0",
         "--reports", str(reports_root_of(runs))], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = None
        deadline = time.monotonic() + 240
        while url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            found = re.search(r"at (http://127\.0\.0\.1:\d+)/", line)
            url = found.group(1) if found else None
        assert url, "the server did not start"
        assert httpx.get(url + "/healthz", timeout=30).status_code == 200
        assert httpx.get(url + "/v1/models").status_code == 401  # the key from the env
        models = httpx.get(url + "/v1/models", headers={"Authorization": "Bearer k"})
        assert models.json()["models"][0]["name"] == runs["sentiment"].name
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        assert process.stdout.read().strip().endswith("stopped")


def test_the_load_benchmark_compares_labels_exactly_and_numbers_within_a_tolerance():
    from elman.bench.load import difference

    want = {"label": "positive", "probabilities": {"negative": 0.25, "positive": 0.75},
            "tokens": ["a", "b"], "truncated": None, "flag": True}
    assert difference(want, want) == 0.0
    near = {**want, "probabilities": {"negative": 0.250004, "positive": 0.749996}}
    assert difference(near, want) == pytest.approx(4e-6)
    for other in ({**want, "label": "negative"}, {**want, "tokens": ["a"]},
                  {**want, "tokens": ["a", "c"]}, {**want, "truncated": {"tokens": 3}},
                  {**want, "flag": False}, {k: v for k, v in want.items() if k != "flag"},
                  {**want, "probabilities": {"positive": 0.75, "negative": 0.25}}):
        assert difference(other, want) is None, other
