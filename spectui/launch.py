"""From flags and a preset to a loaded Session: the one path chat, run and bench share.

Precedence: a flag given on the command line > the preset > the built-in defaults.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from spectui import presets
from spectui.embedded import CATALOG, resolve_model
from spectui.errors import UserError
from spectui.model import ContextParams
from spectui.sampling import SamplingParams
from spectui.spec_config import SpecConfig, parse_types

DEFAULTS = {
    "model": None, "model_draft": None, "n_gpu_layers": -1, "n_gpu_layers_draft": -1, "ctx_size": 4096, "batch_size": 512, "threads": 0,
    "flash_attn": "auto", "cache_type_k_draft": "f16", "cache_type_v_draft": "f16",
    "spec_type": "none", "spec_draft_n_max": 3, "spec_draft_n_min": 0, "spec_draft_p_min": 0.0,
    "spec_draft_sampling": "greedy", "spec_verify": "match", "n_predict": -1,
    "temp": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "seed": None, "system": None,
}


@dataclass
class Setup:
    """Resolved settings: `values` uses the flags' names (and is what a preset saves)."""

    preset: str
    values: dict
    notes: list[str] = field(default_factory=list)

    def __getattr__(self, key):
        try:
            return self.__dict__["values"][key]
        except KeyError:
            raise AttributeError(key) from None

    def spec(self) -> SpecConfig:
        return SpecConfig(
            types=parse_types(self.spec_type),
            draft_n_max=self.spec_draft_n_max, draft_n_min=self.spec_draft_n_min,
            draft_p_min=self.spec_draft_p_min, draft_sampling=self.spec_draft_sampling,
            verify=self.spec_verify,
        )

    def sampling(self) -> SamplingParams:
        return SamplingParams(temp=self.temp, top_k=self.top_k, top_p=self.top_p, min_p=self.min_p, seed=self.seed)

    def ctx_params(self, draft: bool = False) -> ContextParams:
        return ContextParams(
            n_ctx=self.ctx_size, n_batch=self.batch_size, n_threads=self.threads, flash_attn=self.flash_attn,
            type_k=self.cache_type_k_draft if draft else "f16", type_v=self.cache_type_v_draft if draft else "f16",
        )


def resolve(args: argparse.Namespace) -> Setup:
    preset = presets.load(getattr(args, "preset", None) or "default")
    keys = presets.setup_keys()
    # `is`, not `in`: 0 == False, and --temp 0 is a value.
    flags = {k: v for k, v in vars(args).items() if k in keys and v is not None and v is not False}
    values = DEFAULTS | preset.values
    notes = []
    if "model" in flags and "model_draft" not in flags and values.get("model_draft"):
        # The preset's draft belongs to the preset's target, not to the one given.
        values["model_draft"] = None
        if "spec_type" not in flags and "draft-simple" in values.get("spec_type", ""):
            values["spec_type"] = "ngram-mod"
            notes.append("no draft model given (-md): speculating with ngram-mod")
    values |= flags
    if values.pop("spec_default", False):
        values["spec_type"] = "ngram-mod"
    if not values.get("model"):
        raise UserError(f"preset '{preset.name}' names no target model; pass -m FILE")
    setup = Setup(preset.name, values, notes)
    setup.spec()  # validate now: bad flags fail before any model loads
    return setup


def model_label(value: str | None) -> str:
    if not value:
        return "-"
    return value if value in CATALOG else Path(value).name


def open_session(setup: Setup, status: Callable[[str], None] = lambda s: None, console=None):
    """Assemble embedded models if needed, load target and draft, build the Session."""
    from spectui.engine import Session
    from spectui.model import Model, check_draft_architecture

    target_path = resolve_model(setup.model, console)
    draft_path = resolve_model(setup.model_draft, console) if setup.model_draft else None
    if draft_path is not None:
        check_draft_architecture(draft_path)  # before the slow target load
    status(f"loading target {target_path.name}")
    target = Model(target_path, n_gpu_layers=setup.n_gpu_layers)
    draft = None
    if draft_path is not None:
        status(f"loading draft {draft_path.name}")
        draft = Model(draft_path, n_gpu_layers=setup.n_gpu_layers_draft)
    status("creating contexts")
    return Session(target, draft, setup.ctx_params(), setup.ctx_params(draft=True), setup.spec(), setup.sampling())
