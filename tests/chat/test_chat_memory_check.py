"""The memory check before a pair loads (chat/memory_check.py, chat/loading.py): a pair that does not
fit is refused before any weight is read, with what would fit; one that fits says so on the
loading line; where the platform cannot project, the load goes on. The picker says it of
each draft, memoised; the chat's start refuses a pair that does not fit in one line."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Input

from spectui.chat import loading, memory_check
from spectui.chat.memory_check import PickerFit
from spectui.chat.state import ChatState
from spectui.chat.switcher import SetupSwitcher
from spectui.chat.updates import Load, SwitchFailed
from spectui.cli import chat as chat_command
from spectui.config.assembly import TextReport
from spectui.errors import UserError
from spectui.launch import opening
from spectui.plan import memory_projection
from spectui.plan.memory_projection import Device, MemoryProjection, Part
from spectui.store import chat_types
from spectui.tui.app import SpecApp
from tests.cli_helpers import Loaded, refused, run_cli
from tests.fake_session import FakeSession
from tests.tui_helpers import palette_offers, sync, until

pytestmark = pytest.mark.usefixtures("dirs")
MIB = 2**20
T = Path("/models/target.gguf")
D = Path("/models/draft.gguf")


def projected(free_mib: int, draft: Path | None = D) -> MemoryProjection:
    """A pair at -c 8192 on a CPU with `free_mib` free: 2.32 GiB with the draft."""
    part = Part(400 * MIB, 96 * MIB, 300 * MIB) if draft else None
    device = Device("CPU", "", Part(1060 * MIB, 224 * MIB, 300 * MIB), part, free_mib * MIB, "MemAvailable")
    proj = MemoryProjection(T, draft, 8192, -1, -1, {"-ctkd": "f16", "-ctvd": "f16"}, (device,), [])
    if not proj.fits:
        proj.suggestions.extend(memory_projection.suggest(proj, (28, 24)))
    return proj


def on_files(setup):
    return replace(setup, model=str(T), model_draft=str(D))


def load(setup, project, monkeypatch, fitted=None, opened: list | None = None):
    """load_session with the models' load stubbed: (what the loading line said, the setups opened)."""
    said: list[str] = []
    opened = [] if opened is None else opened
    monkeypatch.setattr(loading, "open_session", lambda s, **kw: opened.append(s) or FakeSession(spec=s.spec))
    monkeypatch.setattr(loading, "collect", lambda *a, **kw: {})
    loading.load_session(setup, None, said.append, TextReport(io.StringIO()), fitted, project)
    return said, opened


def test_a_pair_is_projected_where_its_files_or_memory_settings_change(setup):
    assert memory_check.needs_check(setup, None)
    assert not memory_check.needs_check(setup, setup)
    assert not memory_check.needs_check(replace(setup, temp=0.3, n_predict=9), setup)  # sampling takes no memory
    for change in ({"ctx_size": 8192}, {"model_draft": None}, {"cache_type_k_draft": "q8_0"}, {"batch_size": 64}):
        assert memory_check.needs_check(replace(setup, **change), setup), change
    assert not memory_check.needs_check(replace(setup, server="http://127.0.0.1:8080", model=None), None)


def test_a_pair_that_does_not_fit_is_refused_before_it_loads(setup, monkeypatch):
    opened: list = []
    with pytest.raises(UserError) as e:
        load(on_files(setup), lambda *a: (projected(2340), None), monkeypatch, opened=opened)
    head, *rest = str(e.value).splitlines()
    assert head == "At -c 8192: does not fit: needs 2.32 GiB, 2.29 GiB free RAM"
    assert rest[0] == "What would fit:" and rest[1].startswith("  -c 7168: ") and len(rest) >= 3
    assert opened == []  # refused before any weight is read


def test_a_pair_that_fits_says_so_then_loads(setup, monkeypatch):
    said, opened = load(on_files(setup), lambda *a: (projected(8000), None), monkeypatch)
    assert said == ["checking memory", "memory fits: 2.32 GiB of 7.81 GiB free RAM"]
    assert opened == [on_files(setup)]


def test_where_the_platform_cannot_project_the_pair_loads_as_before(setup, monkeypatch):
    said, opened = load(on_files(setup), lambda *a: (None, "not on this platform"), monkeypatch)
    assert said == ["checking memory"] and len(opened) == 1


def test_the_loaded_pair_at_the_same_settings_is_not_projected_again(setup, monkeypatch):
    said, opened = load(on_files(setup), lambda *a: pytest.fail("projected"), monkeypatch, fitted=on_files(setup))
    assert said == [] and len(opened) == 1


def test_the_switcher_names_the_setup_known_to_fit_and_a_refusal_keeps_the_pair(setup):
    updates: list = []
    state = ChatState(setup, updates.append, chat_types.new_chat("x"), None)
    switcher = SetupSwitcher(state)
    switcher.load(setup)
    assert updates[-1] == Load(setup, None, None)  # nothing loaded: projected
    switcher.load(setup, checked=True)
    assert updates[-1] == Load(setup, None, setup)  # the chat's start projected it
    switcher.session_loaded(FakeSession(spec=setup.spec), setup, {})
    switcher.switch_models("other.gguf", None)
    assert updates[-1] == Load(state.setup, ("other.gguf", None), state.setup)
    refusal = memory_check.refusal(projected(2340))
    switcher.session_failed(refusal)
    assert state.session is not None and updates[-1] == SwitchFailed(refusal)


