"""The memory projection: llama.cpp's no_alloc bytes against a real load (SmolLM2), the
suggestions where a pair does not fit (recorded projections), and bad input in one line."""

from __future__ import annotations

import json
import platform
from pathlib import Path

import pytest

from spectui.errors import UserError
from spectui.plan import memory_projection
from spectui.plan.memory_projection import Device, MemoryProjection, Part
from tests.conftest import SMOL, model_file

GEMMA = "gemma-3-270m-q4_k_m"

MIB = 2**20
GIB = 2**30
T = Path("/models/target.gguf")
D = Path("/models/draft.gguf")


def recorded(devices: tuple[Device, ...], draft: Path | None = D, ctkd: str = "f16") -> MemoryProjection:
    """A projection as project() builds it, with its suggestions, from recorded bytes."""
    proj = MemoryProjection(
        target=T,
        draft=draft,
        n_ctx=8192,
        n_gpu_layers=-1,
        n_gpu_layers_draft=-1,
        cache_types={"-ctk": "f16", "-ctv": "f16", "-ctkd": ctkd, "-ctvd": "f16"},
        devices=devices,
        suggestions=[],
    )
    if not proj.fits:
        proj.suggestions.extend(memory_projection.suggest(proj, (28, 24)))
    return proj


def cpu(free_mib: int, draft: Part | None = Part(400 * MIB, 96 * MIB, 300 * MIB)) -> Device:
    """The default pair's shares at -c 8192 on a CPU (model, KV cache, compute), free_mib free."""
    return Device("CPU", "AMD EPYC", Part(1060 * MIB, 224 * MIB, 300 * MIB), draft, free_mib * MIB, "MemAvailable")


def test_a_pair_that_fits_has_no_suggestions():
    proj = recorded((cpu(8000),))
    assert proj.fits and proj.suggestions == []
    assert proj.devices[0].need == (1060 + 224 + 300 + 400 + 96 + 300) * MIB


def test_a_smaller_context_frees_its_kv_cache():
    """320 MiB of KV at 8192 tokens: 40 MiB short takes 1024 tokens off, rounded to 256."""
    proj = recorded((cpu(2380 - 40),))
    assert not proj.fits
    assert proj.suggestions[0].startswith("-c 7168:")
    assert proj.devices[0].short == 40 * MIB


def test_the_draft_cache_in_8_bits_is_offered_where_it_saves_enough():
    """The draft's 96 MiB f16 cache: K in q8_0 saves 22.5 MiB, K and V 45 MiB."""
    assert any(s.startswith("-ctkd q8_0:") for s in recorded((cpu(2380 - 20),)).suggestions)
    kv = recorded((cpu(2380 - 40),)).suggestions
    assert any(s.startswith("-ctkd q8_0 -ctvd q8_0:") for s in kv)
    assert not any(s.startswith("-ctkd") for s in recorded((cpu(2380 - 60),)).suggestions)
    already = recorded((cpu(2380 - 20),), ctkd="q8_0").suggestions  # K in q8_0 already: V saves 29 MiB
    assert [s.split(":")[0] for s in already if s.startswith("-ctkd")] == ["-ctkd q8_0 -ctvd q8_0"]


def test_a_smaller_draft_is_sized_from_what_the_target_leaves():
    proj = recorded((cpu(2000),))
    assert "a smaller draft: at most 416 MiB with its cache, or none (-md left out)" in proj.suggestions
    without = recorded((cpu(1000, draft=None),), draft=None)
    assert not any("draft" in s for s in without.suggestions)


def test_fewer_gpu_layers_move_weights_to_a_cpu_with_room():
    """29 target layers on the GPU (28 and the output), 1 GiB each: 1.5 GiB short drops 2."""
    gpu = Device(
        "CUDA0", "NVIDIA H100", Part(29 * 1024 * MIB, 0, 0), Part(0, 0, 0), 27 * 1024 * MIB + 512 * MIB, "NVML"
    )
    roomy = Device("CPU", "", Part(0, 0, 0), Part(0, 0, 0), 64 * GIB, "MemAvailable")
    assert "-ngl 27: fewer target layers on the GPU (2.00 GiB more on the CPU)" in recorded((gpu, roomy)).suggestions
    tight = Device("CPU", "", Part(0, 0, 0), Part(0, 0, 0), GIB, "MemAvailable")
    assert not any(s.startswith("-ngl") for s in recorded((gpu, tight)).suggestions)


def test_a_target_too_big_for_anything_says_so():
    proj = recorded((cpu(500, draft=None),), draft=None)
    assert proj.suggestions == ["no single change fits: 1.06 GiB on CPU short; try a smaller target model"]


