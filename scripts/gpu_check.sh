#!/usr/bin/env bash
# The GPU check (issue 6): confirms TensorFlow uses the GPU and cuDNN kernels run,
# that mixed precision (float16 with loss scaling, bfloat16) trains, and prints
# training tokens/s on CPU vs GPU for the sentiment and tagging models.
# Runs in under 8 minutes on a fresh GPU machine, creating .venv-gpu with
# `pip install .[gpu]` when no Python environment here sees the GPU.
# Same as `elman bench --gpu`. Exit code 0: all checks passed; 1: a check failed or
# no GPU is visible (it says which); writes reports/bench/gpu_check.json.
set -uo pipefail
cd "$(dirname "$0")/.."
export TF_CPP_MIN_LOG_LEVEL=3 PYTHONHASHSEED=0
BUDGET=470  # seconds for the whole script (8 minutes, with a margin)

sees_gpu() {  # $1: a python; true when its TensorFlow lists a GPU
  "$1" -c "import sys, tensorflow as tf; sys.exit(0 if tf.config.list_physical_devices('GPU') else 1)" \
    >/dev/null 2>&1
}
has_tf() {
  "$1" -c "import tensorflow, keras" >/dev/null 2>&1
}

PY="" FALLBACK=""
for cand in "${ELMAN_PYTHON:-}" .venv-gpu/bin/python .venv/bin/python python3; do
  [ -n "$cand" ] && command -v "$cand" >/dev/null 2>&1 || continue
  has_tf "$cand" || continue
  if sees_gpu "$cand"; then PY=$cand; break; fi
  FALLBACK=${FALLBACK:-$cand}
done

if [ -z "$PY" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "nvidia-smi sees: $(nvidia-smi -L | head -4)"
    echo "no Python environment here sees that GPU: creating .venv-gpu (pip install .[gpu])"
    python3 -m venv .venv-gpu \
      && timeout $((BUDGET - SECONDS - 200)) .venv-gpu/bin/python -m pip install --quiet --upgrade pip \
      && timeout $((BUDGET - SECONDS - 180)) .venv-gpu/bin/python -m pip install --quiet '.[gpu]' \
      || echo "pip install .[gpu] failed or ran out of time (is the package index reachable?)"
    if has_tf .venv-gpu/bin/python; then PY=.venv-gpu/bin/python; fi
  else
    echo "no GPU visible: nvidia-smi is not available or lists no GPU on this machine"
  fi
fi
PY=${PY:-$FALLBACK}
if [ -z "$PY" ]; then
  echo "no GPU visible, and no Python with TensorFlow found here (run 'make venv' or pip install .[gpu])"
  exit 1
fi
echo "using $PY ($(( BUDGET - SECONDS )) s left)"
exec timeout $((BUDGET - SECONDS)) "$PY" -m elman.bench.gpu_check
