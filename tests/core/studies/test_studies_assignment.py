from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ConfigError, NotFoundError
from core.studies import (
    StudySpec,
    annotator_queue,
    assign_study,
    create_study,
    pair_id,
    plan_assignments,
    record_play,
)


@settings(max_examples=60, deadline=None)
@given(
    n_items=st.integers(0, 40),
    n_ann=st.integers(1, 9),
    k=st.integers(1, 5),
    seed=st.integers(0, 10_000),
)
def test_plan_gives_each_item_k_distinct_annotators_and_balances_load(
    n_items: int, n_ann: int, k: int, seed: int
) -> None:
    items = [f"i{i}" for i in range(n_items)]
    anns = [f"a{i}" for i in range(n_ann)]
    plan = plan_assignments(items, anns, k, random.Random(seed))
    per_item: Counter[str] = Counter()
    for got in plan.values():
        assert len(got) == len(set(got)), "an annotator got the same item twice"
        per_item.update(got)
    assert all(per_item[i] == min(k, n_ann) for i in items)
    loads = [len(v) for v in plan.values()]
    assert max(loads) - min(loads) <= 1


def test_plan_spreads_pairs_evenly_for_cohen_kappa() -> None:
    items = [f"i{i}" for i in range(60)]
    anns = ["a", "b", "c", "d"]
    plan = plan_assignments(items, anns, 2, random.Random(3))
    together: Counter[tuple[str, str]] = Counter()
    holders: dict[str, list[str]] = {}
    for a, got in plan.items():
        for i in got:
            holders.setdefault(i, []).append(a)
    for hs in holders.values():
        together[tuple(sorted(hs))] += 1  # type: ignore[index]
    # 60 items over 6 pairs: every pair shares ~10 items
    assert set(together) == set(combinations(anns, 2))
    assert max(together.values()) - min(together.values()) <= 2


def test_plan_is_deterministic_per_seed_and_respects_exclusions() -> None:
    items = [f"i{i}" for i in range(12)]
    anns = ["a", "b", "c"]
    excl = {"i0": frozenset({"a", "b"}), "i1": frozenset({"a"})}
    p1 = plan_assignments(items, anns, 2, random.Random(7), exclude=excl)
    p2 = plan_assignments(items, anns, 2, random.Random(7), exclude=excl)
    assert p1 == p2
    assert "i0" not in p1["a"] and "i0" not in p1["b"] and "i0" in p1["c"]
    assert "i1" in p1["b"] and "i1" in p1["c"]


def test_plan_rejects_bad_inputs() -> None:
    with pytest.raises(ConfigError):
        plan_assignments(["x"], ["a"], 0, random.Random(0))
    with pytest.raises(ConfigError):
        plan_assignments(["x"], [], 1, random.Random(0))
    with pytest.raises(ConfigError):
        plan_assignments(["x"], ["a", "a"], 1, random.Random(0))


def test_assign_study_overlap_balance_and_extension(store, make_episode) -> None:
    eps = [make_episode(f"ep{i}") for i in range(9)]
    create_study(
        store, StudySpec(name="s1", episodes=tuple(eps), label_kinds=("realism",), overlap=2)
    )
    counts = assign_study(store, "s1", ["ann1", "ann2", "ann3"])
    assert sum(counts.values()) == 18 and set(counts.values()) == {6}
    holders: Counter[str] = Counter()
    for a in ("ann1", "ann2", "ann3"):
        q = annotator_queue(store, "s1", a, reveal_ids=True)
        assert len({i.target_id for i in q.items}) == q.total
        holders.update(i.target_id for i in q.items)
    assert all(holders[e] == 2 for e in eps)
    # Calling again changes nothing; a higher overlap only adds what is missing.
    assert sum(assign_study(store, "s1", ["ann1", "ann2", "ann3"]).values()) == 0
    added = assign_study(store, "s1", ["ann1", "ann2", "ann3", "ann4"], overlap=3)
    assert sum(added.values()) == 9
    assert added["ann4"] >= max(added[a] for a in ("ann1", "ann2", "ann3"))
    holders2: Counter[str] = Counter()
    for a in ("ann1", "ann2", "ann3", "ann4"):
        holders2.update(i.target_id for i in annotator_queue(store, "s1", a, reveal_ids=True).items)
    assert all(holders2[e] == 3 for e in eps)


def test_nobody_is_assigned_to_label_an_episode_they_played(store, make_episode) -> None:
    eps = [make_episode(f"e{i}", user_voice="human") for i in range(4)]
    for e in eps:
        record_play(store, annotator="alice", episode_id=e, sample_id="sample-1")
    create_study(
        store,
        StudySpec(
            name="s2",
            episodes=tuple(eps),
            episode_pairs=((eps[0], eps[1]),),
            label_kinds=("persona_id", "same_persona"),
            overlap=2,
        ),
    )
    assign_study(store, "s2", ["alice", "bob", "carol"])
    assert annotator_queue(store, "s2", "alice", reveal_ids=True).total == 0
    bob = {i.target_id for i in annotator_queue(store, "s2", "bob", reveal_ids=True).items}
    assert set(eps) | {pair_id(eps[0], eps[1])} == bob


def test_play_study_assigns_sample_condition_items(store) -> None:
    store.conn.execute(
        "INSERT INTO samples VALUES ('smp1','webshop','g','vagueness_subjectivity',1,'test','t',"
        '\'{"query": "shoes please"}\')'
    )
    spec = {
        "name": "play",
        "roles": ["play_user"],
        "samples": ["smp1"],
        "conditions": [
            {"persona_id": "dependent", "patience_visible": False},
            {"persona_id": "rational", "patience_visible": True},
        ],
        "overlap": 1,
    }
    create_study(store, spec)
    assign_study(store, "play", ["p1", "p2"])
    items = [
        *annotator_queue(store, "play", "p1", reveal_ids=True).items,
        *annotator_queue(store, "play", "p2", reveal_ids=True).items,
    ]
    assert sorted(i.condition.persona_id for i in items if i.condition) == ["dependent", "rational"]
    assert {i.role for i in items} == {"play_user"}
    assert items[0].condition is not None and "meter" in items[0].condition.label


def test_create_study_validates(store) -> None:
    with pytest.raises(ConfigError) as exc:
        create_study(store, {"name": "bad", "label_kinds": ["realism"]})
    assert "study spec" in str(exc.value)
    with pytest.raises(NotFoundError):
        create_study(store, StudySpec(name="ghost", episodes=("nope",), label_kinds=("realism",)))
    create_study(
        store, StudySpec(name="dup", episodes=("x",), label_kinds=("realism",)), check=False
    )
    with pytest.raises(ConfigError):
        create_study(
            store, StudySpec(name="dup", episodes=("x",), label_kinds=("realism",)), check=False
        )
