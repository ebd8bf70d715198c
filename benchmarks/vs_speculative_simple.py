"""spectui against llama.cpp's own llama-speculative-simple, same pair, prompt and settings.

    python benchmarks/vs_speculative_simple.py [--binary PATH] [--runs 9] [-n 256] [--respect-eos]
                                               [-m MODEL] [--types ngram-simple,ngram-mod]

For draft-simple and each n-gram type, greedy: `spectui run --json` and
`llama-speculative-simple` (built from the llama.cpp that llama-cpp-python vendors:
`tests/oracle/build.sh` builds it beside the oracle), each in its own process with the same
threads and the same OpenMP environment. Both go on to -n tokens past the end of generation
(--ignore-eos on both sides, so a run lasts seconds, not the answer's half second), unless
--respect-eos. Each run takes every case once, both tools back to back in alternating order,
so a machine that slows down slows every case alike; printed are the medians of --runs and
the median of the per-run ratios. Both rates count the generation only (llama.cpp's
"decoded N tokens in S seconds", less the end-of-generation token it counts and spectui does
not emit). For the n-gram types it also prints each side's time per round outside the decode
call (drafting, sampling, bookkeeping): spectui's overhead per round, and for the binary the
gaps between its decode calls, timed by decode_timer.c (compiled here with `cc` and
preloaded; skipped without a compiler); and the time in the decode calls, which is the
machine's: both tools draft the same tokens (printed: drafted/accepted on each side) and make
the same decode calls, so "at one decode speed" is the ratio with the binary's decode time on
both sides, which the machine's drift between processes (5-15% here) cannot move. Without a
binary it says so and compares nothing. -m runs every case on another model (the 1.5B
target: a 151k vocabulary, each verified row a 600 KB read). Prints numbers; asserts nothing. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from native_speed import _clean_env, _spectui

from spectui.bench.prompts import shipped
from spectui.config.embedded import resolve_model
from spectui.llama.runtime import default_threads
from spectui.spec_config import NGRAM_TYPES

SMOL = "smollm2-135m-instruct-q4_1"
# A rewrite of code given in the prompt, from the bench's shipped set: every n-gram type
# finds drafts in it (a copy task that renamed a word left them drafting nothing).
PROMPT = next(p.text for p in shipped() if p.id == "en-code-01")


def _cases(model: str) -> list[tuple[str, str, str | None, int]]:
    """(spec type, target, draft, n-max): the model drafting for itself keeps the runs short."""
    return [("draft-simple", model, model, 3)] + [(t, model, None, 3) for t in NGRAM_TYPES]


def _find_binary(given: str | None) -> Path | None:
    if given:
        return Path(given)
    if os.environ.get("LLAMA_SPECULATIVE_SIMPLE"):
        return Path(os.environ["LLAMA_SPECULATIVE_SIMPLE"])
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "spectui-oracle"
    found = sorted(cache.glob("**/build/bin/llama-speculative-simple"))
    return found[-1] if found else None


def _templated(target: str) -> str:
    """The prompt as spectui sends it (the model's chat template), for llama.cpp's -p."""
    from spectui.llama.model import Model

    model = Model(target, vocab_only=True)
    try:
        return model.format_chat([{"role": "user", "content": PROMPT}])
    finally:
        model.close()


class Native(NamedTuple):
    """One llama-speculative-simple run, as its log and the decode timer tell it."""

    tok_per_s: float
    n_drafted: int
    n_accepted: int
    inside_ms: float | None  # per round, in the decode call (None without the timer or with a draft)
    outside_ms: float | None  # per round, between decode calls


def _native(
    binary: Path,
    target: str,
    draft: str | None,
    spec_type: str,
    n_max: int,
    n: int,
    eos: tuple[str, ...],
    timer: Path | None,
) -> Native:
    args = [
        str(binary),
        "-m",
        target,
        *(["-md", draft] if draft else []),
        "--spec-type",
        spec_type,
        "--spec-draft-n-max",
        str(n_max),
        "-p",
        _templated(target),
        "-n",
        str(n),
        "--temp",
        "0",
        "-t",
        str(default_threads()),
        "-c",
        "4096",
        *eos,
    ]
    with tempfile.TemporaryDirectory() as tmp:
        calls = Path(tmp) / "calls.txt"
        timing = {"LD_PRELOAD": str(timer), "DECODE_TIMER_OUT": str(calls)} if timer and not draft else {}
        out = subprocess.run(args, capture_output=True, text=True, check=True, env=_clean_env() | _openmp() | timing)
        text = out.stderr + out.stdout
        m = re.search(r"decoded\s+(\d+) tokens in\s+([\d.]+) seconds", text)
        if not m:
            raise RuntimeError(f"no timing line from {binary.name}")
        decoded = int(m.group(1))
        drafted, accepted = (int(re.search(rf"{key}\s*=\s*(\d+)", text).group(1)) for key in ("n_drafted", "n_accept"))
        # Each round decodes once and yields its accepted drafts and one token more
        rounds = decoded - accepted
        inside = outside = None
        if timing:
            # The rounds are the last decode calls (before them: a warm-up and the prompt)
            spans = [tuple(map(float, line.split())) for line in calls.read_text().splitlines()][-rounds:]
            inside = statistics.fmean(b - a for a, b in spans) * 1e3
            outside = sum(b[0] - a[1] for a, b in zip(spans, spans[1:])) / (len(spans) - 1) * 1e3
    # Its count includes the end-of-generation token when it stops on one (fewer than n);
    # spectui's counts the answer's tokens only: drop it, so both rates are of the same tokens.
    return Native((decoded - (decoded < n)) / float(m.group(2)), drafted, accepted, inside, outside)


def _timer(folder: str) -> Path | None:
    """decode_timer.c built into `folder`, or None (with a message) without a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("no C compiler: the binary's time outside its decode calls is not measured")
        return None
    lib = Path(folder) / "decode_timer.so"
    subprocess.run(
        [cc, "-O2", "-shared", "-fPIC", "-o", str(lib), str(Path(__file__).with_name("decode_timer.c")), "-ldl"],
        check=True,
    )
    return lib


def _openmp() -> dict[str, str]:
    """spectui's OpenMP choice, given to llama.cpp too, so both wait for work alike."""
    import spectui  # noqa: F401  (its import sets the variable in this process)

    return {k: os.environ[k] for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT") if k in os.environ}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--binary", help="llama-speculative-simple (default: $LLAMA_SPECULATIVE_SIMPLE or the oracle build)"
    )
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("-n", type=int, default=256)
    ap.add_argument("--respect-eos", action="store_true", help="stop at the end of generation (a ~100-token answer)")
    ap.add_argument("-m", "--model", default=SMOL, help=f"the target (default {SMOL})")
    ap.add_argument("--types", help="the spec types to compare (default: draft-simple and every n-gram type)")
    args = ap.parse_args()
    binary = _find_binary(args.binary)
    if binary is None or not binary.exists():
        print(
            "no llama-speculative-simple build found: build one with tests/oracle/build.sh "
            "(or pass --binary); nothing compared"
        )
        return
    eos = () if args.respect_eos else ("--ignore-eos",)
    print(
        f"{binary}\n{args.model}, {args.n} tokens{'' if eos else ' or fewer (EOS respected)'}, greedy, "
        f"{default_threads()} threads, median of {args.runs} interleaved runs"
    )
    cases = [c for c in _cases(args.model) if not args.types or c[0] in args.types.split(",")]
    results: dict[str, tuple[list, list]] = {case[0]: ([], []) for case in cases}
    with tempfile.TemporaryDirectory() as tmp:
        timer = _timer(tmp)
        for run in range(args.runs):
            for spec_type, target, draft, n_max in cases:
                t_path = str(resolve_model(target))
                d_path = str(resolve_model(draft)) if draft else None
                spec = ("--spec-type", spec_type, "--spec-draft-n-max", str(n_max), *(("-md", draft) if draft else ()))
                ours, theirs = results[spec_type]
                sides = [
                    lambda: ours.append(_spectui(target, args.n, _openmp(), spec, PROMPT, extra=eos)),
                    lambda: theirs.append(_native(binary, t_path, d_path, spec_type, n_max, args.n, eos, timer)),
                ]
                for side in sides[:: 1 if run % 2 == 0 else -1]:
                    side()
    for spec_type, (ours, theirs) in results.items():
        a, b = statistics.median(r[0] for r in ours), statistics.median(r.tok_per_s for r in theirs)
        ratios = [x[0] / y.tok_per_s for x, y in zip(ours, theirs)]
        print(
            f"  {spec_type:14} spectui {a:7.1f} tok/s   llama-speculative-simple {b:7.1f} tok/s   {a / b:5.2f}x"
            f"   per run: median {statistics.median(ratios):.2f}x, {min(ratios):.2f}-{max(ratios):.2f}"
        )
        s0, n0 = ours[0][3], theirs[0]
        same = (s0["n_drafted"], s0["n_accepted"]) == (n0.n_drafted, n0.n_accepted)
        print(
            f"  {'':14} drafted/accepted: spectui {s0['n_drafted']}/{s0['n_accepted']}, llama-speculative-simple "
            f"{n0.n_drafted}/{n0.n_accepted}{' (the same drafts)' if same else ''}"
        )
        if n0.inside_ms is None:
            continue
        # spectui's time per round: in llama.cpp's calls, and its overhead outside them
        s_round = statistics.median(r[3]["n_generated"] / r[0] / r[3]["rounds"] * 1e3 for r in ours)
        s_out = statistics.median(r[1] for r in ours)
        b_in, b_out = (statistics.median(getattr(r, k) for r in theirs) for k in ("inside_ms", "outside_ms"))
        line = (
            f"  {'':14} ms per round in the decode call / outside it: spectui {s_round - s_out:.2f} / {s_out:.3f}, "
            f"llama-speculative-simple {b_in:.2f} / {b_out:.3f}"
        )
        if same:  # the same decode calls: at one decode speed (the binary's), only the time outside differs
            line += f"; at one decode speed: {(b_in + b_out) / (b_in + s_out):.3f}x"
        print(line)


if __name__ == "__main__":
    sys.exit(main())
