"""Running the app: `elman serve` in the foreground, or a server in a thread (tests, bench).

The port is bound before uvicorn starts, so a port in use is one clear error line
(exit code 2) like a bad run folder, and port 0 picks a free port.
"""

import os
import signal
import socket
import sys
import threading
import time

from elman.errors import UserError


def bind(host="127.0.0.1", port=8000):
    """A listening TCP socket on (host, port); port 0 picks a free one.

    Raises:
        UserError: when the address cannot be bound (in use, not an address here).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say
    # TCP; without it every response waits ~40 ms for the client's delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _uvicorn_server(app, log_level="warning"):
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="on",
                            timeout_graceful_shutdown=5)
    return uvicorn.Server(config)


class ServerThread:
    """A uvicorn server running `app` in a background thread, on a bound socket.

    Args:
        app: the ASGI app.
        host: str. Default 127.0.0.1.
        port: int, 0 for a free port.

    Example:
        >>> with ServerThread(app) as server:
        ...     httpx.get(server.url + "/healthz")
    """

    def __init__(self, app, host="127.0.0.1", port=0):
        self.sock = bind(host, port)
        self.host, self.port = host, self.sock.getsockname()[1]
        self.server = _uvicorn_server(app)
        self.thread = threading.Thread(target=self.server.run,
                                       kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def url(self):
        """The server's base URL."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout=60):
        """Starts the thread and waits until uvicorn has started."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        return self

    def stop(self):
        """Asks uvicorn to exit and waits for the thread."""
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def run(run_dirs, host="127.0.0.1", port=8000, max_batch=64, max_wait_ms=5.0,
        max_batch_request=64, max_text_chars=10_000, reports="reports", api_key=None,
        log=print):
    """`elman serve`: loads every run, then serves until interrupted; returns 0.

    Args:
        run_dirs: list of run folders (each model's name is its folder's name).
        host, port: where to listen (127.0.0.1 unless told otherwise).
        max_batch: int, texts per merged model call (1: batching off).
        max_wait_ms: float, how long a batch waits for more requests.
        max_batch_request: int, instances per request.
        max_text_chars: int, characters per instance.
        reports: str or None, the reports folder the pages show.
        api_key: str or None, the bearer token every /v1 call then needs.
        log: callable for progress lines.

    Raises:
        UserError: for a bad setting, a run that cannot be served or a port in use.
    """
    from elman.serve.app import create_app
    from elman.serve.models import check_runs, load_models
    from elman.serve.request import Limits

    for flag, value, low in (("--max-batch", max_batch, 1), ("--max-wait-ms", max_wait_ms, 0),
                             ("--max-batch-request", max_batch_request, 1),
                             ("--max-text-chars", max_text_chars, 1)):
        if value < low:
            raise UserError(f"{flag} must be >= {low}; got {value}")
    check_runs(run_dirs)  # a bad folder fails before TensorFlow starts
    sock = bind(host, port)  # and a port in use before the models load
    try:
        models = load_models(run_dirs, reports_root=reports, log=log)
    except BaseException:
        sock.close()
        raise
    app = create_app(models, max_batch=max_batch, max_wait_ms=max_wait_ms,
                     limits=Limits(max_batch_request, max_text_chars),
                     reports_root=reports, api_key=api_key)
    where = f"http://{'[' + host + ']' if ':' in host else host}:{sock.getsockname()[1]}/"
    log(f"serving {', '.join(models)} at {where} (batches of up to {max_batch} texts, "
        f"{max_wait_ms:g} ms wait{'; API key required' if api_key else ''}); Ctrl-C stops")
    if host not in ("127.0.0.1", "localhost", "::1") and not api_key:
        print("elman: warning: listening beyond this machine without --api-key",
              file=sys.stderr)
    sys.stdout.flush()
    server = _uvicorn_server(app, log_level=os.environ.get("ELMAN_SERVE_LOG", "warning"))
    previous = signal.signal(signal.SIGTERM, _interrupt)  # uvicorn re-raises it on exit
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the normal way to stop a server
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    log("stopped")
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt
