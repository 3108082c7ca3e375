"""The sweep runner: resume, SIGKILL + resume identity, LLM sweeps on the fake server, Ray."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from core.model.run import PERSONAS, RunOptions, RunSpec
from core.runner import request_cancel, run_demo, run_sweep
from core.runner.export import export_run
from core.store import Store

ROOT = Path(__file__).resolve().parents[2]


def _mock_spec(**kw: object) -> RunSpec:
    base: dict[str, object] = dict(
        benchmarks=("mock",),
        methods=("B0", "A0", "A2", "A3"),
        personas=("rational", "avoidant"),
        seeds=(0, 1),
    )
    base.update(kw)
    return RunSpec(**base)  # type: ignore[arg-type]


def _logs(store: Store, run_id: str) -> dict[tuple[object, ...], list[dict[str, object]]]:
    """Final scored episode per cell → header (deterministic part) + events."""
    out: dict[tuple[object, ...], list[dict[str, object]]] = {}
    for r in store.episode_rows(run_id=run_id):
        if r["outcome"] == "ERROR":
            continue
        cell = (r["benchmark"], r["sample_id"], r["method"], r["persona_id"], r["seed"])
        header = store.header(r["episode_id"]).deterministic_dump()
        events = [json.loads(b) for b in store.event_jsons(r["episode_id"])]
        assert cell not in out
        out[cell] = [header, *events]
    return out


def test_rerun_skips_finished_episodes(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    spec = _mock_spec()
    first = run_sweep(store, spec, RunOptions(workers=1, progress=False))
    assert first.episodes == first.completed == len(store.episode_rows(run_id=first.run_id))
    assert first.status == "completed" and first.errors == 0
    again = run_sweep(store, spec, RunOptions(workers=1, progress=False))
    assert again.skipped == first.episodes and again.completed == first.episodes
    assert len(store.episode_rows(run_id=first.run_id)) == first.episodes
    row = store.get_run(first.run_id)
    assert (row["total"], row["completed"], row["status"]) == (
        first.episodes,
        first.episodes,
        "completed",
    )


def test_sigkill_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    spec = _mock_spec(personas=PERSONAS, seeds=(0, 1, 2))
    ref_store = Store.open(tmp_path / "ref.db")
    ref = run_sweep(ref_store, spec, RunOptions(workers=1, progress=False))

    path = tmp_path / "killed.db"
    store = Store.open(path)
    from core.runner.plan import SampleSource, plan_keys

    store.put_run(
        spec.run_id(),
        spec.display_name(),
        spec.model_dump_json(),
        len(plan_keys(SampleSource(store), spec)),
    )
    opts = RunOptions(workers=1, progress=False).model_dump_json()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "core.runner",
            "--store",
            str(path),
            "--run",
            spec.run_id(),
            "--options",
            opts,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        n = len(store.episode_rows(run_id=spec.run_id(), status="ended"))
        if n >= 40:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = len(store.episode_rows(run_id=spec.run_id(), status="ended"))
    assert 0 < partial < ref.episodes, "the sweep must be killed mid-way"

    resumed = run_sweep(store, spec, RunOptions(workers=1, progress=False))
    assert resumed.completed == ref.episodes and resumed.errors == 0
    assert resumed.skipped >= partial - 1
    assert _logs(store, spec.run_id()) == _logs(ref_store, ref.run_id)


def test_pool_backend_equals_inline(tmp_path: Path) -> None:
    spec = _mock_spec(personas=PERSONAS, seeds=(0, 1))
    a = Store.open(tmp_path / "a.db")
    b = Store.open(tmp_path / "b.db")
    ra = run_sweep(a, spec, RunOptions(workers=1, progress=False))
    rb = run_sweep(b, spec, RunOptions(workers=2, progress=False))
    assert ra.completed == rb.completed == ra.episodes
    assert _logs(a, ra.run_id) == _logs(b, rb.run_id)


def test_ray_backend_equals_local(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="ray not installed (optional extra 'ray')")
    spec = _mock_spec(methods=("B0", "A2"), personas=("rational",))
    a = Store.open(tmp_path / "a.db")
    b = Store.open(tmp_path / "b.db")
    ra = run_sweep(a, spec, RunOptions(workers=1, progress=False))
    rb = run_sweep(b, spec, RunOptions(backend="ray", workers=2, progress=False))
    assert _logs(a, ra.run_id) == _logs(b, rb.run_id)


def test_cancel_request_stops_a_sweep(tmp_path: Path) -> None:
    import threading

    store = Store.open(tmp_path / "s.db")
    spec = _mock_spec(personas=PERSONAS, seeds=(0, 1, 2, 3))
    out: dict[str, object] = {}

    def go() -> None:
        s = Store.open(tmp_path / "s.db")
        out["res"] = run_sweep(s, spec, RunOptions(workers=1, progress=False))

    t = threading.Thread(target=go)
    t.start()
    while len(store.episode_rows(run_id=spec.run_id(), status="ended")) < 10:
        time.sleep(0.01)
    request_cancel(store, spec.run_id())
    t.join(60)
    res = out["res"]
    assert res.status == "cancelled" and res.completed < res.episodes  # type: ignore[attr-defined]
    assert store.get_run(spec.run_id())["status"] == "cancelled"


def _search_then_answer(body: dict) -> str:  # type: ignore[type-arg]
    """Fake-server agent: search once, then answer once the search result is in the prompt."""
    text = "\n".join(str(m.get("content") or "") for m in body["messages"][1:])
    if "search(" in text or "search[" in text:
        return "Action: Answer\nFinal Answer: done"
    return "Action: Operation\n```\nsearch[shirt teal medium]\n```"


def test_llm_sweep_end_to_end_on_fake_server(tmp_path: Path, fake_llm_server) -> None:  # type: ignore[no-untyped-def]
    fake_llm_server.responder = _search_then_answer
    store = Store.open(tmp_path / "s.db")
    model = f"openai/fake-model@{fake_llm_server.base_url}"
    spec = RunSpec(
        benchmarks=("mock",),
        methods=("B0", "A2"),
        personas=("rational",),
        seeds=(0,),
        agent=model,
        limit=3,
    )
    res = run_sweep(store, spec, RunOptions(concurrency=4, progress=False))
    assert res.episodes == 6 and res.completed == 6 and res.errors == 0
    n_requests = len(fake_llm_server.requests)
    assert n_requests >= 12
    rows = store.episode_rows(run_id=res.run_id)
    assert {r["method"] for r in rows} == {"B0", "A2"}
    events = [json.loads(b) for b in store.event_jsons(rows[0]["episode_id"])]
    kinds = [e["kind"] for e in events]
    assert "observation" in kinds and "proposal_judged" in kinds and kinds[-1] == "episode_ended"
    # the same prompts under another run id are served from the response cache: free
    spec2 = spec.model_copy(update={"a3_generation_size": 7})
    res2 = run_sweep(store, spec2, RunOptions(concurrency=4, progress=False))
    assert res2.completed == 6
    assert len(fake_llm_server.requests) == n_requests
    assert _logs(store, res.run_id).keys() == _logs(store, res2.run_id).keys()


def test_llm_provider_errors_become_error_then_resume_retries(
    tmp_path: Path, fake_llm_server
) -> None:  # type: ignore[no-untyped-def]
    from tests.fakes.openai_server import Fault

    fake_llm_server.script([Fault.http(400)] * 2)
    fake_llm_server.responder = lambda body: "Action: Answer\nFinal Answer: done"
    store = Store.open(tmp_path / "s.db")
    spec = RunSpec(
        benchmarks=("mock",),
        methods=("B0",),
        personas=("rational",),
        seeds=(0,),
        agent=f"openai/fake@{fake_llm_server.base_url}",
        limit=2,
    )
    first = run_sweep(store, spec, RunOptions(concurrency=1, progress=False, retry_backoff_s=0))
    assert first.errors >= 1 and first.status == "completed_with_errors"
    again = run_sweep(store, spec, RunOptions(concurrency=1, progress=False, retry_backoff_s=0))
    assert again.errors == 0 and again.completed == 2
    ids = [r["episode_id"] for r in store.episode_rows(run_id=spec.run_id())]
    assert any(i.endswith("-r1") for i in ids)


def test_max_cost_guard(tmp_path: Path, fake_llm_server) -> None:  # type: ignore[no-untyped-def]
    fake_llm_server.responder = lambda body: "Action: Answer\nFinal Answer: done"
    store = Store.open(tmp_path / "s.db")
    spec = RunSpec(
        benchmarks=("mock",),
        methods=("B0",),
        personas=("rational",),
        seeds=(0,),
        agent=f"openai/gpt-4o-mini@{fake_llm_server.base_url}",
        limit=6,
    )
    res = run_sweep(store, spec, RunOptions(concurrency=1, progress=False, max_cost_usd=0.0))
    if res.cost_usd > 0:
        assert res.status == "budget_exceeded" and res.completed < res.episodes


def test_symbolic_asking_beats_no_ask_on_bundled_retail(tmp_path: Path) -> None:
    from core.construction.pipeline import load_bundled

    try:
        _, samples = load_bundled("tau2_retail")
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"bundled tau2_retail benchmark unavailable: {exc}")
    assert samples
    store = Store.open(tmp_path / "s.db")
    spec = RunSpec(
        benchmarks=("tau2_retail",),
        methods=("B0", "A0", "A2"),
        personas=PERSONAS,
        seeds=(0,),
        limit=40,  # 8 until the bundled data was rebuilt with the policy gate (issue 16)
    )
    res = run_sweep(store, spec, RunOptions(workers=2, progress=False))
    rate: dict[str, list[int]] = defaultdict(list)
    for r in store.episode_rows(run_id=res.run_id):
        rate[r["method"]].append(r["outcome"] == "SUCCESS")
    mean = {m: sum(v) / len(v) for m, v in rate.items()}
    # Asking pays on retail: both asking methods beat the no-ask baseline clearly. A0 vs A2 is
    # not an invariant of the symbolic policies (after issue 18's customer-worded requests A2 is
    # within noise of A0 here); the measured ladder with intervals is in docs/PROTOCOL.md.
    assert mean["B0"] + 0.05 <= mean["A0"], mean
    assert mean["B0"] + 0.05 <= mean["A2"], mean


def test_demo_and_export(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    name = run_demo(store)
    run = store.get_run(name)
    assert run["status"] == "completed" and run["completed"] == run["total"] > 0
    out = tmp_path / "demo.jsonl"
    n = export_run(store, name, "jsonl", out)
    lines = out.read_text().splitlines()
    assert n == len(lines) == run["total"]
    rec = json.loads(lines[0])
    assert {"header", "events", "outcome"} <= set(rec)
    assert (
        rec["events"][0]["kind"] == "episode_started"
        and rec["events"][-1]["kind"] == "episode_ended"
    )
    assert export_run(store, name, "csv", tmp_path / "d.csv") == n
    assert export_run(store, name, "parquet", tmp_path / "d.parquet") == n


def test_llm_sweep_records_parser_repairs(tmp_path: Path) -> None:
    from core.llm import ScriptedLLM

    def reply(messages, tools):  # type: ignore[no-untyped-def]
        seen = "\n".join(str(m.get("content") or "") for m in messages[1:])
        if "search[" in seen or "search(" in seen:
            return "Action: Answer\nFinal Answer: done"
        return "Action: operation\nsearch[teal shirt]"  # repaired: unfenced operation

    store = Store.open(tmp_path / "s.db")
    spec = RunSpec(
        benchmarks=("mock",),
        methods=("B0",),
        personas=("rational",),
        seeds=(0,),
        agent="openai/scripted",
        limit=3,
    )
    res = run_sweep(
        store, spec, RunOptions(concurrency=3, progress=False), client=ScriptedLLM(reply)
    )
    assert res.completed == 3
    for row in store.episode_rows(run_id=res.run_id):
        events = [json.loads(b) for b in store.event_jsons(row["episode_id"])]
        i = next(n for n, e in enumerate(events) if e["kind"] == "agent_action")
        assert events[i + 1]["kind"] == "repair"
        assert events[i + 1]["target"] == "action_format"
        assert events[i + 1]["detail"] == "unfenced_operation"


def test_key_ids_match_episode_keys() -> None:
    from core.model.run import EpisodeKey
    from core.runner.units import episode_id_of, key_id

    for seed in (0, 7, 123456):
        k = EpisodeKey(
            run_id="run-x",
            benchmark="webshop",
            sample_id="s-é",
            method="A2",
            persona="p",
            seed=seed,
        )
        assert key_id(k) == k.key()
        assert episode_id_of(key_id(k), 2) == k.episode_id(2)
        assert episode_id_of(key_id(k), 0) == k.episode_id(0)


def test_batched_writes_equal_per_episode_store_calls(tmp_path: Path) -> None:
    """The runner's one-transaction batch leaves what create_episode/append/finish would."""
    from core.runner.plan import SampleSource, plan_keys
    from core.runner.sweep import write_records
    from core.runner.units import play_symbolic_unit, units_of

    spec = _mock_spec(methods=("B0", "A2"), personas=("rational",), seeds=(0,))
    source = SampleSource(None)
    recs = []
    for unit in units_of(plan_keys(source, spec), spec):
        recs += play_symbolic_unit(unit, spec, source).records
    a = Store.open(tmp_path / "a.db")
    b = Store.open(tmp_path / "b.db")
    for s in (a, b):
        s.put_run(spec.run_id(), "r", spec.model_dump_json(), len(recs))
    write_records(a, recs)
    from core.model.episode import EpisodeHeader
    from core.model.events import parse_event

    for rec in recs:
        b.create_episode(EpisodeHeader.model_validate_json(rec.header_json))
        b.append(rec.episode_id, [parse_event(json.loads(e[3])) for e in rec.events_json])
        b.finish(rec.episode_id, rec.outcome, rec.summary)
    drop = {"created_at", "ended_at"}
    rows_a = [{k: v for k, v in r.items() if k not in drop} for r in a.episode_rows()]
    rows_b = [{k: v for k, v in r.items() if k not in drop} for r in b.episode_rows()]
    key = lambda r: r["episode_id"]  # noqa: E731
    assert sorted(rows_a, key=key) == sorted(rows_b, key=key)
    for rec in recs:
        assert a.event_jsons(rec.episode_id) == b.event_jsons(rec.episode_id)
        assert a.header_json(rec.episode_id) == b.header_json(rec.episode_id)


