"""Real-browser tests of issue 30: people can work and read in the studio.

* The persona card names the customer the world knows.
* A reopened annotation item is confirmed unchanged (and counts as done again).
* Inspect's "Open the branch" is the branch's URL and a reload keeps showing the branch.
* Watch live's list survives a reload.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from core.store import Store
from core.studies import add_annotator, annotator_queue, assign_study, create_study
from core.studio.persona_card import persona_card
from tests.e2e.conftest import screenshot, start_studio, wait_for_app

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def own(studio_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A studio over a private copy of the demo store (this module adds studies and branches)."""
    home = tmp_path_factory.mktemp("usability_home")
    src = sqlite3.connect(studio_home / "driftbench.db")
    dst = sqlite3.connect(home / "driftbench.db")
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    proc, url = start_studio(home)
    yield url, home
    proc.terminate()
    proc.wait(timeout=15)


def _episode_from_url(tab: Any) -> str:
    tab.wait_for_url(re.compile(r".*[?&]episode=\w+"))
    return parse_qs(urlparse(tab.url).query)["episode"][0]


def test_the_persona_card_names_the_worlds_customer(own: tuple[str, Path], tab: Any) -> None:
    url, home = own
    query = urlencode({"benchmark": "tau2_retail", "persona": "avoidant", "seed": 2})
    tab.goto(f"{url}/play_user?{query}")
    wait_for_app(tab)
    tab.get_by_role("button", name="Start episode", exact=True).click()
    eid = _episode_from_url(tab)
    box = tab.locator(".st-key-play_user_persona")
    heading = box.get_by_role("heading").first
    heading.wait_for()
    store = Store.open(home / "driftbench.db")
    try:
        facts = persona_card(store, eid).facts  # the world's own profile of this customer
    finally:
        store.close()
    name = f"{facts['first_name']} {facts['last_name']}"
    assert heading.inner_text().startswith(f"You are {name}")
    assert box.get_by_text(f"first name: {facts['first_name']}").count() == 1
    # the persona file's invented person never appears next to the customer
    assert "Inge" not in box.inner_text()
    screenshot(tab, "persona_card")


def test_a_reopened_annotation_item_is_confirmed_unchanged(own: tuple[str, Path], tab: Any) -> None:
    url, home = own
    store = Store.open(home / "driftbench.db")
    eps = [r["episode_id"] for r in store.episode_rows(status="ended")[:2]]
    create_study(
        store,
        {"name": "reopen", "episodes": eps, "label_kinds": ["fault_type"], "overlap": 1},
    )
    add_annotator(store, "rea")
    assign_study(store, "reopen", ["rea"], overlap=1)
    store.close()
    tab.goto(f"{url}/annotate")
    wait_for_app(tab)
    tab.get_by_test_id("stSelectbox").filter(has_text="Annotate as").first.click()
    tab.get_by_role("option", name="rea", exact=True).click()
    wait_for_app(tab)
    for n in (1, 2):
        tab.get_by_text(f"Item {n} of 2").wait_for()
        # each choice reads as words with its description; the glossary has examples
        form = tab.get_by_test_id("stForm")
        form.get_by_text("Factual error", exact=True).click()
        tab.get_by_role("button", name=re.compile(r"^Save labels")).click()
        tab.get_by_text(re.compile(rf"^{n} of 2 done")).wait_for()
    tab.get_by_text("All 2 items done").wait_for()
    tab.get_by_text(re.compile(r"^My queue")).click()
    tab.get_by_role("button", name="Reopen").first.click()
    tab.get_by_text("Item 1 of 2").wait_for()
    tab.get_by_text("save as it is to confirm your labels unchanged").wait_for()
    wait_for_app(tab)
    checked = tab.get_by_test_id("stForm").locator("input:checked")
    checked.wait_for(state="attached")  # the stored label is prefilled
    tab.get_by_role("button", name=re.compile(r"^Save labels")).click()
    tab.get_by_text(re.compile(r"Confirmed item .* unchanged")).wait_for()
    tab.get_by_text("All 2 items done").wait_for()
    store = Store.open(home / "driftbench.db")
    try:
        items = annotator_queue(store, "reopen", "rea").items
        assert [i.status for i in items] == ["done", "done"]
        n = store.conn.execute("SELECT count(*) FROM annotations WHERE annotator='rea'").fetchone()
        assert n[0] == 2  # nothing was written twice
    finally:
        store.close()
    screenshot(tab, "annotate_confirmed")


def test_inspect_branch_link_is_the_branchs_url(own: tuple[str, Path], tab: Any) -> None:
    url, home = own
    store = Store.open(home / "driftbench.db")
    parent = next(r["episode_id"] for r in store.episode_rows(status="ended") if r["n_events"] > 20)
    store.close()
    tab.goto(f"{url}/inspect?episode={parent}")
    wait_for_app(tab)
    tab.get_by_role("tab", name="Branch from a turn").click()
    tab.get_by_role("button", name="Create branch").click()
    link = tab.get_by_role("link", name="Open the branch")
    link.wait_for(timeout=60_000)
    branch = parse_qs(urlparse(str(link.get_attribute("href"))).query)["episode"][0]
    assert branch != parent
    link.click()
    tab.wait_for_url(re.compile(rf".*episode={branch}"))
    wait_for_app(tab)
    tab.get_by_role("heading", name=f"Episode {branch}").wait_for()
    tab.get_by_text(f"Branched from {parent}").wait_for()
    tab.reload()
    wait_for_app(tab)
    tab.get_by_role("heading", name=f"Episode {branch}").wait_for()
    assert f"episode={branch}" in tab.url
    # previous / next turn move the URL's turn
    tab.get_by_role("button", name="Next turn").first.click()
    tab.wait_for_url(re.compile(r".*turn=\d+"))


def test_watch_live_list_survives_a_reload(own: tuple[str, Path], tab: Any) -> None:
    url, _ = own
    tab.goto(f"{url}/watch")
    wait_for_app(tab)
    tab.get_by_test_id("stFormSubmitButton").get_by_role("button").click()
    tab.wait_for_url(re.compile(r".*[?&]watch=[\w,-]+"))
    ids = parse_qs(urlparse(tab.url).query)["watch"][0].split(",")
    assert len(ids) == 5  # all five personas
    for eid in ids:
        tab.get_by_text(eid).first.wait_for()
    tab.reload()
    wait_for_app(tab)
    for eid in ids:
        tab.get_by_text(eid).first.wait_for()
    assert tab.get_by_text("Start an episode above").count() == 0
    screenshot(tab, "watch_reloaded")
