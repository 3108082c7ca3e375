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


def test_previous_and_next_turn_move_the_url(demo_store: Store) -> None:
    """Issue 30: the shown turn has previous / next buttons that move ``?turn=``."""
    target = next(
        r["episode_id"] for r in demo_store.episode_rows(status="ended") if r["n_events"] > 20
    )
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params["episode"] = target
    at.query_params["turn"] = "2"
    at.run()
    at.button(key="insp-turn-next-card").click().run()
    assert not at.exception
    assert at.query_params["turn"] in ("3", ["3"])
    at.button(key="insp-turn-prev-card").click().run()
    at.button(key="insp-turn-prev-card").click().run()
    assert at.query_params["turn"] in ("1", ["1"])
    # the top navigation and the card's agree; the first turn has no previous
    at.query_params["turn"] = "0"
    at.run()
    assert at.button(key="insp-turn-prev-top").disabled


def test_compare_offers_the_same_benchmark_only_with_headers(demo_store: Store) -> None:
    """Issue 30: Compare lists only episodes of the shown episode's benchmark, with headers."""
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    shown = at.session_state["insp-current"]
    bench = demo_store.header(shown).benchmark
    options = at.selectbox(key="insp-compare").options
    assert options
    for label in options:
        assert f" · {bench} · " in label
    assert at.container(key="insp-compare-head-left") is not None
    heads = [m.value for m in at.markdown if m.value.startswith(("**This episode", "**Compared"))]
    assert len(heads) == 2 and shown in heads[0]


def test_outcomes_read_as_words(demo_store: Store) -> None:
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    outcome = next(m for m in at.metric if m.label == "Outcome").value
    assert outcome in ("Success", "Out of patience", "Out of turns", "Stopped by an error")
    assert not any("EXHAUSTED" in c.value or "SUCCESS" in c.value for c in at.caption)
