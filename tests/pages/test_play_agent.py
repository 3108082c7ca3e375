"""AppTest: the Play-as-agent page (blind set-up, shop, tool forms, messages, final answer)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.engine import episode
from core.model.sample import FaultType
from core.paths import PROJECT_ROOT
from core.protocol.shifts import draw_fates
from core.runner.plan import SampleSource
from core.store import Store
from pages.common.play import label_md

PAGE = str(PROJECT_ROOT / "pages" / "play_agent.py")


@functools.lru_cache(maxsize=1)
def demo_home() -> Path:
    """A DRIFTBENCH_HOME with the bundled data and the demo sweep (built once per session)."""
    from core.studio.bootstrap import initialise

    home = Path(tempfile.mkdtemp(prefix="play_demo_"))
    store = Store.open(home / "driftbench.db")
    initialise(store)
    store.close()
    return home


def _open(home: Path, monkeypatch: pytest.MonkeyPatch, page: str = PAGE) -> AppTest:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(home))
    from pages.common.store import _store

    _store.clear()
    return AppTest.from_file(page, default_timeout=60)


def _store(home: Path) -> Store:
    return Store.open(home / "driftbench.db")


def _no_shift_seed(store: Store, benchmark: str, sample_id: str) -> int:
    """A seed whose only placement (rational persona: 1.0) is skipped: no shift ever fires."""
    graph_id = SampleSource(store).sample(benchmark, sample_id).graph_id
    return next(s for s in range(50) if not draw_fates(f"{graph_id}:{sample_id}:{s}", 1, 0.6)[0])


def _start(at: AppTest, benchmark: str, sample_id: str, persona: str, seed: int) -> AppTest:
    at.selectbox(key="play_agent_benchmark").select(benchmark).run()
    at.selectbox(key=f"play_agent_sample_{benchmark}").select(sample_id)
    at.selectbox(key="play_agent_persona").select(persona)
    at.number_input(key="play_agent_seed").set_value(seed)
    at.button(key="play_agent_start").click().run()
    assert not at.exception
    return at


def _texts(at: AppTest) -> str:
    parts = [t.value for t in at.text] + [c.value for c in at.code] + [m.value for m in at.markdown]
    parts += [c.value for c in at.caption] + [str(m.value) for m in at.metric]
    return "\n".join(parts)


def test_renders_on_an_empty_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _open(tmp_path, monkeypatch).run()
    assert not at.exception
    assert at.title[0].value == "Play as agent"
    # bundled samples are offered even before `driftbench init`
    assert len(at.selectbox(key="play_agent_sample_webshop").options) > 100
    assert at.button(key="play_agent_start")


def test_sample_picker_is_blind(monkeypatch: pytest.MonkeyPatch) -> None:
    at = _open(demo_home(), monkeypatch).run()
    assert not at.exception
    at.selectbox(key="play_agent_benchmark").select("tau2_retail").run()
    options = at.selectbox(key="play_agent_sample_tau2_retail").options
    assert options[0] == "(random)"
    store = _store(demo_home())
    ids = {r["sample_id"] for r in store.sample_rows("tau2_retail")}
    assert set(options[1:]) == ids
    page = _texts(at) + "\n".join(options)
    for ft in FaultType:
        assert ft.value not in page and ft.value.replace("_", " ") not in page


def test_play_webshop_to_an_accepted_purchase(monkeypatch: pytest.MonkeyPatch) -> None:
    home = demo_home()
    store = _store(home)
    sid = store.sample_rows("webshop")[5]["sample_id"]
    seed = _no_shift_seed(store, "webshop", sid)
    at = _start(_open(home, monkeypatch).run(), "webshop", sid, "rational", seed)
    eid = at.session_state["play_agent_episode"]
    assert at.metric[0].value == "0"  # turn 0
    # the test (never the page) reads the truth to know what to buy
    truth = episode.truth(store, eid)
    assert truth.due() == 0
    plan = truth.world.compile_intent(truth.current_intent())
    for action in plan:
        if action.tool == "search":
            at.text_input(key="play_agent_shop_query").input(action.args["query"])
            next(b for b in at.button if b.label == "Search").click().run()
            continue
        target = str(action.args["target"]).lower()
        if target == "next >":
            at.button(key="play_agent_shop_next").click().run()
        elif target == "buy now":
            at.button(key="play_agent_shop_buy").click().run()
        elif any(b.key == f"play_agent_shop_title_{target.upper()}" for b in at.button):
            # a product opens by its title, as in a shop
            title = at.button(key=f"play_agent_shop_title_{target.upper()}")
            assert title.label == label_md(truth.world.catalogue.by_asin[target.upper()].title)
            title.click().run()
        else:
            button = next(
                b
                for b in at.button
                if (b.key or "").startswith("play_agent_shop_opt_")
                and b.label.lower() == label_md(target)
            )
            button.click().run()
        assert not at.exception
    if not episode.agent_view(store, eid).ended:  # Buy Now, then the final answer
        at.text_input(key="play_agent_final_text").input("my purchase")
        next(b for b in at.button if b.label == "Give final answer").click().run()
    assert any("Success — the user accepted" in s.value for s in at.success)
    view = episode.agent_view(store, eid)
    assert view.ended and view.outcome is not None and view.outcome.value == "SUCCESS"
    assert view.patience is None  # the default condition hides the meter


def test_message_and_meter_condition(monkeypatch: pytest.MonkeyPatch) -> None:
    home = demo_home()
    store = _store(home)
    sid = store.sample_rows("webshop")[0]["sample_id"]
    at = _open(home, monkeypatch).run()
    at.checkbox(key="play_agent_show_patience").check()
    at = _start(at, "webshop", sid, "rational", 0)
    assert "User's patience" in [m.label for m in at.metric]
    before = float(next(m.value for m in at.metric if m.label == "User's patience"))
    at.chat_input(key="play_agent_message").set_value("What colour would you like?").run()
    assert not at.exception
    after = float(next(m.value for m in at.metric if m.label == "User's patience"))
    assert after == before - 2.0  # a question costs 2
    msgs = [m for m in at.chat_message if m.name == "user"]
    assert len(msgs) >= 2  # opening request + the simulated user's reply
    assert "What colour would you like?" in _texts(at)


def test_tau2_tool_form_and_final_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    home = demo_home()
    store = _store(home)
    sid = store.sample_rows("tau2_retail")[0]["sample_id"]
    at = _start(_open(home, monkeypatch).run(), "tau2_retail", sid, "rational", 0)
    at.selectbox(key="play_agent_tools_tool").select("list_all_product_types").run()
    next(b for b in at.button if b.label == "Call tool").click().run()
    assert not at.exception
    # the JSON result is shown as readable "field: value" lines, not raw JSON
    assert any(": " in t.value and not t.value.lstrip().startswith("{") for t in at.text)
    at.selectbox(key="play_agent_tools_tool").select("get_order_details").run()
    at.text_input(key="play_agent_tools_arg_get_order_details_order_id").input("#W0000000")
    next(b for b in at.button if b.label == "Call tool").click().run()
    assert "not found" in at.text[-1].value.lower() or "not found" in _texts(at).lower()
    # a required field left empty is refused with the field named, nothing is executed
    at.selectbox(key="play_agent_tools_tool").select("get_user_details").run()
    next(b for b in at.button if b.label == "Call tool").click().run()
    assert any("user_id is required" in e.value for e in at.error)
    assert at.metric[0].value == "2"
    at.text_input(key="play_agent_final_text").input("done")
    next(b for b in at.button if b.label == "Give final answer").click().run()
    assert not at.exception
    assert int(at.metric[0].value) == 3
    # the user's reaction to the (rejected) proposal is in the conversation
    assert len([m for m in at.chat_message if m.name == "user"]) >= 2


def test_resume_from_url_and_new_episode(monkeypatch: pytest.MonkeyPatch) -> None:
    home = demo_home()
    store = _store(home)
    sid = store.sample_rows("webshop")[1]["sample_id"]
    at = _start(_open(home, monkeypatch).run(), "webshop", sid, "rational", 0)
    eid = at.session_state["play_agent_episode"]
    fresh = _open(home, monkeypatch)
    fresh.query_params["episode"] = eid
    fresh.run()
    assert not fresh.exception
    assert fresh.session_state["play_agent_episode"] == eid
    fresh.button(key="play_agent_new").click().run()
    assert "play_agent_episode" not in fresh.session_state
    assert fresh.button(key="play_agent_start")


def test_another_persons_episode_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """22.4: opening someone else's play episode by ?episode= is a clear refusal."""
    from core.studio import roleplay

    home = demo_home()
    store = _store(home)
    eid = roleplay.start_agent_play(
        store, benchmark="webshop", sample_id=None, persona="rational", seed=3, player="someone"
    )
    at = _open(home, monkeypatch)
    at.query_params["episode"] = eid
    at.run()
    assert not at.exception
    assert any("belongs to another person" in e.value for e in at.error)
    assert not [b for b in at.button if b.label == "Give final answer"]
    assert "play_agent_episode" not in at.session_state
    before = len(store.events(eid))
    at.button(key="play_agent_episode_refused_new").click().run()
    assert at.button(key="play_agent_start")
    assert len(store.events(eid)) == before  # nothing was done to it


