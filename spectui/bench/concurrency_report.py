"""A concurrency result's cells and lines, its Markdown report and CSV rows; the screen
(cli/bench_concurrency.py) draws the same cells."""

from __future__ import annotations

from spectui.bench.report import environment_line, figure, stopped
from spectui.words import plural


def _noise(r: dict, key: str) -> str:
    """The spread over the passes, as the verdict's noise is."""
    s = r[f"{key}_spread"]
    return "" if s is None else f" +-{s:.0%}"


def _pair(r: dict, p50: str, p95: str, spec: str, scale: float = 1.0) -> str:
    return f"{figure(r[p50], spec, scale)}/{figure(r[p95], spec, scale)}"


def _drafts(r: dict) -> str:
    if not r["drafted_per_request"]:
        return "-"
    return f"{r['accepted_per_request']:.1f}/{r['drafted_per_request']:.1f} ({figure(r['acceptance_rate'], '.0%')})"


def _server_drafts(r: dict) -> str:
    """The server's own counters over the level (--metrics), where it has them."""
    c = r["server_counters"]
    if not c or not c["drafted"]:
        return "-"
    return f"{c['accepted']}/{c['drafted']} ({figure(c['acceptance'], '.0%')})"


def _busy(r: dict) -> str:
    """The server's busy slots per decode over the level: how full its batches ran."""
    return figure((r["server_counters"] or {}).get("busy_slots_per_decode"), ".2f")


def _per_pos(r: dict) -> str:
    """The server's acceptance at each draft position over the level."""
    rates = (r["server_counters"] or {}).get("per_pos_rates") or []
    return "/".join(f"{x:.0%}" for x in rates) or "-"


# Two column sets, so each screen table fits 80 columns; the Markdown table has them all.
KEY_COLUMNS = (
    ("conc.", lambda r: str(r["level"])),
    ("server", lambda r: r["server"]),  # a level short of its passes: the partial line says where it stopped
)
SPEED_COLUMNS = KEY_COLUMNS + (
    ("agg. tok/s", lambda r: figure(r["agg_tok_per_s"], ".1f") + _noise(r, "agg_tok_per_s")),
    ("req. tok/s p50/p95", lambda r: _pair(r, "req_tok_per_s_p50", "req_tok_per_s_p95", ".1f")),
    ("TTFT p50/p95 ms", lambda r: _pair(r, "ttft_p50_s", "ttft_p95_s", ".0f", 1000)),
    ("ITL p50/p95 ms", lambda r: _pair(r, "itl_p50_s", "itl_p95_s", ".0f", 1000)),
)
DRAFT_COLUMNS = KEY_COLUMNS + (
    ("accepted/drafted per request", _drafts),
    ("server acc./drafted", _server_drafts),
    ("busy slots", _busy),
)
GENERATION = ("gen. tok/s", lambda r: figure(r["gen_tok_per_s"], ".1f") + _noise(r, "gen_tok_per_s"))
PER_POSITION = ("server acc. per position", _per_pos)
COLUMNS = SPEED_COLUMNS[:3] + (GENERATION,) + SPEED_COLUMNS[3:] + DRAFT_COLUMNS[2:] + (PER_POSITION,)


def protocol_line(doc: dict) -> str:
    p = doc["protocol"]
    eos = "EOS respected" if not p["ignore_eos"] else "EOS ignored"
    levels = ", ".join(str(c) for c in p["levels"])
    return (
        f"concurrency {levels}: {p['repeat']} pass{'es' * (p['repeat'] != 1)} (+{p['warmup']} warm-up), "
        f"{p['n_predict']} tokens per request ({eos}), temperature {p['temp']}; "
        f"prompts: {'the shipped set' if p['prompts'] == 'shipped' else p['prompts']}, rotated"
    )


def server_lines(doc: dict) -> list[str]:
    return [f"{s['label']}: {s['url']}, {s['model']}, {plural(s['total_slots'], 'slot')}" for s in doc["servers"]]


def markdown(doc: dict) -> str:
    out = ["# spectui bench --concurrency" + (" (partial)" if doc["partial"] else ""), ""]
    out += [f"- {line}" for line in environment_line(doc["environment"]).splitlines()]
    out += [f"- server {line}" for line in server_lines(doc)]
    out += [
        f"- started {doc['started']}, {doc['duration_s']:.0f} s",
        f"- {protocol_line(doc)}",
        f"- statistics: {doc['protocol']['statistics']}",
        "",
        "| " + " | ".join(name for name, _ in COLUMNS) + " |",
        "|" + "|".join("---:" if i != 1 else "---" for i in range(len(COLUMNS))) + "|",
    ]
    out += ["| " + " | ".join(cell(r) for _, cell in COLUMNS) + " |" for r in doc["results"]]
    out += ["", f"**Verdict**: {doc['verdict']['summary']}.", ""]
    if doc["partial"]:
        out += [f"**Partial result**: {stopped(doc)}.", ""]
    out += [f"- warning: {w}" for w in doc["warnings"]]
    return "\n".join(out).rstrip() + "\n"


def csv_rows(doc: dict) -> list[dict]:
    """One flat row per (level, server); the server's counters become server_* columns."""
    return [
        {k: v for k, v in r.items() if k not in ("repeats", "server_counters")}
        | {f"server_{k}": v for k, v in (r["server_counters"] or {}).items() if not isinstance(v, (list, dict))}
        for r in doc["results"]
    ]
