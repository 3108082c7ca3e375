"""Blind by design, in Debian chromium (issue 21.6, 22.4).

A play study assigns annotator ``ann`` to play the *agent* on one sample. ``ann`` signs in,
starts the item from Home (same tab), and cannot reach the *user* view of that sample: neither
by starting Play as user on it (deep link with the sample pre-selected) nor by opening their own
agent episode there. Another annotator who opens ``ann``'s episode by ``?episode=`` is refused
and cannot act on it. When ``ann``'s episode ends, the debrief shows the hidden intent.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from core.store import Store
from core.studies import add_annotator, assign_study, create_study
from core.studio.auth import hash_password
from tests.e2e.conftest import screenshot, start_studio, wait_for_app

pytestmark = pytest.mark.e2e

PW = "blind-pw"


@pytest.fixture(scope="module")
def blind(studio_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("blind_home")
    src = sqlite3.connect(studio_home / "driftbench.db")
    dst = sqlite3.connect(home / "driftbench.db")
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    store = Store.open(home / "driftbench.db")
    sample = store.sample_rows("tau2_airline")[4]
    create_study(
        store,
        {
            "name": "blind-agent",
            "description": "Play the airline agent.",
            "roles": ["play_agent"],
            "samples": [sample["sample_id"]],
            "overlap": 1,
        },
    )
    add_annotator(store, "ann")
    assign_study(store, "blind-agent", ["ann"], overlap=1)
    store.close()
    creds = home / "users.json"
    pw = hash_password(PW, iterations=1000)
    creds.write_text(
        json.dumps(
            {
                "users": {
                    "ann": {"role": "annotator", "password": pw},
                    "bob": {"role": "annotator", "password": pw},
                }
            }
        )
    )
    proc, url = start_studio(
        home, extra_env={"DRIFTBENCH_AUTH": "password", "DRIFTBENCH_CREDENTIALS": str(creds)}
    )
    yield {"url": url, "home": home, "sample": sample}
    proc.terminate()
    proc.wait(timeout=15)


def _context(chromium: Any) -> tuple[Any, Any]:
    ctx = chromium.new_context(viewport={"width": 1400, "height": 1000})
    tab = ctx.new_page()
    tab.set_default_timeout(30_000)
    return ctx, tab


def _sign_in(tab: Any, url: str, name: str) -> None:
    tab.goto(url)
    wait_for_app(tab)
    tab.get_by_role("textbox", name="User name").fill(name)
    tab.get_by_role("textbox", name="Password").fill(PW)
    tab.get_by_role("button", name="Sign in").click()
    tab.get_by_text(f"Signed in as {name}").wait_for()
    wait_for_app(tab)


def _main(tab: Any) -> str:
    return str(tab.locator('[data-testid="stMain"]').inner_text())


def test_the_agent_role_participant_cannot_reach_the_user_view(
    blind: dict[str, Any], chromium: Any
) -> None:
    url, sample = blind["url"], blind["sample"]
    ctx, tab = _context(chromium)
    try:
        _sign_in(tab, url, "ann")
        tab.get_by_text("What you can do here").wait_for()
        screenshot(tab, "home_annotator")
        tab.get_by_role("link", name="Play this item").click()  # same tab
        tab.get_by_role("heading", name="Play as agent").wait_for()
        assert len(ctx.pages) == 1
        tab.get_by_role("button", name="Start this study item").click()
        tab.wait_for_url(re.compile(r".*[?&]episode=\w+"))
        eid = parse_qs(urlparse(tab.url).query)["episode"][0]
        wait_for_app(tab)
        store = Store.open(blind["home"] / "driftbench.db")
        assert store.header(eid).sample_id == sample["sample_id"]

        # 1. Play as user, deep-linked to the same sample: refused before anything is shown
        query = urlencode(
            {"benchmark": sample["benchmark"], "sample": sample["sample_id"], "seed": 0}
        )
        tab.goto(f"{url}/play_user?{query}")
        wait_for_app(tab)
        tab.get_by_text(re.compile("assigned to play the agent on this sample")).wait_for()
        assert tab.get_by_role("button", name="Start episode").count() == 0
        assert "What you want now" not in _main(tab)
        n_user_plays = store.conn.execute(
            "SELECT count(*) FROM study_plays WHERE annotator_id='ann' AND role='play_user'"
        ).fetchone()[0]
        assert n_user_plays == 0
        # 2. their own agent episode opened on the user page: refused too
        tab.goto(f"{url}/play_user?episode={eid}")
        wait_for_app(tab)
        tab.get_by_text(re.compile("not a play-as-user episode")).wait_for()
        assert "What you want now" not in _main(tab)
    finally:
        ctx.close()

    # 3. another annotator opening ann's episode by URL is refused and cannot end it (22.4)
    ctx, tab = _context(chromium)
    try:
        _sign_in(tab, url, "bob")
        tab.goto(f"{url}/play_agent?episode={eid}")
        wait_for_app(tab)
        tab.get_by_text(re.compile("belongs to another person")).wait_for()
        assert tab.get_by_role("button", name="Give final answer").count() == 0
        screenshot(tab, "play_refused")
    finally:
        ctx.close()
    before = len(store.events(eid))
    assert len(store.events(eid)) == before and not store.episode_status(eid)[0] == "ended"

    # 4. ann plays to the end (reload keeps the sign-in and the episode); then the debrief
    ctx, tab = _context(chromium)
    try:
        _sign_in(tab, url, "ann")
        tab.goto(f"{url}/play_agent?episode={eid}")
        wait_for_app(tab)
        for _ in range(40):
            if store.episode_status(eid)[0] == "ended":
                break
            tab.get_by_label("Your final answer").fill("done")
            tab.get_by_role("button", name="Give final answer").click()
            wait_for_app(tab)
        tab.get_by_text("Debrief: what you could not see").wait_for()
        tab.get_by_text("What the customer really wanted at the start").wait_for()
        tab.get_by_text("This episode's GRIP metrics").wait_for()
        screenshot(tab, "play_agent_debrief")
        done = store.conn.execute(
            "SELECT status FROM assignments WHERE annotator_id='ann'"
        ).fetchone()[0]
        assert done == "done"
    finally:
        ctx.close()
        store.close()
