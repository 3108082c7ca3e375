import time

from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.store import Store

PAGE = str(PROJECT_ROOT / "pages" / "watch.py")


def test_watch_empty_store(empty_home) -> None:
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert any("No samples" in i.value for i in at.info)


def test_watch_starts_background_episode_and_follows_it(demo_store: Store) -> None:
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    at.selectbox(key="watch-persona").set_value("rational")
    at.slider(key="watch-pace").set_value(0.0)
    at.button[0].click().run()
    assert not at.exception
    watched = at.query_params["watch"]  # the list lives in the URL
    watched = watched if isinstance(watched, str) else watched[0]
    assert len(watched.split(",")) == 1
    eid = watched
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = demo_store.episode_status(eid)
        if status and status[0] == "ended":
            break
        time.sleep(0.1)
    at.run()
    assert not at.exception
    assert demo_store.episode_status(eid)[0] == "ended"
    assert any(eid in m.value for m in at.markdown)
    assert any(p.value is not None for p in at.get("progress"))


def test_the_watched_list_comes_back_from_the_url(demo_store: Store) -> None:
    """Issue 30: a reload (a fresh session with the same URL) shows the same episodes."""
    rows = demo_store.episode_rows(status="ended")[:2]
    ids = [r["episode_id"] for r in rows]
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params["watch"] = ",".join([*ids, "no-such-episode", ids[0], "<script>"])
    at.run()
    assert not at.exception
    shown = [m.value for m in at.markdown if m.value.startswith("**")]
    for eid in ids:
        assert any(eid in m for m in shown)
    assert not any("no-such-episode" in m or "script" in m for m in shown)
    assert not any("EXHAUSTED" in m or "SUCCESS" in m for m in shown)  # outcomes in words
    at.button(key="watch-clear").click().run()
    assert "watch" not in at.query_params
    assert any("Start an episode above" in i.value for i in at.info)
