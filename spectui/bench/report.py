"""A result's cells and lines, and its JSON, CSV and Markdown files.

The screen (cli/bench_tables.py) and the Markdown file use the same cells, so the two never disagree.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

from spectui.bench.verdict import is_baseline
from spectui.errors import Failure
from spectui.llama.devices import record_text
from spectui.spec_config import types_label
from spectui.words import plural

MIB = 2**20


def figure(v, spec: str, scale: float = 1.0, unit: str = "") -> str:
    """A value in `spec` (times `scale`, then `unit`), "-" where it was not measured."""
    return "-" if v is None else f"{v * scale:{spec}}{unit}"


def _memory(r: dict) -> str:
    kind = "RSS" if r["memory_source"] == "rss" else "VRAM"  # gpu-process or gpu-total
    return f"{r['peak_memory_bytes'] / MIB:.0f} {kind}"


def _acceptance(r: dict) -> str:
    if is_baseline(r):
        return "-"
    return f"{r['n_accepted']}/{r['n_drafted']} ({figure(r['acceptance_rate'], '.0%')})"


def _config(r: dict) -> str:
    return r["config"] + ("" if r["complete"] else " (partial)")


# Three column sets, so each screen table fits 80 columns; the Markdown table has them all.
COLUMNS = (
    ("config", _config),
    ("tok/s", lambda r: figure(r["tok_per_s"], ".1f")),
    ("speedup", lambda r: "base" if is_baseline(r) else figure(r["speedup"], ".2f", unit="x")),
    ("accepted / drafted", _acceptance),
    ("mean acc. len", lambda r: "-" if is_baseline(r) else figure(r["mean_acceptance_length"], ".2f")),
    ("TTFT", lambda r: figure(r["ttft_s"], ".0f", 1000, " ms")),
)
DETAIL_COLUMNS = (
    ("config", _config),
    ("request p50/p95 (s)", lambda r: f"{figure(r['latency_p50_s'], '.2f')}/{figure(r['latency_p95_s'], '.2f')}"),
    ("ITL p50/p95 (ms)", lambda r: f"{figure(r['itl_p50_s'], '.0f', 1000)}/{figure(r['itl_p95_s'], '.0f', 1000)}"),
    ("overhead/round", lambda r: figure(r.get("overhead_ms_per_round"), ".2f", unit=" ms")),
)
OUTPUT_COLUMNS = (
    ("config", _config),
    ("peak MiB", _memory),
    ("same as base", lambda r: "-" if is_baseline(r) else figure(r["identical_share"], ".0%")),
    ("1st diff", lambda r: "-" if r["first_divergence"] is None else str(r["first_divergence"])),
)
ALL_COLUMNS = COLUMNS + DETAIL_COLUMNS[1:] + OUTPUT_COLUMNS[1:]


def groups(doc: dict) -> list[str]:
    return list(dict.fromkeys(r["group"] for r in doc["results"]))


def title(doc: dict, group: str) -> str:
    p = doc["protocol"]
    n = sum(1 for q in doc["prompts"] if f"{q['lang']}/{q['category']}" == group)
    eos = "EOS respected" if not p["ignore_eos"] else "EOS ignored"
    return (
        f"{group}: {plural(n, 'prompt')} x {plural(p['repeat'], 'run')} (+{p['warmup']} warm-up), "
        f"{p['n_predict']} tokens ({eos}), temperature {p['temp']}"
    )


def environment_line(env: dict) -> str:
    if "server" in env:
        srv = env["server"]
        return (
            f"llama-server {srv['url']} (build {srv['build_info']}): {env['models']['target']['file']} "
            f"({srv['model_ftype']}), speculation {types_label(srv['spec_types'])}, n_ctx {srv['n_ctx']}\n"
            f"client: {env['cpu']}, spectui {env['spectui']}; {env['os']}"
        )
    models = " | ".join(
        f"{role} {m['file']} ({m['quant']}, {m['size_bytes'] / MIB:.0f} MiB, "
        f"sha256 {m['sha256'][:12]} {m['sha256_source']})"
        for role, m in env["models"].items()
    )
    gpus = ", ".join(record_text(g) for g in env["gpus"]) or "no GPU"
    build = env["llama_cpp"]
    return (
        f"{models}\nllama.cpp {build['version']} (libllama {build['libllama_sha256']}), "
        f"llama-cpp-python {env['llama_cpp_python']}, spectui {env['spectui']}\n"
        f"{env['cpu']}, threads {env['threads']}{_openmp(env)}, {gpus}; n_ctx {env['n_ctx']}, "
        f"n_batch {env['n_batch']}; {env['os']}"
    )


def _openmp(env: dict) -> str:
    """The OpenMP settings that were set (results written before they were recorded have none)."""
    omp = env.get("openmp") or {}
    set_ = [f"{k}={v}" for k, v in omp.items() if k.isupper() and v is not None]
    return f" ({', '.join(set_)}, chosen by {omp['chosen_by']})" if set_ else ""


def _share(v: float | None) -> str:
    return figure(v, ".0%") if v is None or v == 0 or v >= 0.005 else "<1%"


def auto_line(r: dict) -> str:
    """An auto row's choices and what they cost, in one line (screen and Markdown alike)."""
    a = r["auto"]
    shares = a["rounds_share"]
    model = f" ({', '.join(a['draft_model_types'])})" if a["draft_model_types"] else ""
    line = (
        f"{r['config']}: rounds drafted by n-gram {_share(shares['ngram'])}, by the draft model{model} "
        f"{_share(shares['draft_model'])}, by neither {_share(shares['none'])} "
        f"(declined as not paying {_share(a.get('declined_share'))}); n-gram drafted "
        f"{plural(a['drafted']['ngram'], 'token')}, {a['accepted']['ngram']} accepted; of generation time, "
        f"probes {_share(a['probe_share'])} ({plural(a['n_probes'], 'round')}), "
        f"catch-ups {_share(a['catchup_share'])}"
    )
    vs = a["vs_best_fixed"]
    if vs is None:
        return line + "; no fixed type in this run to compare with"
    return (
        f"{line}; vs the best fixed type, {vs['config']} at {vs['tok_per_s']:.1f} tok/s: "
        f"{vs['gain_tok_per_s']:+.1f} tok/s ({figure(vs['ratio'], '.2f', unit='x')})"
    )


