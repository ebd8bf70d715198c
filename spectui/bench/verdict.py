"""Per group: the best configuration, whether speculation pays off on this machine, and
which of the known causes of slow-downs the measurements show.

A cause is `flagged` True or False when it was measured, None when this run cannot tell
(no GPU for VRAM pressure, no draft model for the tokenizer check). Thresholds are stated
here so a verdict can be argued with.
"""

from __future__ import annotations

from typing import Any

from spectui.bench.citation import cite
from spectui.engine.noise import LOSES, NOISE_FLOOR, PAYS, UNKNOWN, WITHIN, band, judge
from spectui.spec_config import AUTO, HIDDEN_STATE_TYPES, parse_types
from spectui.spec_types import BASELINE, DRAFT_SIMPLE, Spec
from spectui.words import plural

# The noise band (engine.noise) also holds an idle configuration's distance from the baseline.
DRAFT_COST_LIMIT = 0.2  # a drafted token costing >= 20% of a target step eats most of the gain
LOW_ACCEPTANCE = 0.5  # fewer than half of the drafted tokens accepted
CONFIDENT_ERRORS = 0.25  # --inspect: a quarter of the rejections were a sure draft the target gave < 0.1
VRAM_LIMIT = 0.9  # a GPU more than 90% full is close to spilling


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def _cause(cause: str, flagged: bool | None, value, detail: str) -> dict:
    return {"cause": cause, "flagged": flagged, "value": value, "detail": detail}


def _step_costs(row: dict, base: dict) -> list[dict]:
    st, target = row["step"], base["step"]["target_step_s"]
    ratio, verify = st["draft_cost_ratio"], st["verify_cost_ratio"]
    if ratio is None:
        draft = _cause("draft cost", None, None, "not measured: no drafting rounds or no baseline target step")
    else:
        draft = _cause(
            "draft cost",
            ratio >= DRAFT_COST_LIMIT,
            ratio,
            f"a drafted token costs {_ms(st['draft_token_s'])}, {ratio:.0%} of a target step "
            f"({_ms(target)}); drafting is {st['draft_share']:.0%} of generation time",
        )
    length = st["drafting_round_tokens"]
    if verify is None or length is None:
        check = _cause("verify cost", None, None, "not measured: no drafting rounds or no baseline target step")
    else:
        check = _cause(
            "verify cost",
            verify >= length,
            verify,
            f"verifying a draft of {st['draft_len']:.1f} tokens costs {verify:.2f} target steps "
            f"and yields {length:.2f} tokens; batching only pays when it is cheaper",
        )
    return [draft, check]


def _acceptance(row: dict) -> dict:
    rate = row["acceptance_rate"]
    if rate is None:
        return _cause("low acceptance", None, None, "nothing was drafted")
    return _cause(
        "low acceptance",
        rate < LOW_ACCEPTANCE,
        rate,
        f"{row['n_accepted']} of {row['n_drafted']} drafted tokens accepted ({rate:.0%}); "
        f"mean acceptance length {row['mean_acceptance_length']:.2f}",
    )


def _rejections(row: dict) -> dict:
    """--inspect's view of the rejections: near-ties are the target's own close calls, confident
    draft errors (q > 0.8, p < 0.1) a draft that does not know this text; flagged when a
    quarter of the rejections are those."""
    ins = row["inspect"]
    if not ins["rejections"]:
        return _cause("confident draft errors", None, None, "no draft token was rejected")
    share, n = ins["confident_error_share"], ins["rejections"]
    return _cause(
        "confident draft errors",
        share >= CONFIDENT_ERRORS,
        share,
        f"of {plural(n, 'rejection')}, {ins['near_tie_share']:.0%} near-ties (the target's top two within "
        f"0.1), {share:.0%} confident draft errors; median p of rejected draft tokens {ins['median_rejected_p']:.3f}",
    )


def _short_output(row: dict, base: dict, n_predict: int, noise: float) -> dict:
    """Extra time before the first token (the draft processes the prompt too) against time
    saved per generated token: how many tokens an answer needs to break even."""
    if None in (row["ttft_s"], base["ttft_s"], row["tok_per_s"], base["tok_per_s"]):
        return _cause("short outputs", None, None, "not measured: no baseline")
    extra = row["ttft_s"] - base["ttft_s"]
    saved = 1 / base["tok_per_s"] - 1 / row["tok_per_s"]
    ttft = f"time to first token {_ms(row['ttft_s'])} vs {_ms(base['ttft_s'])} without speculation"
    if row["speedup"] <= 1 + noise:
        return _cause(
            "short outputs", False, None, f"generation is not measurably faster, so length is not the issue; {ttft}"
        )
    if extra <= 0:
        return _cause("short outputs", False, 0, f"no extra cost before the first token; {ttft}")
    tokens = extra / saved
    return _cause(
        "short outputs",
        tokens > n_predict,
        tokens,
        f"{ttft}: speculation adds {_ms(extra)} up front and saves {_ms(saved)} per token, "
        f"so it breaks even after {tokens:.0f} tokens (answers here: {n_predict})",
    )


