"""A llama-server's /metrics read into its speculation counters (model-free, on a capture of
the real server's text), and the one line saying a server does not speculate."""

from __future__ import annotations

import http.server
import json
import re
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from spectui.engine.server import ServerPool, ServerSession
from spectui.engine.server_metrics import (
    METRICS_BYTES,
    NEEDS_SPEC_TYPE,
    NO_METRICS,
    Impossible,
    ServerWide,
    SpecCounters,
    Watch,
    metrics_refused,
    not_speculating,
    parse_metrics,
)
from spectui.engine.server_wire import ServerInfo
from spectui.errors import UserError

CAPTURE = (Path(__file__).parents[1] / "data" / "server_metrics_draft.txt").read_text()
PER_POS = "llamacpp:spec_decode_num_accepted_tokens_per_pos_total"
URL = "http://127.0.0.1:8080"


def valued(text: str, counter: str, value: str) -> str:
    """The capture with llamacpp:spec_decode_num_<counter>_total set to `value`."""
    return re.sub(rf"(?m)^(llamacpp:spec_decode_num_{counter}_total) .*$", rf"\g<1> {value}", text)


def test_a_real_capture_reads_as_the_servers_counters():
    c = parse_metrics(CAPTURE)
    assert c is not None
    assert c.drafted > c.accepted > 0 and c.drafts > 0
    assert sum(c.accepted_per_pos) == c.accepted  # each accepted draft token counts at its position
    assert list(c.accepted_per_pos) == sorted(c.accepted_per_pos, reverse=True)  # later positions need the earlier
    assert c.per_pos_rates[0] == c.accepted_per_pos[0] / c.drafts
    assert c.acceptance == c.accepted / c.drafted and c.mean_accepted == 1 + c.accepted / c.drafts
    assert c.requests_processing == 0 and c.requests_deferred == 0 and not c.rounded


def test_minus_gives_the_counts_between_two_scrapes():
    later = parse_metrics(CAPTURE)
    assert later is not None
    earlier = SpecCounters(10, 6, 4, (3, 2), 1.0, 1, 0, decodes=later.decodes - 50)
    d = later.minus(earlier)
    assert (d.drafted, d.accepted, d.drafts) == (later.drafted - 10, later.accepted - 6, later.drafts - 4)
    assert (
        d.accepted_per_pos
        == (later.accepted_per_pos[0] - 3, later.accepted_per_pos[1] - 2) + later.accepted_per_pos[2:]
    )
    # averaged since the server's start: the interval's busy slots over its own 50 decodes
    busy = (later.busy_slots_per_decode * later.decodes - 1.0 * (later.decodes - 50)) / 50
    assert d.decodes == 50 and d.busy_slots_per_decode == pytest.approx(busy)
    assert later.minus(later).acceptance is None and later.minus(later).per_pos_rates == ()


@pytest.mark.parametrize(
    "earlier, says",
    [
        (SpecCounters(9840, 5920, 3000, (3000,), 1.0, 0, 0, decodes=10), "draft_tokens_total went down from 9840"),
        # only n_decode_total down: not a restart (that resets every counter), a server that cannot be
        (SpecCounters(0, 0, 0, (), 1.0, 0, 0, decodes=10**6), "n_decode_total went down"),
        (SpecCounters(100, 100, 90, (100,), 1.0, 0, 0, decodes=0), "per_pos_total went down"),
    ],
)
def test_counters_that_go_down_between_scrapes_are_named_not_counted(earlier, says):
    later = parse_metrics(CAPTURE)
    assert later is not None
    with pytest.raises(Impossible, match=says):
        later.minus(earlier)


def test_an_interval_with_more_accepted_than_drafted_is_named():
    later = SpecCounters(40, 90, 30, (30,), 1.0, 0, 0)  # each scrape alone could be true
    earlier = SpecCounters(0, 0, 0, (), 1.0, 0, 0)
    with pytest.raises(Impossible, match="90 draft tokens accepted of 40 drafted"):
        later.minus(earlier)


