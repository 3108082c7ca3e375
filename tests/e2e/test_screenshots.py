"""A screenshot of every page, taken in Debian chromium (the README links them).

The studio runs (auth none, admin) over a private copy of the demo store to which the fixture
adds what each page needs to show real content: a labelled study (Annotate, Agreement & QA),
imported synthetic sessions (Sessions), episodes being played as user and as agent. Every page
is opened by URL, given time to render, and captured at a 1280×860 viewport; each file must stay
under 300 KB. Play as user is shown at work: a reply typed in the person's own words (the goal
of what the agent asked) and, below it, what the agent will learn from those words. Pictures
go to ``test-artifacts/screenshots/pages/``; with ``DRIFTBENCH_SCREENSHOTS=docs`` they replace
the committed ones in ``docs/screenshots/``.
"""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.paths import PROJECT_ROOT
from core.store import Store
from core.studies import add_annotator, annotator_queue, assign_study, create_study, label_item
from tests.e2e.conftest import ARTIFACTS, start_studio, wait_for_app

pytestmark = pytest.mark.e2e

MAX_BYTES = 300_000
VIEWPORT = {"width": 1280, "height": 860}
PAGES: dict[str, str] = {
    "home": "/",
    "play_user": "/play_user?episode={user_episode}",
    "play_user_persona": "/play_user?episode={user_episode}",
    "play_agent": "/play_agent?episode={agent_episode}",
    "play_agent_shop": "/play_agent?episode={shop_episode}",
    "annotate": "/annotate",
    "annotate_labels": "/annotate",
    "watch": "/watch",
    "inspect": "/inspect?episode={episode}&turn=2",
    "grip": "/grip?run=demo",
    "grip_heatmap": "/grip?run=demo",
    "construction": "/construction",
    "runs": "/runs",
    "agreement": "/agreement",
    "sessions": "/sessions",
    "data": "/data",
    "data_studies": "/data",
}
"""Page id → the URL its screenshot shows."""

FOCUS: dict[str, str] = {
    "play_user": '[class*="st-key-play_user_draft_"]',
    "data_studies": '[data-testid="stExpander"]:has-text("Kind of study")',
    "annotate_labels": ".st-key-ann-glossary-fault_type",
    "play_agent": ".st-key-play_agent_last_result",
    "grip_heatmap": ".st-key-grip-heatmap",
}
"""Pictures of a part further down a page: the element scrolled to the top of the view."""


def _out_dir() -> Path:
    if os.environ.get("DRIFTBENCH_SCREENSHOTS") == "docs":
        return PROJECT_ROOT / "docs" / "screenshots"
    return ARTIFACTS / "pages"


