"""Benchmarks of the human-study engine: label throughput under 20 concurrent annotators.

Baseline: one annotator labelling alone against a fresh store, measured in the same run. Every
concurrent run also checks that no label was lost and no lock error surfaced.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from core.model.config import ProtocolConfig
from core.model.episode import EpisodeHeader
from core.store import Store
from core.studies import (
    StudySpec,
    agreement_report,
    annotator_queue,
    assign_study,
    create_study,
    label_item,
)
from core.studies.sessions import import_sessions, run_sessions_report, write_sessions_jsonl


def _store(tmp: Path, n_episodes: int) -> tuple[Store, list[str]]:
    store = Store.open(tmp / "bench.db")
    cfg = ProtocolConfig()
    eps = []
    for i in range(n_episodes):
        eid = f"ep{i:04d}"
        store.create_episode(
            EpisodeHeader(
                episode_id=eid,
                sample_id="s",
                benchmark="webshop",
                persona_id="rational",
                seed=0,
                method="A1",
                agent="symbolic",
                user_voice="template",
                config=cfg,
                config_hash=cfg.config_hash(),
            )
        )
        eps.append(eid)
    return store, eps


def _label_run(n_annotators: int, seconds: float) -> dict[str, Any]:
    """Label for ``seconds`` with ``n_annotators`` threads; return throughput and latencies."""
    with tempfile.TemporaryDirectory() as tmp:
        store, eps = _store(Path(tmp), 40)
        anns = [f"a{i:02d}" for i in range(n_annotators)]
        create_study(
            store,
            StudySpec(
                name="bench",
                episodes=tuple(eps),
                label_kinds=("realism", "fault_type"),
                overlap=min(3, n_annotators),
            ),
        )
        assign_study(store, "bench", anns)
        barrier = threading.Barrier(n_annotators)
        latencies: list[list[float]] = [[] for _ in anns]
        ids: list[list[int]] = [[] for _ in anns]
        errors: list[str] = []
        start_box: list[float] = []

        def work(k: int) -> None:
            try:
                items = annotator_queue(store, "bench", anns[k]).items
                barrier.wait()
                deadline = start_box[0] + seconds
                i = 0
                while time.monotonic() < deadline:
                    item = items[i % len(items)]
                    t0 = time.perf_counter()
                    if (i // len(items)) % 2 == 0:
                        aid = label_item(store, item.assignment_id, "realism", 1 + i % 5)
                    else:
                        aid = label_item(store, item.assignment_id, "fault_type", "none")
                    latencies[k].append(time.perf_counter() - t0)
                    ids[k].append(aid)
                    i += 1
            except Exception as exc:  # noqa: BLE001 - reported in the result
                errors.append(f"{type(exc).__name__}: {exc}")
            finally:
                store.close()

        threads = [threading.Thread(target=work, args=(k,)) for k in range(n_annotators)]
        start_box.append(time.monotonic() + 0.5)
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        written = sum(len(x) for x in ids)
        stored = int(store.conn.execute("SELECT count(*) FROM annotations").fetchone()[0])
        flat = sorted(x for lat in latencies for x in lat)
        store.close()
    return {
        "labels_per_s": written / seconds,
        "p50_ms": 1000 * flat[len(flat) // 2] if flat else float("nan"),
        "p95_ms": 1000 * flat[int(0.95 * (len(flat) - 1))] if flat else float("nan"),
        "lost": written - stored,
        "errors": len(errors),
    }


def _agreement_seconds() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        store, eps = _store(Path(tmp), 200)
        create_study(
            store,
            StudySpec(name="agree", episodes=tuple(eps), label_kinds=("realism",), overlap=3),
        )
        assign_study(store, "agree", ["r1", "r2", "r3", "r4"])
        for r in ("r1", "r2", "r3", "r4"):
            for n, item in enumerate(annotator_queue(store, "agree", r).items):
                label_item(store, item.assignment_id, "realism", 1 + (n + len(r)) % 5)
        t0 = time.perf_counter()
        agreement_report(store, "agree")
        took = time.perf_counter() - t0
        store.close()
    return took


def _sessions_seconds(n: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "s.db")
        path = write_sessions_jsonl(Path(tmp) / "s.jsonl", n, seed=0)
        t0 = time.perf_counter()
        import_sessions(store, path)
        run_sessions_report(store, "heuristic", seed=0)
        took = time.perf_counter() - t0
        store.close()
    return took


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Run the study benchmarks (medians of several repetitions)."""
    seconds = 1.5 if quick else 5.0
    reps = 1 if quick else 3
    single = [_label_run(1, seconds) for _ in range(reps)]
    multi = [_label_run(20, seconds) for _ in range(reps)]
    base_tp = statistics.median(r["labels_per_s"] for r in single)
    tp = statistics.median(r["labels_per_s"] for r in multi)
    base_p95 = statistics.median(r["p95_ms"] for r in single)
    p95 = statistics.median(r["p95_ms"] for r in multi)
    lost = sum(r["lost"] for r in multi)
    errs = sum(r["errors"] for r in multi)
    agree = statistics.median(_agreement_seconds() for _ in range(reps))
    n_sessions = 300 if quick else 1000
    sess = statistics.median(_sessions_seconds(n_sessions) for _ in range(reps))
    return [
        {
            "name": "studies.label_throughput_20_annotators",
            "value": tp,
            "unit": "labels/s",
            "baseline": base_tp,
            "ratio": tp / base_tp if base_tp else None,
            "target": ">= 0.5x single-annotator throughput, 0 lost labels, 0 lock errors",
            "met": bool(tp >= 0.5 * base_tp and lost == 0 and errs == 0),
            "notes": f"ratio = value/baseline (throughput); {seconds:g} s runs; lost={lost}, "
            f"errors={errs}; one IMMEDIATE transaction per label, WAL",
        },
        {
            "name": "studies.label_latency_p95_20_annotators",
            "value": p95,
            "unit": "ms",
            "baseline": base_p95,
            "ratio": base_p95 / p95 if p95 else None,
            "target": "p95 < 250 ms per label with 20 annotators",
            "met": bool(p95 < 250),
            "notes": "baseline: p95 of a single annotator in the same run",
        },
        {
            "name": "studies.agreement_report_200x4",
            "value": agree,
            "unit": "s",
            "baseline": None,
            "ratio": None,
            "target": "< 2 s for 200 episodes, 4 annotators, overlap 3",
            "met": bool(agree < 2.0),
            "notes": "Cohen per pair, Fleiss, Krippendorff, disagreements, throughput",
        },
        {
            "name": f"studies.sessions_import_and_report_{n_sessions}",
            "value": sess,
            "unit": "s",
            "baseline": None,
            "ratio": None,
            "target": f"< 10 s for {n_sessions} synthetic sessions (heuristic judges)",
            "met": bool(sess < 10.0),
            "notes": "import + two heuristic judges + strict filter + matching + bootstrap",
        },
    ]


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
