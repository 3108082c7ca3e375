from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.store import Store

PAGE = str(PROJECT_ROOT / "pages" / "inspect.py")


def test_inspect_empty_store(empty_home) -> None:
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert any("No episodes match" in i.value for i in at.info)


def test_inspect_demo_store_deep_link_and_search(demo_store: Store) -> None:
    rows = demo_store.episode_rows(status="ended")
    assert rows, "demo sweep produced no episodes"
    target = rows[-1]["episode_id"]
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params["episode"] = target
    at.query_params["turn"] = "1"
    at.run()
    assert not at.exception
    assert at.selectbox(key="insp-episode").value == target
    assert at.query_params["episode"] == [target] or at.query_params["episode"] == target
    assert at.container(key="turn-1") is not None  # turns are cards, one per turn
    assert len(at.tabs) >= 4  # turns, reveal, compare, branch
    at.text_input(key="insp-search").input("turn").run()
    assert not at.exception


def test_inspect_switch_episode_updates_url(demo_store: Store) -> None:
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    ids = at.selectbox(key="insp-episode").options
    assert len(ids) >= 2
    second = at.selectbox(key="insp-episode").options[1]
    at.selectbox(key="insp-episode").set_value(second.split(" · ")[0]).run()
    assert not at.exception


def test_inspect_branch_symbolic(demo_store: Store) -> None:
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.selectbox(key="insp-branch-method").set_value("A2")
    at.button(key="insp-branch-go").click().run()
    assert not at.exception
    assert any("continues with A2" in s.value for s in at.success)
