"""elman: recurrent NLP done right (Keras 3 / TensorFlow).

The public API (the `elman` command is a thin layer over it):

    import elman

    run = elman.train("sentiment")                 # the toy preset; returns a Run
    predictor = elman.load(run.path)               # any task's saved run
    predictor.predict(["a lovely warm place"])     # same dicts as `elman predict --format json`
    elman.evaluate(run.path)                       # an EvalResult (.scores, .per_class)
    elman.presets("sentiment")                     # {"default": "...", "sst2": "...", ...}

Mistakes a user can fix raise `elman.UserError`, whose message is what the CLI prints.
Importing elman loads no TensorFlow; training or loading a run does.
"""

from elman.api import Run, evaluate, load, presets, train
from elman.errors import UserError

__all__ = ["Run", "UserError", "evaluate", "load", "presets", "train"]
__version__ = "0.1.0"
