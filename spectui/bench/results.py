"""From measured runs to the result document (schema "spectui-bench/1") and back.

What each number is (also in `spectui bench --help`), per configuration and per
language/category group ("ko/qa"):

* per-run numbers come from engine.stats.summarize() over the run's events;
* a prompt's value is the MEDIAN OF ITS --repeat MEASURED RUNS (warm-ups never count);
* the group's value is the MEDIAN OVER ITS PROMPTS of those per-prompt medians. This holds
  for tok/s (generation and end-to-end), TTFT, prompt time, inter-token latency p50/p95
  and per-round latency p50/p95 (each run's own percentiles);
* accepted / drafted, acceptance rate, mean acceptance length and per-position acceptance
  are pooled over every measured round of the group (llama.cpp's totals);
* request latency p50 / p95 are percentiles (linear) over every measured run of the group;
* peak memory is the largest sample; speedup is the group's median tok/s over the
  baseline's median tok/s for the same group in the same result;
* greedy agreement compares each prompt's first measured run with the baseline's first
  measured run of the same prompt, token id by token id;
* an auto configuration's row also has "auto" (only it): pooled over every measured round
  of the group, the share of rounds drafted by an n-gram type, by the draft model (or
  hidden-state head) and by neither, and of those by neither the share auto declined (a draft
  to make, none expected to pay at the costs it measured); its probes' drafting and its draft cache's catch-ups
  as shares of generation time; and its tok/s against the fastest fixed type of the group
  (any configuration but the baseline and auto), named.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path

from spectui.bench.protocol import BASELINE, Config, Measurement, Run
from spectui.bench.verdict import verdicts
from spectui.bounded import DATA_BYTES, loads_json, read_bytes
from spectui.engine import auto
from spectui.engine.events import Round
from spectui.engine.noise import spread
from spectui.engine.stats import (
    acceptance,
    first_divergence,
    mean_acceptance_length,
    p50_p95,
    per_position_acceptance,
    speedup,
)
from spectui.engine.verdicts import summary_dict
from spectui.errors import UserError
from spectui.spec_config import AUTO, NGRAM_TYPES

SCHEMA = "spectui-bench/1"
MEDIAN_NOTE = (
    "per prompt: median of the --repeat measured runs (warm-up excluded); per group: median over "
    "the prompts of those medians (tok/s, TTFT, prompt time, ITL and round p50/p95); acceptance "
    "counts and rates pooled over all measured rounds; request latency p50/p95 over all measured runs"
)
# Per-run numbers that are reduced by median-of-medians.
MEDIAN_METRICS = (
    "tok_per_s",
    "tok_per_s_e2e",
    "ttft_s",
    "t_prompt_s",
    "itl_p50_s",
    "itl_p95_s",
    "round_p50_s",
    "round_p95_s",
    "overhead_ms_per_round",
    "n_generated",
)


def median(values: Iterable[float | None]) -> float | None:
    """Median of the defined values (None where a run could not define one); None if none."""
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _values(run: Run) -> dict:
    """The run's summary numbers plus its prompt-processing time."""
    return {**run.summary.as_dict(), "t_prompt_s": run.t_prompt_s}


def _first_runs(runs: list[Run]) -> dict[str, tuple[int, ...]]:
    """Each prompt's tokens from its first measured run."""
    out: dict[str, Run] = {}
    for r in runs:
        if r.prompt.id not in out or r.repeat < out[r.prompt.id].repeat:
            out[r.prompt.id] = r
    return {pid: r.tokens for pid, r in out.items()}