def test_the_table_fits_80_columns_and_the_json_holds_the_same_numbers():
    proj = recorded((cpu(2000),))
    lines = proj.render_lines()
    assert all(len(line) <= 80 for line in lines)
    assert "  needs 2.32 GiB of 1.95 GiB free (MemAvailable): does not fit: 380 MiB short" in lines
    assert lines[-len(proj.suggestions) :] == [f"  {s}" for s in proj.suggestions]
    data = json.loads(json.dumps(proj.to_json()))
    assert data["fits"] is False and data["suggestions"] == proj.suggestions
    assert data["devices"][0]["need"] == proj.devices[0].need
    assert data["devices"][0]["draft"] == {
        "model": 400 * MIB,
        "context": 96 * MIB,
        "compute": 300 * MIB,
        "total": 796 * MIB,
    }


def test_another_platform_gets_one_line(monkeypatch, tmp_path):
    from spectui.llama import memory_fit

    monkeypatch.setattr(platform, "machine", lambda: "arm64")
    with pytest.raises(UserError, match="x86-64 Linux only"):
        memory_projection.project(tmp_path / "none.gguf", None, n_ctx=4096, n_gpu_layers=0, n_gpu_layers_draft=0)
    assert memory_fit.unsupported() is not None


# --- against llama.cpp itself --------------------------------------------------------------


@pytest.mark.model
@pytest.mark.parametrize(("name", "n_ctx"), [(SMOL, 1024), (SMOL, 8192), (GEMMA, 1024)])
def test_the_projection_is_what_a_real_load_allocates(name, n_ctx):
    """Checked against llama.cpp's own breakdown of a real load (its buffers' sizes: what it
    allocates, where RSS counts only the pages touched so far), and that against sizes known
    without it: SmolLM2's tensor bytes and KV cache (n_ctx x layers x K and V rows); Gemma's
    Q4_K weights are repacked for the CPU, so the mapped file under them counts as well."""
    from spectui.llama import memory_fit
    from spectui.llama.context import Context
    from spectui.llama.context_params import ContextParams
    from spectui.llama.model import Model

    path = model_file(name)
    proj = memory_projection.project(path, path, n_ctx=n_ctx, n_gpu_layers=0, n_gpu_layers_draft=0)
    (projected,) = proj.devices
    model = Model(path, n_gpu_layers=0)
    ctx = Context(model, ContextParams(n_ctx=n_ctx))
    try:
        (real,) = memory_fit.allocated(model, ctx).devices
        if name == SMOL:
            n_head, n_head_kv = (int(model.meta(f"llama.attention.{k}") or 0) for k in ("head_count", "head_count_kv"))
            kv_row = model.n_embd // n_head * n_head_kv
            assert real.context == ctx.n_ctx * model.n_layer * 2 * kv_row * 2  # K and V, f16
            assert abs(real.model - model.size) < 0.01 * model.size
        else:
            assert real.model > 1.03 * model.size  # the repacked weights, and the file mapped under them
    finally:
        ctx.close()
        model.close()
    assert real.name == projected.name == "CPU"
    for part in ("model", "context", "compute"):
        assert abs(getattr(projected.target, part) - getattr(real, part)) <= 0.05 * getattr(real, part), part
    assert abs(projected.target.total - real.bytes) <= 0.05 * real.bytes
    assert projected.draft == projected.target  # the same file at the same settings
    assert proj.fits and projected.free is not None and projected.free_from == "MemAvailable"


@pytest.mark.model
def test_bad_input_is_one_line_before_anything_loads(smol_path, tmp_path):
    def refused(target, draft=None, n_ctx=4096) -> str:
        with pytest.raises(UserError) as e:
            memory_projection.project(target, draft, n_ctx=n_ctx, n_gpu_layers=0, n_gpu_layers_draft=0)
        assert "\n" not in str(e.value)
        return str(e.value)

    before = sorted(tmp_path.iterdir())
    assert "larger than SmolLM2-135M-Instruct.Q4_1.gguf allows (8192); use -c 8192 or less" in refused(
        smol_path, n_ctx=16384
    )
    cut = tmp_path / "cut.gguf"
    with open(smol_path, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(4 * MIB))
    assert refused(cut).startswith(f"cannot load model {cut}")
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"\x00" * 64)
    assert "not a GGUF" in refused(smol_path, junk)
    other = refused(smol_path, model_file(GEMMA))
    assert other.startswith(f"draft {GEMMA}.gguf cannot draft for target {smol_path.name}: its tokenizer is")
    assert refused(tmp_path / "missing.gguf").startswith("model file not found")
    assert sorted(tmp_path.iterdir()) == sorted([*before, cut, junk])  # nothing written beside them