@pytest.mark.parametrize(
    "text, says",
    [
        (valued(valued(CAPTURE, "draft_tokens", "40"), "accepted_tokens", "90"), "90 draft tokens accepted of 40"),
        (valued(CAPTURE, "drafts", "7"), "60 drafts accepted at one position of 7 drafts"),
        (valued(CAPTURE, "draft_tokens", "1e300"), r"a counter is 1e\+300, past what a server counts"),
    ],
)
def test_counters_that_cannot_be_true_are_an_error_not_figures(text, says):
    with pytest.raises(UserError, match=says):
        parse_metrics(text, f"{URL}/metrics")


def test_a_watch_whose_counters_went_down_shows_none_and_says_why():
    info = ServerInfo(URL, "m", "", 512, ("draft-simple",), "b1", {}, 2)
    watch = Watch(URL, info, True, SpecCounters(9840, 5920, 3000, (3000,), 1.0, 0, 0, decodes=10))
    watch.answered(40, 3, parse_metrics(CAPTURE))
    wide = watch.wide("")
    assert wide.counters is None and "went down from 9840 to 283" in wide.missing and "not shown" in wide.missing


def test_as_dict_holds_the_counts_and_their_rates():
    c = parse_metrics(CAPTURE)
    assert c is not None
    d = c.as_dict()
    assert d["drafted"] == c.drafted and d["accepted_per_pos"] == list(c.accepted_per_pos)
    assert d["per_pos_rates"] == list(c.per_pos_rates) and d["acceptance"] == c.acceptance


def test_a_server_that_never_drafted_has_zero_counters_and_no_positions():
    text = "\n".join(line for line in CAPTURE.splitlines() if PER_POS not in line)
    c = parse_metrics(valued(valued(valued(text, "draft_tokens", "0"), "accepted_tokens", "0"), "drafts", "0"))
    assert c is not None and c.accepted_per_pos == () and c.per_pos_rates == ()


def test_counters_past_a_million_are_marked_rounded():
    c = parse_metrics(valued(CAPTURE, "draft_tokens", "1.23457e+06"))
    assert c is not None and c.drafted == 1234570 and c.rounded


def test_missing_speculation_counters_are_none_not_an_error():
    old = "\n".join(line for line in CAPTURE.splitlines() if "spec_decode" not in line)
    assert parse_metrics(old) is None


@pytest.mark.parametrize(
    "text, says",
    [
        ("<html>not found</html>", "not a Prometheus sample"),
        ("llamacpp:spec_decode_num_drafts_total lots", "not a number"),
        (valued(CAPTURE, "drafts", "-3"), "not a count"),
        (valued(CAPTURE, "drafts", "nan"), "not a count"),
        (CAPTURE + "llamacpp:spec_decode_num_drafts_total 1\n", "given twice"),
        (CAPTURE.replace('position="1"', 'position="7"'), "are not 0, 1, 2"),
        (CAPTURE.replace('{position="2"}', ""), "without a position"),
        (re.sub(r"(?m)^(llamacpp:n_busy_slots_per_decode) .*$", r"\1 inf", CAPTURE), "a gauge"),
        ("x" * (METRICS_BYTES + 1), "larger than"),
    ],
)
def test_garbage_is_one_error_naming_the_endpoint(text, says):
    with pytest.raises(UserError, match=says) as e:
        parse_metrics(text, f"{URL}/metrics")
    assert "/metrics" in str(e.value)


def test_a_server_without_metrics_is_recognised_by_its_refusal():
    refusal = "refused /metrics (501): This server does not support metrics endpoint. Start it with `--metrics`"
    assert metrics_refused(refusal) and not metrics_refused(refusal, "--slots")
    assert not metrics_refused("answered 404 for /metrics: is it a llama-server?")


def test_not_speculating_names_the_cause_once_and_spares_a_baseline():
    line = not_speculating(URL, ("none",))
    assert line is not None and URL in line and "speculative.types is none" in line and NEEDS_SPEC_TYPE in line
    assert not_speculating(URL, ("none",), baseline=True) is None
    assert "no slot can draft" in (not_speculating(URL, ("draft-simple",), slots_speculate=False) or "")
    assert not_speculating(URL, ("draft-simple",), drafted=0, answers=1) is None  # too early to say
    idle = not_speculating(URL, ("draft-simple",), drafted=0, answers=2)
    assert idle is not None and "drafted nothing over its first 2 answers" in idle
    assert not_speculating(URL, ("draft-simple",), slots_speculate=True, drafted=5, answers=9) is None