def _step(rounds: list) -> dict:
    """Round timings: a round that drafted nothing verified one token, so it is one target
    step; drafting rounds give the draft's cost per drafted token and the verify batch's."""
    single = [r for r in rounds if not r.n_drafted]
    drafting = [r for r in rounds if r.n_drafted]
    total = sum(r.t_draft + r.t_verify + r.t_other for r in rounds)
    return {
        "target_step_s": median(r.t_verify for r in single),
        "draft_token_s": median(r.t_draft / r.n_drafted for r in drafting),
        "verify_round_s": median(r.t_verify for r in drafting),
        "draft_len": statistics.fmean(r.n_drafted for r in drafting) if drafting else None,
        "drafting_round_tokens": mean_acceptance_length(drafting),  # tokens a drafting round yields
        "draft_share": sum(r.t_draft for r in rounds) / total if total > 0 else None,
        "draft_cost_ratio": None,  # set against the baseline's target step (see aggregate)
        "verify_cost_ratio": None,
    }


AUTO_SOURCES = ("ngram", "draft_model", "none")  # what drafted an auto round


def _auto_source(r: Round) -> str:
    if not r.n_drafted:
        return "none"
    return "ngram" if r.spec_type in NGRAM_TYPES else "draft_model"


def _auto(rounds: list[Round]) -> dict:
    """What auto chose and what finding out cost, so a loss can be traced to its choices.
    Probe time is the drafting of probe rounds (the draft model measured, not paying); a
    catch-up is the draft cache decoding the text it missed, where timed apart (Round.t_sync:
    a few tokens ride with the first draft step instead, in its drafting time)."""
    counts = dict.fromkeys(AUTO_SOURCES, 0)
    drafted = dict.fromkeys(AUTO_SOURCES[:2], 0)
    accepted = dict.fromkeys(AUTO_SOURCES[:2], 0)
    for r in rounds:
        src = _auto_source(r)
        counts[src] += 1
        if src in drafted:  # it drafted
            drafted[src] += r.n_drafted
            accepted[src] += r.n_accepted
    # rounds with a draft to make that auto judged would not pay
    declined = sum(1 for r in rounds if not r.n_drafted and r.note.endswith(auto.NOTHING_PAYS))
    total = sum(r.t_draft + r.t_verify + r.t_other for r in rounds)
    probes = [r for r in rounds if r.probe]
    probe_s = sum(r.t_draft - r.t_sync for r in probes)
    catchup_s = sum(r.t_sync for r in rounds)
    return {
        "n_rounds": len(rounds),
        "rounds_share": {k: n / len(rounds) if rounds else None for k, n in counts.items()},
        "draft_model_types": sorted({r.spec_type for r in rounds if _auto_source(r) == "draft_model" and r.spec_type}),
        "drafted": drafted,
        "accepted": accepted,
        "declined_share": declined / len(rounds) if rounds else None,
        "n_probes": len(probes),
        "generation_s": total,
        "probe_s": probe_s,
        "catchup_s": catchup_s,
        "probe_share": probe_s / total if total > 0 else None,
        "catchup_share": catchup_s / total if total > 0 else None,
        "vs_best_fixed": None,  # set once the group's other rows exist (see aggregate)
    }


def _against_best_fixed(rows: list[dict]) -> None:
    """Each auto row against the fastest fixed configuration of its group: a spec type chosen
    once (not the baseline, not auto), so a loss is measured against what auto could have
    picked for the whole run. No fixed configuration in the group: no comparison (None)."""
    for row in rows:
        if "auto" not in row or row["tok_per_s"] is None:
            continue
        fixed = [
            r
            for r in rows
            if r["group"] == row["group"]
            and "auto" not in r
            and r["spec_type"] != BASELINE
            and r["tok_per_s"] is not None
        ]
        if fixed:
            best = max(fixed, key=lambda r: r["tok_per_s"])
            row["auto"]["vs_best_fixed"] = {
                "config": best["config"],
                "tok_per_s": best["tok_per_s"],
                "gain_tok_per_s": row["tok_per_s"] - best["tok_per_s"],
                "ratio": speedup(row["tok_per_s"], best["tok_per_s"]),
            }


