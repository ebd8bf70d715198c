"""From measured bursts to the result document (schema "spectui-bench-concurrency/1") and
its verdict: up to which concurrency speculation pays on this server, and the break-even.

Per burst (one level, one server, one pass): aggregate tok/s is the tokens of all its
requests over its wall time (the first request sent to the last chunk received);
generation tok/s is the sum of its requests' own tok/s (each from its first token to its
last, as llama.cpp's predicted_per_second): the server's decoding rate while they generate
together, without the prompts' processing that the aggregate includes;
per-request tok/s, TTFT p50/p95 are over its requests, ITL p50/p95 over all their tokens
(engine.stats' definition); drafted and accepted are per request (the server's
timings.draft_n and draft_n_accepted). Per level and server: the median over the passes of
each, with its spread, (max - min) / median over the passes (None under 2 passes).

Verdict, per level: speculation's median aggregate tok/s over the baseline's, judged
and worded by engine.noise (pays, loses, within noise); the noise is the larger spread of
the two (at least noise.NOISE_FLOOR; unknown with one pass, the floor assumed). A speculating
server that drafted nothing gets no verdict beyond saying so: it ran as plain decoding. The
break-even is where the ratio crosses 1, linearly between the levels around it; its range,
where ratio - noise and ratio + noise cross 1.
"""

from __future__ import annotations

from spectui.bench.concurrency import Burst, Measurement, Protocol
from spectui.bench.protocol import BASELINE
from spectui.bench.results import BUSY_LOAD, median
from spectui.engine.noise import LOSES, NOISE_FLOOR, PAYS, band, judge, spread
from spectui.engine.server_metrics import NOTHING_DRAFTED
from spectui.engine.stats import p50_p95
from spectui.words import plural

SCHEMA = "spectui-bench-concurrency/1"
STATISTICS = (
    "per burst (one level, one server, one pass): aggregate tok/s = tokens of all requests / wall "
    "time; generation tok/s = sum of the requests' own tok/s (first token to last); per-request "
    "tok/s, TTFT p50/p95 over its requests; ITL p50/p95 over their tokens; "
    "per level and server: median over the passes, spread = (max - min) / median"
)
# Per-burst numbers reduced to a median and a spread over the passes.
METRICS = (
    "agg_tok_per_s",
    "gen_tok_per_s",
    "req_tok_per_s_p50",
    "req_tok_per_s_p95",
    "ttft_p50_s",
    "ttft_p95_s",
    "itl_p50_s",
    "itl_p95_s",
    "drafted_per_request",
    "accepted_per_request",
)


def burst_stats(b: Burst) -> dict:
    reqs = b.requests
    tokens = sum(r.n_generated for r in reqs)
    drafted, accepted = sum(r.n_drafted for r in reqs), sum(r.n_accepted for r in reqs)
    speeds = [r.tok_per_s for r in reqs if r.tok_per_s is not None]
    speed = p50_p95(speeds)
    ttft = p50_p95([r.ttft_s for r in reqs if r.ttft_s is not None])
    itl = p50_p95([x for r in reqs for x in r.itl])
    wall = b.wall_s
    return {
        "repeat": b.repeat,
        "wall_s": wall,
        "n_tokens": tokens,
        "agg_tok_per_s": tokens / wall if wall > 0 else None,
        "gen_tok_per_s": sum(speeds) if len(speeds) == len(reqs) else None,
        "req_tok_per_s_p50": speed[0],
        "req_tok_per_s_p95": speed[1],
        "ttft_p50_s": ttft[0],
        "ttft_p95_s": ttft[1],
        "itl_p50_s": itl[0],
        "itl_p95_s": itl[1],
        "drafted_per_request": drafted / len(reqs),
        "accepted_per_request": accepted / len(reqs),
        "acceptance_rate": accepted / drafted if drafted else None,
        "server_counters": b.counters,
        "server_counters_note": b.counters_note,
    }


def _pooled_counters(bursts: list[dict]) -> dict | None:
    """The server's counters over the passes: counts summed, rates again from the sums; None
    without them (no --metrics), or where a pass's could not be true (no sum of the others
    passes for the level's)."""
    got = [b["server_counters"] for b in bursts if b["server_counters"]]
    if not got or any(b["server_counters_note"] for b in bursts):
        return None
    drafted, accepted, drafts = (sum(c[k] for c in got) for k in ("drafted", "accepted", "drafts"))
    n = max(len(c["accepted_per_pos"]) for c in got)
    per_pos = [sum(c["accepted_per_pos"][i] for c in got if i < len(c["accepted_per_pos"])) for i in range(n)]
    decodes = sum(c.get("decodes", 0) for c in got)
    busy = sum(c.get("busy_slots_per_decode", 0.0) * c.get("decodes", 0) for c in got)
    return {
        "drafted": drafted,
        "accepted": accepted,
        "drafts": drafts,
        "accepted_per_pos": per_pos,
        "acceptance": accepted / drafted if drafted else None,
        "per_pos_rates": [a / drafts for a in per_pos] if drafts else [],
        "rounded": any(c["rounded"] for c in got),
        "decodes": decodes,
        "busy_slots_per_decode": busy / decodes if decodes else None,
    }


