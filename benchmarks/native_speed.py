"""spectui against the library it is built on, each in its own process, side by side.

    python benchmarks/native_speed.py [--runs 5] [-n 128] [--models smollm2-135m-instruct-q4_1,...]
                                      [--env OMP_WAIT_POLICY=ACTIVE ...] [--temp 0.8] [--chat]

For each model, interleaved run by run (so a machine that slows down slows every case
alike), medians of --runs with their range, and each run's ratio to the Llama.generate run
beside it:
- `spectui run --spec-type none --json` with the default environment (and once per --env
  variant), greedy or at --temp (llama.cpp's default chain, seeded by run): generation
  tok/s and the overhead per round outside llama.cpp;
- with --chat, the chat app answering three times (headless, panel updating; the second
  answer was once 35% slower than the first);
- llama-cpp-python's `Llama.generate` in a fresh process, default environment: the decode
  rate from its first token to its last (spectui's generation rate starts after the prompt
  but before the prompt's last token is decoded, so both count one decode per token).
Prints numbers; asserts nothing. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

PROMPT = "Write a Python function that parses a CSV line with quoted fields, and explain it."


def _llama_generate(path: str, n: int, temp: float = 0.0, gpu_layers: int = 0) -> float:
    """Llama.generate's decode rate in a fresh process: (n - 1) tokens over first -> n-th.
    With spectui's thread count (Llama's own default is half the CPUs), computed here as
    spectui's default_threads() does: importing spectui would set its OpenMP choice.
    `gpu_layers`: Llama's n_gpu_layers (-1: all; its own default is none)."""
    code = (
        "import os, sys, time\n"
        "from llama_cpp import Llama\n"
        "path, n, text, temp, ngl = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), int(sys.argv[5])\n"
        "cpus = len(os.sched_getaffinity(0))\n"
        "threads = cpus if cpus <= 4 else cpus // 2\n"
        "llm = Llama(path, n_ctx=4096, n_threads=threads, n_threads_batch=threads, n_gpu_layers=ngl, verbose=False)\n"
        "prompt = llm.tokenize(text.encode(), add_bos=True, special=True)\n"
        "stamps = []\n"
        "for _ in llm.generate(prompt, temp=temp, top_k=40 if temp > 0 else 1, reset=True):\n"
        "    stamps.append(time.perf_counter())\n"
        "    if len(stamps) == n:\n"
        "        break\n"
        "print((n - 1) / (stamps[-1] - stamps[0]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, path, str(n), PROMPT, str(temp), str(gpu_layers)],
        capture_output=True,
        text=True,
        check=True,
        env=_clean_env(),
    )
    return float(out.stdout.strip().splitlines()[-1])


def _spectui(
    model: str,
    n: int,
    env: dict[str, str],
    spec: tuple[str, ...] = ("--spec-type", "none"),
    prompt: str = PROMPT,
    temp: float = 0.0,
    seed: int = 0,
    extra: tuple[str, ...] = (),
) -> tuple[float, float, tuple[int, ...], dict]:
    """`spectui run --json` in a fresh process: (generation tok/s, overhead ms per round,
    the tokens generated, all its stats)."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "spectui",
            "run",
            "-m",
            model,
            *spec,
            "--temp",
            str(temp),
            "--seed",
            str(seed),
            "-n",
            str(n),
            *extra,
            "--json",
            prompt,
        ],
        capture_output=True,
        text=True,
        check=True,
        env=_clean_env() | env,
    )
    data = json.loads(out.stdout)
    stats = data["stats"]
    if stats["n_generated"] != n:
        print(f"  (warning: spectui stopped at {stats['n_generated']} tokens, not {n})", file=sys.stderr)
    return stats["tok_per_s"], stats["overhead_ms_per_round"], tuple(data["tokens"]), stats


CHAT = r"""
import asyncio, json, sys
from spectui.config.resolve import resolve
from spectui.launch.opening import open_session
from spectui.tui.app import SpecApp
from spectui.tui.widgets.chat_input import ChatInput
from spectui.engine.stats import summarize

model, n, text, spec_type, draft, temp = sys.argv[1], int(sys.argv[2]), *sys.argv[3:7]
TURNS = 3
setup = resolve(None, {"model": model, "model_draft": draft or None, "spec_type": spec_type, "temp": float(temp),
                       "seed": 0, "n_predict": n})
session = open_session(setup)

