#!/usr/bin/env bash
# Print the llama.cpp tree that the installed llama-cpp-python vendors, downloading and
# unpacking its sdist into CACHE/src first if it is not there. Shared by
# tests/oracle/build.sh and tests/server/build.sh.
#
# usage: tests/llama_src.sh CACHE PYTHON
set -euo pipefail
cache="$1"
py="$2"
version="$("$py" -c 'import importlib.metadata as m; print(m.version("llama_cpp_python"))')"
src="$cache/src/llama_cpp_python-$version"
if [[ ! -f "$src/vendor/llama.cpp/CMakeLists.txt" ]]; then
    mkdir -p "$cache/sdist" "$cache/src"
    echo "llama_src.sh: downloading the llama-cpp-python $version sdist into $cache/sdist" >&2
    "$py" -m pip download -q --no-deps --no-binary :all: -d "$cache/sdist" "llama-cpp-python==$version" >&2
    tar -xzf "$cache/sdist/llama_cpp_python-$version.tar.gz" -C "$cache/src"
fi
echo "$src/vendor/llama.cpp"
