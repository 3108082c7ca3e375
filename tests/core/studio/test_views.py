"""Read models behind the pages: plain words, readable tool calls, the grid's n, heatmap ties,
the Inspect table and selection, the reveal, episode pairs and the Runs page's states."""

from __future__ import annotations

import pandas as pd
import pytest

from core.errors import ConfigError
from core.studio import dashboards as d
from core.studio.inspector import choose_episode, reveal, table_rows
from core.studio.jobs import Job, RunRow, fmt_duration, progress_rate
from core.studio.plainwords import plain_outcome, plain_reason, plain_termination
from core.studio.study_setup import pair_episodes, study_spec
from core.studio.toolcalls import MAX_VALUE_CHARS, describe_call
from tests.core.studio.test_dashboards import frame_of


@pytest.mark.parametrize(
    "code",
    [
        "golden_actions_missing:modify_user_address",
        "golden_actions_complete",
        "state_hash_mismatch",
        "reward=0.420",
        "over_price_limit",
        "unmet:color",
        "some_future_code:with_detail",
        "",
    ],
)
def test_no_internal_code_reaches_a_role_player(code: str) -> None:
    text = plain_reason(code, accepted=False)
    assert text and "_" not in text and "=" not in text and text.endswith(".")


def test_plain_reason_words() -> None:
    assert plain_reason("golden_actions_missing:modify_user_address") == (
        "Not done yet: modify user address."
    )
    assert plain_termination("forced_final_rejected").startswith("patience ran out")
    assert plain_termination("something_new") == "something new"
    assert plain_outcome("EXHAUSTED") == "Out of patience"


def test_tool_calls_and_results_are_readable() -> None:
    call = describe_call(
        "book_reservation",
        {"cabin": "business", "passengers": [{"first_name": "Ana", "dob": "1990-01-01"}], "n": 2},
    )
    assert call.title == "Book reservation"
    assert [(f.name, f.value) for f in call.fields] == [
        ("cabin", "business"),
        ("passengers", "first_name: Ana, dob: 1990-01-01"),
        ("n", "2"),
    ]
    assert "(" not in call.summary and "'" not in call.summary
    long = describe_call("note", {"text": ["x" * 400, "y"]}).fields[0].value
    assert len(long) == MAX_VALUE_CHARS and long.endswith("…")  # short: cut, full: cell_text


def test_every_grid_cell_shows_its_n_and_small_cells_are_never_best() -> None:
    rows = []
    for i in range(6):  # A0: 6 episodes, success 0.5
        rows.append({"episode_id": f"a{i}", "method": "A0", "seed": i, "success": i % 2})
    rows.append({"episode_id": "z", "method": "A3", "seed": 0, "success": 1.0})  # n=1, 100%
    rows += [{"episode_id": f"b{i}", "method": "B0", "seed": i, "success": 0.0} for i in range(5)]
    t = d.table2(frame_of(rows), ("benchmark", "method"), metrics=("Success", "Aim"))
    disp = t.display.set_index("method")
    assert list(t.display.columns[:3]) == ["benchmark", "method", "n"]
    assert disp.at["A0", "n"] == 6 and disp.at["A3", "n"] == 1 and disp.at["B0", "n"] == 5
    assert disp.at["A3", "Success"] == "100.00"  # shown, never bold: n=1 < MIN_N_FOR_BEST
    assert disp.at["A0", "Success"].startswith("**")
    assert t.n is not None and int(t.n.loc[0, "Success"]) >= 1
    # a metric whose denominator is only part of the cell says so
    part = [{**r, "aim": 1.0 if r["episode_id"] in ("a0", "a1") else None} for r in rows]
    shown = d.table2(frame_of(part), ("benchmark", "method"), metrics=("Aim",))
    assert shown.display.set_index("method").at["A0", "Aim"] == "100.00 ± 0.00 · n=2"


def test_heatmap_ties_share_ranks_and_an_all_tie_column_ranks_nobody() -> None:
    rows = []
    for p, succ in (("rational", 1.0), ("avoidant", 1.0), ("dependent", 0.0)):
        for i in range(2):
            rows.append(
                {"episode_id": f"{p}{i}", "persona": p, "seed": i, "success": succ, "inferred": 0.0}
            )
    heat = d.heatmap_cells(frame_of(rows))
    succ = heat[heat["metric"] == "Success"].set_index("persona")
    assert succ.at["rational", "rank"] == succ.at["avoidant", "rank"] == 1.5
    assert succ.at["dependent", "rank"] == 3
    inferred = heat[heat["metric"] == "Inferred"]
    assert inferred["rank"].isna().all() and inferred["tie"].all()  # zeros everywhere: no winner
    undefined = heat[heat["metric"] == "Identification"]
    assert undefined["rank"].isna().all() and not undefined["tie"].any()


