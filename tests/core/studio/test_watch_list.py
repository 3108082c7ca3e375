"""core.studio.watch_list: the Watch live list read back from the URL."""

from __future__ import annotations

from core.studio import roleplay as play
from core.studio.watch_list import (
    MAX_WATCHED,
    add_watched,
    read_watch_list,
    unknown_watched,
    watch_param,
)


def test_ids_are_read_back_against_the_store(store) -> None:
    a = play.start_agent_play(store, benchmark="mock", sample_id=None, persona="rational", seed=0)
    b = play.start_agent_play(store, benchmark="mock", sample_id=None, persona="rational", seed=1)
    raw = watch_param([b, "missing", a, b, "../etc", ""])
    assert read_watch_list(store, raw) == [b, a]
    assert read_watch_list(store, None) == []


def test_new_ids_come_first_and_the_list_is_capped() -> None:
    current = [f"e{i}" for i in range(MAX_WATCHED)]
    out = add_watched(current, ["n1", "e3"])
    assert out[:2] == ["n1", "e3"] and len(out) == MAX_WATCHED and len(set(out)) == len(out)


def test_unknown_ids_are_counted_once_and_a_huge_link_costs_a_bounded_lookup(store) -> None:
    a = play.start_agent_play(store, benchmark="mock", sample_id=None, persona="rational", seed=0)
    assert unknown_watched(store, watch_param([a, "missing", "missing", "../etc", ""])) == 2
    assert unknown_watched(store, a) == 0 and unknown_watched(store, None) == 0
    many = watch_param([a, *(f"x{i}" for i in range(5000))])
    assert unknown_watched(store, many, checked=10) == 5000