def row_types(row: dict) -> tuple[Spec, ...]:
    """A result row's spec types, read back from what it records ("spec_type": --spec-type's text)."""
    return parse_types(row["spec_type"])


def is_baseline(row: dict) -> bool:
    """The row every speedup in its group is measured against."""
    return row_types(row) == (BASELINE,)


def _temperature(protocol: dict) -> dict:
    temp = protocol["temp"]
    if temp <= 0:
        return _cause("high temperature", False, temp, "greedy (temperature 0): drafts are checked by argmax")
    return _cause(
        "high temperature", True, temp, f"temperature {temp}: sampling lowers acceptance (verify: {protocol['verify']})"
    )


def _uses_draft_model(row: dict, environment: dict) -> bool:
    """draft-simple always; auto when a draft model was loaded."""
    types = row_types(row)
    return DRAFT_SIMPLE in types or (AUTO in types and "draft" in environment.get("models", {}))


def _vram(row: dict, environment: dict) -> dict:
    if "server" in environment:
        return _cause(
            "VRAM pressure", None, None, "the models run on the llama-server: its memory is not visible from here"
        )
    if not environment["gpus"]:
        return _cause(
            "VRAM pressure",
            None,
            None,
            f"no GPU: the models run on the CPU (peak RSS {row['peak_memory_bytes'] / 2**20:.0f} MiB)",
        )
    if not environment["llama_cpp"]["gpu_offload"]:
        return _cause(
            "VRAM pressure",
            True,
            None,
            "llama.cpp was built without GPU support: everything runs on the CPU although a GPU is present",
        )
    offloaded = []
    roles = ("target", "draft") if _uses_draft_model(row, environment) else ("target",)
    for role in roles:
        model, ngl = environment["models"].get(role), environment[f"n_gpu_layers{'_draft' if role == 'draft' else ''}"]
        if model and 0 <= ngl <= model["n_layer"]:
            offloaded.append(f"{role} -ngl {ngl} of {model['n_layer'] + 1} layers")
    fraction = row["gpu_fraction"]
    full = fraction is not None and fraction > VRAM_LIMIT
    detail = f"GPU memory {fraction:.0%} used" if fraction is not None else "GPU memory unknown"
    if offloaded:
        detail += "; layers left on the CPU: " + ", ".join(offloaded)
    return _cause("VRAM pressure", full or bool(offloaded), fraction, detail)


def _tokenizer(row: dict, environment: dict) -> dict:
    if any(t in HIDDEN_STATE_TYPES for t in row_types(row)):
        return _cause(
            "tokenizer mismatch",
            False,
            None,
            "a hidden-state draft works in the target's vocabulary; its fit was checked from the GGUF headers",
        )
    if not _uses_draft_model(row, environment):
        return _cause("tokenizer mismatch", None, None, "no draft model (n-gram drafting uses the target's tokens)")
    return _cause("tokenizer mismatch", False, None, "draft and target vocabularies checked compatible at load")


def _judge(best: dict, base: dict, noise: float | None) -> tuple[str, str]:
    """engine.noise's word for the best configuration, and the summary that says it."""
    s, label = best["speedup"], best["config"]
    word = judge(s, noise).word
    if word == UNKNOWN:
        return word, (
            f"{label} is {s:.2f}x the baseline from one run per prompt: {UNKNOWN}, the noise is unknown "
            "(--repeat 3 or more to judge)"
        )
    if word == PAYS:
        return word, f"{label} is {s:.2f}x the baseline (noise +-{noise:.0%}): speculation {PAYS} here"
    if word == LOSES:
        return word, f"speculation {LOSES} here: the best, {label}, is {s:.2f}x the baseline (noise +-{noise:.0%})"
    return word, f"{WITHIN}, no measurable difference: {label} is {s:.2f}x the baseline (noise +-{noise:.0%})"


