#!/usr/bin/env bash
# Build llama-server from the llama.cpp that llama-cpp-python vendors, outside the
# repository, for tests/server/test_server.py; cached, so later runs cost nothing.
#
# usage: tests/server/build.sh [--cached]
#
#   --cached               only print the binary's path if it is already built (exit 1 if not)
#   SPECTUI_LLAMA_SERVER   an existing llama-server binary: printed and used as it is
#   SPECTUI_NATIVE_CACHE   cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/spectui-native)
#   SPECTUI_NATIVE_JOBS    parallel build jobs (default 2)
#
# The last line printed on stdout is the path of the binary. A static build with the
# portable CPU backend (GGML_NATIVE=OFF), no OpenSSL or curl: about 20 minutes on 2 cores.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${SPECTUI_NATIVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spectui-native}"
jobs="${SPECTUI_NATIVE_JOBS:-2}"
log() { echo "build.sh: $*" >&2; }

if [[ -n "${SPECTUI_LLAMA_SERVER:-}" ]]; then
    echo "$SPECTUI_LLAMA_SERVER"
    exit 0
fi
py="$repo/.venv/bin/python"
[[ -x "$py" ]] || py="python3"
version="$("$py" -c 'import importlib.metadata as m; print(m.version("llama_cpp_python"))')"
build="$cache/llama-server-$version"
bin="$build/bin/llama-server"
if [[ -x "$bin" ]]; then
    echo "$bin"
    exit 0
fi
if [[ "${1:-}" == "--cached" ]]; then
    exit 1
fi

llama_dir="$("$here/../llama_src.sh" "$cache" "$py")"
log "building llama-server $version in $build (-j$jobs; about 20 minutes on 2 cores)"
cmake -S "$llama_dir" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON >&2
cmake --build "$build" --target llama-server -j "$jobs" >&2
echo "$bin"
