"""What a person sees with every layer on the device: `spectui run --json` with the default
-bs auto records the device and its memory, the chat's panel names it, the bench's environment
and the plan's identity hold it, and a pair too big for the device is refused before it loads,
naming the device and the numbers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from spectui.engine.session import Session
from spectui.llama.devices import gpus
from tests.tui_helpers import sync, until

pytestmark = [pytest.mark.model, pytest.mark.device]


def spectui(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The command in its own process, with this process's device environment."""
    return subprocess.run(
        [sys.executable, "-m", "spectui", *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=os.environ | (env or {}),
    )


def test_run_json_with_the_default_backend_sampling_records_the_device(smol_path, device):
    r = spectui("run", "-m", str(smol_path), "-ngl", "-1", "--temp", "0", "-n", "8", "--json", "Say hello.")
    assert r.returncode == 0, r.stderr[-3000:]
    data = json.loads(r.stdout)
    assert data["config"]["backend_sampling"] == "auto" and data["config"]["n_gpu_layers"] == -1
    (found,) = data["devices"]
    assert found["name"] == device and found["total"] > 0 and 0 <= found["free"] <= found["total"]
    assert data["stats"]["n_generated"] == len(data["tokens"]) > 0


@sync
async def test_the_chats_panel_and_header_name_the_device(smol, setup, dirs):
    from spectui.tui.app import SpecApp
    from spectui.tui.header import header

    session = Session(smol, None, setup.ctx_params(), spec=setup.spec.with_types(("none",)), sampling=setup.sampling())
    app = SpecApp(setup, session=session)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            (gpu,) = gpus()  # measured as the app opens, and every 2 s
            await until(pilot, lambda: f"{gpu.name} {gpu.description}" in app.query_one("#stats").visual.plain)
            assert header(app.controller.state)[1].endswith(f" on {gpu.name}")  # at 80 columns too
    finally:
        session.close()


def test_the_environment_of_a_bench_or_trace_and_the_plan_identity_name_the_device(smol, setup, device):
    """What a bench result and a trace record of the machine (launch.environment), and what a
    cached curve is keyed by (plan.identity): the device, with its memory."""
    from spectui.launch.environment import collect
    from spectui.plan import identity

    session = Session(smol, None, setup.ctx_params(), spec=setup.spec.with_types(("none",)), sampling=setup.sampling())
    try:
        env = collect(session, setup, hash_files=False)
    finally:
        session.close()
    (gpu,) = env["gpus"]
    assert gpu["name"] == device and gpu["total"] > 0 and gpu["description"]
    assert device in identity.device()


def test_a_pair_too_big_for_the_device_is_refused_naming_it(smol_path, tmp_path, device):
    """A context whose KV cache outgrows what the device reports (llvmpipe: 2 GiB): `spectui plan`
    shows the shortfall on the device and measures nothing, and the chat's check refuses the pair
    in one line naming the device and the numbers. SmolLM2's trained context is raised in a copy
    to allow it; each layer's cache stays under the device's largest buffer."""
    import gguf

    from spectui.chat.memory_check import refusal
    from spectui.config.resolve import resolve
    from spectui.plan import memory_projection

    big = tmp_path / "long-context-smollm2.gguf"
    shutil.copy(smol_path, big)
    reader = gguf.GGUFReader(big, "r+")
    next(f for name, f in reader.fields.items() if name.endswith(".context_length")).parts[-1][0] = 2**20
    del reader
    args = ("-m", str(big), "-c", "131072", "-b", "64", "--spec-type", "none")
    r = spectui("plan", *args, env={"SPECTUI_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert f"{device} (" in r.stdout and "does not fit" in r.stdout and "-c 8" in r.stdout, r.stdout
    setup = resolve(None, {"model": str(big), "ctx_size": 131072, "batch_size": 64, "spec_type": "none"})
    projection, _ = memory_projection.for_setup(setup, big, None)
    assert projection is not None and not projection.fits
    line = refusal(projection, one_line=True)
    assert f"free on {device}" in line and "does not fit: needs" in line and "GiB" in line


def test_the_plan_on_the_device_projects_onto_it_and_keys_its_curve_by_it(tmp_path, monkeypatch, device):
    """`spectui plan` with a curve cached under this device's identity (timing a curve on llvmpipe
    would take many minutes and measure a software GPU): the identity names the device, and
    llama.cpp's projection puts the pair's layers and cache on it."""
    from spectui.config.resolve import resolve
    from spectui.launch.opening import checked_models
    from spectui.plan import cache, identity
    from tests.cli_helpers import run_cli
    from tests.conftest import RECORDED_CURVE

    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path))
    setup = resolve("fast", {})
    key = identity.key(setup, *checked_models(setup))
    recorded = json.loads(RECORDED_CURVE.read_text())  # its curve and calibration, keyed anew
    cache.store(key, {k: recorded[k] for k in ("curve", "calibration", "calibration_key")})
    ran = run_cli("plan", "--preset", "fast", "--json")
    assert "measuring" not in ran.stderr, ran.stderr
    assert ran.returncode == 0, ran.stderr
    doc = json.loads(ran.stdout)
    assert device in doc["identity"]["device"]
    on_device = next(d for d in doc["memory"]["devices"] if d["name"] == device)
    assert on_device["target"]["model"] > 0 and on_device["target"]["context"] > 0
    assert on_device["free_from"] == "llama.cpp" and on_device["fits"]
