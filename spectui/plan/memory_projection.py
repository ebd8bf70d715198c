"""Will the pair fit: llama.cpp's projection of target and draft per device, against free memory.

The bytes are llama.cpp's own (spectui.llama.memory_fit: a `no_alloc` load, as
`llama-fit-params` makes); free memory is spectui.llama.devices' for a GPU (NVML's for an NVIDIA
GPU, llama.cpp's own for any other) and MemAvailable for the CPU. Where the pair does not fit, the
suggestions are the changes llama-fit-params makes (a smaller -c, fewer layers) and the ones
a speculative pair adds (-ctkd q8_0, a smaller draft), each sized from the projection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from spectui.config.setup import Setup
from spectui.llama.context_params import MIN_CTX, ContextParams
from spectui.llama.devices import gpus
from spectui.llama.memory_fit import DeviceBytes, Footprint, unsupported
from spectui.llama.memory_fit import project as llama_project

MIB = 2**20
GIB = 2**30
# bytes per cached value of llama.cpp's KV cache types (block size and bytes per block)
_VALUE_BYTES = {
    "f32": 4,
    "f16": 2,
    "bf16": 2,
    "q8_0": 34 / 32,
    "q5_1": 24 / 32,
    "q5_0": 22 / 32,
    "q4_1": 20 / 32,
    "q4_0": 18 / 32,
    "iq4_nl": 18 / 32,
}


def size_text(n: int) -> str:
    """Bytes as a person reads them: MiB below a GiB, GiB with two decimals above."""
    return f"{n / MIB:.0f} MiB" if abs(n) < GIB else f"{n / GIB:.2f} GiB"


@dataclass(frozen=True)
class Part:
    """One model's share of one device, in bytes."""

    model: int
    context: int
    compute: int

    @property
    def total(self) -> int:
        return self.model + self.context + self.compute

    def to_json(self) -> dict:
        return {"model": self.model, "context": self.context, "compute": self.compute, "total": self.total}


@dataclass(frozen=True)
class Device:
    """A device's projected use by target and draft, and its free memory."""

    name: str  # llama.cpp's: "CPU", "CUDA0", ...
    description: str
    target: Part
    draft: Part | None
    free: int | None  # bytes; None where nothing tells
    free_from: str  # "MemAvailable", "NVML" or "llama.cpp"

    @property
    def is_cpu(self) -> bool:
        return self.name == "CPU"

    @property
    def need(self) -> int:
        return self.target.total + (self.draft.total if self.draft else 0)

    @property
    def fits(self) -> bool:
        return self.free is None or self.need <= self.free

    @property
    def short(self) -> int:
        """Bytes missing (0 where it fits)."""
        return 0 if self.free is None else max(0, self.need - self.free)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "target": self.target.to_json(),
            "draft": self.draft.to_json() if self.draft else None,
            "need": self.need,
            "free": self.free,
            "free_from": self.free_from,
            "fits": self.fits,
        }