def auto_lines(doc: dict, group: str) -> list[str]:
    return [auto_line(r) for r in doc["results"] if r["group"] == group and "auto" in r]


def inspect_line(r: dict) -> str:
    """--inspect: a configuration's rejections in one line (screen and Markdown alike)."""
    ins = r["inspect"]
    if not ins["rejections"]:
        return f"{r['config']}: no draft token rejected"
    return (
        f"{r['config']}: {plural(ins['rejections'], 'rejection')}, near-ties {_share(ins['near_tie_share'])}, "
        f"confident draft errors {_share(ins['confident_error_share'])}, "
        f"median p of rejected draft tokens {ins['median_rejected_p']:.3f}"
    )


def inspect_lines(doc: dict, group: str) -> list[str]:
    return [inspect_line(r) for r in doc["results"] if r["group"] == group and r.get("inspect")]


MARKS = {True: "[!]", False: "[ok]", None: "[n/a]"}  # a cause flagged, not, or not measurable


def verdict_head(v: dict) -> str:
    return f"verdict ({v['group']}): best {v['best']}; {v['summary']}"


def verdict_marks(v: dict) -> list[tuple[str, str, bool | None]]:
    """(mark, text, flagged) under a verdict's head: what this machine's costs predicted for
    each configuration against what was measured, then the causes."""
    return [(MARKS[p["flagged"]], p["detail"], p["flagged"]) for p in v.get("predictions", [])] + [
        (MARKS[c["flagged"]], f"{c['cause']}: {c['detail']}", c["flagged"]) for c in v["causes"]
    ]


def _verdict_lines(v: dict) -> list[str]:
    return [verdict_head(v)] + [f"  {mark} {text}" for mark, text, _ in verdict_marks(v)]


def stopped(doc: dict) -> str:
    return f"{'failed' if doc['failed'] else 'interrupted'} ({doc['interrupted']})"


LANGS = {"ko": "Korean", "en": "English", "all": "every language"}


def run_line(doc: dict) -> str:
    """What ran: the models, the preset the other settings came from, and which prompts."""
    p, setup = doc["protocol"], doc["setup"]
    local = "server" not in doc["environment"]  # a server's models are its own, not the preset's
    models = " + ".join(m for m in (setup.get("model"), setup.get("model_draft")) if m and local)
    prompts = "the shipped prompts" if p["prompts"] == "shipped" else p["prompts"]
    lang = LANGS.get(p["lang"], p["lang"])
    other = " (--lang all for both)" if p["prompts"] == "shipped" and p["lang"] != "all" else ""
    return (
        f"models {models or 'of the server'}, other settings from preset {setup['preset']}; "
        f"{prompts}: {lang}{other}, category {p['category']}, {plural(p['repeat'], 'repeat')}"
    )


