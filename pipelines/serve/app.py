"""The ASGI app: the `/v1` prediction API, health, metrics, the web pages and the reports.

Routes:

- `GET /v1/models`, `GET /v1/models/{name}`: what is served (task, labels or tags,
  languages, the run's main metrics, options; the config in the single-model view).
- `POST /v1/models/{name}:predict`: `{"instances": [texts], option: value, ...}` →
  `{"predictions": [...]}`, what the run's predictor returns for those texts.
- `POST /v1/models/{name}:trace`: the same body → `{"traces": [...]}`, the reading trace
  of each text (what `elman predict RUN --trace --format json` prints), with the
  options the predictor's `trace` takes.
- `GET /healthz` (200 only when every model is loaded and batching), `GET /metrics`.
- `GET /` (try a model), `GET /reports` (the runs' reports), `GET /reports.json`,
  `GET /reports/<path>` (files under the reports folder only), `GET /static/...`.

Every error is `{"error": "one sentence"}` with a 4xx (or 500) status.
"""

import contextlib
import hmac
import json
import logging
import time
from pathlib import Path

from elman.errors import UserError
from elman.serve.batching import Batcher
from elman.serve.metrics import Metrics
from elman.serve.request import Limits, RequestError, parse_predict, read_body

STATIC = Path(__file__).resolve().parent / "static"
PAGE_POLICY = ("default-src 'self'; img-src 'self' data:; style-src 'self'; "
               "script-src 'self'; frame-ancestors 'none'; base-uri 'none'")
REPORT_POLICY = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"
log = logging.getLogger("elman.serve")


class _ErrorCounter:
    """ASGI middleware: counts every response with a status >= 400 in `metrics`."""

    def __init__(self, app, metrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def counting_send(message):
            if message["type"] == "http.response.start" and message["status"] >= 400:
                self.metrics.observe_error(message["status"])
            await send(message)

        return await self.app(scope, receive, counting_send)


def _error(status, message, headers=None):
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _install_error_handlers(app):
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException

    @app.exception_handler(RequestError)
    async def request_error(request, err):
        headers = {"WWW-Authenticate": "Bearer"} if err.status == 401 else None
        return _error(err.status, err.message, headers)

    @app.exception_handler(HTTPException)
    async def http_error(request, err):
        if err.status_code == 404:
            return _error(404, f"no such page: {request.url.path[:100]}")
        if err.status_code == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path[:100]}")
        return _error(err.status_code, str(err.detail))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request, err):
        return _error(400, "the request is not valid")

    @app.exception_handler(Exception)
    async def crash(request, err):
        log.exception("unexpected error on %s", request.url.path)
        request.app.state.metrics.observe_error(500)  # outside the counting middleware
        return _error(500, "the server failed on this request; see its log")


def _auth(api_key):
    """A dependency: with an API key set, requires `Authorization: Bearer KEY`."""
    from fastapi import Request

    async def check(request: Request):
        if not api_key:
            return
        given = request.headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
                token.strip().encode(), api_key.encode()):
            raise RequestError(401, "this server needs an API key: send the header "
                                    "'Authorization: Bearer KEY'")

    return check


def _lifespan(models, batchers, metrics):
    @contextlib.asynccontextmanager
    async def lifespan(app):
        for (_, name), batcher in batchers.items():
            batcher.start()
            metrics.loaded[name] = models[name].loaded
        try:
            yield
        finally:
            for batcher in batchers.values():
                await batcher.stop()

    return lifespan


async def _predict(app, name, request, kind="predict"):
    state = app.state
    model = state.models.get(name)
    if model is None:
        raise RequestError(404, f"no model named '{name[:60]}'; this server has "
                                f"{', '.join(state.models) or 'none'}")
    if (kind, name) not in state.batchers:
        raise RequestError(404, f"model '{name[:60]}' has no reading trace")
    body = await read_body(request, state.limits.max_body_bytes)
    specs = model.options if kind == "predict" else model.trace_options()
    texts, options = parse_predict(body, state.limits, specs, model.task)
    try:
        answers = await state.batchers[kind, name].submit(texts, options)
    except UserError as err:
        raise RequestError(400, err.message) from None
    return _json({"predictions" if kind == "predict" else "traces": answers})


def _json(value):
    """A JSON response written directly (predictions are JSON-ready already)."""
    from fastapi.responses import Response

    return Response(json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                               allow_nan=False).encode("utf-8"), media_type="application/json")


