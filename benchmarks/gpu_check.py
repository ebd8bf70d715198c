"""GPU readiness: spectui and llama-cpp-python with all layers on the GPU.

    bash benchmarks/gpu_check.sh prepare   # where there is a network and nvcc: fills .gpu/
    bash benchmarks/gpu_check.sh           # on the GPU machine, with .gpu/ copied along

On the default pair, or with --synthetic DIR on the tiny checkpoints of
tests/synthetic_models.py (a 4-layer target with SmolLM2's 49k vocabulary, its EAGLE-3,
DFlash and DSpark drafts, a target with an MTP layer): what a GPU machine that cannot
download, and takes 64 MiB along, can run. Their step on a GPU is mostly kernel launches,
so what they show is the time spectui spends between llama.cpp calls, the figure that
decides speculation's gain on a GPU; the default pair adds the real step and acceptance.

Runs each spec type with `spectui run --ignore-eos` and plain decoding with
`Llama.generate` (-n tokens each, all layers on the GPU), each in its own process,
interleaved, medians of --runs; prints tok/s, the overhead per round outside llama.cpp,
and the peak GPU memory in use while each ran (NVML, whole device). `none` and
`ngram-simple` run with greedy's argmax on the GPU (-bs on, what auto chooses there) and
in numpy (-bs off), to show what copying the logits rows to the host costs; `none` at
temperature 0.8 too, with the top-k on the GPU and in numpy. Each such pair must give the
same tokens (the same seed); the report says whether it did. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import re
import statistics
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from native_speed import PROMPT, _llama_generate, _spectui

from spectui.config.embedded import DEFAULT_DRAFT, DEFAULT_TARGET, resolve_model
from spectui.llama.devices import gpus

REWRITE = (
    "Rename every variable called `total` to `sum_` in this function and show the whole function:\n"
    "def mean(values):\n    total = 0\n    for v in values:\n        total += v\n"
    "    return total / len(values) if values else 0.0\n"
)
FIXED = ("--ignore-eos",)  # every run -n tokens long, as Llama.generate's are


def peak_gpu_while(fn: Callable[[], tuple]) -> tuple[tuple, int | None]:
    """fn()'s result and the most GPU memory in use (bytes, all GPUs) while it ran."""
    peak: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            mem = gpus()
            if mem:
                peak.append(sum(g.used for g in mem))

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    try:
        return fn(), max(peak, default=None)
    finally:
        done.set()
        t.join()


def default_pair() -> tuple[str, dict[str, tuple[tuple[str, ...], str]]]:
    target, draft = str(resolve_model(DEFAULT_TARGET)), str(resolve_model(DEFAULT_DRAFT))
    return target, {
        "none": (("--spec-type", "none"), PROMPT),
        "draft-simple": (("-md", draft, "--spec-type", "draft-simple"), PROMPT),
        "ngram-simple": (("--spec-type", "ngram-simple"), REWRITE),
    }


def synthetic(directory: Path) -> tuple[str, dict[str, tuple[tuple[str, ...], str]]]:
    """The checkpoints `python tests/synthetic_models.py DIR` wrote (the newest of each kind)."""

    def kind(name: str) -> str:
        found = sorted(
            (
                p
                for p in directory.glob(f"synthetic-{name}-*.gguf")
                if re.fullmatch(f"synthetic-{name}-[0-9a-f]+", p.stem)
            ),
            key=lambda p: p.stat().st_mtime,
        )
        if not found:
            raise SystemExit(
                f"no synthetic-{name}-*.gguf in {directory}: run `python tests/synthetic_models.py "
                f"{directory}` (or `bash benchmarks/gpu_check.sh prepare`)"
            )
        return str(found[-1])

    target = kind("target")
    return target, {
        "none": (("--spec-type", "none"), PROMPT),
        "ngram-simple": (("--spec-type", "ngram-simple"), REWRITE),
        "draft-simple": (("-md", target, "--spec-type", "draft-simple"), PROMPT),
        "draft-eagle3": (("-md", kind("eagle3"), "--spec-type", "draft-eagle3"), PROMPT),
        "draft-dflash": (("-md", kind("dflash"), "--spec-type", "draft-dflash"), PROMPT),
        "draft-dspark": (("-md", kind("dspark"), "--spec-type", "draft-dspark"), PROMPT),
        "draft-mtp": (("-m", kind("target-mtp"), "--spec-type", "draft-mtp"), PROMPT),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-n", type=int, default=256)
    ap.add_argument(
        "--synthetic", type=Path, metavar="DIR", help="the synthetic checkpoints in DIR instead of the default pair"
    )
    args = ap.parse_args()
    target, specs = synthetic(args.synthetic) if args.synthetic else default_pair()
    print(f"GPU: {', '.join(g.line() for g in gpus()) or 'none: a CPU-only llama.cpp'}; target {Path(target).name}")
    cases: dict[str, Callable[[], tuple]] = {}
    for name, (spec, prompt) in specs.items():
        for bs in ("on", "off") if name in ("none", "ngram-simple") else ("auto",):
            # -m in spec (draft-mtp's own target) comes after this one: argparse keeps the last
            cases[f"spectui {name}" + (f" -bs {bs}" if bs != "auto" else "")] = functools.partial(
                _spectui, target, args.n, {}, spec, prompt, extra=(*FIXED, "-bs", bs)
            )
    for bs in ("on", "off"):
        cases[f"spectui none --temp 0.8 -bs {bs}"] = functools.partial(
            _spectui, target, args.n, {}, specs["none"][0], PROMPT, temp=0.8, extra=(*FIXED, "-bs", bs)
        )
    cases["Llama.generate"] = lambda: (_llama_generate(target, args.n, gpu_layers=-1), None)
    results: dict[str, list] = {name: [] for name in cases}
    failed: dict[str, str] = {}
    for run in range(args.runs):
        for name, fn in cases.items():
            if name not in failed:
                try:
                    results[name].append(peak_gpu_while(fn))
                except subprocess.CalledProcessError as e:  # one type failing must not hide the rest
                    failed[name] = " / ".join((e.stderr or e.stdout or "").strip().splitlines()[-3:])
        report(f"after run {run + 1} of {args.runs}", results, failed)


def report(title: str, results: dict[str, list], failed: dict[str, str]) -> None:
    """Medians so far: a machine lent for minutes may be taken back before the last run."""
    print(title, flush=True)
    for name, rs in results.items():
        if name in failed:
            print(f"  {name:32} failed: {failed[name]}", flush=True)
            continue
        tps = statistics.median(r[0][0] for r in rs)
        over = [r[0][1] for r in rs if r[0][1] is not None]
        peaks = [r[1] for r in rs if r[1] is not None]
        print(
            f"  {name:32} {tps:8.1f} tok/s"
            + (f"   overhead {statistics.median(over):.2f} ms/round" if over else "")
            + (f"   peak GPU memory {max(peaks) / 2**20:.0f} MiB" if peaks else ""),
            flush=True,
        )
    for name, rs in results.items():
        off = name.removesuffix(" -bs on") + " -bs off"
        if name.endswith(" -bs on") and off in results and name not in failed and off not in failed:
            same = [a[0][2] == b[0][2] for a, b in zip(rs, results[off])]
            print(
                f"  {name.removesuffix(' -bs on')}: the same tokens with -bs on and off in "
                f"{sum(same)} of {len(same)} runs{'' if all(same) else '  <-- DIFFERENT'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
