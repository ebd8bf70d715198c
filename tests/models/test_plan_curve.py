"""Measuring and caching the cost curve, and the acceptance a plan predicts at
(spectui/plan/curve.py, acceptance.py): the cache and the pooling without a model, the
decode timing, the calibration and the n-gram replay on SmolLM2."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from spectui.engine.events import TurnEnd, TurnStart
from spectui.engine.interface import GenerationLimits, chat_messages
from spectui.engine.stats import per_type, rounds_of
from spectui.errors import UserError
from spectui.plan import acceptance, decodes
from spectui.plan import cache as plan_cache
from spectui.plan.predict import Drafting
from spectui.store import answers, chat_store
from spectui.store.chat_types import AnswerConfig, Message, new_chat

RECORDED = Path(__file__).parents[1] / "data" / "plan_smollm2.json"
SCHEMA_1 = Path(__file__).parents[1] / "data" / "chats_schema1.db"  # the chats database before migration 2
pytestmark = pytest.mark.usefixtures("dirs")  # own data dir: the chat store's tests write chats


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "plan"


def recorded() -> dict:
    return json.loads(RECORDED.read_text())


def test_a_stored_curve_reads_back_for_its_identity_only(cache):
    doc = recorded()
    key = doc.pop("key")
    doc.pop("format")
    assert plan_cache.load_cached(key) == (None, None)
    path = plan_cache.store(key, doc)
    assert path.parent == cache and [p.name for p in cache.iterdir()] == [path.name]  # no temp file left
    found, why = plan_cache.load_cached(key)
    assert why is None and found is not None and found["curve"] == doc["curve"]
    other = {**key, "llama_cpp": "another build"}
    assert plan_cache.load_cached(other) == (None, None)  # another build: its own file, none yet
    # a file copied from another device under this identity's name: measured again, never trusted
    os.replace(path, plan_cache.cache_path(other))
    found, why = plan_cache.load_cached(other)
    assert found is None and "another model file, build or device: measuring again" in why


@pytest.mark.parametrize(
    "text, says",
    [
        ("{", "corrupt"),
        ("[]", "is not a spectui-plan/2 curve"),
        ('{"format": "spectui-plan/2"}', "another model file, build or device"),
        ("\xff\xfe", "corrupt"),
    ],
)
def test_a_corrupt_or_foreign_cached_curve_is_one_line_and_measured_again(cache, text, says):
    key = recorded()["key"]
    cache.mkdir(parents=True)
    plan_cache.cache_path(key).write_text(text, encoding="latin-1")
    found, why = plan_cache.load_cached(key)
    assert found is None and says in why and "\n" not in why and why.endswith("measuring again")


def test_a_cached_curve_with_a_broken_point_is_measured_again(cache):
    doc = recorded()
    doc["curve"]["target"]["64"][0][1] = -1
    cache.mkdir(parents=True)
    plan_cache.cache_path(doc["key"]).write_text(json.dumps(doc))
    found, why = plan_cache.load_cached(doc["key"])
    assert found is None and "corrupt" in why


def test_an_unwritable_cache_is_one_line_before_any_measurement(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(blocker))
    with pytest.raises(UserError, match=r"cannot write the plan cache .*file/plan"):
        plan_cache.check_writable()
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        (ro / "plan").mkdir(parents=True)
        (ro / "plan").chmod(0o500)
        monkeypatch.setenv("SPECTUI_CACHE_DIR", str(ro))
        with pytest.raises(UserError, match="permission denied"):
            plan_cache.check_writable()


def test_a_failed_store_leaves_nothing_half_written(cache, monkeypatch):
    doc = recorded()
    key = doc.pop("key")
    cache.mkdir(parents=True)

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(UserError, match="No space left on device"):
        plan_cache.store(key, doc)
    assert list(cache.iterdir()) == []


def test_the_calibration_round_trips_and_a_bad_acceptance_is_refused():
    cal = acceptance.Calibration.from_dict(recorded()["calibration"])
    assert acceptance.Calibration.from_dict(json.loads(json.dumps(cal.as_dict()))) == cal
    with pytest.raises(ValueError):
        acceptance.Calibration.from_dict({**cal.as_dict(), "positions": [1.5]})


def test_an_ngram_replay_drafts_what_the_text_repeats():
    """A text that repeats itself: after its first period, ngram-simple drafts it and the
    answer confirms every draft."""
    from spectui.spec_config import SpecConfig

    period = list(range(100, 120))
    answer = period * 4
    d = acceptance.replay_ngram("ngram-simple", SpecConfig(ngram_simple_size_n=3), [((1, 2, 3), answer)])
    assert 0 < d.share < 1 and d.length > 1 and d.accepted == pytest.approx(d.length)
    nothing = acceptance.replay_ngram("ngram-simple", SpecConfig(), [((1, 2, 3), list(range(200, 260)))])
    assert nothing == Drafting(0.0, 0.0, 0.0, False)


def _stats(per_position, gen_drafts, gen_tokens, acc_tokens, rounds, spec_type):
    return {
        "per_position": per_position,
        "rounds": rounds,
        "per_type": {spec_type: {"gen_drafts": gen_drafts, "gen_tokens": gen_tokens, "acc_tokens": acc_tokens}},
    }


def test_saved_answers_pool_per_position_by_drafts_and_extend_past_their_n_max():
    pair = {"model": "t", "model_draft": "d"}
    answers = [
        (pair, AnswerConfig(("draft-simple",), 2), _stats([0.8, 0.4], 10, 20, 12, 10, "draft-simple")),
        (pair, AnswerConfig(("draft-simple",), 3), _stats([0.5, 0.25, 0.125], 30, 90, 26, 30, "draft-simple")),
        (
            {"model": "t", "model_draft": "other"},
            AnswerConfig(("draft-simple",), 3),
            _stats([1, 1, 1], 99, 297, 297, 99, "x"),
        ),
        (pair, AnswerConfig(("ngram-mod",), 3), _stats([0.5], 20, 200, 60, 80, "ngram-mod")),
        (
            pair,
            AnswerConfig(("ngram-simple",), 3),
            _stats([0.5], 3, 30, 9, 80, "ngram-simple"),
        ),  # too few drafts to decide
        (
            pair,
            AnswerConfig(("ngram-mod", "draft-simple"), 3),
            _stats([0.9], 50, 50, 45, 50, "ngram-mod"),
        ),  # a combination
        (
            pair,
            AnswerConfig(("ngram-mod",), 3, spec_changes=((("none",), 3),)),
            _stats([0.9], 50, 50, 45, 50, "ngram-mod"),
        ),
    ]
    found = acceptance.saved(answers, "t", "d")
    assert set(found) == {"draft-simple", "ngram-mod"}
    ds = found["draft-simple"]
    assert (ds.answers, ds.drafts) == (2, 40)
    assert ds.positions[:3] == pytest.approx([(10 * 0.8 + 30 * 0.5) / 40, (10 * 0.4 + 30 * 0.25) / 40, 0.125])
    assert len(ds.positions) == 8 and ds.positions[3] == pytest.approx(0.125 * 0.125 / ((4 + 7.5) / 40))
    assert found["ngram-mod"].drafting == Drafting(20 / 80, 10.0, 3.0, False)


@pytest.mark.parametrize(
    "stats",
    [
        {"per_type": {"draft-simple": {"gen_drafts": 20}}},  # no per_position (an older version's)
        _stats([1.5], 20, 20, 20, 20, "draft-simple"),
        _stats(["x"], 20, 20, 20, 20, "draft-simple"),
        {"per_type": "x"},
        _stats([0.5], 20, 20, 10, 0, "ngram-mod"),  # no rounds
    ],
)
def test_saved_answers_of_another_shape_leave_the_type_to_the_calibration(stats):
    pair = {"model": "t", "model_draft": "d"}
    config = AnswerConfig(("ngram-mod",) if "ngram-mod" in str(stats) else ("draft-simple",), 3)
    assert acceptance.saved([(pair, config, stats)], "t", "d") == {}


def test_the_store_gives_every_answer_with_statistics_and_plan_creates_no_database():
    assert answers.answer_stats() == [] and not chat_store.db_path().exists()
    chat = new_chat()
    chat.setup = {"model": "t", "model_draft": "d"}
    stats = _stats([0.5], 1, 3, 1, 1, "draft-simple")
    config = AnswerConfig(("draft-simple",), 3, "match", 0.0, 40, 0.95, 0.05, 7)
    chat.messages = [Message("user", "hi"), Message("assistant", "yo", stats=stats, config=config)]
    chat_store.save_chat(chat)
    assert answers.answer_stats() == [({"model": "t", "model_draft": "d"}, config, stats)]


def test_answers_stored_before_their_configuration_was_kept_still_count():
    """A database in the previous schema (each answer's configuration a label): opened, its
    answers are read by their spec types and n-max, as the plan selects them."""
    path = chat_store.db_path()
    path.parent.mkdir(parents=True)
    shutil.copy(SCHEMA_1, path)
    rows = [
        ("draft-simple n-max 5", _stats([0.75, 0.5], 20, 60, 30, 20, "draft-simple")),
        ("ngram-mod", _stats([0.5], 20, 200, 60, 80, "ngram-mod")),
        ("draft-simple n-max 3 → ngram-mod", _stats([0.5], 20, 60, 30, 20, "draft-simple")),  # switched: neither
    ]
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO chats VALUES ('20250603-1', 'old', 1.0, 1.0, '', ?)",
            (json.dumps({"model": "t", "model_draft": "d"}),),
        )
        for label, stats in rows:
            db.execute(
                "INSERT INTO messages (chat, role, content, segments, stopped, stats, config) "
                "VALUES ('20250603-1', 'assistant', 'yo', '[]', 0, ?, ?)",
                (json.dumps(stats), label),
            )
    read = [(config.spec_types, config.draft_n_max, config.spec_changes) for _, config, _ in answers.answer_stats()]
    assert read[-3:] == [
        (("draft-simple",), 5, ()),
        (("ngram-mod",), None, ()),
        (("draft-simple",), 3, ((("ngram-mod",), None),)),
    ]
    found = acceptance.saved(answers.answer_stats(), "t", "d")
    assert set(found) == {"draft-simple", "ngram-mod"} and found["draft-simple"].positions[:2] == (0.75, 0.5)
    assert found["ngram-mod"].drafting == Drafting(20 / 80, 10.0, 3.0, False)
    assert chat_store.load_chat("20250603-1").messages[-1].config_label == "draft-simple n-max 3 → ngram-mod"


# --- on SmolLM2 ------------------------------------------------------------------------


@pytest.mark.model
def test_decode_times_measure_each_size_at_each_depth_and_leave_the_context_empty(session):
    filler = session.target.tokenize("The quick brown fox jumps over the lazy dog. " * 4)
    by_depth, drift = decodes.decode_times(session.ctx, [1, 4], filler, depths=(16, 40))
    assert sorted(by_depth) == [16, 40] and drift > -1
    for points in by_depth.values():
        assert [p.b for p in points] == [1, 4] and all(p.median > 0 and p.spread >= 0 for p in points)
        assert points[0].median <= points[1].median  # fitted non-decreasing
    assert session.ctx.n_past == 0


@pytest.mark.model
def test_the_ngram_replay_counts_what_the_session_drafted(fresh, setup):
    """Greedy: the replay over the session's own answer drafts exactly what the session did."""
    spec = setup.spec.replace(types=("ngram-simple",), ngram_simple_size_n=2)
    fresh.configure(spec)
    fresh.reset()
    prompt = "Repeat this line three times: the cat sat on the mat, the cat sat on the mat."
    events = list(fresh.generate(chat_messages([("user", prompt)]), limits=GenerationLimits(48, ignore_eos=True)))
    start = next(e for e in events if isinstance(e, TurnStart))
    end = next(e for e in events if isinstance(e, TurnEnd))
    rounds = rounds_of(events)
    counters = per_type(rounds)["ngram-simple"]
    d = acceptance.replay_ngram("ngram-simple", spec, [(fresh.ctx.tokens[: start.n_prompt], end.tokens)])
    assert counters.gen_drafts > 0
    assert d.share == pytest.approx(counters.gen_drafts / len(rounds))
    assert d.length == pytest.approx(counters.gen_tokens / counters.gen_drafts)
    assert d.accepted == pytest.approx(counters.acc_tokens / counters.gen_drafts)


@pytest.mark.model
def test_a_calibration_measures_acceptance_per_position_and_both_overheads(fresh, setup, monkeypatch):
    monkeypatch.setattr(acceptance, "CALIBRATION_TOKENS", 16)
    cal = acceptance.calibrate(fresh, "draft-simple", setup.spec, ["Count from one to ten."], None)
    assert len(cal.positions) == 8 and all(0 <= p <= 1 for p in cal.positions)
    assert cal.positions[0] > 0.5  # SmolLM2 drafting for itself: its draft is its own greedy pick
    assert cal.overhead_none > 0 and cal.overhead_spec > 0 and cal.n_rounds > 0
    ((prompt, answer),) = cal.streams
    assert len(answer) == 16 and len(prompt) > 5
    # the none answer came last, on the prompt the drafted one had decoded: the contexts end
    # holding the filler's start, so the curve's first depth needs no fill
    assert cal.loop_step is not None and cal.filler[: len(prompt)] == list(prompt)
    for ctx in (fresh.ctx, fresh.draft_ctx):
        assert ctx.common_prefix(cal.filler) >= len(prompt)
