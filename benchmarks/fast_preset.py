"""The fast preset against `none` on rewrite prompts, and the n-gram size it was chosen by.

    python benchmarks/fast_preset.py [--sizes 2,3,4,6,12] [--repeat 5] [-n 128]

For each ngram-simple lookup size (--spec-ngram-simple-size-n; 12 is llama.cpp's default),
runs `spectui bench --preset fast` on benchmarks/rewrite_prompts.toml, `none` interleaved
with ngram-simple, and prints ngram-simple's tok/s over none's per pass (median and range,
as benchmarks/auto_holdout.py) and the share of the answers' tokens that came from accepted
drafts. Asserts nothing: the fast preset's targets (>= 30% drafted, >= 1.0x none) are read
from it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from auto_holdout import per_pass, ratio_line

PROMPTS = Path(__file__).with_name("rewrite_prompts.toml")


def run(size: int, args: argparse.Namespace, out: Path) -> dict:
    cmd = [sys.executable, "-m", "spectui", "bench", "--preset", "fast", "--prompts", str(PROMPTS)]
    cmd += ["--repeat", str(args.repeat), "-n", str(args.n), "--sweep-types", "ngram-simple"]
    cmd += ["--spec-ngram-simple-size-n", str(size), "--json", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text(encoding="utf-8"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2,3,4,6,12")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("-n", type=int, default=128)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp())
    for size in (int(s) for s in args.sizes.split(",")):
        data = run(size, args, folder / f"size{size}.json")
        runs = [r for r in data["runs"] if r["config"] == "ngram-simple" and r["repeat"] >= 0]
        drafted = sum(r["stats"]["n_accepted"] for r in runs) / max(1, sum(r["stats"]["n_generated"] for r in runs))
        speeds = {config: v for by in per_pass(data).values() for config, v in by.items()}
        print(
            f"size-n {size:2}: ngram-simple / none {ratio_line(speeds['ngram-simple'], speeds['none'])}, "
            f"{drafted:.0%} of the tokens from accepted drafts"
        )


if __name__ == "__main__":
    main()
