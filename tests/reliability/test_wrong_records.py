"""Wrong records and misleading outcomes (issue 32, item 6): each is refused or told plainly.

* a reply from a stale second tab is refused with a message to reload, never stored as the
  answer to the next question;
* a τ² price of ``1e999`` is refused naming the file and the field (not stored as Infinity);
* ``runs`` counts progress from the stored episodes (a kill leaves the counters behind);
* ``run`` exits 3 when paused or stopped at the cost limit, 1 when every episode is an ERROR;
* ``--resume`` with a flag that contradicts the stored run exits 2 naming the flag;
* a plan over ``DRIFTBENCH_MAX_RUN_EPISODES`` is refused in one line before anything runs;
* ``build graphs`` never relabels bundled graphs as built.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.engine import episode
from core.engine.episode import StaleReplyError
from core.model.run import RunOptions, RunSpec
from core.paths import DATA_DIR
from core.runner import run_sweep
from core.store import Store
from core.studio import roleplay as play
from core.studio.reply_check import send_reply
from tests.fakes.openai_server import FakeOpenAIServer, Fault
from tests.reliability.test_malformed_inputs import (  # noqa: F401 - fixtures
    _cli,
    _snapshot,
    store_copy,
    template_store,
)


# -- stale second tab ---------------------------------------------------------------------------
def _user_play(store: Store) -> str:
    sid = play.sample_choices(store, "mock")[0].sample_id
    eid = play.start_user_play(store, benchmark="mock", sample_id=sid, persona="rational", seed=3)
    play.advance(store, eid)  # the agent acts until it waits for the person
    return eid


def test_a_reply_from_a_stale_tab_is_refused_and_nothing_is_stored(store: Store) -> None:
    eid = _user_play(store)
    first = play.user_play_view(store, eid).user
    assert first.pending_prompt is not None, "the agent opens with a question"
    tab_a = tab_b = first.pending_prompt  # two tabs show the same question
    send_reply(store, eid, "I want the teal one", deliberate=True, answers=tab_a)
    now = play.user_play_view(store, eid).user
    if now.ended:
        pytest.skip("the symbolic agent finished after one reply")
    assert now.pending_prompt != tab_b
    n_events = len(store.event_jsons(eid))
    with pytest.raises(StaleReplyError, match="reload the page") as info:
        send_reply(store, eid, "a reply meant for the old question", deliberate=True, answers=tab_b)
    assert "nothing was recorded" in str(info.value)
    assert len(store.event_jsons(eid)) == n_events
    with pytest.raises(StaleReplyError, match="reload"):
        play.let_simulator_reply(store, eid, answers=tab_b)
    assert len(store.event_jsons(eid)) == n_events
    send_reply(
        store, eid, "now the right one", deliberate=True, answers=now.pending_prompt
    )  # current: fine
    assert len(store.event_jsons(eid)) > n_events


def test_a_reply_to_an_episode_no_longer_waiting_says_reload(store: Store) -> None:
    eid = _user_play(store)
    prompt = play.user_play_view(store, eid).user.pending_prompt
    assert prompt is not None
    episode.abort_for(store, eid, RuntimeError("ended in another tab"))
    assert play.user_play_view(store, eid).user.ended
    with pytest.raises(StaleReplyError, match="reload"):
        send_reply(store, eid, "late", deliberate=True, answers=prompt)


# -- non-finite numbers ----------------------------------------------------------------------------
@pytest.mark.parametrize("literal", ["1e999", "-1e400", "1" + "0" * 400 + ".0"])
def test_a_price_too_large_for_a_float_is_refused_naming_file_and_field(
    tmp_path: Path,
    store_copy: Path,  # noqa: F811
    literal: str,
) -> None:
    folder = tmp_path / "retail"
    shutil.copytree(DATA_DIR / "tau2_retail", folder)
    db = folder / "db.json"
    text = db.read_text(encoding="utf-8")
    i = text.index('"price": ') + len('"price": ')
    j = i + next(k for k, c in enumerate(text[i:]) if c in ",}")
    db.write_text(text[:i] + literal + text[j:], encoding="utf-8")
    before = _snapshot(store_copy)
    rc, _, err = _cli(store_copy, "import", "tau2", "--domain", "retail", "--from", folder)
    assert rc == 2, err
    line = next(ln for ln in err.splitlines() if "error:" in ln)
    assert "db.json" in line and "field '" in line and "price" in line, line
    assert "not a finite number" in line
    assert _snapshot(store_copy) == before


def test_every_document_reader_names_the_field_of_a_non_finite_number(tmp_path: Path) -> None:
    from core.errors import ConfigError
    from core.model.reading import load_json

    path = tmp_path / "x.json"
    path.write_text('{"a": [1, {"b": 1e999}]}')
    with pytest.raises(ConfigError) as info:
        load_json(path)
    assert info.value.field == "a.1.b"


# -- progress from the store ---------------------------------------------------------------------
def test_runs_counts_what_is_stored_not_the_lagging_counters(
    store_copy: Path,  # noqa: F811
) -> None:
    store = Store.open(store_copy)
    run = store.list_runs()[0]
    stored = len(store.episode_rows(run_id=run["run_id"]))
    with store.transaction() as conn:  # what a kill -9 between two counter updates leaves
        conn.execute("UPDATE runs SET completed=0, errors=0 WHERE run_id=?", (run["run_id"],))
    store.close()
    rc, out, err = _cli(store_copy, "runs", "--json")
    assert rc == 0, err
    got = json.loads(out)["runs"][0]
    assert got["completed"] + got["errors"] == stored > 0
    from core.runner import progress

    s = Store.open(store_copy)
    assert progress(s, run["run_id"])["completed"] + progress(s, run["run_id"])["errors"] == stored


# -- exit codes ---------------------------------------------------------------------------------
def test_run_exit_codes_say_paused_and_all_error() -> None:
    from core.cli.cmd_run import run_exit_code

    assert run_exit_code("paused", 3, 1) == 3
    assert run_exit_code("budget_exceeded", 0, 2) == 3
    assert run_exit_code("completed_with_errors", 0, 4) == 1
    assert run_exit_code("completed_with_errors", 2, 2) == 0
    assert run_exit_code("completed", 4, 0) == 0


def test_a_run_whose_every_episode_errors_exits_1(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    fake_llm_server.responder = lambda body: Fault.http(400)  # refused: no episode can play
    rc, out, err = _cli(
        tmp_path / "s.db", "run", "--benchmark", "mock", "--method", "B0", "--persona",
        "rational", "--seeds", "1", "--limit", "2",
        "--agent", f"openai/fake@{fake_llm_server.base_url}", "--json",
    )  # fmt: skip
    assert rc == 1, (rc, out[-400:], err[-400:])
    got = json.loads(out)
    assert got["completed"] == 0 and got["errors"] == 2


# -- --resume with a conflicting flag ------------------------------------------------------------
@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--seeds", "5"),
        ("--persona", "avoidant"),
        ("--agent", "openai/gpt-4o-mini"),
        ("--limit", "1"),
        ("--method", "A2"),
        ("--user-voice", "openai/gpt-4o-mini"),
    ],
)
def test_resume_with_a_conflicting_flag_exits_2_naming_it(
    store_copy: Path,  # noqa: F811
    flag: str,
    value: str,
) -> None:
    s = Store.open(store_copy)
    name = s.list_runs()[0]["name"]
    s.close()
    before = _snapshot(store_copy)
    rc, _, err = _cli(store_copy, "run", "--resume", name, flag, value)
    assert rc == 2, err
    line = next(ln for ln in err.splitlines() if "error:" in ln)
    assert flag in line and "conflicts" in line, line
    assert _snapshot(store_copy) == before


def test_resume_with_the_stored_values_is_fine(store_copy: Path) -> None:  # noqa: F811
    s = Store.open(store_copy)
    name = s.list_runs()[0]["name"]
    s.close()
    rc, _, err = _cli(store_copy, "run", "--resume", name, "--method", "B0", "--seeds", "1")
    assert rc == 0, err


# -- plan bound -----------------------------------------------------------------------------------
def test_a_plan_over_the_bound_is_refused_before_any_work(
    store_copy: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _snapshot(store_copy)
    rc, _, err = _cli(
        store_copy, "run", "--benchmark", "mock", "--method", "B0,A0,A1,A2,ORACLE",
        "--persona", "all", "--seeds", "10000",
    )  # fmt: skip
    assert rc == 2, err
    line = next(ln for ln in err.splitlines() if "error:" in ln)
    assert "episodes" in line and "DRIFTBENCH_MAX_RUN_EPISODES" in line, line
    assert _snapshot(store_copy) == before
    monkeypatch.setenv("DRIFTBENCH_MAX_RUN_EPISODES", "3")
    rc, _, err = _cli(store_copy, "run", "--benchmark", "mock", "--method", "B0", "--seeds", "2")
    assert rc == 2 and "DRIFTBENCH_MAX_RUN_EPISODES" in err


# -- build graphs keeps bundled provenance ------------------------------------------------
def test_build_graphs_never_relabels_bundled_graphs(tmp_path: Path) -> None:
    store_path = tmp_path / "s.db"
    rc, _, err = _cli(store_path, "init", "--json")
    assert rc == 0, err
    s = Store.open(store_path)
    before = dict(s.conn.execute("SELECT graph_id, source FROM graphs").fetchall())
    s.close()
    bundled = {g for g, src in before.items() if src == "bundled"}
    assert bundled, "init stores the bundled graphs"
    rc, _, err = _cli(store_path, "build", "graphs", "--benchmark", "tau2_retail")
    assert rc == 0, err
    s = Store.open(store_path)
    after = dict(s.conn.execute("SELECT graph_id, source FROM graphs").fetchall())
    assert {g for g in bundled if after.get(g) != "bundled"} == set()


def test_a_spec_of_a_finished_run_resumes_without_flags(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    spec = RunSpec(benchmarks=("mock",), methods=("B0",), personas=("rational",), seeds=(0,))
    run_sweep(store, spec, RunOptions(workers=1, progress=False))
    store.close()
    rc, _, err = _cli(tmp_path / "s.db", "run", "--resume", spec.display_name())
    assert rc == 0, err


def test_webshop_prices_are_never_infinite() -> None:
    import math

    from pydantic import ValidationError

    from core.envs.webshop.importer import RawItem, parse_pricing

    price, _ = parse_pricing("$" + "9" * 400)
    assert math.isfinite(price)
    with pytest.raises(ValidationError):
        RawItem.model_validate({"asin": "B0", "name": "n", "query": "q", "pricing": [1e999]})
