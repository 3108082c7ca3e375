"""Pages that tell the truth, in Debian chromium (issue 21, items 2–4 and 7).

* Branching from a turn never changes the parent run's GRIP grid.
* Inspect's filters change the episode shown, and ``?turn=N`` scrolls to that turn's card.
* The Runs page's selected-run status matches the store during and after a run, its buttons
  follow the state, and the page stops polling by itself.
* Annotate opens its transcript at the top and takes number keys and Enter.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.store import Store
from core.studies import add_annotator, assign_study, create_study
from core.studio.auth import hash_password
from tests.e2e.conftest import screenshot, start_studio, wait_for_app

pytestmark = pytest.mark.e2e


def _copy_home(studio_home: Path, dest: Path) -> Path:
    src = sqlite3.connect(studio_home / "driftbench.db")
    dst = sqlite3.connect(dest / "driftbench.db")
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    return dest


@pytest.fixture(scope="module")
def own(studio_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A studio (auth none) over a private copy of the demo store: these tests write to it."""
    home = _copy_home(studio_home, tmp_path_factory.mktemp("truth_home"))
    proc, url = start_studio(home)
    yield url, home
    proc.terminate()
    proc.wait(timeout=15)


def _grid_text(tab: Any) -> tuple[str, str]:
    tab.get_by_test_id("stTable").first.wait_for()
    caption = tab.get_by_text(re.compile(r"^\d+ episodes · n = episodes in the cell")).first
    return caption.inner_text().split(" · ")[0], tab.get_by_test_id("stTable").first.inner_text()


def _main(tab: Any) -> str:
    return str(tab.locator('[data-testid="stMain"]').inner_text())


def test_branching_does_not_change_the_parent_grid(own: tuple[str, Path], tab: Any) -> None:
    url, home = own
    tab.goto(f"{url}/grip?run=demo")
    wait_for_app(tab)
    count_before, grid_before = _grid_text(tab)
    assert "n" in grid_before.split("\n")[0]  # the grid has an n column
    store = Store.open(home / "driftbench.db")
    run_id = str(store.get_run("demo")["run_id"])
    parent = next(
        r["episode_id"]
        for r in store.episode_rows(run_id=run_id, status="ended")
        if r["n_events"] > 12
    )
    tab.goto(f"{url}/inspect?episode={parent}")
    wait_for_app(tab)
    tab.get_by_role("tab", name="Branch from a turn").click()
    for _ in range(2):
        tab.get_by_role("button", name="Create branch").click()
        tab.get_by_text(re.compile(r"continues with .* in the background")).wait_for()
        wait_for_app(tab)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        branches = [r for r in store.list_runs() if str(r["run_id"]).startswith("br-")]
        ended = [
            r for r in store.episode_rows(status="ended") if (r["run_id"] or "").startswith("br-")
        ]
        if len(branches) == 2 and len(ended) == 2:
            break
        time.sleep(0.2)
    assert len(ended) == 2
    assert all(store.header(r["episode_id"]).parent_episode_id == parent for r in ended)
    tab.goto(f"{url}/grip?run=demo")
    wait_for_app(tab)
    assert _grid_text(tab) == (count_before, grid_before)
    tab.goto(f"{url}/runs")
    wait_for_app(tab)
    tab.get_by_text("Branch runs (2)").wait_for()
    store.close()


def _shown_episode(tab: Any) -> str:
    head = tab.get_by_role("heading", name=re.compile(r"^Episode \w+")).first
    head.wait_for()
    return str(head.inner_text()).split()[1]


def _pick(tab: Any, label: str, option: str) -> None:
    tab.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
    tab.get_by_role("option", name=option, exact=True).click()