def rows(m: Measurement, targets: list[tuple[str, str]], proto: Protocol) -> list[dict]:
    """One row per (level, server) with measured bursts, by level then in `targets`' order
    ((label, url) pairs)."""
    out = []
    for level in proto.levels:
        for label, url in targets:
            bursts = [burst_stats(b) for b in m.bursts if b.server == label and b.level == level]
            if not bursts:
                continue
            aggs = [b["agg_tok_per_s"] for b in bursts]
            drafted = sum(b["drafted_per_request"] for b in bursts)
            out.append(
                {
                    "level": level,
                    "server": label,
                    "url": url,
                    "n_repeats": len(bursts),
                    "complete": len(bursts) == proto.repeat,
                    **{k: median(b[k] for b in bursts) for k in METRICS},
                    **{f"{k}_spread": spread([b[k] for b in bursts]) for k in METRICS},
                    "agg_tok_per_s_min": min((a for a in aggs if a is not None), default=None),
                    "agg_tok_per_s_max": max((a for a in aggs if a is not None), default=None),
                    "acceptance_rate": sum(b["accepted_per_request"] for b in bursts) / drafted if drafted else None,
                    "server_counters": _pooled_counters(bursts),
                    "repeats": bursts,
                }
            )
    return out


def comparisons(results: list[dict], repeat: int) -> list[dict]:
    """Per level with both measured: speculation's aggregate tok/s over the baseline's."""
    out = []
    for level in dict.fromkeys(r["level"] for r in results):
        at = [r for r in results if r["level"] == level and r["agg_tok_per_s"] is not None]
        base = next((r for r in at if r["server"] == BASELINE), None)
        spec = next((r for r in at if r["server"] != BASELINE), None)
        if base is None or spec is None or not base["agg_tok_per_s"]:
            continue
        ratio = spec["agg_tok_per_s"] / base["agg_tok_per_s"]
        noise = band(base["agg_tok_per_s_spread"], spec["agg_tok_per_s_spread"]) or NOISE_FLOOR
        out.append(
            {
                "level": level,
                "server": spec["server"],
                "ratio": ratio,
                "change": ratio - 1,
                "noise": noise,
                "noise_known": repeat >= 2,
                "judgement": judge(ratio, noise).word,
            }
        )
    return out


def _crossing(levels: list[int], ratios: list[float]) -> float | None:
    """Where `ratios` first falls from >= 1 to < 1, linearly between levels; the first level
    if it starts below 1 (returned as 0.0: below it), None if it never does."""
    if ratios[0] < 1:
        return 0.0
    for (c0, r0), (c1, r1) in zip(zip(levels, ratios), zip(levels[1:], ratios[1:])):
        if r0 >= 1 > r1:
            return c0 + (r0 - 1) / (r0 - r1) * (c1 - c0)
    return None


def _at(c: float | None, levels: list[int]) -> str:
    return f"above {levels[-1]}" if c is None else f"below {levels[0]}" if c == 0 else f"{c:.1f}"


def break_even(cmp: list[dict]) -> dict:
    levels = [c["level"] for c in cmp]
    ratios = [c["ratio"] for c in cmp]
    mid = _crossing(levels, ratios)
    low = _crossing(levels, [r - c["noise"] for r, c in zip(ratios, cmp)])
    high = _crossing(levels, [r + c["noise"] for r, c in zip(ratios, cmp)])
    if mid is None:
        text = f"break-even above {_requests(levels[-1])}, the largest level measured"
    elif mid == 0:
        text = f"break-even below {_requests(levels[0])}, the lowest level measured"
    else:
        text = f"break-even at about {mid:.1f} concurrent requests"
    if (low, high) != (mid, mid):
        text += f" ({_at(low, levels)} to {_at(high, levels)} within the noise)"
    return {
        "concurrency": mid,
        "low": low,
        "high": high,
        "above_measured": mid is None,
        "below_measured": mid == 0,
        "text": text,
    }


def _phrase(c: dict, first: bool) -> str:
    what = " of aggregate tok/s" if first else ""
    return f"at {c['level']} {c['judgement']} ({c['change']:+.0%}{what}, noise +-{c['noise']:.0%})"


def _requests(n: int) -> str:
    return plural(n, "concurrent request")


def _drafted_nothing(results: list[dict]) -> str | None:
    """The speculating server's label where it drafted nothing at any level measured: plain
    decoding under another name, of which no verdict on speculation can be drawn."""
    spec = [r for r in results if r["server"] != BASELINE]
    if (
        not spec
        or len(spec) == len(results)
        or any(r["drafted_per_request"] or (r["server_counters"] or {}).get("drafted") for r in spec)
    ):
        return None
    return spec[0]["server"]