def _row(cfg: Config, group: str, runs: list[Run], n_prompts: int, repeat: int) -> dict:
    by_prompt: dict[str, list[dict]] = {}
    for r in runs:
        by_prompt.setdefault(r.prompt.id, []).append(_values(r))
    per_prompt = {m: [median(v[m] for v in vs) for vs in by_prompt.values()] for m in MEDIAN_METRICS}
    rounds = [rd for r in runs for rd in r.rounds]
    n_acc, n_drafted, rate = acceptance(rounds)
    latencies = [r.latency_s for r in runs]
    p50, p95 = p50_p95(latencies)
    peak = max(runs, key=lambda r: r.memory.used).memory
    fractions = [r.memory.gpu_fraction for r in runs if r.memory.gpu_fraction is not None]
    lang, category = group.split("/", 1)
    return {
        "config": cfg.label,
        "spec_type": cfg.spec.label,
        "n_max": cfg.n_max,
        "group": group,
        "lang": lang,
        "category": category,
        "n_prompts": len(by_prompt),
        "n_runs": len(runs),
        "complete": len(by_prompt) == n_prompts and all(len(rs) == repeat for rs in by_prompt.values()),
        **{m: median(per_prompt[m]) for m in MEDIAN_METRICS},
        "tok_per_s_spread": median(spread(v["tok_per_s"] or None for v in rs) for rs in by_prompt.values()),
        "speedup": None,
        "speedup_e2e": None,
        "latency_p50_s": p50,
        "latency_p95_s": p95,
        "n_accepted": n_acc,
        "n_drafted": n_drafted,
        "acceptance_rate": rate,
        "mean_acceptance_length": mean_acceptance_length(rounds),
        "per_position": per_position_acceptance(rounds),
        "peak_memory_bytes": peak.used,
        "memory_source": peak.source,
        "gpu_fraction": max(fractions) if fractions else None,
        "identical_share": None,
        "first_divergence": None,
        "divergence": {},
        "step": _step(rounds),
        **({"auto": _auto(rounds)} if cfg.spec.types == (AUTO,) else {}),
        "inspect": _inspect(rounds),
    }


def _inspect(rounds: list[Round]) -> dict | None:
    """--inspect: why drafts were rejected (engine/verdicts.py); None when nothing was inspected."""
    if not any(r.verdicts for r in rounds):
        return None
    out = summary_dict(rounds)
    n = out["rejections"]
    out["near_tie_share"] = out["near_ties"] / n if n else None
    out["confident_error_share"] = out["confident_errors"] / n if n else None
    return out


def _against_baseline(row: dict, base: dict, runs: list[Run], base_runs: list[Run]) -> None:
    """Speedup, step-cost ratios and greedy agreement relative to the baseline row."""
    row["speedup"] = speedup(row["tok_per_s"], base["tok_per_s"])
    row["speedup_e2e"] = speedup(row["tok_per_s_e2e"], base["tok_per_s_e2e"])
    step = base["step"]["target_step_s"]
    if step:
        for key, num in (("draft_cost_ratio", "draft_token_s"), ("verify_cost_ratio", "verify_round_s")):
            if row["step"][num] is not None:
                row["step"][key] = row["step"][num] / step
    firsts, mine = _first_runs(base_runs), _first_runs(runs)
    common = [p for p in mine if p in firsts]
    if common:
        row["divergence"] = {p: first_divergence(mine[p], firsts[p]) for p in common}
        diverged = [d for d in row["divergence"].values() if d is not None]
        row["identical_share"] = (len(common) - len(diverged)) / len(common)
        row["first_divergence"] = min(diverged) if diverged else None


def aggregate(runs: list[Run], configs: list[Config], n_prompts: dict[str, int], repeat: int) -> list[dict]:
    """One row per (configuration, group) that has measured runs, in configuration order.

    `n_prompts` is how many prompts each group has, to tell complete rows from partial ones.
    """
    rows: list[dict] = []
    baseline: dict[str, tuple[dict, list[Run]]] = {}
    for cfg in configs:
        for group in n_prompts:
            rs = [r for r in runs if r.config == cfg.label and r.prompt.group == group]
            if not rs:
                continue
            row = _row(cfg, group, rs, n_prompts[group], repeat)
            if cfg.is_baseline:
                baseline[group] = (row, rs)
            elif group in baseline:
                _against_baseline(row, baseline[group][0], rs, baseline[group][1])
            rows.append(row)
    _against_best_fixed(rows)
    return rows