@pytest.fixture(scope="module")
def shots(studio_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from core.engine import episode
    from core.model.actions import EnvOp
    from core.model.world import EnvAction
    from core.studies.sessions import import_sessions, write_sessions_jsonl
    from core.studio import roleplay

    home = tmp_path_factory.mktemp("shots_home")
    src = sqlite3.connect(studio_home / "driftbench.db")
    dst = sqlite3.connect(home / "driftbench.db")
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    store = Store.open(home / "driftbench.db")
    me = os.environ.get("USER", "local")
    episodes = [r["episode_id"] for r in store.episode_rows(status="ended")[:6]]
    create_study(
        store,
        {
            "name": "persona-check",
            "description": "Which persona is the user playing? Read the whole conversation.",
            "episodes": episodes,
            "label_kinds": ["persona_id"],
            "overlap": 2,
        },
    )
    for ann in ("ann1", "ann2", me):
        add_annotator(store, ann)
    assign_study(store, "persona-check", ["ann1", "ann2"], overlap=2)
    assign_study(store, "persona-check", [me], overlap=3)
    rng = random.Random(3)
    personas = ["rational", "dependent", "avoidant"]
    for ann in ("ann1", "ann2"):
        for item in annotator_queue(store, "persona-check", ann).items:
            label_item(store, item.assignment_id, "persona_id", rng.choice(personas))
    path = write_sessions_jsonl(home / "uploads" / "synthetic.jsonl", 40, 0)
    import_sessions(store, path)
    fault_eps = [r["episode_id"] for r in store.episode_rows(status="ended") if r["n_events"] > 12]
    create_study(
        store,
        {
            "name": "fault-check",
            "description": "Which communication fault does the opening request carry?",
            "episodes": fault_eps[:3],
            "label_kinds": ["fault_type"],
            "overlap": 1,
        },
    )
    assign_study(store, "fault-check", [me], overlap=1)
    user_episode = roleplay.start_user_play(
        store, benchmark="tau2_airline", sample_id=None, persona="dependent", seed=4, player=me
    )
    roleplay.advance(store, user_episode)
    waiting = roleplay.user_play_view(store, user_episode).user
    asked = [line for line in waiting.intent if line.slot in waiting.pending_asked]
    reply = "Of course — " + "; and ".join(line.phrase for line in asked[:2]) + "."
    agent_episode = roleplay.start_agent_play(
        store,
        benchmark="tau2_retail",
        sample_id=None,
        persona="rational",
        seed=2,
        player=me,
        show_patience=True,
    )
    # a person at work: the order they asked about, its result in full
    order = episode.truth(store, agent_episode).world.compile_intent(
        episode.truth(store, agent_episode).current_intent()
    )
    order_id = next((a.args.get("order_id") for a in order if "order_id" in a.args), None)
    if order_id:
        roleplay.agent_play_step(
            store,
            agent_episode,
            EnvOp(action=EnvAction(tool="get_order_details", args={"order_id": order_id})),
        )
    shop_episode = roleplay.start_agent_play(
        store, benchmark="webshop", sample_id=None, persona="rational", seed=3, player=me
    )
    query = episode.truth(store, shop_episode).world.compile_intent(
        episode.truth(store, shop_episode).current_intent()
    )[0]
    roleplay.agent_play_step(store, shop_episode, EnvOp(action=query))
    long_one = next(
        r["episode_id"] for r in store.episode_rows(status="ended") if r["n_events"] > 20
    )
    store.close()
    proc, url = start_studio(home)
    yield {
        "url": url,
        "user_episode": user_episode,
        "agent_episode": agent_episode,
        "shop_episode": shop_episode,
        "episode": long_one,
        "reply": reply,
    }
    proc.terminate()
    proc.wait(timeout=15)


@pytest.mark.parametrize("page_id", list(PAGES))
def test_screenshot_of_every_page(shots: dict[str, Any], chromium: Any, page_id: str) -> None:
    ctx = chromium.new_context(viewport=VIEWPORT, device_scale_factor=1)
    tab = ctx.new_page()
    tab.set_default_timeout(30_000)
    try:
        path = PAGES[page_id].format(**shots)
        tab.goto(shots["url"] + path)
        wait_for_app(tab)
        tab.locator("h1").first.wait_for(state="attached")
        if page_id == "watch":
            tab.get_by_test_id("stFormSubmitButton").get_by_role("button").click()
            tab.get_by_text("Inspect turn by turn").first.wait_for(timeout=60_000)
        if page_id in ("grip", "grip_heatmap", "inspect", "construction", "watch"):
            tab.get_by_test_id("stPlotlyChart").first.wait_for()
        if page_id == "runs":  # the live fragment draws the table and the run after the page
            panel = tab.locator(".st-key-runs-selected-panel")
            panel.get_by_text("Open in the GRIP dashboard").wait_for()
            tab.get_by_test_id("stDataFrame").first.wait_for()
        if page_id == "agreement":  # the labelled study (two annotators), not the empty one
            tab.get_by_test_id("stSelectbox").filter(has_text="Study").click()
            tab.keyboard.type("persona-check")
            tab.keyboard.press("Enter")
            tab.get_by_text("persona_id").first.wait_for()
            wait_for_app(tab)
            tab.get_by_test_id("stPlotlyChart").first.wait_for()
        tab.wait_for_timeout(1500)  # plotly and dataframes finish drawing
        # pages with a chat input open scrolled to the bottom: show them from the top
        tab.evaluate(
            "() => document.querySelectorAll('*')"
            ".forEach(e => { if (e.scrollTop) e.scrollTop = 0; })"
        )
        if page_id == "play_user":  # the typed-reply flow: words, then what the agent learns
            box = tab.get_by_label("Your reply to the agent")
            box.fill(shots["reply"])
            box.press("Control+Enter")
            tab.get_by_role("button", name="Check what the agent will learn").click()
            tab.get_by_text("What the agent will learn from your words").wait_for()
            wait_for_app(tab)
        if page_id == "data_studies":  # the study set-up: a play-as-user study's form
            tab.get_by_role("tab", name="Studies").click()
            tab.get_by_text("New study", exact=True).click()
            kinds = tab.get_by_test_id("stRadio").filter(has_text="Kind of study")
            kinds.get_by_text("Play as user", exact=True).click()
            tab.get_by_text("Agent on the other side").wait_for()
            wait_for_app(tab)
        if page_id == "annotate_labels":  # the glossary open above the label choices
            tab.locator(FOCUS[page_id]).get_by_text("Fault glossary").click()
            tab.locator(FOCUS[page_id]).get_by_text("Example:").first.wait_for()
        if page_id in FOCUS:
            tab.locator(FOCUS[page_id]).first.scroll_into_view_if_needed()
            tab.locator(FOCUS[page_id]).first.evaluate("e => e.scrollIntoView({block: 'start'})")
        tab.wait_for_timeout(300)
        out = _out_dir()
        out.mkdir(parents=True, exist_ok=True)
        file = out / f"{page_id}.png"
        tab.screenshot(path=str(file), full_page=False)
        assert 10_000 < file.stat().st_size < MAX_BYTES, (page_id, file.stat().st_size)
        assert "Traceback" not in tab.locator("body").inner_text()
    finally:
        ctx.close()