def test_llm_sweep_in_two_processes_equals_one(tmp_path: Path, fake_llm_server) -> None:  # type: ignore[no-untyped-def]
    from core.runner.sweep import llm_processes

    fake_llm_server.responder = _search_then_answer
    spec = RunSpec(
        benchmarks=("mock",),
        methods=("B0", "A2"),
        personas=("rational",),
        seeds=(0,),
        agent=f"openai/fake-model@{fake_llm_server.base_url}",
        limit=6,
    )
    wide = RunOptions(concurrency=32, workers=2, progress=False)
    assert llm_processes(wide, 12) == 2 and llm_processes(RunOptions(concurrency=8), 12) == 1
    a = Store.open(tmp_path / "a.db")
    ra = run_sweep(a, spec, RunOptions(concurrency=4, workers=1, progress=False))
    n_single = len(fake_llm_server.requests)
    b = Store.open(tmp_path / "b.db")
    rb = run_sweep(b, spec, wide)
    assert ra.completed == rb.completed == 12 and rb.errors == 0
    assert len(fake_llm_server.requests) == 2 * n_single
    assert _logs(a, ra.run_id) == _logs(b, rb.run_id)
    # a re-run of the same prompts is answered by b's response cache in every worker
    rc = run_sweep(b, spec.model_copy(update={"a3_generation_size": 3}), wide)
    assert rc.completed == 12 and len(fake_llm_server.requests) == 2 * n_single


