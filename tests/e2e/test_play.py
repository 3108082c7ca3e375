"""Real-browser tests of the role-play pages: WebShop purchase as agent, turns as user, blindness.

The test process opens the studio's store directly (same file, WAL) to pick samples and — in
the test only — to read the truth it needs to know what to buy. The leak test plays as agent
on one sample per fault type and searches both the rendered page and every websocket frame
the browser received for the sample's hidden values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from core.engine import episode
from core.envs.registry import load_world
from core.model.intent import IntentGraph
from core.model.sample import FaultType, Sample
from core.protocol.shifts import draw_fates
from core.store import Store
from tests.e2e.conftest import screenshot, wait_for_app

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def store(studio_home: Path) -> Iterator[Store]:
    s = Store.open(studio_home / "driftbench.db")
    yield s
    s.close()


def _fires(store: Store, sample_id: str, seed: int) -> bool:
    graph_id = Sample.model_validate_json(store.sample_json(sample_id)).graph_id
    return draw_fates(f"{graph_id}:{sample_id}:{seed}", 1, 0.6)[0]


def _goto(tab: Any, url: str, page: str, **params: Any) -> None:
    tab.goto(f"{url}/{page}?{urlencode(params)}")
    wait_for_app(tab)


def _episode_id(tab: Any) -> str:
    tab.wait_for_url(re.compile(r".*[?&]episode=\w+"))
    return parse_qs(urlparse(tab.url).query)["episode"][0]


def _turn_is(tab: Any, turn: int) -> None:
    tab.get_by_test_id("stMetricValue").first.filter(has_text=re.compile(rf"^{turn}$")).wait_for()


def _button(tab: Any, name: str) -> Any:
    return tab.get_by_role("button", name=name, exact=True)


WAITING = "Send reply"


def type_reply(tab: Any, text: str) -> None:
    """Type a reply in the reply box, see the reading, send it (confirming a contradiction)."""
    box = tab.get_by_test_id("stTextArea").locator("textarea").last
    box.fill(text)
    _button(tab, "Check what the agent will learn").click()
    tab.get_by_text("What the agent will learn from your words").wait_for()
    _button(tab, WAITING).click()
    deliberate = _button(tab, "Yes, it's deliberate — send it")
    sent = tab.get_by_test_id("stChatMessage").filter(has_text=text)
    deliberate.or_(sent.first).first.wait_for(timeout=60_000)
    if deliberate.count():
        deliberate.click()
    sent.first.wait_for(timeout=60_000)


def _start_agent(tab: Any, url: str, benchmark: str, sample_id: str, seed: int) -> str:
    _goto(
        tab, url, "play_agent", benchmark=benchmark, sample=sample_id, persona="rational", seed=seed
    )
    _button(tab, "Start episode").click()
    eid = _episode_id(tab)
    tab.get_by_text(f"Episode {eid}").wait_for()
    return eid


def test_play_as_agent_in_webshop_to_success(studio_url: str, store: Store, tab: Any) -> None:
    sid = store.sample_rows("webshop")[7]["sample_id"]
    seed = next(s for s in range(50) if not _fires(store, sid, s))  # no silent shift
    eid = _start_agent(tab, studio_url, "webshop", sid, seed)
    assert store.header(eid).sample_id == sid  # the deep link picked the sample
    truth = episode.truth(store, eid)  # test-only: what to buy
    assert truth.due() == 0
    turn = 0
    for action in truth.world.compile_intent(truth.current_intent()):
        if action.tool == "search":
            tab.get_by_label("Search the shop").fill(action.args["query"])
            _button(tab, "Search").click()
        else:
            target = str(action.args["target"])
            names = {"next >": "Next >", "buy now": "Buy Now"}
            name = names.get(
                target.lower(), target.upper() if re.fullmatch(r"b0\w{8}", target) else target
            )
            if name == target:  # an option value: match the button case-insensitively
                _button(tab, name).or_(
                    tab.get_by_role("button", name=re.compile(f"^{re.escape(name)}$", re.I))
                ).first.click()
            else:
                _button(tab, name).click()
        turn += 1
        _turn_is(tab, turn)
    tab.get_by_text("You bought:").wait_for()
    if not episode.agent_view(store, eid).ended:
        tab.get_by_label("Your final answer").fill("my purchase")
        _button(tab, "Give final answer").click()
    tab.get_by_text("the user accepted your answer").wait_for()
    assert episode.agent_view(store, eid).outcome.value == "SUCCESS"
    screenshot(tab, "play_agent")


def test_play_as_user_a_couple_of_turns(studio_url: str, store: Store, tab: Any) -> None:
    # a real benchmark: the internal mock one is no longer offered in the picker
    sid = store.sample_rows("webshop")[3]["sample_id"]
    seed = next(s for s in range(50) if _fires(store, sid, s))
    _goto(
        tab, studio_url, "play_user", benchmark="webshop", sample=sid, persona="rational", seed=seed
    )
    _button(tab, "Start episode").click()
    eid = _episode_id(tab)
    _button(tab, WAITING).wait_for()
    tab.get_by_text("You are Rational").wait_for()
    type_reply(tab, "Teal, please.")
    tab.get_by_text("Your goal has changed").first.wait_for()
    n_before = tab.get_by_test_id("stChatMessage").count()
    if _button(tab, WAITING).count():
        type_reply(tab, "That is everything I need.")
        assert tab.get_by_test_id("stChatMessage").count() > n_before
    human = [
        e
        for e in store.events(eid)
        if e.kind == "user_reply" and getattr(e, "voice", "") == "human"
    ]
    assert human and human[0].text == "Teal, please."
    screenshot(tab, "play_user")


def test_play_as_user_every_message_typed_by_the_person(
    studio_url: str, store: Store, tab: Any
) -> None:
    """A whole episode: every user line, reactions to rejected proposals included, is typed."""
    sid = store.sample_rows("webshop")[5]["sample_id"]
    _goto(tab, studio_url, "play_user", benchmark="webshop", sample=sid, persona="rational", seed=1)
    _button(tab, "Start episode").click()
    eid = _episode_id(tab)
    waiting = _button(tab, WAITING)
    over = tab.get_by_text("Episode over")
    typed: list[str] = []
    reactions = 0
    for n in range(30):
        waiting.or_(over).first.wait_for(timeout=60_000)
        if over.count():
            break
        if tab.get_by_text("The agent's proposal was not accepted").count():
            reactions += 1
            line = f"Reaction {n}: no, that is not what I asked for."
        else:
            line = f"Message {n}: I am not sure, you decide."
        type_reply(tab, line)
        typed.append(line)
    over.wait_for(timeout=60_000)
    replies = [e for e in store.events(eid) if e.kind == "user_reply"]
    assert replies and [e.text for e in replies] == typed
    assert {e.voice for e in replies} == {"human"}
    # every rejection that left the episode running was answered by the person, in words
    paused = [
        e
        for e in store.events(eid)
        if e.kind == "proposal_judged"
        and not e.accepted
        and e.via not in ("final_shot", "forced_final")
    ]
    assert reactions == len(paused) == sum(1 for e in replies if e.reply_kind == "rejection")


def _hidden_values(sample: Sample, graph: IntentGraph, public: str) -> set[str]:
    """Hidden true values the opening request does not state (and the host's tools never name)."""
    raw: list[Any] = [m.true_value for m in sample.mask if m.hidden and m.true_value is not None]
    root = graph.node(sample.root_intent_id)
    raw += [c.value for c in root.conditions if c.slot in sample.hidden_slots]
    out: set[str] = set()
    for v in raw:
        if isinstance(v, str):
            try:
                v = json.loads(v)
            except json.JSONDecodeError:
                pass
        items = v if isinstance(v, list) else [v]
        for item in items:
            if isinstance(item, dict):
                items += list(item.values())
                continue
            if isinstance(item, float) and item.is_integer():
                item = int(item)
            text = str(item).strip()
            if isinstance(item, int | float) and not isinstance(item, bool):
                text = f"${text}"  # prices: a bare number is everywhere, "$40" is not
            low = text.lower()
            if len(text) < 3 or low in sample.query.lower() or low in public:
                continue
            out.add(text)
    return out


def _one_sample_per_fault_type(store: Store) -> dict[str, tuple[Sample, IntentGraph, set[str]]]:
    """Per fault type, the first single-fault sample (by id) with checkable hidden values."""
    publics: dict[str, str] = {}
    rows = sorted(
        (r for r in store.sample_rows() if r["k"] == 1),
        key=lambda r: (r["sample_id"], r["benchmark"]),
    )
    picked: dict[str, tuple[Sample, IntentGraph, set[str]]] = {}
    tried: dict[str, int] = {}
    for row in rows:
        fault = row["fault_types"]
        if fault in picked and picked[fault][2] or tried.get(fault, 0) >= 60:
            continue
        tried[fault] = tried.get(fault, 0) + 1
        sample = Sample.model_validate_json(store.sample_json(row["sample_id"]))
        graph = IntentGraph.model_validate_json(store.graph_json(sample.graph_id))
        if sample.benchmark not in publics:
            tools = load_world(sample.benchmark).tools()
            publics[sample.benchmark] = " ".join(
                f"{t.name} {t.description} {json.dumps(t.parameters)}" for t in tools
            ).lower()
        secrets = _hidden_values(sample, graph, publics[sample.benchmark])
        if fault not in picked or secrets:
            picked[fault] = (sample, graph, secrets)
    return picked


def _found(value: str, haystack: str) -> bool:
    return re.search(rf"(?<![0-9a-z]){re.escape(value.lower())}(?![0-9a-z])", haystack) is not None


@pytest.mark.slow  # twelve episodes in a real browser: ~25 s idle, ~50 s on a loaded box
def test_play_as_agent_leaks_no_hidden_value(studio_url: str, store: Store, tab: Any) -> None:
    picked = _one_sample_per_fault_type(store)
    assert set(picked) == {f.value for f in FaultType}, "one sample per fault type"
    frames: list[str] = []

    def on_ws(ws: Any) -> None:
        def keep(payload: Any) -> None:
            if isinstance(payload, bytes | bytearray):
                payload = bytes(payload).decode("utf-8", errors="ignore")
            frames.append(payload)

        ws.on("framereceived", keep)

    tab.on("websocket", on_ws)
    checked = 0
    for fault, (sample, _graph, secrets) in sorted(picked.items()):
        frames.clear()
        _start_agent(tab, studio_url, sample.benchmark, sample.sample_id, 0)
        _turn_is(tab, 0)
        # propose at once: the rejection (and any hint) must not recite a hidden value
        tab.get_by_label("Your final answer").fill("done")
        _button(tab, "Give final answer").click()
        _turn_is(tab, 1)
        tab.get_by_test_id("stChatMessage").nth(1).wait_for()
        text = tab.inner_text("body").lower()
        wire = "\n".join(frames).lower()
        assert sample.query.split()[1].lower() in wire, "frames were captured (positive control)"
        for value in secrets:
            assert not _found(value, text), f"{fault}: hidden {value!r} on the page"
            assert not _found(value, wire), f"{fault}: hidden {value!r} in a websocket frame"
        checked += bool(secrets)
    assert checked >= 7  # fault types whose samples carry hidden values the query does not state
    # positive control: the user's own page shows the private goal, and the search finds it
    sample, _graph, secrets = next(
        v for v in picked.values() if v[2] and v[0].benchmark == "webshop"
    )
    frames.clear()
    _goto(tab, studio_url, "play_user", benchmark="webshop", sample=sample.sample_id, seed=0)
    _button(tab, "Start episode").click()
    tab.get_by_text("What you want now").wait_for()
    # the goal's lines follow their heading in the same script run: on a loaded box they can
    # arrive a moment later, so read until they are there (or 20 s have passed)
    for _ in range(100):
        text, wire = tab.inner_text("body").lower(), "\n".join(frames).lower()
        if any(_found(v, text) for v in secrets) and any(_found(v, wire) for v in secrets):
            break
        tab.wait_for_timeout(200)
    assert any(_found(v, text) for v in secrets), f"the private goal ({secrets}) is not shown"
    assert any(_found(v, wire) for v in secrets), "the private goal never crossed the websocket"