@dataclass(frozen=True)
class MemoryProjection:
    target: Path
    draft: Path | None
    n_ctx: int  # as llama.cpp pads it
    n_gpu_layers: int
    n_gpu_layers_draft: int
    cache_types: dict  # flag -> type: -ctk, -ctv, -ctkd, -ctvd
    devices: tuple[Device, ...]  # the GPUs in llama.cpp's order, then the CPU
    suggestions: list[str]

    @property
    def fits(self) -> bool:
        return all(d.fits for d in self.devices)

    def to_json(self) -> dict:
        return {
            "target": str(self.target),
            "draft": str(self.draft) if self.draft else None,
            "n_ctx": self.n_ctx,
            "n_gpu_layers": self.n_gpu_layers,
            "n_gpu_layers_draft": self.n_gpu_layers_draft,
            "cache_types": self.cache_types,
            "devices": [d.to_json() for d in self.devices],
            "fits": self.fits,
            "suggestions": list(self.suggestions),
        }

    def verdict(self) -> str:
        """One line: where it fits, the tightest device's need against its free memory; where it
        does not, each short device's."""
        if not self.fits:
            return "; ".join(
                f"does not fit: needs {size_text(d.need)}, {size_text(d.free or 0)} free {_on(d)}"
                for d in self.devices
                if not d.fits
            )
        known = [d for d in self.devices if d.free]
        if not known:
            return f"needs {size_text(sum(d.need for d in self.devices))}; free memory unknown"
        d = max(known, key=lambda d: d.need / (d.free or 1))
        return f"fits: {size_text(d.need)} of {size_text(d.free or 0)} free {_on(d)}"

    def render_lines(self, width: int = 80) -> list[str]:
        """The projection as a table per device, then whether it fits and what would."""
        name_w = max(10, width - 4 * 11 - 2)
        lines = [f"Memory at -c {self.n_ctx}, as llama.cpp projects it (nothing loaded)"[:width]]
        header = f"  {'':<{name_w}}{'model':>11}{'context':>11}{'compute':>11}{'total':>11}"
        for d in self.devices:
            lines.append(f"{d.name} ({d.description})"[:width] if d.description else d.name)
            lines.append(header)
            for role, path, part in (("target", self.target, d.target), ("draft", self.draft, d.draft)):
                if part is None or path is None:
                    continue
                label = f"{role:<6} {path.name}"
                label = label if len(label) <= name_w else label[: name_w - 1] + "…"
                lines.append(
                    f"  {label:<{name_w}}{size_text(part.model):>11}{size_text(part.context):>11}"
                    f"{size_text(part.compute):>11}{size_text(part.total):>11}"
                )
            if d.free is None:
                verdict = f"  needs {size_text(d.need)}; free memory unknown"
            else:
                word = "fits" if d.fits else f"does not fit: {size_text(d.short)} short"
                verdict = f"  needs {size_text(d.need)} of {size_text(d.free)} free ({d.free_from}): {word}"
            lines.append(verdict[:width])
        if not self.fits:
            lines.append("What would fit:"[:width])
            lines += [f"  {s}"[:width] for s in self.suggestions]
        return lines


def _on(d: Device) -> str:
    return "RAM" if d.is_cpu else f"on {d.name}"


def for_setup(setup: Setup, target: Path, draft: Path | None) -> tuple[MemoryProjection | None, str | None]:
    """The projection of the pair at a setup's settings, or why this platform cannot read it."""
    if why := unsupported():
        return None, why
    projection = project(
        target,
        draft,
        n_ctx=setup.ctx_size,
        n_gpu_layers=setup.n_gpu_layers,
        n_gpu_layers_draft=setup.n_gpu_layers_draft,
        cache_type_k_draft=setup.cache_type_k_draft,
        cache_type_v_draft=setup.cache_type_v_draft,
        n_batch=setup.batch_size,
        flash_attn=setup.flash_attn,
    )
    return projection, None


def _part(d: DeviceBytes) -> Part:
    return Part(d.model, d.context, d.compute)


def _mem_available() -> int | None:
    """MemAvailable: what the kernel can give without swapping (page cache counted as free)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _free(fp: Footprint) -> dict[str, tuple[int | None, str]]:
    """Each device's free bytes and who says so."""
    now = {g.name: g for g in gpus()}
    out: dict[str, tuple[int | None, str]] = {}
    for d in fp.devices:
        if not d.is_cpu and (g := now.get(d.name)) is not None:
            out[d.name] = (g.free or None, "NVML" if g.driver else "llama.cpp")
    available = _mem_available()
    out["CPU"] = (available, "MemAvailable") if available is not None else (None, "llama.cpp")
    return out


def project(
    target: Path,
    draft: Path | None,
    *,
    n_ctx: int,
    n_gpu_layers: int,
    n_gpu_layers_draft: int,
    cache_type_k: str = "f16",
    cache_type_v: str = "f16",
    cache_type_k_draft: str = "f16",
    cache_type_v_draft: str = "f16",
    n_batch: int = 512,
    flash_attn: str = "auto",
) -> MemoryProjection:
    """llama.cpp's projection of the pair at these settings, per device, and whether it fits.
    n_batch is the chat's -b (its micro-batch is the same, capped at n_ctx). Bad input (a file
    that does not load, -c beyond the training context, a draft that cannot serve the target)
    is one UserError line, before anything is projected."""
    params = ContextParams(
        n_ctx=n_ctx, n_batch=n_batch, flash_attn=flash_attn, type_k=cache_type_k, type_v=cache_type_v
    )
    dparams = replace(params, type_k=cache_type_k_draft, type_v=cache_type_v_draft)
    target_fp, draft_fp = llama_project(target, draft, params, dparams, n_gpu_layers, n_gpu_layers_draft)
    free = _free(target_fp)
    drafts = {d.name: d for d in draft_fp.devices} if draft_fp else {}
    devices = tuple(
        Device(
            d.name,
            d.description,
            _part(d),
            _part(drafts[d.name]) if d.name in drafts else (Part(0, 0, 0) if draft_fp else None),
            *free.get(d.name, (None, "llama.cpp")),
        )
        for d in target_fp.devices
    )
    proj = MemoryProjection(
        target=target,
        draft=draft,
        n_ctx=target_fp.n_ctx,
        n_gpu_layers=n_gpu_layers,
        n_gpu_layers_draft=n_gpu_layers_draft,
        cache_types={
            "-ctk": cache_type_k,
            "-ctv": cache_type_v,
            "-ctkd": cache_type_k_draft,
            "-ctvd": cache_type_v_draft,
        },
        devices=devices,
        suggestions=[],
    )
    if not proj.fits:
        layers = (target_fp.n_layer, draft_fp.n_layer if draft_fp else 0)
        proj.suggestions.extend(suggest(proj, layers, flash_attn))
    return proj