def markdown(doc: dict) -> str:
    p = doc["protocol"]
    out = ["# spectui bench" + (" (partial)" if doc["partial"] else ""), ""]
    out += [f"- {line}" for line in environment_line(doc["environment"]).splitlines()]
    out += [
        f"- started {doc['started']}, {doc['duration_s']:.0f} s",
        f"- {run_line(doc)}",
        f"- llama.cpp system info: `{doc['environment']['llama_cpp']['system_info']}`",
        f"- medians: {p['median']}",
        "",
    ]
    verdicts = {v["group"]: v for v in doc["verdicts"]}
    for group in groups(doc):
        out += [
            f"## {title(doc, group)}",
            "",
            "| " + " | ".join(name for name, _ in ALL_COLUMNS) + " |",
            "|" + "|".join("---" if name == "config" else "---:" for name, _ in ALL_COLUMNS) + "|",
        ]
        out += [
            "| " + " | ".join(cell(r) for _, cell in ALL_COLUMNS) + " |" for r in doc["results"] if r["group"] == group
        ]
        auto = auto_lines(doc, group) + inspect_lines(doc, group)
        if auto:
            out += [""] + [f"- {line}" for line in auto]
        if group in verdicts:
            out += [""] + [f"- {line.strip()}" for line in _verdict_lines(verdicts[group])]
        out.append("")
    if doc["partial"]:
        out += [f"**Partial result**: {stopped(doc)}.", ""]
    out += [f"- warning: {w}" for w in doc["warnings"]]
    return "\n".join(out).rstrip() + "\n"


CSV_SKIP = ("per_position", "divergence", "step", "auto", "inspect")


def _auto_columns(a: dict | None) -> dict:
    """auto_* columns of an auto row (empty in the others' rows)."""
    if a is None:
        return {}
    vs = a["vs_best_fixed"] or {}
    return {
        **{f"auto_rounds_{k}": v for k, v in a["rounds_share"].items()},
        "auto_declined_share": a["declined_share"],
        **{f"auto_drafted_{k}": v for k, v in a["drafted"].items()},
        **{f"auto_accepted_{k}": v for k, v in a["accepted"].items()},
        "auto_n_probes": a["n_probes"],
        "auto_probe_share": a["probe_share"],
        "auto_catchup_share": a["catchup_share"],
        "auto_best_fixed": vs.get("config"),
        "auto_vs_best_fixed_tok_per_s": vs.get("gain_tok_per_s"),
        "auto_vs_best_fixed_ratio": vs.get("ratio"),
    }


def csv_rows(doc: dict) -> list[dict]:
    """One flat row per (config, group); the step timings become step_* columns, auto's
    breakdown auto_* columns."""
    return [
        {k: v for k, v in r.items() if k not in CSV_SKIP}
        | {f"step_{k}": v for k, v in r["step"].items()}
        | _auto_columns(r.get("auto"))
        | {f"inspect_{k}": v for k, v in (r.get("inspect") or {}).items()}
        for r in doc["results"]
    ]


def write(
    doc: dict,
    json_path: str | None,
    csv_path: str | None,
    md_path: str | None,
    as_markdown: Callable[[dict], str] | None = None,
    as_rows: Callable[[dict], list[dict]] | None = None,
) -> list[str]:
    """Write the requested files; returns the paths written. `as_markdown` and `as_rows`:
    another document's report and CSV rows (the concurrency bench's), else this module's."""
    written = []
    for path, kind in ((json_path, "json"), (csv_path, "csv"), (md_path, "md")):
        if not path:
            continue
        try:
            with open(path, "w", encoding="utf-8", newline="" if kind == "csv" else None) as f:
                if kind == "json":
                    json.dump(doc, f, ensure_ascii=False, indent=1)
                elif kind == "md":
                    f.write((as_markdown or markdown)(doc))
                else:
                    rows = (as_rows or csv_rows)(doc)
                    fields = list(dict.fromkeys(k for row in rows for k in row)) or ["config", "group"]
                    w = csv.DictWriter(f, fieldnames=fields)
                    w.writeheader()
                    w.writerows(rows)
        except OSError as e:  # checked before measuring (config.paths.writable): the disk filled since
            raise Failure(f"cannot write {path}: {e.strerror}") from e
        written.append(str(Path(path)))
    return written
