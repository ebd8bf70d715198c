"""draft-simple's cost outside llama.cpp per drafted token, against `none`, in one process.

    python benchmarks/draft_overhead.py [-m TARGET] [-md DRAFT] [--runs 5] [-n 128]
                                        [--spec-draft-n-max 3]

One session on the pair, greedy; each run answers a new question twice, with draft-simple
and with `none` (switched live, in alternating order), so a machine that slows down slows
both alike. Printed, as medians of --runs:
- the overhead per round outside llama.cpp of each, and the drafted tokens per round;
- what draft-simple's round costs beyond `none`'s, per drafted token (the target's verify
  of the longer batch included);
- draft()'s own time outside llama.cpp per drafted token: each round's draft time less what
  the draft context spent in llama.cpp in it (the first round, which prefilled the draft
  cache, left out).
Prints numbers; asserts nothing. Run it on a quiet machine.
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
from spectui.spec_config import SpecConfig, parse_types


def _turn(session, spec_type: str, n_max: int, question: str, n: int) -> tuple[float, float, float | None]:
    """(overhead ms per round, drafted tokens per round, draft()'s own ms per drafted token)."""
    session.configure(SpecConfig(types=parse_types(spec_type), draft_n_max=n_max))
    dctx = session.draft_ctx
    events, own, drafted = [], 0.0, 0
    before = dctx.t_llama
    for e in session.generate(
        messages=chat_messages([("user", question)], None), limits=GenerationLimits(n_predict=n, ignore_eos=True)
    ):
        events.append(e)
        if isinstance(e, Round):
            if e.index > 0 and e.drafted:
                own += e.t_draft - (dctx.t_llama - before)
                drafted += len(e.drafted)
            before = dctx.t_llama
    stats = summarize(events).as_dict()
    per_token = 1000 * own / drafted if drafted else None
    return stats["overhead_ms_per_round"], stats["n_drafted"] / stats["rounds"], per_token


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", default=DEFAULT_TARGET)
    ap.add_argument("-md", "--model-draft", default=DEFAULT_DRAFT)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--spec-draft-n-max", type=int, default=3)
    args = ap.parse_args()
    setup = resolve(
        None,
        {"model": args.model, "model_draft": args.model_draft, "spec_type": "draft-simple", "temp": 0.0, "seed": 0},
    )
    session = open_session(setup)
    results: dict[str, list] = {"none": [], "draft-simple": []}
    for run in range(args.runs):
        order = ("draft-simple", "none") if run % 2 == 0 else ("none", "draft-simple")
        for spec_type in order:
            results[spec_type].append(
                _turn(session, spec_type, args.spec_draft_n_max, f"Question {run + 1}. {PROMPT}", args.n)
            )
    over = {t: statistics.median(r[0] for r in rs) for t, rs in results.items()}
    per_round = statistics.median(r[1] for r in results["draft-simple"])
    own = statistics.median(r[2] for r in results["draft-simple"] if r[2] is not None)
    print(
        f"{args.model} drafted by {args.model_draft}, n-max {args.spec_draft_n_max}, greedy, {args.n} tokens, "
        f"median of {args.runs} interleaved runs"
    )
    print(
        f"  overhead per round: none {over['none']:.3f} ms, draft-simple {over['draft-simple']:.3f} ms "
        f"({per_round:.2f} drafted tokens per round)"
    )
    print(f"  draft-simple beyond none, per drafted token: {(over['draft-simple'] - over['none']) / per_round:.3f} ms")
    print(f"  draft() outside llama.cpp, per drafted token: {own:.3f} ms")


if __name__ == "__main__":
    main()
