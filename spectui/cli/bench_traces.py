"""`spectui bench --trace DIR`: one trace per run, for spectui replay to show why a
configuration was slow."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from spectui.config.paths import private_dir
from spectui.engine.events import TurnEnd, TurnStart
from spectui.errors import UserError
from spectui.trace import format as trace_format


def folder(name: str) -> Path:
    """--trace's folder, made private; one that cannot be is a UserError before the bench runs."""
    path = Path(name).expanduser()
    try:
        private_dir(path)
    except OSError as e:
        raise UserError(f"--trace needs a folder; cannot use {name}: {e.strerror or e}") from e
    return path


class RunTraces:
    """One trace per run, written when the run ends: pass-<n> (or warmup)-<configuration>-<prompt>.jsonl."""

    def __init__(self, folder: Path, environment: dict, setup):
        self.folder, self.environment, self.setup = folder, environment, setup
        self.events: list = []
        self.written = 0

    def add(self, cfg, prompt, repeat: int, event) -> None:
        if isinstance(event, TurnStart):
            self.events = []
        self.events.append(event)
        if not isinstance(event, TurnEnd):
            return
        run = "warmup" if repeat < 0 else f"pass{repeat + 1}"
        label = f"{cfg.label} · {prompt.id} · {run}"
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{run}-{cfg.label}-{prompt.id}") + ".jsonl"
        head = trace_format.header("spectui bench", self.environment, replace(self.setup, spec=cfg.spec).values())
        trace_format.Trace(head, [trace_format.TraceTurn(prompt.text, self.events, label=label)]).write(
            self.folder / name
        )
        self.written += 1
