"""From a preset and overrides to a Setup, and from a Setup to a loaded Session: the one
path chat, run, bench and the TUI's preset switch share.

Precedence: an override (a flag given on the command line) > the preset > the defaults.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable

from spectui.config import presets
from spectui.config.embedded import CATALOG, resolve_model, user_path
from spectui.config.setup import OPTIONS, Setup
from spectui.engine import draft_fit
from spectui.errors import UserError


def resolve(preset: str | None, overrides: dict) -> Setup:
    """The preset (default: "default") with `overrides` (option name -> value) on top.

    A target given without a draft drops the preset's draft, which belongs to the preset's
    target; a draft-simple preset then speculates with ngram-mod instead (and says so).
    """
    chosen = presets.load(preset or "default")
    unknown = set(overrides) - set(OPTIONS)
    if unknown:
        raise ValueError(f"not setup options: {', '.join(sorted(unknown))}")
    values = dict(chosen.values)
    notes = []
    if "model" in overrides and "model_draft" not in overrides and values.get("model_draft"):
        values["model_draft"] = None
        if "spec_type" not in overrides and "draft-simple" in values.get("spec_type", ""):
            values["spec_type"] = "ngram-mod"
            notes.append("no draft model given (-md): speculating with ngram-mod")
    values |= overrides
    draft = overrides.get("model_draft")
    if draft and "spec_type" not in overrides and "draft-simple" in values.get("spec_type", "") \
            and user_path(draft).is_file():
        # as llama.cpp does without --spec-type: a hidden-state draft says what it drafts with
        kind = draft_fit.read_header(user_path(draft)).draft_type
        if kind != "draft-simple":
            values["spec_type"] = values["spec_type"].replace("draft-simple", kind)
            notes.append(f"{Path(draft).name} is a {kind} draft: speculating with {kind}")
    if values.get("server"):
        notes += [f"--server: the server's models and speculation are used; {flag} ignored"
                  for key, flag in (("model", "-m"), ("model_draft", "-md"), ("spec_type", "--spec-type"))
                  if key in overrides]
    elif not values.get("model"):
        raise UserError(f"preset '{chosen.name}' names no target model; pass -m FILE")
    setup = Setup(**values, preset=chosen.name, notes=tuple(notes))
    spec = setup.spec()  # validate now: bad flags fail before any model loads
    setup.ctx_params()
    if "model_draft" in overrides and not spec.uses_draft_model:
        setup = replace(setup, model_draft=None, notes=setup.notes + (
            f"the draft model (-md) is unused with --spec-type {spec.label}: not loading it",))
    return setup


def model_label(value: str | None) -> str:
    if not value:
        return "-"
    return value if value in CATALOG else Path(value).name


def open_session(setup: Setup, status: Callable[[str], None] = lambda s: None, console=None,
                 types: tuple[str, ...] | None = None):
    """Assemble embedded models if needed, load target and draft, build the Session; or,
    with `server`, connect to that llama-server (it runs the models and the speculation).
    `types`: every spec type the session will be asked to run (default: the setup's)."""
    from spectui.engine.model import Model
    from spectui.engine.session import Session

    if setup.server:
        from spectui.engine.server import connect

        status(f"connecting to {setup.server}")
        return connect(setup.server, setup.sampling(), setup.spec_draft_n_max)

    target_path = resolve_model(setup.model, console)
    draft_path = resolve_model(setup.model_draft, console) if setup.model_draft else None
    # before the slow loads: does the draft fit the target and the spec types?
    draft_fit.check(draft_fit.read_header(target_path),
                    draft_fit.read_header(draft_path) if draft_path else None, types or setup.spec().types)
    status(f"loading target {target_path.name}")
    target = Model(target_path, n_gpu_layers=setup.n_gpu_layers)
    draft = None
    if draft_path is not None:
        status(f"loading draft {draft_path.name}")
        draft = Model(draft_path, n_gpu_layers=setup.n_gpu_layers_draft)
    status("creating contexts")
    return Session(target, draft, setup.ctx_params(), setup.ctx_params(draft=True), setup.spec(), setup.sampling(),
                   owns_models=True)
