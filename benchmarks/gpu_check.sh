#!/usr/bin/env bash
# GPU readiness check, from a clean copy of the repo on a CUDA machine (nvcc on the PATH):
# a virtual environment with a CUDA build of llama-cpp-python, then benchmarks/gpu_check.py.
# A wheel built elsewhere for the same GPU can be given as $LLAMA_CPP_WHEEL to skip the build.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-gpu
. .venv-gpu/bin/activate
python -m pip install -q --upgrade pip
if [[ -n "${LLAMA_CPP_WHEEL:-}" ]]; then
    python -m pip install -q "$LLAMA_CPP_WHEEL"
else
    CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCH:-90}" \
        CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" python -m pip install -q --no-cache-dir 'llama-cpp-python>=0.3.36,<0.4'
fi
python -m pip install -q '.[test]'
cd benchmarks && python gpu_check.py "$@"