def idle_noise(rows: list[dict]) -> float:
    """A configuration that drafted nothing did the baseline's work: its distance from the
    baseline, in any group, measures this machine's noise directly."""
    return max((abs(r["speedup"] - 1) for r in rows if r["n_drafted"] == 0 and r["speedup"] is not None), default=0.0)


def _idle_note(idle: list[dict]) -> str:
    """The configurations that drafted nothing: the baseline's work, so their speeds are noise."""
    if not idle:
        return ""
    speeds = sorted({f"{r['speedup']:.2f}x" for r in idle})
    return (
        f"; {', '.join(r['config'] for r in idle)} drafted nothing (the baseline's work at "
        f"{'-'.join([speeds[0], speeds[-1]][: len(speeds)])}: noise)"
    )


def _causes(top: dict, base: dict, protocol: dict, environment: dict, noise: float) -> list[dict]:
    """Each known cause of a slow-down, measured on the best speculative configuration."""
    return _step_costs(top, base) + [
        _acceptance(top),
        *([_rejections(top)] if top.get("inspect") else []),
        _short_output(top, base, protocol["n_predict"], noise),
        _temperature(protocol),
        _vram(top, environment),
        _tokenizer(top, environment),
    ]


def verdict(
    group: str,
    rows: list[dict],
    protocol: dict,
    environment: dict,
    floor: float = NOISE_FLOOR,
    predicted: dict[tuple[str, str], dict] | None = None,
    unpredicted: str | None = None,
) -> dict:
    """Idle configurations (nothing drafted) can neither be the best nor pay off; `floor` is
    the smallest noise band (the idle configurations of every group widen it). `predicted`:
    (group, configuration) -> what this machine's costs predict (citation.cite), or
    `unpredicted`: why there is no prediction at all."""
    base = next((r for r in rows if is_baseline(r)), None)
    measured = [r for r in rows if r["tok_per_s"] is not None and (r is base or r["n_drafted"] > 0)]
    best = max(measured, key=lambda r: r["tok_per_s"], default=None)
    spec = [r for r in measured if r is not base and r["speedup"] is not None]
    idle = [r for r in rows if r is not base and r["n_drafted"] == 0 and r["speedup"] is not None]
    out: dict[str, Any] = {
        "group": group,
        "best": best and best["config"],
        "best_speculative": None,
        "speedup": None,
        "noise": None,
        "pays_off": UNKNOWN,  # engine.noise's word
        "summary": "",
        "causes": [],
        "predictions": [],
    }
    if base is None or not (spec or idle):
        out["summary"] = "cannot tell: the baseline and a speculative configuration were not both measured"
        return out
    # The noise comes from the repeats: with one run per prompt it is unknown.
    spreads = (r["tok_per_s_spread"] for r in [base] + spec)
    out["noise"] = noise = None if protocol["repeat"] < 2 else band(idle_noise(rows), *spreads, floor=floor)
    note = _idle_note(idle)
    if not spec:
        out["pays_off"], out["summary"] = LOSES, f"{LOSES}: nothing was drafted, so nothing can be gained" + note
        return out
    top = max(spec, key=lambda r: r["tok_per_s"])
    out["pays_off"], out["summary"] = _judge(top, base, noise)
    out["summary"] += note
    causes = _causes(top, base, protocol, environment, floor if noise is None else noise)
    flagged = [c["cause"] for c in causes if c["flagged"]]
    if flagged and out["pays_off"] != PAYS:
        out["summary"] += "; likely causes: " + ", ".join(flagged)
    if not (base["complete"] and top["complete"]):
        out["summary"] += " (partial: not every prompt and run was measured)"
    out.update(best_speculative=top["config"], speedup=top["speedup"], causes=causes)
    if unpredicted:
        out["predictions"] = [
            {"config": None, "flagged": None, "detail": f"no prediction from this machine's costs: {unpredicted}"}
        ]
    elif predicted:
        cited = [r for r in rows if (group, r["config"]) in predicted]
        out["predictions"] = [
            cite(r["config"], predicted[group, r["config"]], r["speedup"], noise, floor, base["tok_per_s"])
            for r in cited
        ]
    return out


def verdicts(
    rows: list[dict],
    protocol: dict,
    environment: dict,
    predicted: dict[tuple[str, str], dict] | None = None,
    unpredicted: str | None = None,
) -> list[dict]:
    groups = dict.fromkeys(r["group"] for r in rows)
    floor = max(NOISE_FLOOR, idle_noise(rows))
    return [
        verdict(g, [r for r in rows if r["group"] == g], protocol, environment, floor, predicted, unpredicted)
        for g in groups
    ]