def _add_api_routes(app, api_key):
    from fastapi import APIRouter, Depends, Request

    router = APIRouter(prefix="/v1", dependencies=[Depends(_auth(api_key))])

    @router.get("/models")
    async def list_models():
        return {"models": [m.describe() for m in app.state.models.values()]}

    async def answer(name, request, kind):
        began = time.perf_counter()
        code = 500
        try:
            out = await _predict(app, name, request, kind)
            code = 200
            return out
        except RequestError as err:
            code = err.status
            raise
        finally:
            if name in app.state.models:
                app.state.metrics.observe_request(name, code, time.perf_counter() - began)

    @router.post("/models/{name}:predict")
    async def predict(name: str, request: Request):
        return await answer(name, request, "predict")

    @router.post("/models/{name}:trace")
    async def trace(name: str, request: Request):
        return await answer(name, request, "trace")

    @router.get("/models/{name}")
    async def show_model(name: str):
        model = app.state.models.get(name)
        if model is None:
            raise RequestError(404, f"no model named '{name[:60]}'; this server has "
                                    f"{', '.join(app.state.models) or 'none'}")
        return model.describe(full=True)

    app.include_router(router)


def _add_service_routes(app):
    from fastapi.responses import JSONResponse, PlainTextResponse

    @app.get("/healthz")
    async def healthz():
        state = app.state
        waiting = [name for name, model in state.models.items()
                   if not (model.loaded and all(batcher.alive for (_, served), batcher
                                                in state.batchers.items() if served == name))]
        if waiting or not state.models:
            return JSONResponse({"status": "not ready", "error": "not ready: "
                                 + (", ".join(waiting) or "no models")}, status_code=503)
        return {"status": "ok", "models": list(state.models)}

    @app.get("/metrics")
    async def metrics():
        return PlainTextResponse(app.state.metrics.render(),
                                 media_type="text/plain; version=0.0.4; charset=utf-8")


def _add_page_routes(app, reports_root):
    from fastapi import Request
    from fastapi.responses import FileResponse
    from fastapi.staticfiles import StaticFiles

    from elman.serve import reports

    page_headers = {"Content-Security-Policy": PAGE_POLICY,
                    "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}

    @app.get("/")
    async def index():
        return FileResponse(STATIC / "index.html", headers=page_headers)

    @app.get("/reports")
    @app.get("/reports/")
    async def reports_page():
        return FileResponse(STATIC / "reports.html", headers=page_headers)

    @app.get("/reports.json")
    async def reports_list():
        rows = [] if reports_root is None else reports.list_reports(reports_root)
        return {"reports": rows}

    @app.get("/reports/{path:path}")
    async def report_file(path: str, request: Request):
        if reports_root is None:
            raise RequestError(404, "this server shows no reports (start it with --reports)")
        raw = request.scope.get("raw_path", b"").decode("latin-1")
        return FileResponse(reports.safe_path(reports_root, path, raw),
                            headers={"Content-Security-Policy": REPORT_POLICY,
                                     "X-Content-Type-Options": "nosniff"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")


def create_app(models, max_batch=64, max_wait_ms=5.0, limits=None, reports_root=None,
               api_key=None):
    """The ASGI app serving `models` (loaded `ServedModel`s).

    Args:
        models: dict {name: `elman.serve.models.ServedModel`}.
        max_batch: int, texts per merged model call (1: no batching).
        max_wait_ms: float, how long a batch waits for more requests.
        limits: `elman.serve.request.Limits` or None for the defaults.
        reports_root: str, Path or None, the reports folder the pages show.
        api_key: str or None; when set, every `/v1` call needs `Authorization: Bearer KEY`.

    Returns:
        A FastAPI app; its batchers start and stop with the app's lifespan.
    """
    from fastapi import FastAPI

    metrics = Metrics()
    batchers = {}
    for name, model in models.items():  # one batcher for predictions, one for traces
        batchers["predict", name] = Batcher(model.predictor.predict, max_batch, max_wait_ms,
                                            observe=_batch_observer(metrics, name), name=name)
        if callable(getattr(model.predictor, "trace", None)):
            batchers["trace", name] = Batcher(model.predictor.trace, max_batch, max_wait_ms,
                                              name=f"{name} (trace)")
    app = FastAPI(title="elman", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=_lifespan(models, batchers, metrics))
    app.state.models = dict(models)
    app.state.batchers = batchers
    app.state.metrics = metrics
    app.state.limits = limits or Limits()
    _install_error_handlers(app)
    _add_service_routes(app)
    _add_api_routes(app, api_key)
    _add_page_routes(app, None if reports_root is None else Path(reports_root))
    app.add_middleware(_ErrorCounter, metrics=metrics)
    return app


def _batch_observer(metrics, name):
    def observe(requests, texts):
        metrics.observe_batch(name, requests, texts)

    return observe
