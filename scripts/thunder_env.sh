#!/usr/bin/env bash
# Build a second virtualenv for the thunder tier of the tracer matrix:
#   torch==2.9.1 + lightning-thunder==0.2.6 + inliner (editable, --no-deps) + test tools.
#
# Usage: bash scripts/thunder_env.sh [VENV_DIR]        (default: /tmp/thunder-venv)
# Then:  VENV_DIR/bin/python -m pytest -m thunder tests/tracers/test_thunder.py
#
# torch 2.9.1 comes from PyPI, which only serves the CUDA build on Linux x86_64: the
# download (torch plus the nvidia-* wheels it depends on) is several GB. Everything
# runs on the CPU; the CUDA libraries are only loaded, never used.
#
# This machine's pip config (/etc/xdg/pip) caps torch<=2.14.1 through a constraints
# file; 2.9.1 satisfies it, so the config is left alone. The pins below win over the
# torch 2.13 wheel that the config's find-links directory offers.
set -euo pipefail

VENV_DIR="${1:-/tmp/thunder-venv}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3.11}"
TORCH_VERSION="${TORCH_VERSION:-2.9.1}"
THUNDER_VERSION="${THUNDER_VERSION:-0.2.6}"

if [ ! -x "$VENV_DIR/bin/python" ]; then
    "$PYTHON" -m venv "$VENV_DIR"
fi
PIP=("$VENV_DIR/bin/python" -m pip)
"${PIP[@]}" install --upgrade pip

# One resolver run for torch and thunder, so thunder's own torch requirement cannot
# pull a different torch.
"${PIP[@]}" install "torch==${TORCH_VERSION}" "lightning-thunder==${THUNDER_VERSION}"

# inliner itself without its dependencies (its torch range must not move the pin),
# then what the engine and the tests need.
"${PIP[@]}" install --no-deps -e "$REPO"
"${PIP[@]}" install "torch==${TORCH_VERSION}" libcst black pytest hypothesis numpy

"$VENV_DIR/bin/python" - <<'PY'
import torch, thunder
print("torch", torch.__version__, "thunder", getattr(thunder, "__version__", "?"))
PY
echo "ready: $VENV_DIR/bin/python -m pytest -m thunder $REPO/tests/tracers/test_thunder.py"