# --- the panel's rows -------------------------------------------------------------------------


def test_the_panel_shows_the_servers_rows_apart_from_this_turns():
    from spectui.chat.panel import PanelState
    from spectui.spec_config import SpecConfig
    from spectui.tui.widgets.server_rows import TITLE
    from spectui.tui.widgets.stats_panel import render, status_strip

    c = parse_metrics(CAPTURE)
    assert c is not None
    spec = SpecConfig(types=("draft-simple",))
    state = PanelState(spec=spec, verify="greedy", server=ServerWide(URL, 2, c))
    lines = render(state).plain.splitlines()
    at = lines.index(f"{TITLE}  -np 2")
    assert lines[at + 1].split()[1:] == [f"{c.acceptance:.0%}", f"{c.accepted}/{c.drafted}"]
    bars = [line for line in lines[at:] if line.startswith(" #")]
    assert [line.split()[-1] for line in bars] == [f"{r:.0%}" for r in c.per_pos_rates]
    assert all(len(line) <= state.width + 1 for line in lines[at : at + 8])  # within the panel: nothing cut
    assert f"srv {c.acceptance:.0%}" in status_strip(state).plain
    idle = not_speculating(URL, ("none",))
    assert idle is not None
    quiet = PanelState(spec=SpecConfig(), verify="greedy", server=ServerWide(URL, 1, None, idle))
    assert idle in " ".join(render(quiet).plain.split()) and "srv: not speculating" in status_strip(quiet).plain


# --- a session's reading of them (a stand-in server: the refusals as llama-server words them) ----


class _Fake(http.server.BaseHTTPRequestHandler):
    metrics = (
        501,
        '{"error": {"code": 501, "message": "This server does not support metrics endpoint. '
        'Start it with `--metrics`", "type": "not_supported_error"}}',
    )
    answers = {
        "/props": (
            200,
            json.dumps(
                {
                    "default_generation_settings": {"n_ctx": 512},
                    "build_info": "b1",
                    "model_path": "/m.gguf",
                    "total_slots": 2,
                }
            ),
        ),
        "/completion": (200, json.dumps({"generation_settings": {"speculative.types": "none"}})),
        "/slots": (
            501,
            '{"error": {"message": "This server does not support slots endpoint. Start it with `--slots`"}}',
        ),
    }

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        code, body = self.metrics if self.path == "/metrics" else self.answers[self.path]
        self.send_response(code)
        self.end_headers()
        self.wfile.write(body.encode())

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def fake():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
    threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


def test_a_server_without_metrics_or_slots_is_noted_once(fake):
    session = ServerSession(fake)
    assert session.info.n_slots == 2 and session.slots() is None and session.counters() is None
    wide = session.wide()
    assert wide.counters is None and wide.notes == (not_speculating(fake, ("none",)), NO_METRICS.format(url=fake))


def test_garbage_metrics_are_noted_not_raised(fake, monkeypatch):
    monkeypatch.setattr(_Fake, "metrics", (200, "<html>hello</html>"))
    session = ServerSession(fake)
    assert session.counters() is None and "not a Prometheus sample" in session.counters_note


def test_a_speculating_server_that_drafts_nothing_is_named_after_its_first_answers():
    zero = SpecCounters(0, 0, 0, (), 1.0, 0, 0)
    watch = Watch(URL, ServerInfo(URL, "m", "", 512, ("draft-simple",), "b1", {}, 2), True, zero)
    watch.answered(40, 0, zero)
    watch.answered(4, 0, zero)  # too short for a drafter to have tried: not counted
    assert watch.wide("").idle == "" and watch.wide("").counters == zero.minus(zero)
    watch.answered(40, 0, replace(zero, busy_slots_per_decode=1.5, decodes=40))  # 60 busy slots in 40 decodes
    wide = watch.wide("")
    assert "drafted nothing over its first 2 answers" in wide.idle and wide.notes == (wide.idle,)
    assert wide.counters is not None and wide.counters.busy_slots_per_decode == 1.5


def test_comparing_servers_that_none_speculate_names_the_cause(fake):
    with pytest.raises(UserError, match="run the same speculation") as e:
        ServerPool([ServerSession(fake), ServerSession(fake)])
    assert str(not_speculating(fake, ("none",))) in str(e.value)
