"""A study you can trust, in Debian chromium (issue 28).

(a) An admin creates a play-as-user study of 2 annotators × 3 samples on the Data page (accounts
    picked from a list). Both annotators play by typing words only — no tick-box is touched —
    and one reply deliberately contradicts the goal (the page asks once; the person confirms).
    ``driftbench studies export`` holds exactly the typed texts and the disclosures read from
    them.
(b) The end survey, after a reload, shows read-only and is stored once.
(c) Each blind bypass is refused by the server: a sibling sample (same intent graph) of a pending
    agent item in Play as user and in Play as agent, and free play of the assigned sample itself;
    the admin sees why the sibling is hidden.
(d) A play-as-agent study whose other seat is the simulated user, created on the Data page and
    exported the same way.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from core.cli import main
from core.engine import episode
from core.envs.registry import load_world
from core.protocol.reply_reader import read_reply
from core.store import Store
from core.studio.auth import hash_password
from tests.e2e.conftest import screenshot, start_studio, wait_for_app

pytestmark = pytest.mark.e2e

PW = "study-pw"


@pytest.fixture(scope="module")
def studio(studio_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("study_words_home")
    src = sqlite3.connect(studio_home / "driftbench.db")
    dst = sqlite3.connect(home / "driftbench.db")
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    creds = home / "users.json"
    pw = hash_password(PW, iterations=1000)
    users = {"ann": "annotator", "bob": "annotator", "rea": "admin"}
    creds.write_text(
        json.dumps({"users": {n: {"role": r, "password": pw} for n, r in users.items()}})
    )
    env = {"DRIFTBENCH_AUTH": "password", "DRIFTBENCH_CREDENTIALS": str(creds)}
    proc, url = start_studio(home, extra_env=env)
    yield {"url": url, "home": home, "creds": creds}
    proc.terminate()
    proc.wait(timeout=15)


def _store(studio: dict[str, Any]) -> Store:
    return Store.open(studio["home"] / "driftbench.db")


def _context(chromium: Any) -> tuple[Any, Any]:
    ctx = chromium.new_context(viewport={"width": 1400, "height": 1600})
    tab = ctx.new_page()
    tab.set_default_timeout(45_000)
    return ctx, tab


def _sign_in(tab: Any, url: str, name: str) -> None:
    tab.goto(url)
    wait_for_app(tab)
    tab.get_by_role("textbox", name="User name").fill(name)
    tab.get_by_role("textbox", name="Password").fill(PW)
    tab.get_by_role("button", name="Sign in").click()
    tab.get_by_text(f"Signed in as {name}").wait_for()
    wait_for_app(tab)


def _button(tab: Any, name: str) -> Any:
    return tab.get_by_role("button", name=name, exact=True)


def _pick(tab: Any, label: str, options: list[str]) -> None:
    """Choose options of a Streamlit multiselect by its label (typed, then picked)."""
    wait_for_app(tab)

    def box() -> Any:  # re-found each time: a rerun may replace the element
        return tab.get_by_test_id("stMultiSelect").filter(has_text=label).first

    for option in options:
        box().locator("input").click()
        box().locator("input").fill(option)
        tab.get_by_role("option", name=option, exact=True).click()
    tab.keyboard.press("Escape")
    for option in options:
        box().get_by_text(option, exact=True).wait_for()


def _price_samples(store: Store, n: int, offset: int = 0) -> list[str]:
    """WebShop samples whose goal has a colour-like option and a price cap (for the replies)."""
    from core.model.sample import Sample
    from core.runner.plan import SampleSource

    src = SampleSource(store)
    out = []
    for row in store.sample_rows("webshop")[offset:]:
        sample = Sample.model_validate_json(store.sample_json(row["sample_id"]))
        root = src.graph("webshop", sample.graph_id).node(sample.root_intent_id)
        slots = {c.slot for c in root.conditions}
        if "price_upper" in slots and "option:0" in slots:
            out.append(row["sample_id"])
        if len(out) == n:
            break
    return out


def _create_play_study(
    tab: Any,
    url: str,
    kind_label: str,
    name: str,
    ids: list[str],
    annotators: list[str],
    benchmark: str = "webshop",
) -> None:
    tab.goto(f"{url}/data")
    wait_for_app(tab)
    tab.get_by_role("tab", name="Studies").click(timeout=120_000)
    exp = tab.get_by_test_id("stExpander").filter(has_text="New study")
    exp.wait_for()
    wait_for_app(tab)
    if exp.locator("details").first.get_attribute("open") is None:
        exp.locator("summary").first.click()
    exp.get_by_text("Kind of study").wait_for()
    tab.get_by_role("radiogroup", name="Kind of study").get_by_text(kind_label, exact=True).click()
    marker = "Agent on the other side" if kind_label == "Play as user" else "Simulated user reads"
    tab.get_by_text(re.compile(marker)).wait_for()  # the kind's own form has rendered
    wait_for_app(tab)
    field = tab.get_by_label("Study name")
    for _ in range(5):  # a late rerun may re-render the form: fill until the value holds
        field.fill(name)
        field.press("Tab")
        wait_for_app(tab)
        if field.input_value() == name:
            break
    if benchmark != "webshop":
        tab.get_by_test_id("stSelectbox").filter(has_text="Benchmark").first.click()
        tab.get_by_role("option", name=benchmark, exact=True).click()
    tab.get_by_label("Or these sample ids (comma-separated)").fill(", ".join(ids))
    _pick(tab, "Annotators (accounts)", annotators)
    overlap = tab.get_by_label("People per sample (overlap)")
    overlap.fill(str(len(annotators)))
    overlap.press("Tab")
    _button(tab, "Create study").click()
    try:
        tab.get_by_text(f"Created study '{name}'").wait_for(timeout=120_000)
    except Exception:
        screenshot(tab, f"failed_create_{name}")
        raise
    wait_for_app(tab)


def _type_reply(tab: Any, text: str, *, deliberate: bool = False) -> None:
    box = tab.get_by_test_id("stTextArea").locator("textarea").last
    box.fill(text)
    _button(tab, "Check what the agent will learn").click()
    tab.get_by_text("What the agent will learn from your words").wait_for()
    _button(tab, "Send reply").click()
    if deliberate:
        tab.get_by_text("Your reply says something other than your goal").wait_for()
        screenshot(tab, "play_user_deliberate")
        _button(tab, "Yes, it's deliberate — send it").click()
    tab.get_by_test_id("stChatMessage").filter(has_text=text).first.wait_for(timeout=60_000)


def _play_user_item(tab: Any, store: Store, url: str, aid: int, contradict: bool) -> list[str]:
    """Play one study item to its end by typing only; return the typed texts in order."""
    tab.goto(f"{url}/play_user?assignment={aid}")
    wait_for_app(tab)
    _button(tab, "Start this study item").click()
    tab.wait_for_url(re.compile(r".*[?&]episode=\w+"))
    eid = re.search(r"episode=(\w+)", tab.url).group(1)  # type: ignore[union-attr]
    waiting, over = _button(tab, "Send reply"), tab.get_by_text("Episode over")
    typed: list[str] = []
    for n in range(30):
        waiting.or_(over).first.wait_for(timeout=60_000)
        if over.count():
            break
        uv = episode.user_view(store, eid)
        goal = {line.slot: line for line in uv.intent}
        if n == 0 and "option:0" in goal:
            text = f"I would like it {goal['option:0'].phrase}, please."
        elif n == 1 and contradict and "price_upper" in goal:
            text = "My budget is under $9000."
            _type_reply(tab, text, deliberate=True)
            typed.append(text)
            continue
        else:
            text = f"Reply {chr(65 + n)}: not sure, you decide."
        _type_reply(tab, text)
        typed.append(text)
    over.wait_for(timeout=60_000)
    return typed


def _export(studio: dict[str, Any], study: str, out: Path) -> dict[str, list[dict[str, Any]]]:
    code = main(
        [
            "--store",
            str(studio["home"] / "driftbench.db"),
            "studies",
            "export",
            study,
            "--format",
            "jsonl",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    return {
        name: [json.loads(x) for x in (out / f"{name}.jsonl").read_text().splitlines()]
        for name in ("labels", "plays", "turns", "surveys", "timings")
    }


def test_a_b_play_user_study_by_words_then_survey_once(
    studio: dict[str, Any], chromium: Any, tmp_path: Path
) -> None:
    url = studio["url"]
    store = _store(studio)
    ids = _price_samples(store, 3)
    ctx, tab = _context(chromium)
    try:
        _sign_in(tab, url, "rea")
        _create_play_study(tab, url, "Play as user", "words-study", ids, ["ann", "bob"])
        screenshot(tab, "data_play_study")
    finally:
        ctx.close()
    rows = store.conn.execute(
        "SELECT annotator_id, assignment_id, target_id FROM assignments a JOIN studies s "
        "ON s.study_id=a.study_id WHERE s.name='words-study' ORDER BY annotator_id, position"
    ).fetchall()
    assert sorted({r[2] for r in rows}) == sorted(ids) and len(rows) == 6
    typed: dict[str, list[str]] = {}
    for person, contradict in (("ann", True), ("bob", False)):
        aid = next(r[1] for r in rows if r[0] == person)
        ctx, tab = _context(chromium)
        try:
            _sign_in(tab, url, person)
            typed[person] = _play_user_item(tab, store, url, aid, contradict)
            # (b) the survey: answered once, read-only after a reload
            if person == "ann":
                for question, answer in (
                    ("The agent understood what I wanted", "4"),
                    ("The agent's questions were worth my patience", "3"),
                    ("I could stay in character", "5"),
                ):
                    group = tab.get_by_role("radiogroup", name=question)
                    group.get_by_text(answer, exact=True).click()
                adapted = tab.get_by_role(
                    "radiogroup", name="When my goal changed, the agent adapted"
                )
                if adapted.count():
                    adapted.get_by_text("partly", exact=True).click()
                _button(tab, "Save survey").click()
                tab.get_by_text("Your answers (saved once").wait_for()
                tab.reload()
                wait_for_app(tab)
                tab.get_by_text("Your answers (saved once").wait_for()
                tab.get_by_text(re.compile("understood what I wanted: 4")).wait_for()
                assert _button(tab, "Save survey").count() == 0
                screenshot(tab, "play_user_survey_saved")
        finally:
            ctx.close()
    n_surveys = store.conn.execute(
        "SELECT count(*) FROM annotations WHERE label_kind='play_user_survey' AND annotator='ann'"
    ).fetchone()[0]
    assert n_surveys == 1

    data = _export(studio, "words-study", tmp_path / "words")
    human = [t for t in data["turns"] if t["voice"] == "human"]
    for person in ("ann", "bob"):
        mine = [t for t in human if t["annotator"] == person]
        assert [t["text"] for t in mine] == typed[person]  # exactly the typed texts
        for t in mine:
            assert t["added"] == [] and t["removed"] == []  # no tick-box, no correction
            assert t["final_disclosures"] == t["read"]
    # the disclosures are the ones read from the words (re-read offline here)
    for t in human:
        play = next(p for p in data["plays"] if p["episode_id"] == t["episode_id"])
        assert play["role"] == "play_user"
    first = human[0]
    assert first["text"].startswith("I would like it") and "option:0" in first["read"]
    contra = [t for t in human if t["contradictions"]]
    assert contra and contra[0]["deliberate"] is True
    assert contra[0]["contradictions"][0]["slot"] == "price_upper"
    assert "9000" in contra[0]["contradictions"][0]["said"]
    assert [s["annotator"] for s in data["surveys"]] == ["ann"]
    # the reading stored is what the project's reader reads from the same words
    eid = first["episode_id"]
    start = store.events(eid)[0]
    intent = start.graph.node(start.sample.root_intent_id)
    world = load_world("webshop")
    assert [d.slot for d in read_reply(first["text"], intent, world).disclosures] == first["read"]
    store.close()


def _siblings(store: Store) -> tuple[str, str]:
    row = store.conn.execute(
        "SELECT group_concat(sample_id) FROM samples WHERE benchmark='webshop' "
        "GROUP BY graph_id HAVING count(*) >= 2 ORDER BY graph_id LIMIT 1"
    ).fetchone()
    a, b = sorted(row[0].split(","))[:2]
    return a, b


def test_c_blind_bypasses_are_refused(studio: dict[str, Any], chromium: Any) -> None:
    url = studio["url"]
    store = _store(studio)
    item, sibling = _siblings(store)
    ctx, tab = _context(chromium)
    try:
        _sign_in(tab, url, "rea")
        _create_play_study(tab, url, "Play as agent", "blind-agent-2", [item], ["ann"])
        # the admin sees why the sibling is hidden from ann
        why = tab.locator(".st-key-stu-why")
        box = why.get_by_test_id("stSelectbox").first
        box.scroll_into_view_if_needed()
        for _ in range(3):  # the selectbox may be re-rendered by a late rerun: retry
            box.click()
            tab.keyboard.type("ann")
            tab.keyboard.press("Enter")
            wait_for_app(tab)
            if box.get_by_text("ann", exact=True).count():
                break
        field = why.get_by_label("Sample id", exact=True)
        field.fill(sibling)
        field.press("Enter")
        why.get_by_text(re.compile("shares its task")).first.wait_for()
        screenshot(tab, "data_why_hidden")
    finally:
        ctx.close()
    ctx, tab = _context(chromium)
    try:
        _sign_in(tab, url, "ann")
        for page, sample, needle in (
            ("play_user", sibling, "shares its task"),
            ("play_agent", sibling, "shares its task"),
            ("play_agent", item, "pending study items"),
            ("play_user", item, "assigned to play the agent"),
        ):
            query = urlencode({"benchmark": "webshop", "sample": sample, "seed": 0})
            tab.goto(f"{url}/{page}?{query}")
            wait_for_app(tab)
            # the deep link names a hidden sample: the page says why and offers no start
            tab.get_by_text(re.compile(needle)).first.wait_for()
            assert _button(tab, "Start episode").count() == 0
            main_text = str(tab.locator('[data-testid="stMain"]').inner_text())
            assert "What you want now" not in main_text and "Debrief" not in main_text
        plays = store.conn.execute(
            "SELECT count(*) FROM study_plays WHERE annotator_id='ann' AND sample_id IN (?,?)",
            (item, sibling),
        ).fetchone()[0]
        assert plays == 0  # nothing was started, so no goal and no debrief was ever shown
        screenshot(tab, "play_blind_refused")
    finally:
        ctx.close()
        store.close()


def test_d_play_agent_study_against_the_simulated_user(
    studio: dict[str, Any], chromium: Any, tmp_path: Path
) -> None:
    url = studio["url"]
    store = _store(studio)
    sample = _price_samples(store, 1, offset=40)[0]
    ctx, tab = _context(chromium)
    try:
        _sign_in(tab, url, "rea")
        _create_play_study(tab, url, "Play as agent", "agent-study", [sample], ["bob"])
    finally:
        ctx.close()
    aid = store.conn.execute(
        "SELECT assignment_id FROM assignments a JOIN studies s ON s.study_id=a.study_id "
        "WHERE s.name='agent-study'"
    ).fetchone()[0]
    ctx, tab = _context(chromium)
    try:
        _sign_in(tab, url, "bob")
        tab.goto(f"{url}/play_agent?assignment={aid}")
        wait_for_app(tab)
        _button(tab, "Start this study item").click()
        tab.wait_for_url(re.compile(r".*[?&]episode=\w+"))
        wait_for_app(tab)
        eid = re.search(r"episode=(\w+)", tab.url).group(1)  # type: ignore[union-attr]
        chat = tab.get_by_test_id("stChatInputTextArea")
        chat.fill("What colour would you like, and what is your budget?")
        chat.press("Enter")
        tab.get_by_test_id("stChatMessage").nth(2).wait_for(timeout=60_000)
        for _ in range(40):
            if store.episode_status(eid)[0] == "ended":
                break
            tab.get_by_label("Your final answer").fill("done")
            _button(tab, "Give final answer").click()
            wait_for_app(tab)
        tab.get_by_text("Debrief: what you could not see").wait_for()
    finally:
        ctx.close()
    data = _export(studio, "agent-study", tmp_path / "agent")
    [play] = data["plays"]
    assert play["role"] == "play_agent" and play["annotator_id"] == "bob"
    assert play["user_voice"] == "template" and play["agent"] == "human"
    sim = [t for t in data["turns"] if t["episode_id"] == play["episode_id"]]
    assert sim and {t["voice"] for t in sim} <= {"template"}
    assert all(t["reader"] is None for t in sim)  # the simulator's replies need no reading
    assert [t["status"] for t in data["timings"]] == ["done"]
    store.close()
