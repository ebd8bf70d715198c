"""What inspect mode (issue 36) costs per round, off against on, in one process.

    python benchmarks/inspect_cost.py [-m TARGET] [-md DRAFT] [--spec-type draft-simple]
                                      [--temp 0] [--runs 6] [-n 128] [--spec-draft-n-max 3]

One session on the pair (by default Qwen2.5-Coder 1.5B drafted by 0.5B: the 151k
vocabulary); each run answers a new question twice, with inspect off and on (switched
between turns, in alternating order), so a machine that slows down slows both alike.
Printed, as medians of --runs: the overhead per round outside llama.cpp of each (what
`spectui run` reports), tok/s, and what inspect adds per round and per judged position.
Run it at --temp 0 (the full softmax of each judged row) and --temp 0.8 (the sampled
distributions the verifier builds anyway). Prints numbers; asserts nothing. Run it on a
quiet machine.
"""

from __future__ import annotations

import argparse
import statistics

from native_speed import PROMPT

from spectui.config.embedded import DEFAULT_DRAFT, DEFAULT_TARGET
from spectui.config.resolve import resolve
from spectui.engine.events import Round
from spectui.engine.interface import GenerationLimits, chat_messages
from spectui.engine.stats import summarize
from spectui.launch.opening import open_session


def _turn(session, inspect: bool, question: str, n: int) -> tuple[float, float, float]:
    """(overhead ms per round, tok/s, judged positions per round) of one answer."""
    session.inspect = inspect
    events = list(
        session.generate(
            messages=chat_messages([("user", question)], None), limits=GenerationLimits(n_predict=n, ignore_eos=True)
        )
    )
    stats = summarize(events)
    rounds = [e for e in events if isinstance(e, Round)]
    judged = sum(min(r.n_accepted + 1, r.n_drafted) for r in rounds) / len(rounds)
    return stats.timing.overhead_ms_per_round or 0.0, stats.timing.tok_per_s or 0.0, judged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", default=DEFAULT_TARGET)
    ap.add_argument("-md", "--model-draft", default=DEFAULT_DRAFT)
    ap.add_argument("--spec-type", default="draft-simple")
    ap.add_argument("--temp", type=float, default=0.0)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--spec-draft-n-max", type=int, default=3)
    args = ap.parse_args()
    setup = resolve(
        None,
        {
            "model": args.model,
            "model_draft": args.model_draft,
            "spec_type": args.spec_type,
            "spec_draft_n_max": args.spec_draft_n_max,
            "temp": args.temp,
            "seed": 0,
        },
    )
    session = open_session(setup)
    results: dict[bool, list] = {False: [], True: []}
    for run in range(args.runs):
        for inspect in (False, True) if run % 2 == 0 else (True, False):
            results[inspect].append(_turn(session, inspect, f"Question {run + 1}. {PROMPT}", args.n))
    over = {k: statistics.median(r[0] for r in rs) for k, rs in results.items()}
    speed = {k: statistics.median(r[1] for r in rs) for k, rs in results.items()}
    judged = statistics.median(r[2] for r in results[True])
    print(
        f"{args.model} drafted by {args.model_draft} ({args.spec_type}, n-max {args.spec_draft_n_max}), "
        f"temp {args.temp}, {args.n} tokens, median of {args.runs} interleaved runs"
    )
    print(f"  overhead per round: inspect off {over[False]:.3f} ms, on {over[True]:.3f} ms")
    print(f"  tok/s: inspect off {speed[False]:.2f}, on {speed[True]:.2f} ({speed[True] / speed[False] - 1:+.1%})")
    extra = over[True] - over[False]
    print(f"  inspect adds {extra:.3f} ms per round, {extra / judged if judged else 0:.3f} ms per judged position")


if __name__ == "__main__":
    main()