def verdict(results: list[dict], repeat: int) -> dict:
    if idle := _drafted_nothing(results):
        said = f"{idle} drafted nothing at any level, it ran as plain decoding: nothing to say of speculation"
        return {"levels": [], "break_even": None, "summary": f"{said} ({NOTHING_DRAFTED})"}
    cmp = comparisons(results, repeat)
    out: dict = {"levels": cmp, "break_even": None, "summary": ""}
    if not cmp:
        out["summary"] = "cannot tell: give two servers, one started with --spec-type none, and measure both at a level"
        return out
    leading = 0
    while leading < len(cmp) and cmp[leading]["judgement"] == PAYS:
        leading += 1
    if leading == len(cmp):
        head = f"speculation pays at every concurrency measured, up to {_requests(cmp[-1]['level'])}"
    elif leading:
        head = f"speculation pays up to {_requests(cmp[leading - 1]['level'])} on this server"
    elif cmp[0]["judgement"] == LOSES:
        head = f"speculation does not pay on this server, even at {_requests(cmp[0]['level'])}"
    else:
        head = f"speculation makes no measurable difference at {_requests(cmp[0]['level'])}"
    out["break_even"] = break_even(cmp)
    details = ", ".join(_phrase(c, i == 0) for i, c in enumerate(cmp))
    out["summary"] = f"{head}: {details}; {out['break_even']['text']}"
    if repeat < 2:
        out["summary"] += f" (one pass: the noise is unknown, {NOISE_FLOOR:.0%} assumed; --repeat 3 to measure it)"
    return out


def warnings(m: Measurement, proto: Protocol, temp: float, environment: dict) -> list[str]:
    """What makes the comparison unfair: sampling, a busy client, requests cut short."""
    out = []
    if temp > 0:
        out.append(f"temperature {temp}: outputs are sampled, so the servers' work differs")
    load = environment.get("load_average")
    if load is not None and load >= BUSY_LOAD:
        out.append(
            f"the client machine was busy before the measurement (load average {load:.1f}): "
            "its clock times the requests, expect noisy numbers"
        )
    for b in m.bursts:
        if b.counters_note:
            out.append(f"{b.server} at {b.level}, pass {b.repeat + 1}: {b.counters_note}")
        for r in b.requests:
            if proto.ignore_eos and r.n_generated != proto.n_predict:
                out.append(
                    f"{b.server} at {b.level}, pass {b.repeat + 1}, {r.prompt}: {r.n_generated} tokens, "
                    f"not {proto.n_predict} ({r.stop_reason})"
                )
    return out


def _request_record(r, t0: float) -> dict:
    itl = p50_p95(r.itl)
    return {
        "prompt": r.prompt,
        "start_s": r.start - t0,
        "end_s": r.end - t0,
        "n_generated": r.n_generated,
        "n_drafted": r.n_drafted,
        "n_accepted": r.n_accepted,
        "ttft_s": r.ttft_s,
        "tok_per_s": r.tok_per_s,
        "itl_p50_s": itl[0],
        "itl_p95_s": itl[1],
        "stop_reason": r.stop_reason,
        "error": r.error or None,
    }


def burst_record(b: Burst) -> dict:
    t0 = min(r.start for r in b.requests)
    return {
        "server": b.server,
        "level": b.level,
        "repeat": b.repeat,
        "wall_s": b.wall_s,
        "server_counters": b.counters,
        "server_counters_note": b.counters_note or None,
        "requests": [_request_record(r, t0) for r in b.requests],
    }


def build(
    m: Measurement,
    targets: list[dict],
    proto: Protocol,
    record: dict,
    prompts: list,
    environment: dict,
    meta: dict,
) -> dict:
    """The whole document: settings, environment, servers, rows, verdict, warnings, bursts.
    `targets`: per server its label, url, total_slots and model; `record`: the settings
    beside the protocol's (sampling, prompts)."""
    results = rows(m, [(t["label"], t["url"]) for t in targets], proto)
    return {
        "schema": SCHEMA,
        "partial": m.partial,
        "interrupted": m.interrupted,
        "failed": m.failed,
        **meta,
        "protocol": {
            "levels": list(proto.levels),
            "n_predict": proto.n_predict,
            "ignore_eos": proto.ignore_eos,
            "repeat": proto.repeat,
            "warmup": proto.warmup,
            "system": proto.system,
            **record,
            "statistics": STATISTICS,
        },
        "environment": environment,
        "servers": targets,
        "prompts": [p.as_dict() for p in prompts],
        "results": results,
        "verdict": verdict(results, proto.repeat),
        "warnings": warnings(m, proto, record.get("temp", 0.0), environment),
        "bursts": [burst_record(b) for b in m.bursts],
    }
