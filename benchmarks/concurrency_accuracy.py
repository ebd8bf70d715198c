"""How close `spectui plan --concurrency` comes to llama-server's measured aggregate tok/s.

    python benchmarks/concurrency_accuracy.py [--quick] [--pairs fast,default] [--levels 1,2,4]
                                              [-n 96] [--repeat 3] [--limit 2] [--json OUT]

Per pair, llama-servers built from the vendored llama.cpp (tests/server/build.sh --cached),
each at `-np 4 -t 2 --metrics`, one without speculation and one per speculating
configuration:
  fast     SmolLM2 135M drafting for itself: ngram-simple, ngram-mod
  default  Qwen2.5-Coder 1.5B with the 0.5B draft: draft-simple at --spec-draft-n-max 3
For each configuration `spectui bench --server NONE,SPEC --concurrency LEVELS --json` measures
(bursts of c requests, temperature 0, exactly -n tokens each), and `spectui plan --concurrency
LEVELS --json -t 2` times this machine's decodes of c sequences for the same model files,
threads and slots. Compared: the generation tok/s summed over the busy slots (each request's
own tok/s, first token to last: what the plan models; the end-to-end aggregate also holds the
prompts' processing, and is printed beside it), predicted from the plan's timings at the
acceptance the server's own counters measured (drafts per round, their length, accepted
tokens), so an error is the cost model's, not a difference of prompts; the plan's own
prediction at its calibration's acceptance is printed beside it. Asserts nothing.

`--quick`: SmolLM2 and ngram-simple only, levels 1,2, one repeat, one prompt per group, 32
tokens: a smoke run of the whole path (its figures mean nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from spectui.config.resolve import resolve
from spectui.launch.opening import checked_models
from spectui.plan.concurrency import NONE, Level, aggregate
from spectui.plan.curve import Curve
from spectui.plan.predict import Drafting
from tests.server.llama_server import Server, built

REPO = Path(__file__).resolve().parent.parent
SLOTS, THREADS, N_MAX = 4, 2, 3
PAIRS = {
    "fast": ("fast", [("ngram-simple", []), ("ngram-mod", [])]),
    "default": ("default", [("draft-simple", ["--spec-draft-n-max", str(N_MAX)])]),
}


def server_binary() -> str:
    path = built()
    if path is None:
        sys.exit("llama-server is not built: run tests/server/build.sh first")
    return path


def server(binary: str, model: Path, ctx: int, *args: str) -> Server:
    """tests/server/llama_server.py's llama-server (it stops with stop()), at the slots compared: the
    flags given last win over its own -c and -np."""
    return Server(binary, model, "-c", str(ctx), "-np", str(SLOTS), "-t", str(THREADS), *args)


def spectui(*argv: str) -> subprocess.CompletedProcess:
    """`python -m spectui ARGV` from this checkout; its progress goes to our stderr."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "spectui", *argv], stdout=subprocess.PIPE, text=True, env=env)


def measure(urls: str, levels: str, args, out: Path) -> dict:
    run = ["bench", "--server", urls, "--concurrency", levels, "--json", str(out), "-n", str(args.n)]
    run += ["--repeat", str(args.repeat), "--lang", "en"] + (["--limit", str(args.limit)] if args.limit else [])
    ran = spectui(*run)
    if ran.returncode != 0:
        sys.exit(f"spectui {' '.join(run)} failed ({ran.returncode})")
    return json.loads(out.read_text())


def predict(preset: str, levels: str, depth: int) -> dict:
    run = ["plan", "--preset", preset, "-t", str(THREADS), "--concurrency", levels, "--depth", str(depth), "--json"]
    ran = spectui(*run)
    if ran.returncode != 0:
        sys.exit(f"spectui {' '.join(run)} failed ({ran.returncode})")
    return json.loads(ran.stdout)


def plan_row(plan: dict, spec_type: str) -> dict | None:
    """The plan's row for a server's configuration (a draft model at the server's n-max)."""
    for row in plan["concurrency"]["rows"]:
        if row["spec_type"] == spec_type and row["n_max"] in (None, N_MAX):
            return row
    return None


def levels_of(plan: dict) -> dict[int, Level]:
    """The plan's timed T(c, b) per level, with its overheads (`--json`'s concurrency.timings)."""
    return {int(c): Level(int(c), Curve.from_dict(d)) for c, d in plan["concurrency"]["timings"].items()}


def server_drafting(r: dict, model: bool) -> Drafting | None:
    """How the server drafted over a level, from its own counters: rounds = tokens - accepted
    (a round emits its accepted tokens and one more), drafting rounds = its drafts."""
    c = r.get("server_counters")
    tokens = sum(b["n_tokens"] for b in r["repeats"])
    if not c or not c["drafts"] or tokens <= c["accepted"]:
        return None
    rounds = tokens - c["accepted"]
    return Drafting(c["drafts"] / rounds, c["drafted"] / c["drafts"], c["accepted"] / c["drafts"], model)


