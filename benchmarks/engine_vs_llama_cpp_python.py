"""Engine overhead and speed against llama-cpp-python's own generation, same model,
prompt, threads and output length. Prints numbers; asserts nothing.

    python benchmarks/engine_vs_llama_cpp_python.py [-m MODEL] [-n 128] [--repeat 3]

- overhead: time per round outside llama.cpp's decode calls (t_other, plus the draft
  time of n-gram drafters) as a share of decode time, for `none` and `ngram-simple`;
- `none` vs `Llama.create_completion` (greedy);
- `ngram-simple` vs `Llama(draft_model=LlamaPromptLookupDecoding())` on a rewrite prompt.
"""

from __future__ import annotations

import argparse
import statistics
import time

from spectui.config.embedded import DEFAULT_TARGET, resolve_model
from spectui.engine.events import Round, TurnEnd
from spectui.engine.interface import GenerationLimits
from spectui.engine.session import Session
from spectui.llama.context_params import ContextParams
from spectui.llama.model import Model
from spectui.llama.runtime import default_threads
from spectui.llama.sampling import SamplingParams
from spectui.spec_config import SpecConfig

CODE = "\n".join(
    f"def handler_{i}(request):\n    value = request.get('field_{i}')\n    if value is None:\n"
    f"        raise ValueError('missing field_{i}')\n    return {{'field_{i}': value, 'ok': True}}\n"
    for i in range(6)
)
PROMPTS = {
    "qa": "Explain in a few paragraphs how a hash map handles collisions.",
    "rewrite": "Rename every 'request' to 'req' in this code and show the whole code:\n```python\n" + CODE + "```",
}


def spectui_run(session: Session, text: str, spec: SpecConfig, n: int):
    session.reset()
    session.configure(spec)
    t0 = time.perf_counter()
    events = list(
        session.generate(
            messages=[{"role": "user", "content": text}], limits=GenerationLimits(n_predict=n, ignore_eos=True)
        )
    )
    wall = time.perf_counter() - t0
    rounds = [e for e in events if isinstance(e, Round)]
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.n_generated == n, end
    decode = sum(r.t_verify for r in rounds)
    outside = sum(r.t_other for r in rounds)
    if spec.types[0].startswith("ngram"):
        outside += sum(r.t_draft for r in rounds)  # n-gram drafting is pure Python: engine time
    return wall, n / wall, outside / decode


def llama_cpp_python_run(llm, prompt_tokens: list[int], n: int):
    llm.reset()
    t0 = time.perf_counter()
    count = 0
    for _ in llm.generate(prompt_tokens, temp=0.0, top_k=1, reset=True):
        count += 1
        if count == n:
            break
    wall = time.perf_counter() - t0
    return wall, n / wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-m", "--model", default=DEFAULT_TARGET)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from llama_cpp import Llama
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    path = resolve_model(args.model)
    threads = default_threads()
    target = Model(path)
    session = Session(target, None, ContextParams(n_ctx=4096, n_threads=threads), sampling=SamplingParams(temp=0.0))
    print(f"model {path.name}, threads {threads}, {args.n} tokens, median of {args.repeat}")
    llm = Llama(str(path), n_ctx=4096, n_threads=threads, n_threads_batch=threads, verbose=False)
    llm_pld = Llama(
        str(path),
        n_ctx=4096,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
        logits_all=True,
        draft_model=LlamaPromptLookupDecoding(max_ngram_size=3, num_pred_tokens=10),
    )
    rows = []
    for name, text in PROMPTS.items():
        tokens = target.tokenize_chat([{"role": "user", "content": text}])
        cases = {
            "spectui none": lambda: spectui_run(session, text, SpecConfig(), args.n),
            "llama-cpp-python generate": lambda: llama_cpp_python_run(llm, tokens, args.n),
            "spectui ngram-simple": lambda: spectui_run(
                session, text, SpecConfig(types=("ngram-simple",), draft_n_max=16), args.n
            ),
            "spectui ngram-mod": lambda: spectui_run(
                session, text, SpecConfig(types=("ngram-mod",), draft_n_max=16), args.n
            ),
            "llama-cpp-python PromptLookup": lambda: llama_cpp_python_run(llm_pld, tokens, args.n),
        }
        for case, fn in cases.items():
            fn()  # warm-up
            results = [fn() for _ in range(args.repeat)]
            tps = statistics.median(r[1] for r in results)
            overhead = statistics.median(r[2] for r in results) if len(results[0]) > 2 else None
            rows.append((name, case, tps, overhead))
            print(
                f"{name:8} {case:32} {tps:7.2f} tok/s"
                + (f"   engine overhead {overhead:.2%} of decode" if overhead is not None else ""),
                flush=True,
            )


if __name__ == "__main__":
    main()