async def main():
    app = SpecApp(setup, session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        # A user types into an app that has settled: its start (the first layout, the footer's
        # keys) is not part of the answer (it was 100 ms of the UI's CPU inside it).
        await pilot.pause()
        await asyncio.sleep(1.0)
        answers = []
        for i in range(TURNS):
            if i:  # a new chat: each answer runs in its own worker
                app.controller.new_chat()
                await asyncio.sleep(1.0)
            box = app.query_one(ChatInput)
            # A question the context has not seen, as a user's next one: its prompt is decoded
            # (the screen's start of an answer overlaps that); the same text again is cached.
            box.insert(text if i == 0 else f"Question {i + 1}. {text}")
            # What Enter does, without pilot.press(): that then waits for every widget to process
            # its queue, as pilot.pause() does (15-25 ms of the UI thread's CPU each time, polled
            # all through the answer), work the real chat does not do. So sleep, and take the
            # figures from the events' own times.
            chat = app.controller
            before = chat.turn
            box.post_message(ChatInput.Submitted(box.text))
            while chat.turn in (None, before) or chat.generating:
                await asyncio.sleep(0.5)
            answers.append(summarize(chat.turn.events).as_dict())
        print(json.dumps(answers))

asyncio.run(main())
"""


def _chat(
    model: str, n: int, env: dict[str, str], spec_type: str = "none", draft: str = "", temp: float = 0.0
) -> tuple[float, float]:
    """The chat app (headless, the side panel updating) answering three times, a new chat
    each time, as a user asks one question after another: the medians."""
    out = subprocess.run(
        [sys.executable, "-c", CHAT, model, str(n), PROMPT, spec_type, draft, str(temp)],
        capture_output=True,
        text=True,
        check=True,
        env=_clean_env() | env,
    )
    answers = json.loads(out.stdout.strip().splitlines()[-1])
    return (
        statistics.median(a["tok_per_s"] for a in answers),
        statistics.median(a["overhead_ms_per_round"] for a in answers),
    )


def _clean_env() -> dict[str, str]:
    """The user's environment without OpenMP settings: each case sets its own."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--models", default="smollm2-135m-instruct-q4_1,qwen2.5-coder-1.5b-instruct-q4_k_m")
    ap.add_argument("--env", action="append", default=[], help="an extra spectui variant, e.g. OMP_WAIT_POLICY=ACTIVE")
    ap.add_argument("--chat", action="store_true", help="also the chat app, headless, per variant")
    ap.add_argument("--temp", type=float, default=0.0, help="sampling temperature (default 0: greedy)")
    args = ap.parse_args()
    from spectui.config.embedded import resolve_model

    variants = {"": {}}
    for item in args.env:
        key, _, value = item.partition("=")
        variants[f" {item}"] = {key: value}
    for model in args.models.split(","):
        path = str(resolve_model(model))
        results: dict[str, list] = {}
        for run in range(args.runs):
            for name, env in variants.items():
                results.setdefault(f"spectui run{name or ' (default env)'}", []).append(
                    _spectui(model, args.n, env, temp=args.temp, seed=run)
                )
                if args.chat:
                    results.setdefault(f"chat{name or ' (default env)'}", []).append(
                        _chat(model, args.n, env, temp=args.temp)
                    )
            results.setdefault("Llama.generate", []).append((_llama_generate(path, args.n, args.temp), None))
        bases = [r[0] for r in results["Llama.generate"]]
        how = f"temperature {args.temp}" if args.temp > 0 else "greedy"
        print(f"\n{model}: {args.n} tokens, {how}, median of {args.runs} interleaved runs (their range)")
        for name, rs in results.items():
            tps = [r[0] for r in rs]
            # each run against the Llama.generate run beside it: the ratio's own spread
            ratios = [r / b for r, b in zip(tps, bases, strict=True)] if len(tps) == len(bases) else []
            ratio = f"{statistics.median(ratios):5.2f}x ({min(ratios):.2f}-{max(ratios):.2f})" if ratios else ""
            over = [r[1] for r in rs if r[1] is not None]
            extra = f"   overhead {statistics.median(over):.2f} ms/round" if over else ""
            print(
                f"  {name:34} {statistics.median(tps):7.2f} tok/s ({min(tps):.1f}-{max(tps):.1f})"
                f"   {ratio} Llama.generate{extra}",
                flush=True,
            )


if __name__ == "__main__":
    main()
