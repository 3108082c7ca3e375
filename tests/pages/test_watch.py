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
    watched = at.session_state["watch_ids"]
    assert len(watched) == 1
    eid = watched[0]
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
