import urllib.request

from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, wait_for_app


def test_health_endpoint(studio_url: str) -> None:
    with urllib.request.urlopen(studio_url + "/_stcore/health", timeout=5) as resp:
        assert resp.read() == b"ok"


def test_home_renders_in_chromium(studio_url: str, tab) -> None:
    tab.goto(studio_url + "/")
    wait_for_app(tab)
    tab.get_by_text("Drift-Bench++ Studio").first.wait_for()
    # the metrics can land a moment after the title (a later delta of the same run): wait, then
    # check there are exactly four
    expect(tab.get_by_test_id("stMetricLabel")).to_have_count(4, timeout=30_000)
    screenshot(tab, "home")
