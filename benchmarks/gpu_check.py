"""GPU readiness: spectui and llama-cpp-python on the default pair, all layers on the GPU.

    bash benchmarks/gpu_check.sh      # installs a CUDA build first, then runs this

Runs `none`, `draft-simple` and `ngram-simple` with `spectui run --ignore-eos` and plain
decoding with `Llama.generate` (-n tokens each), each in its own process, interleaved,
medians of --runs; prints tok/s, the overhead per round outside llama.cpp, and the peak GPU
memory in use while each ran (NVML, whole device). Each spectui case runs with greedy's
argmax on the GPU (-bs on, what auto chooses there) and in numpy (-bs off), to show what
copying the logits rows to the host costs. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import threading
from collections.abc import Callable

from native_speed import PROMPT, _llama_generate, _spectui

from spectui.config.embedded import DEFAULT_DRAFT, DEFAULT_TARGET, resolve_model
from spectui.engine.resources import gpu_memory

REWRITE = ("Rename every variable called `total` to `sum_` in this function and show the whole function:\n"
           "def mean(values):\n    total = 0\n    for v in values:\n        total += v\n"
           "    return total / len(values) if values else 0.0\n")
FIXED = ("--ignore-eos",)  # every run -n tokens long, as Llama.generate's are


def peak_gpu_while(fn: Callable[[], tuple]) -> tuple[tuple, int | None]:
    """fn()'s result and the most GPU memory in use (bytes, all GPUs) while it ran."""
    peak: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            mem = gpu_memory()
            if mem:
                peak.append(sum(g.used for g in mem))

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    try:
        return fn(), max(peak, default=None)
    finally:
        done.set()
        t.join()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-n", type=int, default=256)
    args = ap.parse_args()
    target, draft = str(resolve_model(DEFAULT_TARGET)), str(resolve_model(DEFAULT_DRAFT))
    print(f"GPU: {', '.join(g.name for g in gpu_memory() or []) or 'none found by NVML'}")
    specs = {"none": (("--spec-type", "none"), PROMPT),
             "draft-simple": (("-md", draft, "--spec-type", "draft-simple"), PROMPT),
             "ngram-simple": (("--spec-type", "ngram-simple"), REWRITE)}
    cases: dict[str, Callable[[], tuple]] = {
        f"spectui {name} -bs {bs}": functools.partial(_spectui, target, args.n, {}, spec, prompt,
                                                      extra=(*FIXED, "-bs", bs))
        for name, (spec, prompt) in specs.items() for bs in ("on", "off")}
    cases["Llama.generate"] = lambda: (_llama_generate(target, args.n), None)
    results: dict[str, list] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, fn in cases.items():
            results[name].append(peak_gpu_while(fn))
    for name, rs in results.items():
        tps = statistics.median(r[0][0] for r in rs)
        over = [r[0][1] for r in rs if r[0][1] is not None]
        peaks = [r[1] for r in rs if r[1] is not None]
        print(f"  {name:28} {tps:8.1f} tok/s"
              + (f"   overhead {statistics.median(over):.2f} ms/round" if over else "")
              + (f"   peak GPU memory {max(peaks) / 2**20:.0f} MiB" if peaks else ""), flush=True)


if __name__ == "__main__":
    main()