# -- every sample runs on the world it was built on (issue 16) ---------------------------------
def _imported_world_samples(tmp_path: Path) -> Store:
    """A store whose tau2_retail samples were built on an imported (edited) copy of the world."""
    from core.construction import worlds as W
    from core.construction.pipeline import build_graphs, build_samples
    from tests.core.construction.helpers import edited_tau2_dir

    W.clear_cache()
    store = Store.open(tmp_path / "w.db")
    loaded = W.world_for(store, "tau2_retail", edited_tau2_dir(tmp_path))
    graphs, _ = build_graphs(loaded.world, ref=loaded.ref)
    samples, _ = build_samples(loaded.world, graphs, ref=loaded.ref, per_graph=3)
    store.put_graphs_and_samples(graphs, samples, source="built")
    return store


def _check_own_world(store: Store, run_id: str, fingerprints: set[str]) -> int:
    from core.model.events import EpisodeStarted, ObservationRecorded

    rows = store.episode_rows(run_id=run_id)
    assert rows and {r["outcome"] for r in rows} == {"SUCCESS"}
    calls = 0
    for r in rows:
        events = store.events(r["episode_id"])
        start = events[0]
        assert isinstance(start, EpisodeStarted) and start.sample.world is not None
        assert start.sample.world.fingerprint in fingerprints
        for ev in events:
            if isinstance(ev, ObservationRecorded):
                calls += 1
                assert ev.ok, ev.text  # no "order not found" on another world's data
    return calls


