#!/usr/bin/env bash
# Build llama.cpp's shared libraries with the Vulkan backend, from the llama.cpp that
# llama-cpp-python vendors, outside the repository, for the device suite (tests/device/);
# cached, so later runs cost nothing. On a machine without a GPU, Mesa's llvmpipe is the
# Vulkan device, as in llama.cpp's own CI.
#
# usage: tests/device/build.sh [--cached]
#
#   --cached               only print the folder if it is already built (exit 1 if not)
#   SPECTUI_DEVICE_LIB     an existing folder of such libraries: printed and used as it is
#   SPECTUI_NATIVE_CACHE   cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/spectui-native)
#   SPECTUI_NATIVE_JOBS    parallel build jobs (default 2)
#
# The last line printed on stdout is the folder to give LLAMA_CPP_LIB_PATH; it also holds
# spec_oracle (tests/oracle) built against these libraries. It needs Debian's
# glslc, libvulkan-dev and mesa-vulkan-drivers (.ci/run installs them). Where the system's
# Vulkan headers predate VK_EXT_layer_settings (Debian 12's 1.3.239; the vendored
# ggml-vulkan.cpp uses vk::LayerSettingEXT), the headers of Debian 13's libvulkan-dev and
# spirv-headers are downloaded and unpacked into the cache; nothing is installed, and the
# system's apt sources are left as they are. 15 to 25 minutes on 2 cores, the oracle included.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${SPECTUI_NATIVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spectui-native}"
jobs="${SPECTUI_NATIVE_JOBS:-2}"
log() { echo "build.sh: $*" >&2; }
die() { log "$*"; exit 2; }

if [[ -n "${SPECTUI_DEVICE_LIB:-}" ]]; then
    echo "$SPECTUI_DEVICE_LIB"
    exit 0
fi
py="$repo/.venv/bin/python"
[[ -x "$py" ]] || py="python3"
version="$("$py" -c 'import importlib.metadata as m; print(m.version("llama_cpp_python"))')"
build="$cache/llama-vulkan-$version"
lib="$build/bin"
if [[ -f "$lib/libllama.so" && -f "$lib/libggml-vulkan.so" && -x "$lib/spec_oracle" ]]; then
    echo "$lib"
    exit 0
fi
if [[ "${1:-}" == "--cached" ]]; then
    exit 1
fi

command -v glslc >/dev/null || die "glslc not found: apt-get install glslc libvulkan-dev mesa-vulkan-drivers"
loader="$( (ls /usr/lib/*/libvulkan.so 2>/dev/null || true) | head -n 1)"
[[ -n "$loader" ]] || die "libvulkan.so not found: apt-get install libvulkan-dev"

# A VULKAN_SDK folder for ggml-vulkan's CMake: headers new enough, the system's loader.
sdk=""
if ! grep -q VkLayerSettingEXT /usr/include/vulkan/vulkan_core.h 2>/dev/null; then
    sdk="$cache/vulkan-sdk-trixie"
    if [[ ! -f "$sdk/include/vulkan/vulkan_core.h" ]]; then
        log "the system's Vulkan headers lack VK_EXT_layer_settings: fetching Debian 13's into $sdk"
        # The first Debian mirror the system's apt uses, asked for the trixie suite through a
        # private apt configuration: the system's sources and package lists stay untouched.
        # (|| true: a sources file that is missing is no failure under pipefail)
        mirror="$( (grep -hoE '(https?)://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* \
            2>/dev/null || true) | head -n 1 | tr -d ' ')"
        [[ -n "$mirror" ]] || die "no Debian mirror in the apt sources to fetch Vulkan headers from"
        tmp="$(mktemp -d)"
        trap 'rm -rf "$tmp"' EXIT
        mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/parts" "$tmp/debs"
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" >"$tmp/sources.list"
        apt_private=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/parts"
            -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o "APT::Get::List-Cleanup=0" -o "APT::Sandbox::User=root")
        apt-get -q "${apt_private[@]}" update >&2
        (cd "$tmp/debs" && apt-get -q "${apt_private[@]}" download libvulkan-dev spirv-headers >&2)
        rm -rf "$sdk.part" && mkdir -p "$sdk.part"
        for deb in "$tmp"/debs/*.deb; do
            dpkg-deb -x "$deb" "$tmp/root"
        done
        mkdir -p "$sdk.part/lib" "$sdk.part/share"
        mv "$tmp/root/usr/include" "$sdk.part/include"
        mv "$tmp/root/usr/share/cmake" "$sdk.part/share/cmake"
        rm -rf "$sdk" && mv "$sdk.part" "$sdk"
    fi
    ln -sf "$loader" "$sdk/lib/libvulkan.so"
    export VULKAN_SDK="$sdk"  # ggml-vulkan's CMake adds it to the prefix path
fi

llama_dir="$("$here/../llama_src.sh" "$cache" "$py")"
log "building llama.cpp $version with Vulkan in $build (-j$jobs; 15 to 25 minutes on 2 cores)"
cmake -S "$llama_dir" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
    -DGGML_VULKAN=ON -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
    -DLLAMA_BUILD_SERVER=OFF >&2
cmake --build "$build" --target llama -j "$jobs" >&2
# llama.cpp's own speculative loop against these libraries: the device suite's oracle
SPEC_ORACLE_BUILD_DIR="$build" SPEC_ORACLE_JOBS="$jobs" SPEC_ORACLE_PYTHON="$py" \
    "$here/../oracle/build.sh" "$llama_dir" >/dev/null
echo "$lib"
