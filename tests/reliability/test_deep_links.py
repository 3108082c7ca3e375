"""Deep links are validated on every page: a bad value is "not found", never a traceback.

Before: ``?assignment=99999999999999999999999`` crashed the play pages (OverflowError from
SQLite) and ``?turn=³`` crashed Inspect (``"³".isdigit()`` is true, ``int("³")`` raises).
Every page of the studio is opened with every hostile parameter (``core.studio.links``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.store import Store
from core.studio.bootstrap import initialise
from core.studio.links import link_id, link_int
from core.studio.pages import PAGES

HOSTILE: dict[str, list[str]] = {
    "assignment": ["99999999999999999999999", "³", "-1", "1e3", "0x10", " 7 "],
    "turn": ["³", "99999999999999999999999", "-3", "٣", "1.5"],
    "episode": ["x" * 5000, "a\x00b", "ep ' OR 1=1 --", "\u202e", ""],
    "seed": ["³", "99999999999999999999999", "-1"],
    "sample": ["\x00", "s" * 5000],
    "persona": ["\x07", "nobody"],
    "benchmark": ["webshop\x00", "tau2_" * 1000],
    "run": ["\x00", "r" * 5000],
    "watch": [",,,", "a\x00b," * 2000, "<script>,x"],
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("links_home")
    store = Store.open(home / "driftbench.db")
    initialise(store)
    store.close()
    return home


def _rounds() -> list[dict[str, str]]:
    """Every hostile value of every parameter, a few links (an ``?episode=`` link alone, since
    a page stops at a bad episode before it reads the rest)."""
    rounds = [
        {n: v[r % len(v)] for n, v in HOSTILE.items() if n != "episode"}
        for r in range(max(len(v) for n, v in HOSTILE.items() if n != "episode"))
    ]
    rounds += [{"episode": v} for v in HOSTILE["episode"]]
    return rounds


@pytest.mark.parametrize("page", [p.file for p in PAGES.values()], ids=list(PAGES))
def test_every_page_survives_every_hostile_link(
    home: Path, monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(home))
    for params in _rounds():
        at = AppTest.from_file(str(PROJECT_ROOT / page), default_timeout=60)
        for name, value in params.items():
            at.query_params[name] = value
        at.run()
        assert not at.exception, (page, {k: repr(v)[:30] for k, v in params.items()})


@pytest.mark.parametrize("page", ["play_user", "play_agent"])
def test_a_huge_assignment_says_not_found(
    home: Path, monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(home))
    at = AppTest.from_file(str(PROJECT_ROOT / "pages" / f"{page}.py"), default_timeout=60)
    at.query_params["assignment"] = "99999999999999999999999"
    at.run()
    assert not at.exception
    assert any("No such study item" in e.value for e in at.error), [e.value for e in at.error]


def test_the_link_parsers_refuse_what_is_not_a_value() -> None:
    assert link_int("12") == 12 and link_int("0") == 0
    for bad in ("³", "٣", "99999999999999999999999", "-1", "1.5", "", None, "1e3"):
        assert link_int(bad) is None, bad
    assert link_int("5", hi=4) is None
    assert link_id("ep-1a2b-r2") == "ep-1a2b-r2"
    for bad in ("", "a\x00b", "x" * 201, "two words", "\u202e", None):
        assert link_id(bad) is None, repr(bad)
