"""A deep link to something that is not there says so (never a silent fall-back, never a crash).

Issue 32 made every page survive a hostile link; the merged studio still fell back silently in
a few places: Inspect showed the first episode for ``?episode=`` of an id not in the store and
ignored a ``?turn=`` the episode does not have, the play pages drew a random sample for a
``?sample=`` that does not exist (and put the raw parameter into markdown), and Watch live
dropped unknown ``?watch=`` ids without a word.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.store import Store


def _page(name: str) -> AppTest:
    return AppTest.from_file(str(PROJECT_ROOT / "pages" / f"{name}.py"), default_timeout=60)


def _said(at: AppTest) -> str:
    parts = [w.value for w in (*at.warning, *at.error, *at.info, *at.caption)]
    return "\n".join(str(p) for p in parts)


def test_inspect_says_an_unknown_episode_is_not_in_the_store(demo_store: Store) -> None:
    at = _page("inspect")
    at.query_params["episode"] = "no-such-episode"
    at.run()
    assert not at.exception
    assert "No episode no-such-episode in this store" in _said(at).replace("\\", "")
    # a link to an episode that exists is shown without a warning
    eid = demo_store.episode_rows(status="ended")[0]["episode_id"]
    fresh = _page("inspect")
    fresh.query_params["episode"] = eid
    fresh.run()
    assert not fresh.exception and not fresh.warning
    assert fresh.query_params["episode"] in (eid, [eid])


def test_inspect_says_a_turn_the_episode_does_not_have(demo_store: Store) -> None:
    eid = demo_store.episode_rows(status="ended")[0]["episode_id"]
    for turn in ("999", "³"):
        at = _page("inspect")
        at.query_params["episode"] = eid
        at.query_params["turn"] = turn
        at.run()
        assert not at.exception
        assert f"No turn {turn} in this episode" in _said(at)


def test_a_play_link_to_an_unknown_sample_says_so(demo_store: Store) -> None:
    for page in ("play_user", "play_agent"):
        at = _page(page)
        at.query_params["benchmark"] = "webshop"
        at.query_params["sample"] = "no_such*sample*"
        at.run()
        assert not at.exception
        said = _said(at)
        assert "No sample no\\_such\\*sample\\* in webshop" in said, said  # escaped markdown
        bad = _page(page)
        bad.query_params["benchmark"] = "webshop"
        bad.query_params["sample"] = "a b"
        bad.run()
        assert not bad.exception
        assert "the link's sample id is not valid" in _said(bad)


def test_watch_says_how_many_linked_episodes_were_not_found(demo_store: Store) -> None:
    ids = [r["episode_id"] for r in demo_store.episode_rows(status="ended")[:2]]
    at = _page("watch")
    at.query_params["watch"] = ",".join([*ids, "no-such-episode", "<script>", ids[0]])
    at.run()
    assert not at.exception
    assert "2 linked episode(s) not found" in _said(at)
    fine = _page("watch")
    fine.query_params["watch"] = ",".join(ids)
    fine.run()
    assert "not found" not in _said(fine)
