"""The one registry of tasks: name → (config class, Task class), used by the CLI, the
config loader, `elman demo`, `elman bench` and the Python API.

Entries are "module:attribute" strings so that listing tasks or loading a config never
imports TensorFlow. Adding a task is one package under `elman/tasks/` and one line
here (or one `register` call, which is how the tests add a task of their own).
"""

import importlib

_REGISTRY = {
    "sentiment": ("elman.tasks.sentiment.config:SentimentConfig",
                  "elman.tasks.sentiment.task:SentimentTask"),
    "tagging": ("elman.tasks.tagging.config:TaggingConfig",
                "elman.tasks.tagging.task:TaggingTask"),
    "translation": ("elman.tasks.translation.config:TranslationConfig",
                    "elman.tasks.translation.task:TranslationTask"),
    "lm": ("elman.tasks.lm.config:LMConfig", "elman.tasks.lm.task:LMTask"),
}


def _resolve(spec):
    if not isinstance(spec, str):
        return spec
    module, _, attribute = spec.partition(":")
    return getattr(importlib.import_module(module), attribute)


def register(name, config_class, task_class):
    """Adds (or replaces) a task.

    Args:
        name: str, the task name used on the command line.
        config_class: the config dataclass, or a "module:attribute" string.
        task_class: the `elman.tasks.base.Task` subclass, or a "module:attribute" string.
    """
    _REGISTRY[name] = (config_class, task_class)


def unregister(name):
    """Removes a task (for tests that registered one)."""
    _REGISTRY.pop(name, None)


def names():
    """The registered task names, in registry order."""
    return list(_REGISTRY)


def _entry(name):
    from elman.errors import UserError

    if name not in _REGISTRY:
        raise UserError(f"unknown task '{name}'; expected one of {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def config_class(name):
    """The task's config dataclass (imports no TensorFlow)."""
    return _resolve(_entry(name)[0])


def get(name):
    """A new instance of the task's `Task` class."""
    return _resolve(_entry(name)[1])()
