"""The server's counters and histograms, written as Prometheus text (no extra package).

`GET /metrics` serves `Metrics.render()`:

- `elman_requests_total{model,code}`: predict requests per served model and status.
- `elman_errors_total{code}`: every error response (4xx and 5xx), any endpoint.
- `elman_request_duration_seconds{model}`: predict latency, a histogram.
- `elman_batch_requests{model}` and `elman_batch_texts{model}`: how many requests and
  texts each model call held, histograms (batching at work: requests > 1).
- `elman_model_loaded{model}`: 1 when the model is loaded.
"""

import threading

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0)
SIZE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def _escape(value):
    return str(value).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def _labels(names, values, extra=""):
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _number(value):
    if isinstance(value, float):
        return repr(value) if value != int(value) else str(int(value))
    return str(value)


class Histogram:
    """A Prometheus histogram with labels.

    Args:
        name: str, the metric name.
        help_text: str, its one-line description.
        buckets: tuple of upper bounds, increasing.
        label_names: tuple of str.
    """

    def __init__(self, name, help_text, buckets, label_names=()):
        self.name, self.help_text = name, help_text
        self.buckets, self.label_names = tuple(buckets), tuple(label_names)
        self._series = {}

    def observe(self, value, *labels):
        """Adds one observation to the series of `labels`."""
        counts, total = self._series.get(labels, ([0] * len(self.buckets), [0.0, 0]))
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                counts[i] += 1
        total[0] += value
        total[1] += 1
        self._series[labels] = (counts, total)

    def lines(self):
        """The metric's text lines."""
        out = [f"# HELP {self.name} {self.help_text}", f"# TYPE {self.name} histogram"]
        for labels, (counts, (value_sum, count)) in sorted(self._series.items()):
            bounds = [_number(b) for b in self.buckets] + ["+Inf"]
            for bound, n in zip(bounds, counts + [count]):
                le = 'le="' + bound + '"'
                out.append(f"{self.name}_bucket{_labels(self.label_names, labels, le)} {n}")
            plain = _labels(self.label_names, labels)
            out.append(f"{self.name}_sum{plain} {_number(float(value_sum))}")
            out.append(f"{self.name}_count{plain} {count}")
        return out


class Counter:
    """A Prometheus counter with labels.

    Args:
        name: str, the metric name (ending in _total).
        help_text: str, its one-line description.
        label_names: tuple of str.
    """

    def __init__(self, name, help_text, label_names=()):
        self.name, self.help_text, self.label_names = name, help_text, tuple(label_names)
        self._values = {}

    def inc(self, *labels, amount=1):
        """Adds `amount` to the series of `labels`."""
        self._values[labels] = self._values.get(labels, 0) + amount

    def value(self, *labels):
        """The current count of `labels` (0 when never counted)."""
        return self._values.get(labels, 0)

    def lines(self):
        """The metric's text lines."""
        out = [f"# HELP {self.name} {self.help_text}", f"# TYPE {self.name} counter"]
        out += [f"{self.name}{_labels(self.label_names, labels)} {value}"
                for labels, value in sorted(self._values.items())]
        return out


class Metrics:
    """Everything `/metrics` reports; safe to update from any thread."""

    def __init__(self):
        self._lock = threading.Lock()
        self.requests = Counter("elman_requests_total",
                                "Predict requests by served model and HTTP status code.",
                                ("model", "code"))
        self.errors = Counter("elman_errors_total", "Error responses by HTTP status code.",
                              ("code",))
        self.latency = Histogram("elman_request_duration_seconds",
                                 "Predict request latency in seconds.", LATENCY_BUCKETS,
                                 ("model",))
        self.batch_requests = Histogram("elman_batch_requests",
                                        "Requests merged into one model call.",
                                        SIZE_BUCKETS, ("model",))
        self.batch_texts = Histogram("elman_batch_texts", "Texts in one model call.",
                                     SIZE_BUCKETS, ("model",))
        self.loaded = {}

    def observe_request(self, model, code, seconds):
        """Counts one predict request to a served model and its latency."""
        with self._lock:
            self.requests.inc(model, str(code))
            self.latency.observe(seconds, model)

    def observe_error(self, code):
        """Counts one error response."""
        with self._lock:
            self.errors.inc(str(code))

    def observe_batch(self, model, requests, texts):
        """Counts one model call of `requests` requests holding `texts` texts."""
        with self._lock:
            self.batch_requests.observe(requests, model)
            self.batch_texts.observe(texts, model)

    def render(self):
        """The Prometheus text exposition (version 0.0.4)."""
        with self._lock:
            lines = []
            for metric in (self.requests, self.errors, self.latency, self.batch_requests,
                           self.batch_texts):
                lines += metric.lines()
            lines += ["# HELP elman_model_loaded 1 when the model is loaded and warmed up.",
                      "# TYPE elman_model_loaded gauge"]
            lines += [f'elman_model_loaded{{model="{_escape(name)}"}} {int(bool(on))}'
                      for name, on in sorted(self.loaded.items())]
        return "\n".join(lines) + "\n"