def test_filters_change_the_shown_episode_and_turn_links_scroll(
    own: tuple[str, Path], tab: Any
) -> None:
    url, home = own
    store = Store.open(home / "driftbench.db")
    tab.goto(f"{url}/inspect")
    wait_for_app(tab)
    first = _shown_episode(tab)
    method = store.header(first).method
    other = next(m for m in ("B0", "A0", "A2") if m != method)
    label = {"B0": "B0 · No-Ask", "A0": "A0 · Just Ask", "A2": "A2 · Budget Planner"}[other]
    _pick(tab, "method", label)
    tab.wait_for_function(
        "(old) => { const h = Array.from(document.querySelectorAll('h3'))"
        ".find(e => /^Episode /.test(e.innerText)); return h && !h.innerText.includes(old); }",
        arg=first,
    )
    shown = _shown_episode(tab)
    assert shown != first and store.header(shown).method == other
    tab.wait_for_url(re.compile(rf".*episode={shown}"))
    # ?turn=N: the page opens scrolled to that turn's card
    long_one = next(
        r["episode_id"] for r in store.episode_rows(status="ended") if r["n_events"] > 25
    )
    turns = max(e.turn for e in store.events(long_one))
    tab.goto(f"{url}/inspect?episode={long_one}&turn={turns}")
    wait_for_app(tab)
    card = tab.locator(f".st-key-turn-{turns}")
    card.wait_for()
    tab.wait_for_function(
        "(key) => { const el = document.querySelector('.st-key-' + key); if (!el) return false;"
        " const r = el.getBoundingClientRect(); return r.top >= -5 && r.top < innerHeight; }",
        arg=f"turn-{turns}",
        timeout=15_000,
    )
    screenshot(tab, "inspect_turn_link")
    store.close()


def test_runs_status_matches_the_store_during_and_after_a_run(
    studio_home: Path, tmp_path: Path, chromium: Any
) -> None:
    home = _copy_home(studio_home, tmp_path)
    proc, url = start_studio(home)
    ctx = chromium.new_context(viewport={"width": 1400, "height": 1000})
    tab = ctx.new_page()
    tab.set_default_timeout(30_000)
    try:
        tab.goto(f"{url}/runs")
        wait_for_app(tab)
        tab.get_by_text("New run").first.click()
        form = tab.get_by_test_id("stForm")
        form.get_by_label("Samples per benchmark (0 = all)").fill("12")
        form.get_by_role("spinbutton", name="Seeds").fill("10")  # long enough to be seen running
        form.get_by_label("Name (optional)").fill("e2e-live")
        form.get_by_role("spinbutton", name="Worker processes (0 = one per CPU)").fill("1")
        form.get_by_test_id("stFormSubmitButton").get_by_role("button").click()
        tab.get_by_text(re.compile(r"Launched e2e-live in worker process \d+")).wait_for()
        store = Store.open(home / "driftbench.db")
        panel = tab.locator(".st-key-runs-selected-panel")
        seen: list[tuple[str, str, set[str]]] = []
        history: set[str] = set()
        deadline = time.monotonic() + 300
        # one atomic read of the panel, only when none of its elements is stale (a rerun in
        # progress marks the elements it has not redrawn yet)
        read = (
            "() => { const p = document.querySelector('.st-key-runs-selected-panel');"
            " if (!p || p.querySelector('[data-stale=\"true\"]')) return null;"
            " const h = p.querySelector('h3'); const m = p.querySelectorAll("
            "'[data-testid=\"stMetricValue\"]');"
            " return h && m.length >= 2 ? [h.innerText, m[0].innerText, m[1].innerText] : null; }"
        )
        while time.monotonic() < deadline:
            history.add(str(store.get_run("e2e-live")["status"]))
            got = tab.evaluate(read)
            if not got or got[0].strip() != "e2e-live":
                time.sleep(0.05)
                continue
            _, page_status, episodes = got
            history.add(str(store.get_run("e2e-live")["status"]))
            seen.append((page_status, episodes, set(history)))
            if page_status == "completed":
                break
            time.sleep(0.1)
        run = store.get_run("e2e-live")
        logs = "\n".join(p.read_text() for p in (home / "jobs").glob("*.log"))
        assert run["status"] == "completed", (seen[-3:], logs[-2000:])
        # every status the page showed is one the store had (never a stale "pending" next to
        # a completed table), and the page got there without a reload
        assert all(status in hist for status, _, hist in seen), seen
        # …it showed the run while it was under way, and its count never went backwards
        shown = [
            (a, b, sorted(h))
            for i, (a, b, h) in enumerate(seen)
            if i == 0 or seen[i - 1][:2] != (a, b)
        ]
        assert any(status == "running" for status, _, _ in seen), shown
        done = [int(eps.split("/")[0]) for _, eps, _ in seen]
        assert done == sorted(done), shown
        assert seen[-1][0] == "completed" and seen[-1][1] == f"{run['total']}/{run['total']}"
        panel.get_by_text(re.compile(r"e2e-live: completed · (\d+)/\1 episodes")).wait_for()
        for name in ("Cancel", "Resume"):
            assert panel.get_by_role("button", name=name).is_disabled()
        screenshot(tab, "runs_live")
        store.close()
    finally:
        ctx.close()
        proc.terminate()
        proc.wait(timeout=15)


