"""A llama-cpp-python compiled natively on a CPU with AMX dies with a bare "Segmentation fault"
in the first decode: spectui says so before, with the cure, from llama.cpp's system info and
the CPU's flags."""

from __future__ import annotations

import pytest

from spectui.cli import run as run_command
from spectui.llama import build
from tests.cli_helpers import Loaded, run_cli

NATIVE = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
PORTABLE = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | OPENMP = 1 | REPACK = 1 | "
SAPPHIRE_RAPIDS = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f amx_bf16 avx512_fp16 amx_tile amx_int8\n\n"
EPYC = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16\n\n"


@pytest.mark.parametrize(
    "system_info,cpuinfo,risky",
    [
        (NATIVE, SAPPHIRE_RAPIDS, True),  # the trial's crash
        (PORTABLE, SAPPHIRE_RAPIDS, False),  # built with -DGGML_NATIVE=OFF: the cure
        (NATIVE.replace("AMX_INT8 = 1", "AMX_INT8 = 0"), SAPPHIRE_RAPIDS, False),
        (NATIVE, EPYC, False),  # no AMX on this CPU: not the build this warns of
        (NATIVE, "", False),  # no cpuinfo
    ],
)
def test_a_native_amx_build_on_an_amx_cpu_is_the_risky_one(system_info, cpuinfo, risky):
    assert build.native_amx(system_info, build.cpu_flags(cpuinfo)) is risky


def test_the_flags_are_the_first_processor_s():
    two = SAPPHIRE_RAPIDS + EPYC.replace(": 0", ": 1")
    assert {"amx_tile", "amx_int8"} <= build.cpu_flags(two) and build.cpu_flags("no flags here") == set()


def test_run_warns_in_one_line_with_the_cure_before_loading(monkeypatch, dirs):
    monkeypatch.setattr(build, "crash_risk", lambda: "a build that can crash; if it does: " + build.CURE)

    def loaded(*args, **kwargs):
        raise Loaded

    monkeypatch.setattr(run_command, "open_session", loaded)
    r = run_cli("run", "--preset", "smollm2", "hi", reached=Loaded)
    [line] = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert "--no-cache-dir --force-reinstall llama-cpp-python" in line and "-DGGML_NATIVE=OFF" in line
    assert run_cli("run", "--server", "http://127.0.0.1:1", "hi", reached=Loaded).stderr.count("warning:") == 0
