"""Real-browser annotation study: two annotators label the same episodes, a researcher reads κ.

A study over four demo episodes is assigned to ``ann1`` and ``ann2`` with overlap 2. Each
signs in (password mode) and labels the episodes' persona through the Annotate page, one item
at a time, one item submitted with Enter. Their labels are chosen so Cohen's κ is known by
hand: ann1 says (rational, rational, dependent, dependent), ann2 (rational, dependent,
dependent, dependent) on the same episodes: p_o = 3/4, p_e = 1/2·1/4 + 1/2·3/4 = 1/2, so
κ = (3/4 − 1/2) / (1 − 1/2) = 0.500. A researcher then opens Agreement & QA and sees 0.500.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.store import Store
from core.studies import add_annotator, annotator_queue, assign_study, create_study
from core.studio.auth import hash_password
from tests.e2e.conftest import screenshot, start_studio, wait_for_app

pytestmark = pytest.mark.e2e

LABELS = {
    "ann1": ("rational", "rational", "dependent", "dependent"),
    "ann2": ("rational", "dependent", "dependent", "dependent"),
}
PASSWORD = "correct horse"


@pytest.fixture(scope="module")
def study_home(studio_home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A private copy of the demo store with the study, plus the credentials file."""
    home = tmp_path_factory.mktemp("annotation_home")
    src = sqlite3.connect(studio_home / "driftbench.db")
    dst = sqlite3.connect(home / "driftbench.db")
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    store = Store.open(home / "driftbench.db")
    episodes = [r["episode_id"] for r in store.episode_rows(status="ended")[:4]]
    create_study(
        store,
        {
            "name": "persona-e2e",
            "description": "Which persona does the user play?",
            "episodes": episodes,
            "label_kinds": ["persona_id"],
            "overlap": 2,
        },
    )
    for ann in LABELS:
        add_annotator(store, ann)
    assign_study(store, "persona-e2e", list(LABELS), overlap=2)
    # the page shows each annotator's items in queue order; map that order to the labels
    wanted = {}
    for ann, values in LABELS.items():
        by_episode = dict(zip(episodes, values, strict=True))
        order = [
            str(i.target_id)
            for i in annotator_queue(store, "persona-e2e", ann, reveal_ids=True).items
        ]
        wanted[ann] = [by_episode[e] for e in order]
    store.close()
    pw = hash_password(PASSWORD, iterations=1000)
    creds = home / "users.json"
    creds.write_text(
        json.dumps(
            {
                "users": {
                    "ann1": {"role": "annotator", "password": pw},
                    "ann2": {"role": "annotator", "password": pw},
                    "res": {"role": "researcher", "password": pw},
                    "adm": {"role": "admin", "password": pw},
                }
            }
        )
    )
    return {"home": home, "creds": creds, "wanted": wanted, "episodes": episodes}


@pytest.fixture(scope="module")
def url(study_home: dict[str, Any]) -> Iterator[str]:
    proc, base = start_studio(
        study_home["home"],
        extra_env={
            "DRIFTBENCH_AUTH": "password",
            "DRIFTBENCH_CREDENTIALS": str(study_home["creds"]),
        },
    )
    yield base
    proc.terminate()
    proc.wait(timeout=15)


def _sign_in(tab: Any, url: str, name: str) -> None:
    tab.goto(url)
    wait_for_app(tab)
    tab.get_by_role("textbox", name="User name").fill(name)
    tab.get_by_role("textbox", name="Password").fill(PASSWORD)
    tab.get_by_role("button", name="Sign in").click()
    tab.get_by_text(f"{name} · ").first.wait_for()


def _open(tab: Any, title: str) -> None:
    """Navigate through the sidebar (a full page load would start a signed-out session)."""
    tab.get_by_test_id("stSidebarNavLink").filter(has_text=title).click()
    wait_for_app(tab)


