"""WebShop at its real size: import, search, pages, golden pass and a sweep on generated catalogues.

For each size (full run: 1k, 100k and 1.18M products — WebShop's full catalogue; quick: 1k and
10k) a real-format catalogue is generated (``core.envs.webshop.catgen``), streamed into a
catalogue file by a child process (``core.envs.webshop.stream``; wall time and that child's
peak RSS from ``wait4``), then opened as a world and measured:

* import wall time and peak RSS; baseline = ``json.load`` of the same ``items_shuffle.json`` in
  a child (the first step of the old whole-file importer), up to 100k products (at 1.18M it
  would need tens of GB, which is the point);
* store size on disk; baseline = the size of the JSON files it was built from;
* search p50/p95 over the 500 test instructions, uncached (the result cache cleared before
  each query; the postings file is mapped, so the OS page cache stays warm, as for any
  mapped index); baseline = the previous index: posting lists read out of the SQLite ``post``
  table per query, BM25 computed from the term counts, every matching row scored;
* item-page render (search, open a product, render its page) and the golden pass per goal;
  baseline = the same on the bundled 2,232-product shop;
* a symbolic sweep (A0–A3, 2 personas, 1 seed over samples built on the catalogue);
  baseline = the same sweep on the bundled shop.

Sizes can be overridden with ``BENCH_WEBSHOP_SIZES=1000,100000``. Catalogues are written under
``$TMPDIR`` and deleted afterwards. The 1.18M run takes about half an hour on 2 cores.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import core.envs.webshop.postfile as postfile
from core.envs.webshop.catgen import write_catalogue
from core.envs.webshop.golden import golden_task
from core.envs.webshop.text import search_terms
from core.envs.webshop.world import WebShopWorld, load_webshop_world
from core.model.world import EnvAction

FULL_SIZES = (1_000, 100_000, 1_180_000)
QUICK_SIZES = (1_000, 10_000)
ROOT = Path(__file__).resolve().parent.parent

_IMPORT = """
import json, sys, time
from pathlib import Path
from core.envs.webshop.stream import import_catalogue
t = time.perf_counter()
out = import_catalogue(Path(sys.argv[1]), Path(sys.argv[2]), progress=False)
out["wall"] = time.perf_counter() - t
print(json.dumps(out))
"""

_JSON_LOAD = """
import json, sys, time
t = time.perf_counter()
with open(sys.argv[1], encoding="utf-8") as fh:
    data = json.load(fh)
print(json.dumps({"wall": time.perf_counter() - t, "records": len(data)}))
"""


def _child(code: str, *args: str) -> tuple[dict[str, Any], float]:
    """Run ``code`` in a child Python; return (its JSON output, its peak RSS in MB)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, env=env, text=True
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode})")
    return json.loads(out.strip().splitlines()[-1]), usage.ru_maxrss / 1024.0