def suggest(proj: MemoryProjection, n_layers: tuple[int, int], flash_attn: str = "auto") -> list[str]:
    """The single changes that would make the pair fit, as llama-fit-params sizes them: each
    saving is read off the projection (the KV cache grows with -c, a layer's share is its
    device's model and cache over its layers), so each is an estimate, on the safe side."""
    short = [d for d in proj.devices if not d.fits]
    out = []
    # a smaller -c: the cache shrinks in proportion (compute buffers shrink too: not counted)
    n_ctx = proj.n_ctx
    for d in short:
        per_token = (d.target.context + (d.draft.context if d.draft else 0)) / proj.n_ctx
        n_ctx = min(n_ctx, proj.n_ctx - math.ceil(d.short / per_token) if per_token else 0)
    n_ctx = n_ctx // 256 * 256
    if n_ctx >= MIN_CTX:
        out.append(f"-c {n_ctx}: a smaller context (the KV cache grows with it)")
    # fewer layers on a GPU: their weights and cache move to the CPU, which must have the room
    cpu = next(d for d in proj.devices if d.is_cpu)
    for flag, role, n_layer, ngl in (
        ("-ngl", "target", n_layers[0], proj.n_gpu_layers),
        ("-ngld", "draft", n_layers[1], proj.n_gpu_layers_draft),
    ):
        on_gpu = min(n_layer + 1, ngl if ngl >= 0 else n_layer + 1)
        gpu_short = [d for d in short if not d.is_cpu]
        if not on_gpu or not gpu_short or (role == "draft" and proj.draft is None):
            continue
        moved = 0
        keep = on_gpu
        for d in gpu_short:
            part = d.target if role == "target" else d.draft
            if part is None:
                continue
            per_layer = (part.model + part.context) / on_gpu
            drop = math.ceil(d.short / per_layer) if per_layer else on_gpu + 1
            keep = min(keep, on_gpu - drop)
            moved = max(moved, round(per_layer * drop))
        if keep >= 0 and (cpu.free is None or cpu.need + moved <= cpu.free):
            out.append(f"{flag} {keep}: fewer {role} layers on the GPU ({size_text(moved)} more on the CPU)")
    # the draft's KV cache quantized: K alone, then K and V (a quantized V needs flash attention)
    if proj.draft is not None:
        k, v = proj.cache_types["-ctkd"], proj.cache_types["-ctvd"]
        for flags, new_k, new_v in (("-ctkd q8_0", "q8_0", v), ("-ctkd q8_0 -ctvd q8_0", "q8_0", "q8_0")):
            if (new_k, new_v) == (k, v) or (new_v != "f16" and flash_attn == "off"):
                continue
            ratio = (_VALUE_BYTES[new_k] + _VALUE_BYTES[new_v]) / (_VALUE_BYTES[k] + _VALUE_BYTES[v])
            if ratio < 1 and all(d.draft and d.draft.context * (1 - ratio) >= d.short for d in short):
                out.append(f"{flags}: the draft's KV cache in 8 bits")
                break
        # a smaller draft: what the target leaves on the tightest short device
        room = min((d.free or 0) - d.target.total for d in short)
        if room > 0:
            out.append(f"a smaller draft: at most {size_text(room)} with its cache, or none (-md left out)")
    if not out:
        missing = ", ".join(f"{size_text(d.short)} on {d.name}" for d in short)
        out.append(f"no single change fits: {missing} short; try a smaller target model")
    return out
