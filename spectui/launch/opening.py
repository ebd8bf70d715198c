"""From a Setup to a running session: models loaded (embedded ones assembled first) and the
Session built, or llama-servers connected; the one path for chat, run, bench and the TUI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from spectui.config.assembly import Report
from spectui.config.embedded import resolve_model
from spectui.config.setup import Setup
from spectui.engine.interface import ChatSession
from spectui.llama import draft_fit
from spectui.spec_types import DRAFT_SIMPLE


def checked_models(
    setup: Setup, report: Report | None = None, types: tuple[str, ...] | None = None, vocabularies: bool = True
) -> tuple[Path, Path | None]:
    """The target's and the draft's files, checked before the slow loads (the chat checks
    them before its app opens): GGUF files whole, the draft fits the target and the spec
    types, and (`vocabularies`) a plain draft shares the target's vocabulary (read without
    the weights)."""
    from spectui.llama.compat import check_compatible
    from spectui.llama.model import Model

    assert setup.model is not None, "resolve() requires a target model without --server"
    target_path = resolve_model(setup.model, report)
    draft_path = resolve_model(setup.model_draft, report) if setup.model_draft else None
    draft_header = draft_fit.read_header(draft_path) if draft_path else None
    draft_fit.check(draft_fit.read_header(target_path), draft_header, types or setup.spec.types)
    if vocabularies and draft_path is not None and draft_header is not None and draft_header.draft_type == DRAFT_SIMPLE:
        vocabs = [Model(p, vocab_only=True) for p in (target_path, draft_path)]
        try:
            check_compatible(*vocabs)
        finally:
            for m in vocabs:
                m.close()
    return target_path, draft_path


def open_session(
    setup: Setup,
    status: Callable[[str], object] = lambda s: None,
    report: Report | None = None,
    types: tuple[str, ...] | None = None,
) -> ChatSession:
    """Assemble embedded models if needed, load target and draft, build the Session; or,
    with `server`, connect to that llama-server (it runs the models and the speculation).
    `types`: every spec type the session will be asked to run (default: the setup's)."""
    from spectui.engine.session import Session
    from spectui.llama.model import Model

    if setup.server:
        from spectui.engine.server import connect

        status(f"connecting to {setup.server}")
        return connect(setup.server, setup.sampling(), setup.spec.draft_n_max)

    target_path, draft_path = checked_models(setup, report, types)

    def loading(what: str, path: Path):
        """status() at each tenth of the load llama.cpp reports."""
        status(f"loading {what} {path.name}")
        shown = [0]

        def progress(fraction: float) -> None:
            if int(fraction * 10) > shown[0]:
                shown[0] = int(fraction * 10)
                status(f"loading {what} {path.name} {shown[0] * 10}%")

        return progress

    target = Model(target_path, n_gpu_layers=setup.n_gpu_layers, progress=loading("target", target_path))
    draft = None
    if draft_path is not None:
        draft = Model(draft_path, n_gpu_layers=setup.n_gpu_layers_draft, progress=loading("draft", draft_path))
    status("creating contexts")
    return Session(
        target, draft, setup.ctx_params(), setup.ctx_params(draft=True), setup.spec, setup.sampling(), owns_models=True
    )
