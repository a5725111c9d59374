"""The server-side micro-batcher: requests that arrive together become one model call.

Each model has one `Batcher`. A request's texts wait in its queue; the batcher takes
the requests that arrived within `max_wait_ms` of the first (up to `max_batch`
texts), groups them by their task options, and runs one `predict` call per group in
a worker thread, so the event loop stays free for health checks and new requests.
The answers are split back per request. When a merged call fails (one request held
an empty text, say), each of its requests is run on its own, so only the bad one
fails and the rest of the batch is answered.
"""

import asyncio
import collections
import dataclasses
from concurrent.futures import ThreadPoolExecutor


@dataclasses.dataclass
class _Item:
    texts: list
    options: dict
    future: object

    @property
    def key(self):
        return tuple(sorted(self.options.items()))


class Batcher:
    """Merges concurrent predict requests for one model into batched `predict` calls.

    Args:
        predict: callable(texts, **options) → list with one result per text.
        max_batch: int >= 1, texts per model call (a single larger request runs alone).
        max_wait_ms: float >= 0, how long the first request of a batch waits for others.
        observe: callable(requests, texts) or None, told the size of each model call.
        name: str, the model's name (for the worker thread's name).

    Example:
        >>> batcher = Batcher(predictor.predict, max_batch=64, max_wait_ms=5)
        >>> batcher.start()          # inside the running event loop
        >>> await batcher.submit(["a fine film"], {})
    """

    def __init__(self, predict, max_batch=64, max_wait_ms=5.0, observe=None, name="model"):
        if max_batch < 1 or max_wait_ms < 0:
            raise ValueError("max_batch must be >= 1 and max_wait_ms >= 0")
        self._predict = predict
        self.max_batch = int(max_batch)
        self.max_wait = float(max_wait_ms) / 1000.0
        self._observe = observe
        self._name = name
        self._pending = collections.deque()
        self._pending_texts = 0
        self._wake = None
        self._task = None
        self._executor = None

    def start(self):
        """Starts the batching loop on the running event loop."""
        self._wake = asyncio.Event()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"elman-{self._name}")
        self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self):
        """Stops the loop; requests still waiting get a RuntimeError."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        while self._pending:
            item = self._pending.popleft()
            if not item.future.done():
                item.future.set_exception(RuntimeError("the server is shutting down"))
        if self._executor is not None:
            self._executor.shutdown(wait=False)

    @property
    def alive(self):
        """True while the batching loop runs."""
        return self._task is not None and not self._task.done()

    async def submit(self, texts, options):
        """The predictions for `texts` (one request), computed in some batch.

        Args:
            texts: list of str.
            options: dict, the checked task options.

        Raises:
            whatever `predict` raised for this request's texts alone.
        """
        if not self.alive:
            raise RuntimeError("the batcher is not running")
        future = asyncio.get_running_loop().create_future()
        self._pending.append(_Item(list(texts), dict(options), future))
        self._pending_texts += len(texts)
        self._wake.set()
        return await future

    async def _loop(self):
        while True:
            batch = await self._next_batch()
            try:
                await self._run(batch)
            except Exception as err:  # noqa: BLE001 - never let one batch stop the loop
                for item in batch:
                    _settle(item, error=err)

    async def _next_batch(self):
        loop = asyncio.get_running_loop()
        while not self._pending:
            self._wake.clear()
            await self._wake.wait()
        deadline = loop.time() + self.max_wait
        while self._pending_texts < self.max_batch:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), remaining)
            except asyncio.TimeoutError:
                break
        batch, size = [], 0
        while self._pending and (not batch or
                                 size + len(self._pending[0].texts) <= self.max_batch):
            item = self._pending.popleft()
            self._pending_texts -= len(item.texts)
            if item.future.done():  # the client went away
                continue
            batch.append(item)
            size += len(item.texts)
        return batch

    async def _call(self, items, options):
        texts = [text for item in items for text in item.texts]
        if self._observe is not None:
            self._observe(len(items), len(texts))
        loop = asyncio.get_running_loop()
        results = await loop.run_in_executor(self._executor, self._predict_all, texts, options)
        if len(results) != len(texts):
            raise RuntimeError(f"predict returned {len(results)} results for "
                               f"{len(texts)} texts")
        return results

    def _predict_all(self, texts, options):
        return list(self._predict(texts, **options))

    async def _run(self, batch):
        groups = collections.defaultdict(list)
        for item in batch:
            groups[item.key].append(item)
        for items in groups.values():
            options = items[0].options
            try:
                results = await self._call(items, options)
            except Exception as err:  # noqa: BLE001 - retried one by one below
                if len(items) == 1:
                    _settle(items[0], error=err)
                    continue
                for item in items:
                    await self._run_alone(item)
                continue
            start = 0
            for item in items:
                _settle(item, result=results[start:start + len(item.texts)])
                start += len(item.texts)

    async def _run_alone(self, item):
        try:
            results = await self._call([item], item.options)
        except Exception as err:  # noqa: BLE001 - this request's own error
            _settle(item, error=err)
        else:
            _settle(item, result=results)


def _settle(item, result=None, error=None):
    if item.future.done():
        return
    if error is not None:
        item.future.set_exception(error)
    else:
        item.future.set_result(result)