def _annotate(tab: Any, url: str, name: str, values: list[str]) -> None:
    _sign_in(tab, url, name)
    nav = tab.get_by_test_id("stSidebarNavLink")
    nav.filter(has_text="Annotate").first.wait_for()  # the role-based navigation has arrived
    wait_for_app(tab)
    assert nav.filter(has_text="Annotate").count() == 1
    for researcher_only in ("Agreement & QA", "Sessions", "Data"):
        assert nav.filter(has_text=researcher_only).count() == 0
    _open(tab, "Annotate")
    tab.get_by_text("Signed in as " + name).wait_for()
    for k, value in enumerate(values):
        tab.get_by_text(f"Item {k + 1} of {len(values)}").wait_for()
        tab.get_by_text(re.compile(rf"^{k} of {len(values)} done")).wait_for()
        wait_for_app(tab)  # the previous item's stale form is gone once the run ends
        form = tab.get_by_test_id("stForm")
        form.get_by_test_id("stRadio").get_by_text(value, exact=True).click()
        if k == 1:
            # keyboard: Enter in the form's text field submits the form
            comment = form.get_by_label("Comment (optional)")
            comment.fill("checked twice")
            comment.press("Enter")
        else:
            form.get_by_role("button", name="Save labels (Enter)").click()
        tab.get_by_text(re.compile(rf"^{k + 1} of {len(values)} done")).wait_for()
        if k == 0 and name == "ann1":
            wait_for_app(tab)
            screenshot(tab, "annotate")
    tab.get_by_text(f"All {len(values)} items done").wait_for()


def test_two_annotators_then_researcher_sees_kappa(
    url: str, study_home: dict[str, Any], chromium: Any
) -> None:
    for name in ("ann1", "ann2"):
        ctx = chromium.new_context(viewport={"width": 1400, "height": 1000})
        tab = ctx.new_page()
        tab.set_default_timeout(30_000)
        try:
            _annotate(tab, url, name, study_home["wanted"][name])
        finally:
            ctx.close()

    store = Store.open(study_home["home"] / "driftbench.db", create=False)
    stored = store.conn.execute(
        "SELECT annotator, count(*), sum(seconds IS NOT NULL) FROM annotations "
        "WHERE label_kind='persona_id' GROUP BY annotator"
    ).fetchall()
    comments = store.conn.execute(
        "SELECT annotator, value FROM annotations WHERE label_kind='comment'"
    ).fetchall()
    store.close()
    assert stored == [("ann1", 4, 4), ("ann2", 4, 4)]
    assert comments == [("ann1", '"checked twice"'), ("ann2", '"checked twice"')]

    ctx = chromium.new_context(viewport={"width": 1400, "height": 1000})
    tab = ctx.new_page()
    tab.set_default_timeout(30_000)
    try:
        _sign_in(tab, url, "res")
        nav = tab.get_by_test_id("stSidebarNavLink")
        nav.first.wait_for()  # the navigation renders after the sign-in (count() never waits)
        assert nav.filter(has_text="Agreement & QA").count() == 1
        _open(tab, "Agreement & QA")
        kappa = tab.get_by_test_id("stMetric").filter(has_text="Cohen's κ (mean of pairs)")
        kappa.get_by_test_id("stMetricValue").filter(has_text="0.500").wait_for()
        tab.get_by_test_id("stMetric").filter(has_text="% agreement").get_by_text(
            "75.0%"
        ).wait_for()
        tab.get_by_test_id("stPlotlyChart").first.wait_for()
        disputed = study_home["episodes"][1]
        link = tab.get_by_role("link").filter(has_text=disputed).first
        link.wait_for()
        screenshot(tab, "agreement")
        # the disagreement link opens the inspector on that episode, still signed in
        link.click()
        wait_for_app(tab)
        tab.wait_for_url(re.compile(rf".*/inspect\?episode={disputed}"))
        tab.get_by_text(f"episode {disputed}").first.wait_for()

        _open(tab, "Sessions")
        tab.get_by_role("button", name="Generate and import a synthetic demo file").click()
        tab.get_by_text(re.compile(r"Imported 60 session\(s\)")).wait_for()
        tab.get_by_role("tab", name="Two-judge report").click()
        tab.get_by_role("button", name="Run the two-judge report").click()
        tab.get_by_text("offline approximation", exact=False).first.wait_for()
        tab.get_by_test_id("stPlotlyChart").first.wait_for()
        wait_for_app(tab)
        screenshot(tab, "sessions")
        # the Data page (accounts, imports, studies) is an admin's: a researcher has no link
        assert tab.get_by_test_id("stSidebarNavLink").filter(has_text="Data").count() == 0
    finally:
        ctx.close()

    ctx = chromium.new_context(viewport={"width": 1400, "height": 1000})
    tab = ctx.new_page()
    tab.set_default_timeout(30_000)
    try:
        _sign_in(tab, url, "adm")
        tab.get_by_test_id("stSidebarNavLink").first.wait_for()
        _open(tab, "Data")
        tab.get_by_role("tab", name="Studies").click()
        tab.get_by_text("Manage a study").wait_for()  # its picture: test_screenshots.py
    finally:
        ctx.close()
