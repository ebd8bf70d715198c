#!/usr/bin/env bash
# Build spec_oracle (tests/oracle/spec_oracle.cpp) against the llama.cpp tree that
# llama-cpp-python vendors. Everything is built outside the repository.
#
# usage: tests/oracle/build.sh [LLAMA_CPP_DIR]
#
#   LLAMA_CPP_DIR           a llama.cpp source tree (.../vendor/llama.cpp); also taken from
#                           $SPEC_ORACLE_LLAMA_DIR. Without either, the llama-cpp-python sdist
#                           of the installed version is downloaded with pip into the cache.
#   SPEC_ORACLE_CACHE       cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/spectui-oracle)
#   SPEC_ORACLE_BUILD_DIR   cmake build dir (default LLAMA_CPP_DIR/build); an existing,
#                           configured one is reused as it is
#   SPEC_ORACLE_PYTHON      python that has llama_cpp installed (default: the repo's .venv)
#   SPEC_ORACLE_JOBS        parallel build jobs (default 2)
#
# The last line printed on stdout is the path of the binary (BUILD_DIR/bin/spec_oracle).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${SPEC_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spectui-oracle}"
jobs="${SPEC_ORACLE_JOBS:-2}"

log() { echo "build.sh: $*" >&2; }

llama_dir="${1:-${SPEC_ORACLE_LLAMA_DIR:-}}"

if [[ -z "$llama_dir" ]]; then
    py="${SPEC_ORACLE_PYTHON:-}"
    if [[ -z "$py" ]]; then
        if [[ -x "$repo/.venv/bin/python" ]]; then py="$repo/.venv/bin/python"; else py="python3"; fi
    fi
    llama_dir="$("$here/../llama_src.sh" "$cache" "$py")"
fi

llama_dir="$(cd "$llama_dir" && pwd)"
if [[ ! -f "$llama_dir/common/speculative.cpp" ]]; then
    log "$llama_dir does not look like a llama.cpp tree (no common/speculative.cpp)"
    exit 1
fi
case "$llama_dir/" in
    "$repo"/*) log "warning: $llama_dir is inside the repository" ;;
esac

build="${SPEC_ORACLE_BUILD_DIR:-$llama_dir/build}"

if [[ ! -f "$build/CMakeCache.txt" ]]; then
    log "configuring $build"
    cmake -S "$llama_dir" -B "$build" \
        -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=ON \
        -DGGML_NATIVE=OFF \
        -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=ON \
        -DLLAMA_BUILD_TOOLS=OFF \
        -DLLAMA_BUILD_SERVER=OFF \
        -DLLAMA_BUILD_APP=OFF >&2
else
    log "reusing the configured build dir $build"
fi

# 'common' is called llama-common in this tree (older trees: common)
common_target="llama-common"
if ! grep -q 'set(TARGET llama-common)' "$llama_dir/common/CMakeLists.txt"; then
    common_target="common"
fi

log "building llama $common_target (-j$jobs)"
cmake --build "$build" --target llama "$common_target" -j "$jobs" >&2
# llama.cpp's own example, for benchmarks/vs_speculative_simple.py (not needed to record)
cmake --build "$build" --target llama-speculative-simple -j "$jobs" >&2 \
    || log "no llama-speculative-simple target in $build (configured without examples): the benchmark skips it"

libdir="$(dirname "$(find "$build" -name 'libllama.so' -print -quit)")"
if [[ -z "$libdir" || ! -f "$libdir/libllama.so" ]]; then
    log "libllama.so not found under $build"
    exit 1
fi

libs=("-L$libdir" "-l$common_target" -lllama)
for base in "$build/common/libllama-common-base.a" "$build/common/libbuild_info.a"; do
    if [[ -f "$base" ]]; then libs+=("$base"); fi
done
for g in ggml ggml-cpu ggml-base; do
    if [[ -e "$libdir/lib$g.so" ]]; then libs+=("-l$g"); fi
done

out="$build/bin/spec_oracle"
mkdir -p "$(dirname "$out")"

log "compiling $out"
"${CXX:-g++}" -std=c++17 -O2 \
    -DGGML_SHARED -DLLAMA_SHARED -DGGML_BACKEND_SHARED -DGGML_USE_CPU \
    -I"$llama_dir/include" -I"$llama_dir/common" -I"$llama_dir/ggml/include" \
    -I"$llama_dir/src" -I"$llama_dir/vendor" \
    "$here/spec_oracle.cpp" -o "$out" \
    "${libs[@]}" -Wl,-rpath,"$libdir" -pthread

echo "$out"