def test_debrief_after_the_episode_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    home = demo_home()
    store = _store(home)
    sid = store.sample_rows("tau2_airline")[2]["sample_id"]
    at = _start(_open(home, monkeypatch).run(), "tau2_airline", sid, "rational", 5)
    eid = at.session_state["play_agent_episode"]
    assert not any(s.value.startswith("Debrief") for s in at.subheader)  # blind until the end
    for _ in range(30):
        if episode.agent_view(store, eid).ended:
            break
        at.text_input(key="play_agent_final_text").input("done")
        next(b for b in at.button if b.label == "Give final answer").click().run()
        assert not at.exception
    assert any(s.value.startswith("Debrief") for s in at.subheader)
    texts = _texts(at)
    assert "What the customer really wanted at the start" in texts
    assert "This episode's GRIP metrics" in texts


def test_model_interpreter_offered_and_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = "openai/reader-test@http://127.0.0.1:9"
    monkeypatch.setenv("DRIFTBENCH_PLAY_INTERPRETER", spec)
    home = demo_home()
    at = _open(home, monkeypatch).run()
    picker = at.selectbox(key="play_agent_interpreter")
    assert picker.options == ["offline", spec] and picker.value == "offline"
    picker.select(spec)
    sid = SampleSource(_store(home)).sample_ids("webshop")[0]
    at = _start(at, "webshop", sid, "rational", 0)
    eid = at.session_state["play_agent_episode"]
    assert _store(home).header(eid).config.interpreter == spec