def _pct(ts: list[float]) -> tuple[float, float]:
    ts = sorted(ts)
    return ts[len(ts) // 2], ts[min(len(ts) - 1, int(len(ts) * 0.95))]


def _search(world: WebShopWorld, queries: list[str]) -> tuple[float, float]:
    index = world.catalogue.index
    ts = []
    for q in queries:
        index.clear_cache()
        t = time.perf_counter()
        index.search(q, cache=False)
        ts.append((time.perf_counter() - t) * 1000.0)
    return _pct(ts)


def _search_from_table(db: Path, size: int, queries: list[str]) -> tuple[float, float]:
    """Baseline: each query reads its posting lists out of the SQLite ``post`` table, computes
    BM25 from the term counts and scores every matching row (the previous index)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    raw = conn.execute("SELECT data FROM blobs WHERE name='doclen'").fetchone()[0]
    norm = postfile.doc_norms(np.frombuffer(raw, dtype=np.uint32))
    ts = []
    for q in queries:
        t = time.perf_counter()
        rows, weights = [], []
        for term in search_terms(q):
            got = conn.execute("SELECT rids, tfs FROM post WHERE term=?", (term,)).fetchone()
            if got is None:
                continue
            r = np.frombuffer(got[0], dtype=np.int32)
            tf = np.frombuffer(got[1], dtype=np.uint16)
            rows.append(r)
            weights.append(postfile.contributions(postfile.idf(size, len(r)), tf, norm[r]))
        if rows:
            acc = np.bincount(np.concatenate(rows), weights=np.concatenate(weights), minlength=size)
            hit = np.flatnonzero(acc)
            top = hit[np.lexsort((hit, -acc[hit]))[:50]]
            assert len(top) > 0
        ts.append((time.perf_counter() - t) * 1000.0)
    conn.close()
    return _pct(ts)


def _item_page_ms(world: WebShopWorld, n: int) -> float:
    """Median ms to open and render one product page (after its search)."""
    ts = []
    for p in list(world.products[:: max(1, len(world.products) // n)])[:n]:
        s = world.open_session()
        s.act(EnvAction(tool="search", args={"query": p.title}))
        t = time.perf_counter()
        obs = s.act(EnvAction(tool="click", args={"target": p.asin.lower()}))
        _ = obs.text if hasattr(obs, "text") else str(obs)
        ts.append((time.perf_counter() - t) * 1000.0)
    return statistics.median(ts)


def _golden_ms(world: WebShopWorld, n: int) -> tuple[float, bool]:
    goals = (world.test_split() or world.goals)[:n]
    world.catalogue.index.clear_cache()
    t = time.perf_counter()
    res = [golden_task(world, g) for g in goals]
    ok = all(abs(r["reward"] - 1.0) < 1e-9 and r["tool_errors"] == 0 for r in res)
    return (time.perf_counter() - t) * 1000.0 / len(goals), ok


def _sweep(world: WebShopWorld, graphs_n: int) -> tuple[float, int, float]:
    """(episodes/s, episodes, construction seconds) of a symbolic sweep on ``world``."""
    from core.agents.askbook import AskBook
    from core.agents.factory import build_agent
    from core.agents.methods import user_voice_for
    from core.construction.pipeline import build_graphs, build_samples
    from core.engine import episode
    from core.engine.eventlog import InMemoryEventLog
    from core.model.config import ProtocolConfig
    from core.protocol.personas import load_personas
    from core.runner.plan import literal_intent

    t0 = time.perf_counter()
    graphs, _ = build_graphs(world, seed=42, branching=4, limit=graphs_n)
    samples, _ = build_samples(world, graphs, per_graph=1)
    built = time.perf_counter() - t0
    by_id = {g.graph_id: g for g in graphs}
    personas = load_personas()
    chosen = [personas[k] for k in sorted(personas)[:2]]
    config = ProtocolConfig()

    def loader(_benchmark: str) -> WebShopWorld:
        return world

    n = 0
    t = time.perf_counter()
    for method in ("A0", "A1", "A2", "A3"):
        for persona in chosen:
            book = AskBook()
            for smp in samples:
                graph = by_id[smp.graph_id]
                log = InMemoryEventLog()
                eid = episode.start(
                    log,
                    smp,
                    persona,
                    0,
                    "symbolic",
                    config,
                    graph=graph,
                    method=method,
                    user_voice=user_voice_for(method, "template"),
                    world_loader=loader,
                )
                agent = build_agent(
                    method,
                    world=world,
                    literal=literal_intent(smp, graph),
                    askbook=book,
                    costs=config.costs(),
                )
                episode.run(log, eid, agent, world_loader=loader)
                n += 1
    secs = time.perf_counter() - t
    return (n / secs if secs > 0 else 0.0), n, built


def _sizes(quick: bool) -> tuple[int, ...]:
    env = os.environ.get("BENCH_WEBSHOP_SIZES")
    if env:
        return tuple(int(x) for x in env.split(",") if x.strip())
    return QUICK_SIZES if quick else FULL_SIZES


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Measure the WebShop-scale rows (see the module docstring)."""
    rows: list[dict[str, Any]] = []
    load = f"load average {os.getloadavg()[0]:.1f} at start"
    bundled = load_webshop_world()
    bundled.catalogue.index.warm()
    b_page = _item_page_ms(bundled, 100)
    b_golden, _ = _golden_ms(bundled, 300)
    graphs_n = 4 if quick else 6
    b_eps, b_n, _ = _sweep(bundled, graphs_n)
    import_rss: dict[int, float] = {}
    sizes = _sizes(quick)
    for size in sizes:
        work = Path(tempfile.mkdtemp(prefix=f"ws-scale-{size}-"))
        try:
            t = time.perf_counter()
            write_catalogue(size, work / "src", seed=11)
            gen_s = time.perf_counter() - t
            raw = sum(p.stat().st_size for p in (work / "src").iterdir())
            got, rss = _child(_IMPORT, str(work / "src"), str(work / "catalogue.sqlite"))
            import_rss[size] = rss
            base_wall = base_rss = None
            if size <= 100_000:
                base, base_rss = _child(_JSON_LOAD, str(work / "src" / "items_shuffle.json"))
                base_wall = base["wall"]
            label = f"{size:,} products"
            rows.append(
                {
                    "name": f"webshop-scale import wall time ({label})",
                    "value": round(got["wall"], 1),
                    "unit": "s",
                    "baseline": round(base_wall, 1) if base_wall is not None else None,
                    "ratio": round(got["wall"] / base_wall, 1) if base_wall else None,
                    "target": "< 1200 s at 1.18M" if size >= 1_000_000 else "report",
                    "met": got["wall"] < 1200 if size >= 1_000_000 else None,
                    "notes": f"streamed into a catalogue file ({got['goals']:,} goals, "
                    f"{got['test_goals']} test); baseline = json.load of items_shuffle.json "
                    "alone (old importer's first step)"
                    + ("" if base_wall is not None else ", not run at this size")
                    + f"; generating the files took {gen_s:.0f} s; {load}",
                }
            )
            rows.append(
                {
                    "name": f"webshop-scale import peak RSS ({label})",
                    "value": round(rss, 1),
                    "unit": "MB",
                    "baseline": round(base_rss, 1) if base_rss is not None else None,
                    "ratio": round(rss / base_rss, 2) if base_rss else None,
                    "target": "< 1536 MB at 1.18M" if size >= 1_000_000 else "flat in size",
                    "met": rss < 1536 if size >= 1_000_000 else None,
                    "notes": "peak RSS of the importing process (wait4); baseline = json.load "
                    "of the product file"
                    + (
                        f"; {rss / import_rss[sizes[0]]:.2f}x the {sizes[0]:,}-product import"
                        if size != sizes[0]
                        else ""
                    ),
                }
            )
            db = work / "catalogue.sqlite"
            side = postfile.postings_path(db)
            size_mb = (db.stat().st_size + (side.stat().st_size if side.exists() else 0)) / 1e6
            rows.append(
                {
                    "name": f"webshop-scale store size on disk ({label})",
                    "value": round(size_mb, 1),
                    "unit": "MB",
                    "baseline": round(raw / 1e6, 1),
                    "ratio": round(size_mb / (raw / 1e6), 2),
                    "target": "report",
                    "met": None,
                    "notes": "catalogue file (products, goals, BM25 postings) plus its mapped "
                    "postings file; baseline = the "
                    "WebShop JSON files it was imported from",
                }
            )
            world = WebShopWorld.from_catalogue_file(db)
            world.catalogue.index.warm()
            goals = world.test_split() or world.goals[:500]
            queries = [g.instruction_text for g in goals]
            p50, p95 = _search(world, queries)
            d50, d95 = _search_from_table(db, len(world.products), queries[:200])
            big = size >= 1_000_000
            rows.append(
                {
                    "name": f"webshop-scale search p50 ({label})",
                    "value": round(p50, 2),
                    "unit": "ms",
                    "baseline": round(d50, 2),
                    "ratio": round(d50 / p50, 1),
                    "target": "p50 < 10 ms at 1.18M" if big else "report",
                    "met": p50 < 10.0 if big else None,
                    "notes": f"BM25 top-50 over {len(queries)} test instructions, result cache "
                    "cleared per query (MaxScore over the mapped postings file); baseline = "
                    "the previous index on 200 of them: lists read from the SQLite post "
                    "table, BM25 from term counts, every matching row scored",
                }
            )
            rows.append(
                {
                    "name": f"webshop-scale search p95 ({label})",
                    "value": round(p95, 2),
                    "unit": "ms",
                    "baseline": round(d95, 2),
                    "ratio": round(d95 / p95, 1),
                    "target": "report",
                    "met": None,
                    "notes": "same runs as the p50 row",
                }
            )
            page = _item_page_ms(world, 100)
            rows.append(
                {
                    "name": f"webshop-scale item page render ({label})",
                    "value": round(page, 3),
                    "unit": "ms",
                    "baseline": round(b_page, 3),
                    "ratio": round(page / b_page, 2),
                    "target": "report",
                    "met": None,
                    "notes": "open a product from its results page and render it (median of "
                    "100); baseline = the bundled 2,232-product in-memory shop",
                }
            )
            g_ms, ok = _golden_ms(world, 200 if big else 500)
            rows.append(
                {
                    "name": f"webshop-scale golden pass per goal ({label})",
                    "value": round(g_ms, 2),
                    "unit": "ms",
                    "baseline": round(b_golden, 2),
                    "ratio": round(g_ms / b_golden, 2),
                    "target": "all rewards = 1.0",
                    "met": ok,
                    "notes": f"{200 if big else 500} test goals: search, paginate, open, "
                    "options, buy, reward; baseline = bundled shop per goal",
                }
            )
            if size == sizes[-1]:
                eps, n, built = _sweep(world, graphs_n)
                rows.append(
                    {
                        "name": f"webshop-scale symbolic sweep ({label})",
                        "value": round(eps, 1),
                        "unit": "episodes/s",
                        "baseline": round(b_eps, 1),
                        "ratio": round(eps / b_eps, 2),
                        "target": "report",
                        "met": None,
                        "notes": f"A0-A3 x 2 personas x {n // 8} samples ({n} episodes, "
                        f"{graphs_n} graphs) in one process; baseline = the same sweep on the "
                        f"bundled shop ({b_n} episodes); building graphs and samples on the "
                        f"catalogue took {built:.0f} s",
                    }
                )
            del world
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return rows


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