def test_annotate_opens_at_the_top_and_takes_number_keys(
    studio_home: Path, tmp_path: Path, chromium: Any
) -> None:
    home = _copy_home(studio_home, tmp_path)
    store = Store.open(home / "driftbench.db")
    long_eps = [r["episode_id"] for r in store.episode_rows(status="ended") if r["n_events"] > 30]
    create_study(
        store,
        {"name": "keys", "episodes": long_eps[:2], "label_kinds": ["persona_id"], "overlap": 1},
    )
    add_annotator(store, "kay")
    assign_study(store, "keys", ["kay"], overlap=1)
    store.close()
    creds = home / "users.json"
    pw = hash_password("pw", iterations=1000)
    creds.write_text(json.dumps({"users": {"kay": {"role": "annotator", "password": pw}}}))
    proc, url = start_studio(
        home, extra_env={"DRIFTBENCH_AUTH": "password", "DRIFTBENCH_CREDENTIALS": str(creds)}
    )
    ctx = chromium.new_context(viewport={"width": 1400, "height": 1000})
    tab = ctx.new_page()
    tab.set_default_timeout(30_000)
    try:
        tab.goto(f"{url}/annotate")
        wait_for_app(tab)
        tab.get_by_role("textbox", name="User name").fill("kay")
        tab.get_by_role("textbox", name="Password").fill("pw")
        tab.get_by_role("button", name="Sign in").click()
        tab.get_by_text("Item 1 of 2").wait_for()  # the deep link survived the sign-in
        wait_for_app(tab)
        tab.get_by_text("turn 0 · user").first.wait_for()
        top = tab.evaluate(
            "() => Array.from(document.querySelectorAll('div')).filter(d => "
            "d.scrollHeight > d.clientHeight + 50 && getComputedStyle(d).overflowY !== 'visible'"
            " && d.innerText.includes('turn 0 · user')).map(d => d.scrollTop)"
        )
        assert top and min(top) == 0, top  # the transcript box opens at its first line
        tab.evaluate("() => document.activeElement && document.activeElement.blur()")
        tab.keyboard.press("2")
        radio = tab.get_by_test_id("stForm").get_by_test_id("stRadio")
        radio.locator("input:checked").wait_for(state="attached")
        tab.keyboard.press("Enter")
        tab.get_by_text(re.compile(r"^1 of 2 done")).wait_for()
        tab.get_by_text("Item 2 of 2").wait_for()
        store = Store.open(home / "driftbench.db")
        value = store.conn.execute(
            "SELECT value FROM annotations WHERE annotator='kay' AND label_kind='persona_id'"
        ).fetchone()
        assert value is not None and isinstance(json.loads(value[0]), str)
        screenshot(tab, "annotate_keys")
    finally:
        ctx.close()
        proc.terminate()
        proc.wait(timeout=15)
