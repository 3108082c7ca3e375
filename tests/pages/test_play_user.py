"""AppTest: the Play-as-user page (persona card, private intent, shift banner, chat, survey)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.model.events import AgentActed, ReplyRead, ShiftFired, UserReplied
from core.paths import PROJECT_ROOT
from core.protocol.shifts import draw_fates
from core.runner.plan import SampleSource
from core.store import Store
from tests.pages.test_play_agent import demo_home

PAGE = str(PROJECT_ROOT / "pages" / "play_user.py")


def _open(home: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(home))
    from pages.common.store import _store

    _store.clear()
    return AppTest.from_file(PAGE, default_timeout=60)


def _firing_seed(benchmark: str, sample_id: str) -> int:
    """A seed whose first placement (crossed at the start for 'rational') fires a shift."""
    graph_id = SampleSource(None).sample(benchmark, sample_id).graph_id
    return next(s for s in range(50) if draw_fates(f"{graph_id}:{sample_id}:{s}", 1, 0.6)[0])


def _start(at: AppTest, benchmark: str, sample_id: str, seed: int, method: str) -> AppTest:
    if benchmark not in at.selectbox(key="play_user_benchmark").options:
        # the internal mock benchmark is never offered in the picker: start it through the
        # service as the local user, then open it by URL (the page's resume path)
        import os

        from core.paths import default_store_path
        from core.studio import roleplay

        eid = roleplay.start_user_play(
            Store.open(default_store_path()),
            benchmark=benchmark,
            sample_id=sample_id,
            persona="rational",
            seed=seed,
            method=method,
            player=os.environ.get("USER", "local"),
        )
        at.query_params["episode"] = eid
        at.run()
        assert not at.exception
        return at
    at.selectbox(key="play_user_benchmark").select(benchmark).run()
    at.selectbox(key=f"play_user_sample_{benchmark}").select(sample_id)
    at.selectbox(key="play_user_persona").select("rational")
    at.number_input(key="play_user_seed").set_value(seed)
    at.selectbox(key="play_user_method").select(method)
    at.button(key="play_user_start").click().run()
    assert not at.exception
    return at


def _boxes(at: AppTest) -> list:
    """The reply box of the turn the person is asked to answer (empty when not asked)."""
    return [t for t in at.text_area if (t.key or "").startswith("play_user_draft_")]


def _fixes(at: AppTest) -> list:
    return [c for c in at.checkbox if (c.key or "").startswith("play_user_fix_")]


def _button(at: AppTest, prefix: str):
    return next(b for b in at.button if (b.key or "").startswith(prefix))


def _reply(at: AppTest, text: str, tick: str = "all") -> AppTest:
    """Type ``text``, see the reading, (with ``tick='all'``) correct it to every requirement,
    send; a contradiction of the goal is confirmed as deliberate."""
    _boxes(at)[0].input(text).run()
    assert not at.exception, at.exception
    if tick == "all":
        for box in _fixes(at):
            box.check()
    _button(at, "play_user_send_").click().run()
    if any((b.key or "").startswith("play_user_deliberate_") for b in at.button):
        _button(at, "play_user_deliberate_").click().run()
    assert not at.exception, at.exception
    return at


def test_renders_on_an_empty_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _open(tmp_path, monkeypatch).run()
    assert not at.exception
    assert at.title[0].value == "Play as user"
    assert at.selectbox(key="play_user_method").value == "A2"
    assert at.selectbox(key="play_user_agent").options == ["symbolic"]


def test_renders_on_the_demo_store(monkeypatch: pytest.MonkeyPatch) -> None:
    at = _open(demo_home(), monkeypatch).run()
    assert not at.exception
    assert len(at.selectbox(key="play_user_sample_webshop").options) > 100


def test_llm_agent_offered_when_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIFTBENCH_PLAY_MODEL", "openai/gpt-test@http://127.0.0.1:9")
    at = _open(tmp_path, monkeypatch).run()
    assert at.selectbox(key="play_user_agent").options == [
        "symbolic",
        "openai/gpt-test@http://127.0.0.1:9",
    ]


def test_play_turns_with_a_shift_banner_then_survey(monkeypatch: pytest.MonkeyPatch) -> None:
    home = demo_home()
    sid = SampleSource(None).sample_ids("mock")[0]
    seed = _firing_seed("mock", sid)
    at = _start(_open(home, monkeypatch).run(), "mock", sid, seed, "A2")
    eid = at.session_state["play_user_episode"]
    store = Store.open(home / "driftbench.db")
    # persona card, private intent and the agent's first question are shown; no banner yet
    texts = [t.value for t in at.text]
    # the card shows the persona's manner, never its bio's invented person ("Mara, 36")
    assert any(t.startswith("Persona: Rational") for t in texts)
    assert not any("Mara" in t for t in texts)
    assert any(t.startswith("• ") for t in texts)
    assert not at.warning
    assert _boxes(at), "the reply box appears while the agent waits"
    # the agent's question was charged automatically (base 10, a question costs 2)
    assert at.get("progress")[0].proto.text == "Patience 8 / 10"
    # the agent's question was stored before it was shown
    assert any(isinstance(e, AgentActed) for e in store.events(eid))

    # the words are the data: nothing ticked, the reading says what the agent learns
    _boxes(at)[0].input("I'd like it in teal.").run()
    assert any("What the agent will learn" in m.value for m in at.markdown)
    assert any(t.value.startswith("• colour") or "teal" in t.value for t in at.text)
    _button(at, "play_user_send_").click().run()
    assert not at.exception
    replies = [e for e in store.events(eid) if isinstance(e, UserReplied) and e.voice == "human"]
    assert replies[0].text == "I'd like it in teal."
    assert [d.slot for d in replies[0].disclosures] == ["color"]
    read = [e for e in store.events(eid) if isinstance(e, ReplyRead)]
    assert read[0].read == ("color",) and read[0].final == ("color",) and not read[0].added
    assert any(isinstance(e, ShiftFired) for e in store.events(eid))
    banners = [w.value for w in at.warning]
    assert banners and banners[0].startswith("Your goal has changed")

    for _ in range(10):
        if at.session_state["play_user_episode"] and not _boxes(at):
            break
        _reply(at, "Here is everything.")
    assert at.form  # the end-of-episode survey
    assert any(s.value.startswith("Proposal") for s in [*at.success, *at.error])
    at.radio(key="play_user_s_understood").set_value(4)
    at.radio(key="play_user_s_questions").set_value(3)
    at.radio(key="play_user_s_realism").set_value(5)
    at.radio(key="play_user_s_adapted").set_value("partly")
    at.text_area(key="play_user_s_comment").input("It asked good questions.")
    next(b for b in at.button if b.label == "Save survey").click().run()
    assert not at.exception
    assert any("survey is saved" in s.value for s in at.success)
    row = store.conn.execute(
        "SELECT annotator, target_kind, label_kind, value, self_played FROM annotations "
        "WHERE target_id=?",
        (eid,),
    ).fetchone()
    assert row[1:3] == ("episode", "play_user_survey") and row[4] == 1
    value = json.loads(row[3])
    assert value["understood"] == 4 and value["adapted"] == "partly" and value["shifts"] >= 1
    # after a reload the answers show read-only: no form, nothing stored twice
    again = _open(home, monkeypatch)
    again.query_params["episode"] = eid
    again.run()
    assert not again.exception and not again.form
    assert any("understood what I wanted: 4" in t.value for t in again.text)
    n = store.conn.execute(
        "SELECT count(*) FROM annotations WHERE target_id=? AND label_kind='play_user_survey'",
        (eid,),
    ).fetchone()[0]
    assert n == 1


def test_resume_from_url(monkeypatch: pytest.MonkeyPatch) -> None:
    home = demo_home()
    sid = SampleSource(None).sample_ids("mock")[1]
    at = _start(_open(home, monkeypatch).run(), "mock", sid, 0, "A1")
    eid = at.session_state["play_user_episode"]
    fresh = _open(home, monkeypatch)
    fresh.query_params["episode"] = eid
    fresh.run()
    assert not fresh.exception
    assert fresh.session_state["play_user_episode"] == eid
    assert _boxes(fresh)
    fresh.button(key="play_user_new").click().run()
    assert fresh.button(key="play_user_start")


def test_survey_has_no_preselected_answer_and_no_shift_question_without_a_shift(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = demo_home()
    sid = SampleSource(None).sample_ids("mock")[2]
    graph_id = SampleSource(None).sample("mock", sid).graph_id
    seed = next(s for s in range(50) if not draw_fates(f"{graph_id}:{sid}:{s}", 1, 0.6)[0])
    at = _start(_open(home, monkeypatch).run(), "mock", sid, seed, "A2")
    eid = at.session_state["play_user_episode"]
    store = Store.open(home / "driftbench.db")
    for _ in range(12):
        if not _boxes(at):
            break
        _reply(at, "Here is everything I know.")
    assert not any(isinstance(e, ShiftFired) for e in store.events(eid))
    radios = {r.key: r for r in at.radio if (r.key or "").startswith("play_user_s_")}
    assert set(radios) == {
        "play_user_s_understood",
        "play_user_s_questions",
        "play_user_s_realism",
    }  # no "when my goal changed" question: it never changed
    assert all(r.value is None for r in radios.values())  # nothing pre-selected
    next(b for b in at.button if b.label == "Save survey").click().run()
    assert any("answer every question" in w.value for w in at.warning)
    assert (
        store.conn.execute("SELECT count(*) FROM annotations WHERE target_id=?", (eid,)).fetchone()[
            0
        ]
        == 0
    )
    # verdicts are in plain words: no reason code reaches the person
    verdicts = [s.value for s in [*at.success, *at.error] if s.value.startswith("Proposal")]
    assert verdicts and not any("_" in v for v in verdicts)
    assert not any("golden_actions" in v or "reward=" in v or "unmet:" in v for v in verdicts)


def test_another_persons_user_episode_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.studio import roleplay

    home = demo_home()
    eid = roleplay.start_user_play(
        Store.open(home / "driftbench.db"),
        benchmark="webshop",
        sample_id=None,
        persona="rational",
        seed=9,
        player="someone",
    )
    at = _open(home, monkeypatch)
    at.query_params["episode"] = eid
    at.run()
    assert not at.exception
    assert any("belongs to another person" in e.value for e in at.error)
    assert not _boxes(at)


def test_simulator_answers_one_message_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    home = demo_home()
    sid = SampleSource(None).sample_ids("mock")[2]
    at = _start(_open(home, monkeypatch).run(), "mock", sid, 0, "A1")
    eid = at.session_state["play_user_episode"]
    store = Store.open(home / "driftbench.db")
    assert _boxes(at)
    before = [e for e in store.events(eid) if isinstance(e, UserReplied)]
    assert before == []  # nothing was said for the person
    sim = next(b for b in at.button if (b.key or "").startswith("play_user_simulate_"))
    sim.click().run()
    assert not at.exception
    replies = [e for e in store.events(eid) if isinstance(e, UserReplied)]
    assert len(replies) == 1 and replies[0].voice == "simulator_for_human"
    for _ in range(12):  # the person types the rest, reactions to rejected proposals included
        if not _boxes(at):
            break
        _reply(at, "In my own words.", tick="none")
    replies = [e for e in store.events(eid) if isinstance(e, UserReplied)]
    assert [e.voice for e in replies[1:]] == ["human"] * (len(replies) - 1)


def _status(at: AppTest) -> str:
    return str(at.get("status")[0].label)


@pytest.mark.parametrize("blind", [True, False])
def test_a_blind_study_item_does_not_name_the_agent_and_the_end_is_said(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, blind: bool
) -> None:
    """A blind play-user study hides the agent's method and model from the person (the study
    spec says blind hides model identity and method); once the episode ends, the status line
    no longer says the agent is waiting."""
    import os

    from core.studies.study_file import create_from_file, parse_study
    from tests.pages.study_fixtures import copy_store

    me = os.environ.get("USER", "local")
    store = copy_store(demo_home(), tmp_path)
    study = parse_study(
        {
            "name": "blind-user",
            "kind": "play_user",
            "samples": {"benchmark": "webshop", "ids": ["001377b5c2d684be"], "count": 1},
            "personas": ["rational"],
            "annotators": [me],
            "overlap": 1,
            "blind": blind,
        }
    )
    create_from_file(store, study, [me])
    aid = store.conn.execute("SELECT assignment_id FROM assignments").fetchone()[0]
    at = _open(tmp_path, monkeypatch)
    at.query_params["assignment"] = str(aid)
    at.run()
    next(b for b in at.button if b.label == "Start this study item").click().run()
    assert not at.exception, at.exception
    at.run()  # the page follows the episode it started
    caption = at.caption[0].value
    if blind:
        assert "A2" not in caption and "Budget" not in caption and "symbolic" not in caption
        assert "blind" in caption
    else:
        assert "A2" in caption and "symbolic" in caption
    assert _status(at) == "The agent is waiting for you."
    for _ in range(12):
        if not _boxes(at):
            break
        _reply(at, "Here is everything I know.")
    assert any(b.label == "Save survey" for b in at.button)  # the episode is over
    assert _status(at) == "The episode is over."
