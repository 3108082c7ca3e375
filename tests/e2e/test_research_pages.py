"""Research pages in a real browser: GRIP dashboard, construction explorer, runs."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import screenshot, start_studio, wait_for_app


def test_grip_dashboard_heatmap_click_lists_episodes(studio_url: str, tab) -> None:  # type: ignore[no-untyped-def]
    tab.goto(f"{studio_url}/grip?run=demo")
    wait_for_app(tab)
    tab.get_by_text("GRIP dashboard").first.wait_for()
    tab.get_by_text("offline approximation").first.wait_for()
    tab.get_by_test_id("stTable").first.wait_for()
    heading = tab.get_by_text(re.compile(r"episodes in the \w+ denominator for"))
    heading.first.wait_for()
    before = heading.first.inner_text()
    # click a heatmap cell: the plotly selection reruns the page with that cell's episodes
    chart = tab.get_by_test_id("stPlotlyChart").last
    chart.scroll_into_view_if_needed()
    points = chart.locator(".scatterlayer .trace").first.locator("path.point")
    points.first.wait_for()
    target = points.nth(min(points.count() - 1, 37))
    box = target.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    tab.mouse.move(x, y)
    chart.locator(".hoverlayer .hovertext").first.wait_for()  # plotly clicks what it hovers
    tab.mouse.click(x, y)
    tab.wait_for_function(
        "(before) => Array.from(document.querySelectorAll('p')).some("
        "p => /episodes in the \\w+ denominator for/.test(p.innerText) && p.innerText !== before)",
        arg=before,
    )
    after = heading.first.inner_text()
    assert after != before
    link = tab.locator("a[href*='inspect?episode=']").first
    link.wait_for()
    href = link.get_attribute("href") or ""
    eid = href.split("episode=")[-1]
    assert eid.startswith("ep-")
    screenshot(tab, "grip")
    tab.goto(f"{studio_url}/inspect?episode={eid}")
    wait_for_app(tab)
    tab.get_by_text(f"episode {eid}").first.wait_for()


def test_construction_explorer_renders(studio_url: str, tab) -> None:  # type: ignore[no-untyped-def]
    tab.goto(f"{studio_url}/construction")
    wait_for_app(tab)
    tab.get_by_text("Construction explorer").first.wait_for()
    tab.get_by_role("tab", name="Samples by fault type").click()
    tab.get_by_text("Opening request").first.wait_for()
    tab.get_by_role("tab", name="Intent graphs").click()
    tab.get_by_test_id("stPlotlyChart").first.wait_for()
    screenshot(tab, "construction")


@pytest.fixture
def private_studio(studio_home: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A studio over a private copy of the demo store (this test launches a run)."""
    src = sqlite3.connect(studio_home / "driftbench.db")
    dst = sqlite3.connect(tmp_path / "driftbench.db")
    src.backup(dst)
    src.close()
    dst.close()
    proc, url = start_studio(tmp_path)
    yield url, tmp_path
    proc.terminate()
    proc.wait(timeout=15)


def test_runs_launch_and_watch_progress(private_studio: tuple[str, Path], tab) -> None:  # type: ignore[no-untyped-def]
    url, home = private_studio
    tab.goto(f"{url}/runs")
    wait_for_app(tab)
    tab.get_by_text("New run").first.click()
    form = tab.get_by_test_id("stForm")
    form.get_by_label("Samples per benchmark (0 = all)").fill("1")
    form.get_by_label("Name (optional)").fill("e2e-tiny")
    form.get_by_test_id("stFormSubmitButton").get_by_role("button").click()
    tab.get_by_text(re.compile(r"Launched e2e-tiny in worker process \d+")).wait_for()
    # the fragment polls the store: the run reaches "completed" without any reload
    tab.get_by_text(re.compile(r"e2e-tiny: completed · (\d+)/\1 episodes")).wait_for(timeout=90_000)
    screenshot(tab, "runs")
