"""`spectui bench compare A.json B.json`: what changed between two results.

Rows are matched by configuration label and group; deltas are B - A (tok/s and TTFT also
as a percentage of A). Differences in environment and protocol are listed too: a delta
across builds or settings is only meaningful when you know what else changed.
"""

from __future__ import annotations

from typing import Any

# (result key, show as percentage change too)
DELTA_KEYS = (("tok_per_s", True), ("speedup", False), ("acceptance_rate", False), ("ttft_s", True))


def _delta(a: float | None, b: float | None, relative: bool) -> dict:
    d = None if a is None or b is None else b - a
    return {"a": a, "b": b, "delta": d, "pct": d / a if relative and d is not None and a else None}


def diff(a: dict, b: dict) -> list[dict]:
    """Per (config, group) present in both: the deltas of DELTA_KEYS; rows in only one file
    are listed with `only` set to "a" or "b"."""
    ka = {(r["config"], r["group"]): r for r in a["results"]}
    kb = {(r["config"], r["group"]): r for r in b["results"]}
    out = []
    for key in list(ka) + [k for k in kb if k not in ka]:
        row = {"config": key[0], "group": key[1], "only": None}
        if key not in kb or key not in ka:
            row["only"] = "a" if key in ka else "b"
        else:
            row |= {k: _delta(ka[key][k], kb[key][k], rel) for k, rel in DELTA_KEYS}
        out.append(row)
    return out


def _flat(d: dict, prefix: str = "") -> dict:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out |= _flat(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


def settings_diff(a: dict, b: dict) -> list[tuple[str, object, object]]:
    """(key, value in A, value in B) for every environment or protocol entry that differs."""
    out = []
    for section in ("environment", "protocol"):
        fa, fb = _flat(a[section]), _flat(b[section])
        out += [
            (f"{section}.{k}", fa.get(k), fb.get(k)) for k in sorted(fa.keys() | fb.keys()) if fa.get(k) != fb.get(k)
        ]
    return out


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def _cell(d: dict, spec: str, scale: float = 1.0, change=None) -> str:
    """ "A->B" in the column's unit, then the change: as a percentage of A where it has one,
    else as `change(B - A)`."""
    if d["a"] is None and d["b"] is None:
        return "-"
    a, b = (None if v is None else v * scale for v in (d["a"], d["b"]))
    text = f"{_fmt(a, spec)}->{_fmt(b, spec)}"
    if d["pct"] is not None:
        text += f" {d['pct']:+.1%}"
    elif d["delta"] is not None and change:
        text += f" ({change(d['delta'])})"
    return text


COLUMNS = ("config", "tok/s", "speedup", "acceptance", "TTFT ms")


def row_cells(r: dict) -> tuple[str, ...]:
    """One configuration's cells under COLUMNS: its A->B values and change."""
    if r["only"]:
        return (r["config"], f"only in {r['only'].upper()}", "", "", "")
    return (
        r["config"],
        _cell(r["tok_per_s"], ".1f"),
        _cell(r["speedup"], ".2f", change=lambda x: f"{x:+.2f}"),
        _cell(r["acceptance_rate"], ".0%", change=lambda x: f"{x * 100:+.0f} pts"),
        _cell(r["ttft_s"], ".0f", 1000),
    )