def compare(pair: str, spec_type: str, plan: dict, bench: dict, depth: int, with_none: bool) -> list[dict]:
    """Per level: the plan's aggregate generation tok/s at the acceptance the server measured
    (the cost model alone) against the server's, and the plan's own at its calibration's."""
    levels = plan["concurrency"]["levels"]
    timed = levels_of(plan)
    out = []
    for label in (["none"] if with_none else []) + [spec_type]:
        row = plan_row(plan, label)
        for r in bench["results"]:
            if r["server"] != label or r["level"] not in levels:
                continue
            d = NONE if label == "none" else server_drafting(r, spec_type.startswith("draft"))
            predicted = aggregate(timed[r["level"]], timed[1], d, depth) if d is not None else None
            measured = r["gen_tok_per_s"]
            out.append(
                {
                    "pair": pair,
                    "config": label,
                    "level": r["level"],
                    "predicted": predicted,
                    "measured": measured,
                    "error": (predicted - measured) / measured if predicted is not None and measured else None,
                    "noise": r.get("gen_tok_per_s_spread"),
                    "end_to_end": r["agg_tok_per_s"],
                    "plan_own": row["tok_per_s"][levels.index(r["level"])] if row else None,
                    "alpha_plan": plan_alpha(plan, label) if label != "none" else None,
                    "alpha_server": d.alpha if d is not None and label != "none" else None,
                    "break_even_plan": row.get("break_even_concurrency") if row else None,
                }
            )
    return out


def plan_alpha(plan: dict, spec_type: str) -> float | None:
    return next(
        (r["alpha"] for r in plan["table"] if r["spec_type"] == spec_type and r["n_max"] in (None, N_MAX)), None
    )


def report(rows: list[dict]) -> None:
    print("generation tok/s summed over the busy slots: predicted at the server's acceptance, against measured")
    head = f"{'pair':<8}{'config':<14}{'c':>3}{'predicted':>11}{'measured':>10}{'error':>10}{'noise':>7}"
    print(head + f"{'α srv':>7}{'plan own':>10}{'α plan':>8}{'end-to-end':>12}")

    def num(x, fmt):
        return "-" if x is None else format(x, fmt)

    for r in rows:
        print(
            f"{r['pair']:<8}{r['config']:<14}{r['level']:>3}{num(r['predicted'], '.1f'):>11}"
            f"{num(r['measured'], '.1f'):>10}{num(r['error'], '+.1%'):>10}{num(r['noise'], '.0%'):>7}"
            f"{num(r['alpha_server'], '.2f'):>7}{num(r['plan_own'], '.1f'):>10}{num(r['alpha_plan'], '.2f'):>8}"
            f"{num(r['end_to_end'], '.1f'):>12}"
        )
    errors = [abs(r["error"]) for r in rows if r["error"] is not None]
    if errors:
        print(f"|error| median {statistics.median(errors):.1%}, max {max(errors):.1%} over {len(errors)} points")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="a smoke run: SmolLM2, ngram-simple, levels 1,2")
    p.add_argument("--pairs", default="fast,default")
    p.add_argument("--levels", default="1,2,4")
    p.add_argument("-n", type=int, default=96, help="tokens per request")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--limit", type=int, default=2, help="prompts per language and category")
    p.add_argument("--ctx", type=int, default=4096, help="llama-server's -c, split among its 4 slots")
    p.add_argument("--depth", type=int, default=128, help="the context depth the plan predicts at (a request's mean)")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args()
    pairs = {k: PAIRS[k] for k in args.pairs.split(",")}
    if args.quick:
        pairs = {"fast": ("fast", [("ngram-simple", [])])}
        args.levels, args.repeat, args.limit, args.n = "1,2", 1, 1, 32
    binary = server_binary()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for pair, (preset, configs) in pairs.items():
            target, draft = checked_models(resolve(preset, {"threads": THREADS}))
            plan = predict(preset, args.levels, args.depth)
            none = server(binary, target, args.ctx)
            try:
                for spec_type, extra in configs:
                    model_draft = ["-md", str(draft)] if spec_type.startswith("draft") else []
                    spec = server(binary, target, args.ctx, "--spec-type", spec_type, *model_draft, *extra)
                    try:
                        out = Path(tmp) / f"{pair}-{spec_type}.json"
                        bench = measure(f"{none.url},{spec.url}", args.levels, args, out)
                    finally:
                        spec.stop()
                    rows += compare(pair, spec_type, plan, bench, args.depth, with_none=spec_type == configs[0][0])
            finally:
                none.stop()
    report(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
