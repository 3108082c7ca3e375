"""Branches are runs of their own: branching never changes a finished run's results (21.2)."""

from __future__ import annotations

import json

import pytest

from core.errors import ProtocolError
from core.model.run import RunOptions, RunSpec
from core.runner import run_sweep
from core.store import Store
from core.studio import branches
from core.studio import watch as live
from core.studio.dashboards import load_frame, run_options, table2
from core.studio.jobs import reconcile, run_rows


@pytest.fixture
def swept(store: Store) -> Store:
    from core.studio.bootstrap import load_bundled_samples

    load_bundled_samples(store)
    spec = RunSpec(
        name="base",
        benchmarks=("webshop",),
        methods=("A0", "B0"),
        personas=("rational", "avoidant"),
        seeds=(0,),
        limit=2,
    )
    run_sweep(store, spec, RunOptions(workers=1, progress=False))
    return store


def _grid(store: Store) -> tuple[int, list[tuple[str, ...]]]:
    frame = load_frame(store, ["base"], memo=False)
    t = table2(frame, ("benchmark", "method"))
    return len(frame), [tuple(map(str, row)) for row in t.display.itertuples(index=False)]


def test_branches_leave_the_parent_run_untouched(swept: Store) -> None:
    before_n, before_grid = _grid(swept)
    run = swept.get_run("base")
    parent = swept.episode_rows(run_id=str(run["run_id"]), status="ended")[0]["episode_id"]
    made = [live.branch(swept, parent, 2, m) for m in ("A3", "A2")]
    for eid in made:
        live.drive(swept, eid)
    human = live.branch(swept, parent, 2, live.HUMAN)
    after_n, after_grid = _grid(swept)
    assert (after_n, after_grid) == (before_n, before_grid)  # no "92 of 90", no new A3 row
    assert swept.get_run("base")["completed"] == run["completed"]
    for eid in [*made, human]:
        header = swept.header(eid)
        assert header.parent_episode_id == parent and header.fork_turn == 2
        assert header.run_id == branches.branch_run_id(eid)
        spec = branches.branch_spec(swept.get_run(header.run_id)["spec"])
        assert spec is not None and spec["parent_episode_id"] == parent
        assert spec["parent_run_id"] == run["run_id"]
    # the branch runs report their own episode, and follow its state
    reconcile(swept)
    rows = {r.run_id: r for r in run_rows(swept)}
    done = rows[branches.branch_run_id(made[0])]
    assert (done.kind, done.status, done.total, done.done) == ("branch", "completed", 1, 1)
    assert not done.can_resume and not done.can_cancel
    assert rows[branches.branch_run_id(human)].status == "running"
    labels = {o.name: o for o in run_options(swept)}
    assert sum(o.is_branch for o in labels.values()) == 3
    branch_frame = load_frame(swept, [branches.branch_run_id(made[0])], memo=False)
    assert list(branch_frame["episode_id"]) == [made[0]]


def test_a_refused_fork_leaves_no_run_behind(swept: Store) -> None:
    parent = swept.episode_rows(status="ended")[0]["episode_id"]
    n_runs = len(swept.list_runs())
    with pytest.raises(ProtocolError):
        live.branch(swept, parent, 999, "A2")
    assert len(swept.list_runs()) == n_runs


def test_legacy_branches_are_moved_out_of_their_parent_run(swept: Store) -> None:
    from core.engine import episode

    run_id = str(swept.get_run("base")["run_id"])
    parent = swept.episode_rows(run_id=run_id, status="ended")[0]["episode_id"]
    before_n, before_grid = _grid(swept)
    legacy = episode.fork(swept, parent, 2, "symbolic", method="A3")  # the old way: same run
    live.drive(swept, legacy)
    assert swept.header(legacy).run_id == run_id
    polluted_n, _ = _grid(swept)
    assert polluted_n == before_n + 1  # the bug this fixes
    moved = branches.adopt_legacy_branches(swept)
    assert moved == [legacy]
    assert swept.header(legacy).run_id == branches.branch_run_id(legacy)
    row = swept.conn.execute("SELECT run_id FROM episodes WHERE episode_id=?", (legacy,)).fetchone()
    assert row[0] == branches.branch_run_id(legacy)
    assert _grid(swept) == (before_n, before_grid)
    assert branches.adopt_legacy_branches(swept) == []  # idempotent
    spec = json.loads(swept.get_run(branches.branch_run_id(legacy))["spec"])
    assert spec["kind"] == "branch" and spec["fork_turn"] == 2
