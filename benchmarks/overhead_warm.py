"""The engine's own cost per round with warm caches: llama_decode replaced by a no-op.

    python benchmarks/overhead_warm.py [-m MODEL] [-n 2000] [--temp 0.8] [--spec-type none]
                                       [-md DRAFT --spec-type draft-simple --spec-draft-n-max 3]

On a CPU, a decode streams the weights through the caches, so the Python between two
decodes runs with them cold: `spectui run` reports that overhead. On a GPU the weights stay
in its memory and the CPU's caches stay warm. This measures that case without a GPU: after
a real decode of 65 rows, every llama_decode returns at once and leaves those logits in
place, and the rounds (drafting, sampling, verification, events) run back to back; with a
draft model (-md), its decodes too, and each draft then always accepts. Prints the median of
--repeat turns of -n rounds, and the drafted tokens per round (a draft's cost per drafted
token beyond its decode: this overhead less `none`'s, over that count); asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics

import llama_cpp

from spectui.config.embedded import DEFAULT_TARGET
from spectui.config.resolve import resolve
from spectui.engine.interface import GenerationLimits, chat_messages
from spectui.engine.stats import summarize
from spectui.launch.opening import open_session

ROWS = 65  # id_last and the longest n-gram draft (ngram-mod's n-max)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", default=DEFAULT_TARGET)
    ap.add_argument("-n", type=int, default=2000, help="rounds per turn")
    ap.add_argument("--temp", type=float, default=0.0)
    ap.add_argument("-md", "--model-draft", default=None)
    ap.add_argument("--spec-type", default="none")
    ap.add_argument("--spec-draft-n-max", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
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
    messages = chat_messages([("user", "Write a Python function that parses a CSV line.")], None)
    list(session.generate(messages=messages, limits=GenerationLimits(n_predict=2)))
    # Real logits in every row a verification batch can read (a draft of up to 64 tokens):
    # the no-op decode leaves them in place, and the buffer where it is.
    contexts = [c for c in (session.ctx, session.draft_ctx) if c is not None]
    for ctx in contexts:
        ctx.decode(list(range(1000, 1000 + ROWS)), want=range(ROWS))
    llama_cpp.llama_decode = lambda ctx, batch: 0
    limits = GenerationLimits(n_predict=args.n, ignore_eos=True)
    results = []
    for _ in range(args.repeat):
        for ctx in contexts:
            ctx.truncate(0)
        results.append(summarize(list(session.generate(tokens=list(range(100, 140)), limits=limits))))
    stats = [s.as_dict() for s in results]
    over = statistics.median(s["overhead_ms_per_round"] for s in stats)
    drafted = statistics.median(s["n_drafted"] / s["rounds"] for s in stats)
    how = f"temperature {args.temp}" if args.temp > 0 else "greedy"
    print(
        f"{args.model}, {args.spec_type}, {how}: {over:.3f} ms per round outside llama.cpp, caches warm, "
        f"{drafted:.2f} drafted tokens per round (median of {args.repeat} turns of {args.n} rounds)"
    )


if __name__ == "__main__":
    main()
