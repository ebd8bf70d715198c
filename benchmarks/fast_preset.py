"""The fast preset against `none` on rewrite prompts, each ratio with its noise.

    python benchmarks/fast_preset.py [--repeat 5] [-n 128] [--limit N] [--types "auto;ngram-simple"]
    python benchmarks/fast_preset.py --from OUT.json       # summarise a result again

Runs `spectui bench --preset fast` on benchmarks/rewrite_prompts.toml (greedy, fixed length,
`none` and each type interleaved and rotated, `--repeat` passes) and prints, for the preset's
own type (auto) and each other type given (ngram-simple: the preset's former type), the median
over the passes of its tok/s over none's (a pass's figure: the median of its prompts), the lowest
and highest pass, per prompt too, `none`'s own spread between passes, and the share of the
answers' tokens that came from accepted drafts. Asserts nothing: the preset's target (not below
`none` beyond the noise) is read from it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from auto_holdout import BASELINE, ratio_line

PROMPTS = Path(__file__).with_name("rewrite_prompts.toml")


def bench(args: argparse.Namespace, out: Path) -> None:
    cmd = [sys.executable, "-m", "spectui", "bench", "--preset", "fast", "--prompts", str(PROMPTS)]
    cmd += ["--repeat", str(args.repeat), "-n", str(args.n), "--sweep-types", args.types, "--json", str(out)]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def speeds(runs: list[dict]) -> dict[str, dict[int, float]]:
    """type -> pass -> the median tok/s of the pass's prompts."""
    found: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in runs:
        if r["repeat"] >= 0 and r["stats"].get("tok_per_s") and not r["error"]:
            found[(r["config"].split(" ")[0], r["repeat"])].append(r["stats"]["tok_per_s"])
    out: dict[str, dict[int, float]] = defaultdict(dict)
    for (config, repeat), values in found.items():
        out[config][repeat] = statistics.median(values)
    return out


def spread(by_pass: dict[int, float]) -> str:
    values = list(by_pass.values())
    return f"{(max(values) - min(values)) / statistics.median(values):.0%}" if len(values) > 1 else "unknown"


def drafted(runs: list[dict], config: str) -> str:
    mine = [r for r in runs if r["config"].split(" ")[0] == config and r["repeat"] >= 0]
    generated = sum(r["stats"].get("n_generated", 0) for r in mine)
    return f"{sum(r['stats'].get('n_accepted', 0) for r in mine) / max(1, generated):.0%}"


def summarise(data: dict) -> None:
    runs = data["runs"]
    overall = speeds(runs)
    if BASELINE not in overall:
        print("no measured `none` runs")
        return
    none = overall[BASELINE]
    print(f"none: {statistics.median(none.values()):.1f} tok/s, spread between passes {spread(none)}")
    prompts = sorted({r["prompt"] for r in runs})
    for config in sorted(c for c in overall if c != BASELINE):
        print(f"{config} / none: {ratio_line(overall[config], none)}, {drafted(runs, config)} of tokens from drafts")
        for prompt in prompts:
            each = speeds([r for r in runs if r["prompt"] == prompt])
            print(f"  {prompt}: {ratio_line(each.get(config, {}), each.get(BASELINE, {}))}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--limit", type=int, default=0, help="only the first N rewrite prompts")
    ap.add_argument("--types", default="auto;ngram-simple", help="the configurations against none (--sweep-types)")
    ap.add_argument("--json", help="keep the bench's result here")
    ap.add_argument("--from", dest="source", help="summarise a kept result instead of running")
    args = ap.parse_args()
    if args.source:
        summarise(json.loads(Path(args.source).read_text(encoding="utf-8")))
        return
    if args.repeat < 5:
        ap.error("--repeat must be 5 or more: fewer passes cannot tell the preset from none's own noise")
    out = Path(args.json) if args.json else Path(tempfile.mkdtemp()) / "fast_preset.json"
    bench(args, out)
    summarise(json.loads(out.read_text(encoding="utf-8")))


if __name__ == "__main__":
    main()
