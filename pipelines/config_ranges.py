"""Range rules for settings, by name, shared by every task: a value outside its range is
one clear error when the configuration is read, before any data is."""

import math

from elman.errors import UserError


# Range rules by setting name, for every task: sizes and counts are at least 1, dropout
# rates lie in [0, 1), a learning rate is positive. A model would reject such values too,
# but only after the data is read and with a traceback.
_AT_LEAST_ONE = {"units", "num_layers", "dim", "embedding_dim", "epochs", "batch_size",
                 "patience", "eval_batch_size", "max_length", "max_word_length", "kernel_size",
                 "ensemble", "steps_per_execution", "vector_epochs", "vector_window",
                 "attention_units", "vector_max_tokens"}


_AT_LEAST_ZERO = {"max_minutes", "weight_decay", "clipnorm", "ema", "threads", "batch_tokens",
                  "length_multiple", "vector_std", "average_best", "rcnn"}


# upper bounds by setting name: beyond them a run cannot fit this kind of machine anyway,
# and without a bound the failure is an out-of-memory abort deep inside TensorFlow
_AT_MOST = {"units": 16_384, "dim": 16_384, "embedding_dim": 16_384, "num_layers": 64,
            "batch_size": 1_000_000, "eval_batch_size": 1_000_000, "max_length": 100_000,
            "max_tokens": 50_000_000, "max_vocabulary": 50_000_000, "epochs": 1_000_000,
            "ensemble": 100, "max_word_length": 1_000, "kernel_size": 1_000,
            "chunk_length": 100_000, "batch_tokens": 50_000_000, "vocabulary_size": 1_000_000,
            "length_multiple": 1_024, "steps_per_execution": 10_000, "vector_epochs": 1_000,
            "vector_window": 1_000, "vector_max_tokens": 10_000_000_000, "folds": 100,
            "average_best": 100, "rcnn": 16_384}


def check_range(key, value, source):
    name = key.rsplit(".", 1)[-1]
    if name in _AT_MOST and isinstance(value, int) and value > _AT_MOST[name]:
        raise UserError(f"'{key}' must be at most {_AT_MOST[name]:,}; got {value:,}",
                        path=source)
    if isinstance(value, float) and not math.isfinite(value):
        raise UserError(f"'{key}' must be a finite number; got {value}", path=source)
    if name in _AT_LEAST_ZERO and isinstance(value, (int, float)) and value < 0:
        raise UserError(f"'{key}' must be at least 0 (0: off); got {value:g}", path=source)
    if key == "pretrain.epochs":  # 0 turns pretraining off
        if value < 0:
            raise UserError(f"'{key}' must be at least 0 (0: no pretraining); got {value}",
                            path=source)
        return
    if name == "vocabulary_size" and isinstance(value, int) and value < 8:
        raise UserError(f"'{key}' must be at least 8 (4 reserved ids and some pieces); "
                        f"got {value}", path=source)
    if name == "character_coverage" and not 0.9 <= value <= 1.0:
        raise UserError(f"'{key}' must be in [0.9, 1]; got {value:g}", path=source)
    if key == "train.plateau" and not 0.0 <= value < 1.0:
        raise UserError(f"'{key}' must be in [0, 1) (0: off); got {value:g}", path=source)
    if key == "train.momentum" and not 0.0 <= value < 1.0:
        raise UserError(f"'{key}' must be in [0, 1); got {value:g}", path=source)
    if name in ("label_smoothing", "drop_hardest") and not 0.0 <= value < 1.0:
        raise UserError(f"'{key}' must be in [0, 1) (0: off); got {value:g}", path=source)
    if key == "head.distill" and not 0.0 <= value <= 1.0:
        raise UserError(f"'{key}' must be in [0, 1] (0: off); got {value:g}", path=source)
    if key == "head.distill_temperature" and not value > 0.0:
        raise UserError(f"'{key}' must be positive; got {value:g}", path=source)
    if key == "pretrain.rate" and not 0.0 < value < 1.0:
        raise UserError(f"'{key}' must be in (0, 1); got {value:g}", path=source)
    if key in ("embedding.adversarial", "embedding.virtual_adversarial",
               "head.rdrop", "head.mixup", "train.sam") and not value >= 0.0:
        raise UserError(f"'{key}' must be at least 0 (0: off); got {value:g}", path=source)
    if key == "noise.folds" and value < 2:
        raise UserError(f"'{key}' must be at least 2; got {value}", path=source)
    if key == "noise.ngrams" and not 1 <= value <= 10:
        raise UserError(f"'{key}' must be in [1, 10]; got {value}", path=source)
    if key == "noise.c" and not value > 0.0:
        raise UserError(f"'{key}' must be positive; got {value:g}", path=source)
    if name in _AT_LEAST_ONE and isinstance(value, int) and value < 1:
        raise UserError(f"'{key}' must be at least 1; got {value}", path=source)
    if name.endswith("dropout") and isinstance(value, float) and not 0.0 <= value < 1.0:
        raise UserError(f"'{key}' must be in [0, 1); got {value:g}", path=source)
    if name == "learning_rate" and isinstance(value, float) and not value > 0.0:
        raise UserError(f"'{key}' must be positive; got {value:g}", path=source)
