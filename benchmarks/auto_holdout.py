"""auto against `none` and the best fixed type, per prompt group, with each ratio's spread.

    python benchmarks/auto_holdout.py [--prompts FILE] [--limit N] [--repeat 5] [-n 128]
                                      [--types "auto;ngram-simple;draft-simple"] [--json OUT]
    python benchmarks/auto_holdout.py --from OUT.json      # summarise a result again

Runs `spectui bench` (the default pair, greedy, fixed length, every configuration of a prompt
interleaved and rotated, `none` as the baseline) and prints, per group, the median over the
passes of auto's tok/s over `none`'s and over the best fixed type's (the fixed type with the
group's best median), with the lowest and highest pass. A pass's figure for a group is the
median tok/s of its prompts. Asserts nothing: it prints the numbers issue #37's targets
(>= 0.97x none, >= 0.95x the best fixed type) are read from.
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

BASELINE = "none"


def bench(args: argparse.Namespace, out: Path) -> None:
    cmd = [sys.executable, "-m", "spectui", "bench", "--preset", "default", "--lang", "all"]
    cmd += ["--repeat", str(args.repeat), "-n", str(args.n), "--sweep-types", args.types]
    cmd += ["--sweep-n-max", str(args.n_max), "--json", str(out)]
    if args.prompts:
        cmd += ["--prompts", args.prompts]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    subprocess.run(cmd, check=True)


def per_pass(data: dict) -> dict[str, dict[str, dict[int, float]]]:
    """group -> config -> pass -> median tok/s of the group's prompts."""
    speeds: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for run in data["runs"]:
        tps = run["stats"].get("tok_per_s")
        if run["repeat"] >= 0 and tps and not run["error"]:
            speeds[(run["group"], run["config"], run["repeat"])].append(tps)
    out: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for (group, config, repeat), values in speeds.items():
        out[group][config][repeat] = statistics.median(values)
    return out


def ratio_line(a: dict[int, float], b: dict[int, float]) -> str:
    ratios = sorted(a[r] / b[r] for r in a.keys() & b.keys())
    if not ratios:
        return "n/a"
    return f"{statistics.median(ratios):.3f}x ({ratios[0]:.3f}-{ratios[-1]:.3f}, {len(ratios)} passes)"


def summarise(data: dict) -> None:
    label = lambda c: c.split(" ")[0]  # noqa: E731 - "auto n3" -> "auto"
    for group, configs in sorted(per_pass(data).items()):
        by_type = {label(c): v for c, v in configs.items()}
        auto = by_type.get("auto")
        if auto is None or BASELINE not in by_type:
            continue
        fixed = {t: v for t, v in by_type.items() if t not in ("auto", BASELINE)}
        medians = {t: statistics.median(v.values()) for t, v in by_type.items()}
        best = max(fixed, key=lambda t: medians[t]) if fixed else None
        print(f"{group}: " + ", ".join(f"{t} {medians[t]:.1f} tok/s" for t in sorted(medians)))
        print(f"  auto / none: {ratio_line(auto, by_type[BASELINE])}")
        if best is not None:
            print(f"  auto / best fixed ({best}): {ratio_line(auto, fixed[best])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", help="a prompts file (default: the shipped set)")
    ap.add_argument("--limit", type=int, default=0, help="the first N prompts of each group")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--n-max", type=int, default=3)
    ap.add_argument("--types", default="auto;ngram-simple;draft-simple")
    ap.add_argument("--json", help="keep the bench's result here")
    ap.add_argument("--from", dest="source", help="summarise this bench result instead of running")
    args = ap.parse_args()
    if args.source:
        path = Path(args.source)
    else:
        path = Path(args.json) if args.json else Path(tempfile.mkdtemp()) / "auto_holdout.json"
        bench(args, path)
    summarise(json.loads(path.read_text(encoding="utf-8")))


if __name__ == "__main__":
    main()
