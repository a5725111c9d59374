"""elman's Keras layers and models (no file I/O, no tokenizing, no printing).

Importing a submodule registers its classes for safe-mode loading; `import_all()`
imports every one of them.
"""

import importlib
import pkgutil

# every saved elman model may name these (its recurrent layers, its compiled optimizer and
# loss):
# registered as soon as any elman.models module is imported
from elman.models import fused_optimizers, label_smoothing, padded_rnn  # noqa: F401


def import_all():
    """Imports every module of the package so all layers are registered."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
