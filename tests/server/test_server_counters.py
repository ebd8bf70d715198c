"""A real llama-server's own counters (all slots, `--metrics`) as spectui reads them, and the
one line it says where a server does not speculate (llama.cpp #25345: -md without
--spec-type) or gives no counters. SmolLM2 drafts for itself, two slots."""

from __future__ import annotations

import pytest

from spectui.engine.events import Round
from spectui.engine.server import ServerSession, server_wide
from spectui.engine.server_metrics import NO_METRICS, not_speculating
from tests.helpers.events import events_of
from tests.helpers.processes import spectui
from tests.helpers.prompts import PROMPT
from tests.server.llama_server import GREEDY, Server


@pytest.mark.model
def test_the_servers_counters_add_up_over_an_answer(server_bin, smol_path):  # noqa: F811
    server = Server(
        server_bin,
        smol_path,
        "-np",
        "2",
        "-md",
        str(smol_path),
        "--spec-type",
        "draft-simple",
        "--spec-draft-n-max",
        "3",
    )
    try:
        session = ServerSession(server.url, GREEDY)
        assert session.info.n_slots == 2 and session.slots() is not None
        before = session.counters()
        assert before is not None and not session.counters_note
        rounds_drafted = sum(e.n_drafted for e in events_of(session, n=32) if isinstance(e, Round))
        after = session.counters()
        assert after is not None
        c = after.minus(before)
        assert c.drafted == rounds_drafted > 0 and c.drafts > 0
        assert sum(c.accepted_per_pos) == c.accepted and len(c.per_pos_rates) == 3  # --spec-draft-n-max 3
        [wide] = server_wide(session)
        assert wide.counters == c and wide.notes == ()  # since connecting: this one answer
        assert session.status().server == wide
    finally:
        server.stop()


@pytest.mark.model
def test_a_draft_without_spec_type_and_a_server_without_metrics_are_each_said_once(server_bin, smol_path):  # noqa: F811
    server = Server(server_bin, smol_path, "-md", str(smol_path), metrics=False)
    try:
        session = ServerSession(server.url, GREEDY)
        assert session.spec.label == "none" and session.counters() is None
        assert not any(slot["speculative"] for slot in session.slots() or [])
        r = spectui("run", "--server", server.url, "--temp", "0", "-n", "8", PROMPT)
        assert r.returncode == 0, r.stderr
        idle = not_speculating(server.url, ("none",))
        assert idle is not None and "--spec-type" in idle and "#25345" in idle
        lines = [line for line in r.stderr.splitlines() if line.startswith("note: ")]
        assert lines == [f"note: {idle}", f"note: {NO_METRICS.format(url=server.url)}"]
    finally:
        server.stop()