def test_inspect_selection_follows_the_filters() -> None:
    assert choose_episode(["a", "b", "c"], "b", None) == "b"
    assert choose_episode(["a", "c"], "b", None) == "a"  # filtered out: first row, not pinned
    assert choose_episode(["a", "c"], "a", "c") == "c"
    assert choose_episode(["a"], "a", "gone") == "a"
    assert choose_episode([], "a", None) is None


def test_inspect_table_columns_have_one_type_each() -> None:
    rows = [
        {
            "episode_id": "e1",
            "run": None,
            "run_id": None,
            "benchmark": "webshop",
            "method": "A0",
            "persona_id": "rational",
            "seed": 0,
            "status": "running",
            "outcome": None,
            "n_events": 3,
            "parent_episode_id": None,
            "fault_types": "a,b",
            "created_at": None,
        },
        {
            "episode_id": "e2",
            "run": "demo",
            "run_id": "r",
            "benchmark": "webshop",
            "method": "A0",
            "persona_id": "rational",
            "seed": 4,
            "status": "ended",
            "outcome": "SUCCESS",
            "n_events": 9,
            "parent_episode_id": "e1",
            "fault_types": "",
            "created_at": "2026-01-01",
        },
    ]
    frame = pd.DataFrame(table_rows(rows))
    for col in frame.columns:
        assert len({type(v) for v in frame[col]}) == 1, col
    import pyarrow as pa

    pa.Table.from_pandas(frame)  # no ArrowTypeError


def test_reveal_is_structured(store) -> None:  # type: ignore[no-untyped-def]
    from core.studio.bootstrap import load_bundled_samples
    from core.studio.roleplay import start_agent_play, world_for

    load_bundled_samples(store)
    eid = start_agent_play(store, benchmark="webshop", sample_id=None, persona="rational", seed=0)
    rv = reveal(store.events(eid), world_for(store, eid))
    assert rv.query and rv.start_intent and all(c.phrase for c in rv.start_intent)
    assert all(isinstance(m.true_value, str) for m in rv.mask)
    assert len(rv.fates) == len(rv.thresholds)


def test_episode_pairs_never_cross_benchmarks(store) -> None:  # type: ignore[no-untyped-def]
    from core.studio.bootstrap import load_bundled_samples
    from core.studio.roleplay import start_agent_play

    load_bundled_samples(store)
    shop = [
        start_agent_play(store, benchmark="webshop", sample_id=None, persona="rational", seed=s)
        for s in range(3)
    ]
    air = [
        start_agent_play(
            store, benchmark="tau2_airline", sample_id=None, persona="rational", seed=s
        )
        for s in range(2)
    ]
    pairs, left = pair_episodes(store, [shop[0], air[0], shop[1], air[1], shop[2]])
    bench = {e: store.header(e).benchmark for e in shop + air}
    assert all(bench[a] == bench[b] for a, b in pairs)
    assert len(pairs) == 2 and len(left) == 1 and bench[left[0]] == "webshop"


def test_study_form_errors_are_one_sentence() -> None:
    with pytest.raises(ConfigError, match="name"):
        study_spec({"name": " ", "label_kinds": ["persona_id"], "episodes": ["e"]})
    with pytest.raises(ConfigError) as err:
        study_spec({"name": "x", "label_kinds": [], "episodes": ["e"]})
    assert "label kind" in str(err.value) and "ValidationError" not in str(err.value)


def test_run_states_decide_the_buttons_and_the_rate() -> None:
    base = {
        "run_id": "r",
        "name": "n",
        "total": 10,
        "completed": 4,
        "errors": 1,
        "cost_usd": 0.0,
        "fraction": 0.5,
        "agent": "symbolic",
        "symbolic": True,
        "updated_at": "",
    }
    done = RunRow(**{**base, "status": "completed", "completed": 10, "errors": 0})
    assert not (done.can_cancel or done.can_resume or done.can_stop)
    running = RunRow(**base, status="running", worker="alive")
    assert running.can_cancel and running.can_stop and not running.can_resume and running.live
    failed = RunRow(**base, status="failed", worker="exited")
    assert failed.can_resume and not failed.can_cancel
    branch = RunRow(**base, status="failed", kind="branch")
    assert not branch.can_resume
    job = Job(run_id="r", name="n", pid=1, started_at="2026-01-01T00:00:00+00:00", done_at_start=2)
    start = pd.Timestamp("2026-01-01T00:00:00+00:00").timestamp()
    rate, eta = progress_rate(
        done=5, total=10, active=True, now=start + 30, job=job, created_at=None, updated_at=None
    )
    assert rate == pytest.approx(0.1) and eta == pytest.approx(50)  # 3 done in 30 s since launch
    assert progress_rate(
        done=2, total=10, active=True, now=start + 30, job=job, created_at=None, updated_at=None
    ) == (None, None)
    assert fmt_duration(50) == "50 s" and fmt_duration(185) == "3 min 05 s"
    assert "ETA" in RunRow(**base, status="running", rate_per_s=0.1, eta_s=50).progress_text()
