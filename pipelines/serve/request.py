"""A predict request: its body read within a size limit, its texts and task options checked.

Every check fails with a `RequestError` that carries the HTTP status and one sentence
the client sees as `{"error": "..."}`. Task options are checked against the
predictor's `options` class attribute (see `elman.tasks.base.Predictor`): name →
(type, default) or (type, default, min, max).
"""

import dataclasses
import json
import math

TYPE_NAMES = {int: "integer", float: "number", bool: "boolean", str: "string"}


class RequestError(Exception):
    """A request the server refuses: an HTTP status and one clear sentence.

    Args:
        status: int, the HTTP status code (4xx).
        message: str, what is wrong, shown to the client.
    """

    def __init__(self, status, message):
        self.status = status
        self.message = message
        super().__init__(message)


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one predict request may hold.

    Attributes:
        max_batch_request: int, instances per request.
        max_text_chars: int, characters per instance.
    """

    max_batch_request: int = 64
    max_text_chars: int = 10_000

    @property
    def max_body_bytes(self):
        """The body size limit: room for the largest valid request (JSON escapes included)."""
        return max(65_536, self.max_batch_request * (self.max_text_chars * 6 + 8) + 4_096)


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    """One task option a predictor accepts.

    Attributes:
        name: str, the option's name in the request.
        type: int, float, bool or str.
        default: its value when the request does not give it.
        low, high: inclusive bounds, or None for unbounded.
    """

    name: str
    type: type
    default: object = None
    low: object = None
    high: object = None

    def describe(self):
        """The JSON-ready description the API and the web page show."""
        return {"type": TYPE_NAMES[self.type], "default": self.default, "min": self.low,
                "max": self.high}


def option_specs(predictor):
    """The predictor's declared options as {name: OptionSpec}.

    Args:
        predictor: an `elman.tasks.base.Predictor`.

    Raises:
        ValueError: when a declaration is not (type, default[, min[, max]]).
    """
    out = {}
    for name, spec in dict(getattr(predictor, "options", None) or {}).items():
        if isinstance(spec, dict):
            spec = (spec.get("type"), spec.get("default"), spec.get("min"), spec.get("max"))
        spec = tuple(spec) + (None,) * (4 - len(tuple(spec)))
        if len(spec) != 4 or spec[0] not in TYPE_NAMES:
            raise ValueError(f"option '{name}' is declared as {spec!r}; expected "
                             "(type, default[, min[, max]]) with type int, float, bool or str")
        out[str(name)] = OptionSpec(str(name), *spec)
    return out


def _typed(spec, value):
    kind = spec.type
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind is float:
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
              and math.isfinite(value))
        value = float(value) if ok else value
    else:
        ok = isinstance(value, str)
    if not ok:
        raise RequestError(400, f"option '{spec.name}' must be {'an' if kind is int else 'a'} "
                                f"{TYPE_NAMES[kind]}; got {json.dumps(value)[:40]}")
    return value


def check_options(specs, given, task):
    """The options to pass to `predict`: the given ones checked, the rest at their defaults.

    Args:
        specs: dict {name: OptionSpec}, what the model accepts.
        given: dict, the request's options (every key but "instances").
        task: str, the model's task (for the message).

    Raises:
        RequestError: 400 for an unknown option, a wrong type or a value out of range.
    """
    for name in given:
        if name not in specs:
            takes = (f"it takes {', '.join(sorted(specs))}" if specs else "it takes none")
            raise RequestError(400, f"unknown option '{name[:40]}' for a {task} model; "
                                    f"{takes}")
    out = {}
    for name, spec in specs.items():
        if name not in given:
            if spec.default is not None:
                out[name] = spec.default
            continue
        value = _typed(spec, given[name])
        if (spec.low is not None and value < spec.low) or (
                spec.high is not None and value > spec.high):
            low = "-inf" if spec.low is None else spec.low
            high = "inf" if spec.high is None else spec.high
            raise RequestError(400, f"option '{name}' must be between {low} and {high}; "
                                    f"got {value}")
        out[name] = value
    return out


def parse_json(body):
    """The request body as a JSON object (dict).

    Raises:
        RequestError: 400 when the body is not UTF-8 JSON or not an object.
    """
    try:
        value = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise RequestError(400, "the request body is not valid UTF-8") from None
    except json.JSONDecodeError as err:
        raise RequestError(400, f"the request body is not valid JSON ({err.msg} at line "
                                f"{err.lineno}, column {err.colno})") from None
    if not isinstance(value, dict):
        raise RequestError(400, 'the request body must be a JSON object like '
                                '{"instances": ["some text"]}')
    return value


def _json_type(value):
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "a string", dict: "an object"}.get(type(value), "null")


def check_instances(value, limits):
    """The request's texts, checked.

    Args:
        value: the body's "instances" value.
        limits: `Limits`.

    Raises:
        RequestError: 400 for a missing, non-list or empty list, a non-string instance,
            too many instances or a text over the length limit.
    """
    if value is None:
        raise RequestError(400, 'the request needs "instances": a list of texts')
    if not isinstance(value, list):
        raise RequestError(400, f'"instances" must be a list of texts; got {_json_type(value)}')
    if not value:
        raise RequestError(400, '"instances" is empty; send at least one text')
    if len(value) > limits.max_batch_request:
        raise RequestError(400, f'"instances" holds {len(value)} texts; at most '
                                f'{limits.max_batch_request} per request')
    for i, text in enumerate(value, start=1):
        if not isinstance(text, str):
            raise RequestError(400, f"instance {i} is not a string; expected a text")
        if len(text) > limits.max_text_chars:
            raise RequestError(400, f"instance {i} has {len(text):,} characters; at most "
                                    f"{limits.max_text_chars:,} per text")
    return list(value)


def parse_predict(body, limits, specs, task):
    """A predict request's (texts, options).

    Args:
        body: bytes, the request body.
        limits: `Limits`.
        specs: dict {name: OptionSpec}, the model's options.
        task: str, the model's task.

    Raises:
        RequestError: 400 with the first problem found.
    """
    request = parse_json(body)
    texts = check_instances(request.get("instances"), limits)
    options = check_options(specs, {k: v for k, v in request.items() if k != "instances"},
                            task)
    return texts, options


async def read_body(request, limit):
    """The request body, refused once it is over `limit` bytes.

    Args:
        request: a Starlette `Request`.
        limit: int, bytes.

    Raises:
        RequestError: 413 for a body (or a declared Content-Length) over the limit.
    """
    too_big = RequestError(413, f"the request body is over the {limit:,}-byte limit")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_big
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)