def test_sweeps_run_every_sample_on_its_own_world(tmp_path: Path) -> None:
    """A pool sweep (forked workers) over bundled and imported-world samples."""
    workers = 2
    from core.construction.worlds import bundled
    from core.studio.bootstrap import load_bundled_samples

    store = _imported_world_samples(tmp_path)
    load_bundled_samples(store)
    imported = {
        s["world_fingerprint"] for s in store.sample_index("tau2_retail") if s["source"] == "built"
    }
    assert len(imported) == 1 and imported != {bundled("tau2_retail").ref.fingerprint}
    spec = RunSpec(
        benchmarks=("tau2_retail",),
        methods=("ORACLE",),
        personas=("rational", "dependent"),
        seeds=(0,),
        limit=40,
    )
    res = run_sweep(store, spec, RunOptions(workers=workers, progress=False))
    assert res.completed == res.episodes == 80
    both = imported | {bundled("tau2_retail").ref.fingerprint}
    assert _check_own_world(store, res.run_id, both) > 0
    built = spec.model_copy(update={"source": "built", "limit": None})
    res = run_sweep(store, built, RunOptions(workers=workers, progress=False))
    assert _check_own_world(store, res.run_id, imported) > 0


def test_ray_workers_load_exactly_the_stored_world(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="ray not installed (optional extra 'ray')")
    store = _imported_world_samples(tmp_path)
    fp = {s["world_fingerprint"] for s in store.sample_index("tau2_retail")}
    spec = RunSpec(
        benchmarks=("tau2_retail",), methods=("ORACLE",), personas=("rational",), seeds=(0,)
    )
    res = run_sweep(store, spec, RunOptions(backend="ray", workers=2, progress=False))
    assert res.completed == res.episodes > 0
    assert _check_own_world(store, res.run_id, fp) > 0