def _two_item_exchange(store: Store) -> tuple[str, str, list[str]]:
    """A τ² retail sample whose task exchanges two items: (sample id, order id, item ids)."""
    import json

    source = SampleSource(store)
    for row in store.sample_rows("tau2_retail"):
        sample = source.sample("tau2_retail", row["sample_id"])
        root = source.graph("tau2_retail", sample.graph_id).node(sample.root_intent_id)
        slots = {c.slot.rsplit(":", 1)[-1]: c.value for c in root.conditions}
        if "exchange_delivered_order_items" not in " ".join(c.slot for c in root.conditions):
            continue
        items = json.loads(str(slots.get("item_ids", "[]")))
        if len(items) == 2:
            return row["sample_id"], json.loads(str(slots["order_id"])), items
    raise AssertionError("no two-item exchange sample")


def test_a_tool_result_is_shown_in_full_with_every_id_to_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 30: no result is cut — the second item's id of an order is there, copyable."""
    home = demo_home()
    store = _store(home)
    sid, order_id, items = _two_item_exchange(store)
    at = _start(_open(home, monkeypatch).run(), "tau2_retail", sid, "rational", 0)
    at.selectbox(key="play_agent_tools_tool").select("get_order_details").run()
    at.text_input(key="play_agent_tools_arg_get_order_details_order_id").input(order_id)
    next(b for b in at.button if b.label == "Call tool").click().run()
    assert not at.exception
    codes = [c.value for c in at.code]
    for item in items:  # every id sits in its own code block (a copy button each)
        assert item in codes
    assert order_id in codes
    # the JSON view carries the whole result, nothing cut
    whole = next(c.value for c in at.code if c.language == "json")
    assert all(item in whole for item in items) and "…" not in whole
    # the readable view: the order's items as a table, every item id in it
    assert any(all(item in t.value.to_string() for item in items) for t in at.table)


def test_an_action_from_a_stale_second_tab_is_refused_with_a_reload_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two tabs on one episode: tab A acts, tab B (still showing the old turn) is refused."""
    home = demo_home()
    store = _store(home)
    sid = store.sample_rows("webshop")[2]["sample_id"]
    tab_a = _start(_open(home, monkeypatch).run(), "webshop", sid, "rational", 0)
    eid = tab_a.session_state["play_agent_episode"]
    tab_b = _open(home, monkeypatch)
    tab_b.query_params["episode"] = eid
    tab_b.run()
    assert not tab_b.exception and tab_b.metric[0].value == "0"
    tab_a.chat_input(key="play_agent_message").set_value("What colour would you like?").run()
    assert not tab_a.exception and tab_a.metric[0].value == "1"
    n_events = len(store.event_jsons(eid))
    tab_b.chat_input(key="play_agent_message").set_value("Which size do you need?").run()
    assert not tab_b.exception
    assert any("reload the page" in e.value for e in tab_b.error), [e.value for e in tab_b.error]
    assert len(store.event_jsons(eid)) == n_events  # nothing recorded
    assert "Which size do you need?" not in _texts(tab_b)
    # tab B now shows the current turn: its next action is taken
    tab_b.chat_input(key="play_agent_message").set_value("Which size do you need?").run()
    assert not tab_b.exception and not tab_b.error
    assert tab_b.metric[0].value == "2"
