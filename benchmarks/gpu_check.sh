#!/usr/bin/env bash
# GPU readiness check (benchmarks/gpu_check.py), for a CUDA machine that may have no network.
#
#   bash benchmarks/gpu_check.sh prepare   # here: a network and nvcc (CUDA_ARCH, default 90)
#   bash benchmarks/gpu_check.sh [ARGS]    # there, with .gpu/ copied along; ARGS go to gpu_check.py
#   bash benchmarks/gpu_check.sh device [ARGS]  # any Vulkan device here, through the device build
#
# prepare fills .gpu/ (ignored by git), 51 MiB:
#   llama_cpp.tar.xz  a CUDA build of llama-cpp-python, compiled here (25 minutes on 2 cores;
#            flash attention's kernels left out);
#   wheels/  the pure-Python packages spectui needs that a CUDA image with PyTorch lacks,
#            for Python 3.12;
#   models/  the synthetic checkpoints (tests/synthetic_models.py): the default pair is 1.5 GB,
#            more than such a machine takes along.
# The run installs those offline into /tmp/site, finds cuBLAS and the CUDA runtime
# (CUDA's lib64, or the nvidia-* packages of the machine's Python), and runs gpu_check.py on
# the synthetic models. With network, `pip install` a CUDA build and run gpu_check.py itself
# for the default pair (see docs/gpu.md).
set -euo pipefail
cd "$(dirname "$0")/.."
GPU=.gpu
LLAMA_CPP=llama-cpp-python==0.3.36  # what pyproject.toml pins, and tests/oracle builds

if [[ "${1:-}" == prepare ]]; then
    mkdir -p "$GPU/wheels" "$GPU/models"
    # Sources, cuBLAS (ggml-cuda links it; the nvidia-cublas wheel has its headers and
    # libraries), the build directory and the wheel stay in $cache: a prepare that is
    # stopped goes on where it left off when run again.
    cache=${SPECTUI_GPU_CACHE:-$HOME/.cache/spectui-gpu}
    mkdir -p "$cache"
    if ! ls "$cache"/dist/llama_cpp_python-*.whl >/dev/null 2>&1; then
        if [[ ! -d "$cache/src" ]]; then
            python -m pip download -q --no-deps --no-binary :all: "$LLAMA_CPP" -d "$cache"
            mkdir "$cache/src" && tar -xzf "$cache"/llama_cpp_python-*.tar.gz -C "$cache/src" --strip-components=1
        fi
        if [[ ! -d "$cache/cublas" ]]; then
            python -m pip download -q --no-deps 'nvidia-cublas>=13,<14' -d "$cache"
            python -m zipfile -e "$cache"/nvidia_cublas-*.whl "$cache/cublas"
        fi
        cu="$cache/cublas/nvidia/cu13"
        ln -sf libcublas.so.13 "$cu/lib/libcublas.so"
        ln -sf libcublasLt.so.13 "$cu/lib/libcublasLt.so"
        CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCH:-90} -DGGML_NATIVE=OFF -DGGML_CUDA_FA=OFF \
-DGGML_CUDA_GRAPHS=ON -DGGML_CUDA_NO_VMM=ON -DCUDA_cublas_LIBRARY=$cu/lib/libcublas.so \
-DCUDA_cublasLt_LIBRARY=$cu/lib/libcublasLt.so -DCMAKE_CUDA_FLAGS=-I$cu/include -DCMAKE_CXX_FLAGS=-I$cu/include" \
            CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
            python -m pip wheel --no-deps -C build-dir="$cache/build" -w "$cache/dist" "$cache/src"
    fi
    # The wheel (190 MB) holds each library three times (.so, .so.0, .so.0.x.y), and again
    # under lib/. Taken along: the package with each library once, under its soname (what
    # the others link to), the plain name (what Python loads) a link to it; xz: about 28 MB.
    slim=$(mktemp -d)
    python -m zipfile -e "$cache"/dist/llama_cpp_python-*.whl "$slim"
    python - "$slim/llama_cpp/lib" <<'EOF'
import pathlib, re, sys
lib = pathlib.Path(sys.argv[1])
for f in lib.glob("lib*.so.*"):
    if re.search(r"\.so\.\d+\.", f.name):
        f.unlink()
for f in lib.glob("lib*.so"):
    f.unlink()
    f.symlink_to(next(lib.glob(f.name + ".[0-9]*")).name)
EOF
    tar -cJf "$GPU/llama_cpp.tar.xz" -C "$slim" llama_cpp llama_cpp_python-0.3.36.dist-info
    rm -rf "$slim"
    python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d "$GPU/wheels" \
        textual mdit-py-plugins rich platformdirs tomli-w diskcache
    python tests/synthetic_models.py "$GPU/models"
    du -sh "$GPU"
    exit 0
fi

if [[ "${1:-}" == device ]]; then
    # Any Vulkan device through the device build (tests/device/build.sh), llvmpipe included,
    # in this checkout's environment: the same check on the synthetic checkpoints.
    shift
    lib="$(bash tests/device/build.sh | tail -n 1)"
    models="${SPECTUI_GPU_MODELS:-$HOME/.cache/spectui-gpu/models}"
    [[ -d "$models" ]] || python tests/synthetic_models.py "$models"
    LLAMA_CPP_LIB_PATH="$lib" GGML_VK_VISIBLE_DEVICES="${GGML_VK_VISIBLE_DEVICES:-0}" \
        exec python benchmarks/gpu_check.py --synthetic "$models" "$@"
fi
if [[ ! -f "$GPU/llama_cpp.tar.xz" || ! -d "$GPU/wheels" || ! -d "$GPU/models" ]]; then
    echo "no $GPU/: run 'bash $0 prepare' first, then copy $GPU along" >&2
    exit 2
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "$GPU"/wheels/*.whl
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall("/tmp/site", filter="data")' \
    "$GPU/llama_cpp.tar.xz"
export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
libs=$(python3 - <<'EOF'
import glob, os, site, sys
roots = site.getsitepackages() + ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
dirs = []
for name in ("libcublas.so.13", "libcublasLt.so.13", "libcudart.so.13"):
    for root in roots:
        hits = glob.glob(os.path.join(root, name)) + glob.glob(os.path.join(root, "nvidia", "*", "lib", name))
        if hits:
            dirs.append(os.path.dirname(hits[0]))
            break
    else:
        sys.exit(f"{name} not found under {roots}")
print(":".join(dict.fromkeys(dirs)))
EOF
)
export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd benchmarks && python3 gpu_check.py --synthetic "../$GPU/models" "$@"
