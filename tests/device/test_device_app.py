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
from tests.tui_helpers import send, sync, until

pytestmark = [pytest.mark.model, pytest.mark.device]


def spectui(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """The command in its own process, with this process's device environment."""
    return subprocess.run(
        [sys.executable, "-m", "spectui", *args], capture_output=True, text=True, timeout=timeout, env=os.environ
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
async def test_the_chats_panel_names_the_device(smol, setup, dirs):
    from spectui.tui.app import SpecApp

    session = Session(smol, None, setup.ctx_params(), spec=setup.spec.with_types(("none",)), sampling=setup.sampling())
    app = SpecApp(setup, session=session)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await send(pilot, app, "Hi")
            (gpu,) = gpus()
            await until(pilot, lambda: f"{gpu.name} {gpu.description}" in app.query_one("#stats").visual.plain)
    finally:
        session.close()


def test_the_bench_environment_and_the_plan_identity_name_the_device(smol_path, device, tmp_path):
    from spectui.plan import identity

    assert device in identity.device()
    out = tmp_path / "bench.json"
    r = spectui(
        "bench", "-m", str(smol_path), "--spec-type", "ngram-simple", "--sweep-n-max", "3", "--lang", "en",
        "--category", "code", "--limit", "1", "--repeat", "1", "-n", "8", "--json", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    env = json.loads(out.read_text())["environment"]
    assert [g["name"] for g in env["gpus"]] == [device]


def test_a_pair_too_big_for_the_device_is_refused_naming_it(synthetic, tmp_path, device):
    """A context whose KV cache outgrows what the device reports: refused before the app opens,
    with the device and the numbers. The synthetic target's context is raised to allow it."""
    import gguf

    big = tmp_path / "long-context-target.gguf"
    shutil.copy(synthetic("target"), big)
    reader = gguf.GGUFReader(big, "r+")
    field = next(f for name, f in reader.fields.items() if name.endswith(".context_length"))
    field.parts[-1][0] = 2**30
    del reader
    (gpu,) = gpus()
    n_ctx = 2**27  # 512 bytes a token in its cache: 64 GiB
    assert n_ctx * 512 > gpu.total
    r = spectui("-m", str(big), "-c", str(n_ctx), "--spec-type", "none")
    assert r.returncode == 2, r.stderr[-3000:]
    assert "does not fit: needs" in r.stderr and device in r.stderr and "Traceback" not in r.stderr