def test_the_picker_projects_each_pair_once_per_memory_settings(setup, tmp_path):
    files = [tmp_path / "t.gguf", tmp_path / "d.gguf"]
    for f in files:
        f.write_bytes(b"GGUF")
    calls = []

    def project(s, target, draft):
        calls.append((target, draft, s.ctx_size))
        return projected(8000 if draft is None else 2340, draft), None

    picker = PickerFit(project)
    t, d = map(str, files)
    assert not picker.known(setup, t, [None, d])
    assert picker.said(setup, t, None) == "fits: 1.55 GiB of 7.81 GiB free RAM"
    assert picker.said(setup, t, d) == "✗ does not fit: needs 2.32 GiB, 2.29 GiB free RAM"
    assert picker.known(setup, t, [None, d]) and picker.said(setup, t, d).startswith("✗")
    assert len(calls) == 2  # memoised
    assert not picker.known(replace(setup, ctx_size=8192), t, [None])
    assert picker.said(setup, t, str(tmp_path / "gone.gguf")) is None  # nothing to project: the load says why
    picker.project = lambda *a: (_ for _ in ()).throw(UserError("cannot load model"))
    assert picker.said(replace(setup, ctx_size=1024), t, None) is None


def test_the_chat_start_refuses_a_pair_that_does_not_fit_in_one_line(monkeypatch):
    started = []
    monkeypatch.setattr(chat_command, "has_terminal", lambda: True)
    monkeypatch.setattr(opening, "checked_models", lambda *a, **kw: (T, D))
    monkeypatch.setattr(memory_projection, "for_setup", lambda *a: (projected(2340), None))
    err = refused("chat", "--preset", "smollm2", match="target.gguf + draft.gguf at -c 8192: does not fit: needs 2.32")
    assert "what would fit: -c 7168" in err
    monkeypatch.setattr(memory_projection, "for_setup", lambda *a: (projected(8000), None))

    def run(app):
        started.append(app.fit_checked)
        raise Loaded

    monkeypatch.setattr(SpecApp, "run_reporting", run)
    assert run_cli("chat", "--preset", "smollm2", reached=Loaded).returncode == 0
    assert started == [True]  # the app's first load does not project it again


@pytest.mark.model
def test_smollm2_is_refused_where_its_projection_exceeds_free_memory(setup, monkeypatch):
    """llama.cpp's real projection of the SmolLM2 pair, against 64 MiB free and then this machine's."""
    monkeypatch.setattr(memory_projection, "_mem_available", lambda: 64 * MIB)
    with pytest.raises(UserError, match=r"At -c 4096: does not fit: needs \d+ MiB, 64 MiB free RAM\nWhat would fit:"):
        load(setup, memory_projection.for_setup, monkeypatch)
    monkeypatch.undo()
    said, opened = load(setup, memory_projection.for_setup, monkeypatch)
    assert said[0] == "checking memory" and said[1].startswith("memory fits: ") and len(opened) == 1


@sync
async def test_the_draft_picker_says_which_pairs_fit(fake, setup):
    app = SpecApp(setup, session=fake)
    app.picker_fit.project = lambda s, target, draft: (projected(8000 if draft is None else 2340, draft), None)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.run_action("switch_models")
        await pilot.press(*"SmolLM2")
        await until(pilot, lambda: palette_offers(app, "SmolLM2"))
        await pilot.press("enter")
        await until(
            pilot, lambda: isinstance(app.screen, CommandPalette) and "Draft" in app.screen.query_one(Input).placeholder
        )
        options = app.screen.query_one(CommandList)
        await until(pilot, lambda: options.option_count >= 3)
        rows = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert any("No draft model" in r and "fits: 1.55 GiB of 7.81 GiB free RAM" in r for r in rows)
        assert any(r.startswith("SmolLM2") and "✗ does not fit: needs 2.32 GiB" in r for r in rows), rows


def test_the_verdict_names_the_tightest_device_or_each_short_one():
    gpu = Device("CUDA0", "H100", Part(900 * MIB, 100 * MIB, 24 * MIB), None, 2048 * MIB, "NVML")
    cpu = Device("CPU", "", Part(100 * MIB, 0, 0), None, 8192 * MIB, "MemAvailable")
    proj = MemoryProjection(T, None, 4096, -1, -1, {}, (gpu, cpu), [])
    assert proj.verdict() == "fits: 1.00 GiB of 2.00 GiB free on CUDA0"
    short = replace(proj, devices=(replace(gpu, free=512 * MIB), cpu))
    assert short.verdict() == "does not fit: needs 1.00 GiB, 512 MiB free on CUDA0"
    unknown = replace(proj, devices=(replace(gpu, free=None), replace(cpu, free=None)))
    assert unknown.verdict() == "needs 1.10 GiB; free memory unknown"
