"""llama.cpp's memory projection against what a real load allocates, for the default pair.

    python benchmarks/memory_projection.py [-c 4096,16384] [-m TARGET -md DRAFT]

For each -c, in a fresh process: `spectui.plan.memory_projection.project` (no_alloc, nothing loaded),
then the pair loaded as the chat loads it (mmap, -ngl as given) with its two contexts, and
llama.cpp's breakdown of those real buffers, part by part; last, the process's RSS growth
once a full batch has been decoded in each context (the pages touched: weights, KV cache,
compute). Prints the projection's error against each, and the machine's load. Asserts
nothing: the issue's bound (within 5% on the CPU) is read from it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from spectui.cli.progress import ConsoleReport
from spectui.config.embedded import DEFAULT_DRAFT, DEFAULT_TARGET, resolve_model
from spectui.config.setup import Setup
from spectui.engine.resources import process_rss
from spectui.llama import memory_fit
from spectui.llama.context import Context
from spectui.llama.model import Model
from spectui.plan import memory_projection

MIB = 2**20


def one(target: Path, draft: Path, n_ctx: int, ngl: int) -> dict:
    """Projection, real breakdown and RSS growth at one -c (run in its own process)."""
    t0 = time.perf_counter()
    proj = memory_projection.project(target, draft, n_ctx=n_ctx, n_gpu_layers=ngl, n_gpu_layers_draft=ngl)
    seconds = time.perf_counter() - t0
    setup = Setup(ctx_size=n_ctx)
    rss0 = process_rss()
    real = {}
    contexts = []
    for role, path, params in (("target", target, setup.ctx_params()), ("draft", draft, setup.ctx_params(True))):
        model = Model(path, n_gpu_layers=ngl)
        ctx = Context(model, params)
        contexts.append((model, ctx))
        real[role] = [d.__dict__ for d in memory_fit.allocated(model, ctx).devices]
    rss_loaded = process_rss()
    for model, ctx in contexts:
        ctx.decode([model.bos if model.bos >= 0 else 0] * ctx.n_batch, [ctx.n_batch - 1])
    rss_used = process_rss()
    for model, ctx in contexts:
        ctx.close()
        model.close()
    return {
        "n_ctx": n_ctx,
        "projection": proj.to_json(),
        "projection_seconds": seconds,
        "real": real,
        "rss_loaded": rss_loaded - rss0,
        "rss_used": rss_used - rss0,
        "n_batch": contexts[0][1].n_batch,
    }


def error(projected: int, actual: int) -> str:
    return f"{(projected - actual) / actual:+.1%}" if actual else "-"


def report(r: dict) -> None:
    proj = r["projection"]
    print(f"-c {r['n_ctx']}: projected in {r['projection_seconds']:.2f} s")
    print(f"  {'':<16}{'projected':>12}{'allocated':>12}{'error':>9}")
    sums = {"projected": 0, "allocated": 0, "weights_kv": 0}
    for dev in proj["devices"]:
        for role in ("target", "draft"):
            real = next(d for d in r["real"][role] if d["name"] == dev["name"])
            for part in ("model", "context", "compute"):
                p, a = dev[role][part], real[part]
                sums["projected"] += p
                sums["allocated"] += a
                sums["weights_kv"] += p if part != "compute" else 0
                print(f"  {dev['name']} {role} {part:<8}{p / MIB:>10.1f} M{a / MIB:>10.1f} M{error(p, a):>9}")
    total_p, total_a = sums["projected"], sums["allocated"]
    print(f"  {'all':<16}{total_p / MIB:>10.1f} M{total_a / MIB:>10.1f} M{error(total_p, total_a):>9}")
    print(
        f"  RSS growth once loaded {r['rss_loaded'] / MIB:.0f} MiB: projected weights and KV cache "
        f"{error(sums['weights_kv'], r['rss_loaded'])} against it (compute buffers untouched yet)"
    )
    print(
        f"  RSS growth after a {r['n_batch']}-token batch in each context {r['rss_used'] / MIB:.0f} MiB: "
        f"projected total {error(total_p, r['rss_used'])} (compute pages never written are not resident)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-c", default="4096,16384", help="context sizes, comma-separated")
    ap.add_argument("-m", help="target GGUF (default: the default target)")
    ap.add_argument("-md", help="draft GGUF (default: the default draft)")
    ap.add_argument("-ngl", type=int, default=0, help="layers on a GPU for both (default 0: the CPU)")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one -c, JSON out
    args = ap.parse_args()
    console = ConsoleReport(Console(stderr=True))
    target = Path(args.m) if args.m else resolve_model(DEFAULT_TARGET, console)
    draft = Path(args.md) if args.md else resolve_model(DEFAULT_DRAFT, console)
    if args.one is not None:
        print(json.dumps(one(target, draft, args.one, args.ngl)))
        return
    print(f"target {target.name}, draft {draft.name}, -ngl {args.ngl}, {os.cpu_count()} CPUs")
    for n_ctx in (int(c) for c in args.c.split(",")):
        load = os.getloadavg()
        cmd = [sys.executable, __file__, "--one", str(n_ctx), "-m", str(target), "-md", str(draft)]
        out = subprocess.run([*cmd, "-ngl", str(args.ngl)], check=True, capture_output=True, text=True).stdout
        report(json.loads(out.splitlines()[-1]))
        print(f"  load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
