import re

from core.store import Store
from tests.e2e.conftest import screenshot, wait_for_app


def _an_episode(home) -> str:
    store = Store.open(home / "driftbench.db", create=False)
    rows = store.episode_rows(status="ended")
    assert rows
    return rows[0]["episode_id"]


def test_inspector_deep_link_survives_reload(studio_url, studio_home, tab) -> None:
    eid = _an_episode(studio_home)
    tab.goto(f"{studio_url}/inspect?episode={eid}&turn=1")
    wait_for_app(tab)
    tab.get_by_text(f"episode {eid}").first.wait_for()
    screenshot(tab, "inspect")
    tab.reload()
    wait_for_app(tab)
    tab.get_by_text(f"episode {eid}").first.wait_for()
    assert f"episode={eid}" in tab.url


def test_watch_live_patience_and_timeline_advance(studio_url, tab) -> None:
    tab.goto(f"{studio_url}/watch")
    wait_for_app(tab)
    tab.get_by_test_id("stFormSubmitButton").get_by_role("button").click()
    meter = tab.get_by_text(re.compile(r"Patience [\d.]+ / [\d.]+")).first
    meter.wait_for()
    first_meter = meter.inner_text()
    tab.locator('[data-testid="stPlotlyChart"]').first.wait_for()
    lines = tab.get_by_text(re.compile(r"^\[\d+\] (agent|user):"))
    # the worker paces actions; the fragment re-renders from the store until the episode ends
    ended = re.compile(r"Success|Out of patience|Out of turns|Stopped by an error")
    tab.get_by_text(ended).first.wait_for(timeout=90_000)
    last_meter = tab.get_by_text(re.compile(r"Patience [\d.]+ / [\d.]+")).first.inner_text()
    assert lines.count() > 0
    assert tab.get_by_text(re.compile(r"^ended: ")).count() >= 1 or last_meter != first_meter
    screenshot(tab, "watch")