def run_record(run: Run) -> dict:
    return {
        "config": run.config,
        "prompt": run.prompt.id,
        "group": run.prompt.group,
        "repeat": run.repeat,
        "n_prompt": run.n_prompt,
        "n_generated": run.summary.n_generated,
        "stop_reason": run.stop_reason,
        "error": run.error or None,
        "latency_s": run.latency_s,
        "t_prompt_s": run.t_prompt_s,
        "memory_bytes": run.memory.used,
        "memory_source": run.memory.source,
        "tokens": list(run.tokens),
        "stats": run.summary.as_dict(),
    }


BUSY_LOAD = 1.0  # other processes' load average before the measurement that makes numbers noisy


def warnings(runs: list[Run], protocol: dict, environment: dict) -> list[str]:
    """What makes a comparison unfair: a busy machine, sampling, runs that did not produce
    the fixed length, errors."""
    out = []
    if protocol["temp"] > 0:
        out.append(
            f"temperature {protocol['temp']}: outputs are sampled, so they are not expected "
            "to match the baseline's token for token"
        )
    load = environment.get("load_average")
    if load is not None and load >= BUSY_LOAD:
        out.append(
            f"the machine was busy before the measurement (load average {load:.1f} on "
            f"{environment['cpu_count']} CPUs): other processes compete for the cores, expect noisy numbers"
        )
    for r in runs:
        if r.error:
            out.append(f"{r.config} {r.prompt.id} run {r.repeat + 1}: {r.error}")
        elif protocol["ignore_eos"] and r.summary.n_generated != protocol["n_predict"]:
            out.append(
                f"{r.config} {r.prompt.id} run {r.repeat + 1}: {r.summary.n_generated} tokens, "
                f"not {protocol['n_predict']} ({r.stop_reason})"
            )
    return out


def build(
    m: Measurement,
    configs: list[Config],
    prompts: list,
    protocol: dict,
    environment: dict,
    meta: dict,
    predicted: dict[tuple[str, str], dict] | None = None,
    unpredicted: str | None = None,
    cost_curve: dict | None = None,
) -> dict:
    """The whole result document: settings, environment, rows, verdicts, warnings, runs;
    with what this machine's cost curve (`cost_curve`) predicts per (group, configuration)."""
    groups: dict[str, int] = {}
    for p in prompts:
        groups[p.group] = groups.get(p.group, 0) + 1
    rows = aggregate(m.runs, configs, groups, protocol["repeat"])
    return {
        "schema": SCHEMA,
        "partial": m.partial,
        "interrupted": m.interrupted,
        "failed": m.failed,
        **meta,
        "protocol": {**protocol, "median": MEDIAN_NOTE},
        "environment": environment,
        "configs": [c.as_dict() for c in configs],
        "prompts": [p.as_dict() for p in prompts],
        "results": rows,
        "verdicts": verdicts(rows, protocol, environment, predicted, unpredicted),
        "cost_curve": cost_curve,
        "warnings": warnings(m.runs, protocol, environment),
        "runs": [run_record(r) for r in m.runs],
    }


def load(path: str | Path) -> dict:
    """A result file written by `spectui bench --json`, or a UserError saying why not."""
    path = Path(path)
    try:
        doc = loads_json(read_bytes(path, "bench result", DATA_BYTES))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{path} is not a spectui bench result: not JSON ({e})") from e
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise UserError(
            f'{path} is not a spectui bench result (expected "schema": "{SCHEMA}"; '
            "write one with spectui bench --json FILE)"
        )
    for key in ("results", "protocol", "environment"):
        if key not in doc:
            raise UserError(f"{path}: bench result without '{key}'")
    return doc
