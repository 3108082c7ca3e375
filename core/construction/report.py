"""Construction statistics of what is in the store (``driftbench build report``, Construction page).

One row per benchmark × source × world, with the columns of the paper's Table 4:

* ``host_tasks`` — tasks of the host world (τ² tasks, shop goals);
* ``tasks`` — host tasks with an executable seed (a root that executes to a non-empty answer);
* ``graphs`` — intent graphs in the store; ``candidates`` — faulty requests written;
  ``rejected_by_step`` — rejections by verifier step 1 / 2 / 3; ``rejection_rate``;
* ``samples`` and ``by_fault_type`` — counted from the store's samples (composites keyed
  ``a+b``); ``admitted`` is what the recorded builds admitted (they may overlap or have been
  replaced since).

Graph and verifier statistics are what each build recorded (``construction_builds``; for the
bundled benchmark, its committed ``stats.json``); sample and graph counts are what the store
holds. Imported release samples were verified by their authors, so their candidate and
rejection columns are ``null`` (undefined, never 0). ``text=True`` adds request-text
statistics (median words, share of requests naming a tool, distinct off-topic passages and
the most frequent opening templates per single fault type).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from core.construction.pipeline import BUNDLED_DIR, bundled_stats, load_bundled
from core.errors import ConfigError
from core.model.base import content_hash
from core.model.intent import WorldRef
from core.model.sample import FaultType, Sample
from core.store import Store

STEPS = ("1", "2", "3")


def source_kind(source: str) -> str:
    """``release:NAME`` → ``release``; ``bundled`` / ``built`` unchanged."""
    return source.split(":", 1)[0]


def source_matches(selector: str, source: str) -> bool:
    """Whether a ``--source`` selector picks a stored source (kind, full name or import name)."""
    sel = selector.strip()
    if not sel:
        return True
    name = source.split(":", 1)[1] if ":" in source else ""
    return sel in (source, source_kind(source)) or (bool(name) and sel == name)


def record_build(
    store: Store,
    *,
    benchmark: str,
    source: str,
    ref: WorldRef | None,
    kind: str,
    params: dict[str, Any],
    stats: dict[str, Any],
) -> None:
    """Record one build's (or import's) statistics; the same build again replaces it."""
    world_id = ref.world_id if ref is not None else None
    build_id = content_hash([benchmark, source, world_id, kind, params], 16)
    store.put_build(
        build_id=build_id,
        benchmark=benchmark,
        source=source,
        world_id=world_id,
        kind=kind,
        params=params,
        stats=stats,
    )


def _key(benchmark: str, source: str, world_id: str | None) -> tuple[str, str, str]:
    return (benchmark, source, world_id or "")


def _sample_counts(store: Store) -> dict[tuple[str, str, str], dict[str, Any]]:
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in store.sample_index():
        cell = out.setdefault(
            _key(r["benchmark"], r["source"], r["world_id"]),
            {"samples": 0, "by_fault_type": Counter(), "by_k": Counter(), "splits": Counter()},
        )
        cell["samples"] += 1
        cell["by_fault_type"]["+".join(t for t in str(r["fault_types"]).split(",") if t)] += 1
        cell["by_k"][f"k{r['k']}"] += 1
        cell["splits"][r["split"]] += 1
    return out


def _graph_counts(store: Store) -> dict[tuple[str, str, str], dict[str, Any]]:
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    rows = store.conn.execute(
        "SELECT benchmark, source, json_extract(body, '$.world.world_id'), "
        "json_extract(body, '$.root.source_record'), json_extract(body, '$.root.base') "
        "FROM graphs"
    ).fetchall()
    for bench, source, wid, record, base in rows:
        cell = out.setdefault(_key(bench, source, wid), {"graphs": 0, "roots": set()})
        cell["graphs"] += 1
        cell["roots"].add(str(record or base).split("+", 1)[0])
    ops = store.conn.execute(
        "SELECT g.benchmark, g.source, json_extract(g.body, '$.world.world_id'), "
        "json_extract(e.value, '$.operator'), count(*) "
        "FROM graphs g, json_each(g.body, '$.edges') e GROUP BY 1, 2, 3, 4"
    ).fetchall()
    for bench, source, wid, op, n in ops:
        cell = out.setdefault(_key(bench, source, wid), {"graphs": 0, "roots": set()})
        cell.setdefault("by_operator", Counter())[str(op)] += int(n)
    return out


def _latest(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Latest stats per distinct params (rows are oldest first)."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        out[content_hash(r["params"])] = r["stats"]
    return out


def _builds(store: Store) -> dict[tuple[str, str, str], dict[str, list[dict[str, Any]]]]:
    out: dict[tuple[str, str, str], dict[str, list[dict[str, Any]]]] = {}
    for r in store.build_rows():
        cell = out.setdefault(_key(r["benchmark"], r["source"], r["world_id"]), {})
        cell.setdefault(r["kind"], []).append(r)
    return out


def _verifier(parts: list[dict[str, Any]]) -> dict[str, Any]:
    cands = 0
    rej: Counter[str] = Counter()
    for p in parts:
        cands += int(p.get("candidates", 0) or 0)
        rej.update({str(k): int(v) for k, v in (p.get("rejected_by_step") or {}).items()})
    rejected = {s: rej.get(s, 0) for s in STEPS}
    return {
        "candidates": cands,
        "rejected_by_step": rejected,
        "rejection_rate": round(sum(rejected.values()) / cands, 4) if cands else None,
    }


def _bundled_build(st: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    g = st.get("graphs", {}) if isinstance(st.get("graphs"), dict) else {}
    parts = st.get("samples", {})
    if isinstance(parts, dict) and "candidates" in parts:
        parts = {"k1": parts}
    return g, [p for _, p in sorted(parts.items())] if isinstance(parts, dict) else []


def _committed_samples(benchmark: str) -> list[Sample]:
    try:
        return load_bundled(benchmark)[1]
    except ConfigError:
        return []


def _world_names(store: Store) -> dict[str, str]:
    return {r["world_id"]: r["name"] for r in store.list_worlds()}


def store_report(
    store: Store,
    *,
    source: str | None = None,
    text: bool = False,
    stats_dir: Any = BUNDLED_DIR,
) -> dict[str, Any]:
    """Table-4 statistics of everything in the store, one row per benchmark × source × world.

    Args:
        store: The store.
        source: Only rows whose source matches (``bundled``, ``built``, ``release`` or an
            import's name).
        text: Add request-text statistics to every row (``text``).
        stats_dir: Where the committed bundled statistics live.

    Returns:
        ``{"benchmarks": [row, ...]}``; see the module docstring for the columns.
    """
    samples = _sample_counts(store)
    graphs = _graph_counts(store)
    builds = _builds(store)
    committed = bundled_stats(stats_dir)
    names = _world_names(store)
    keys = set(samples) | set(graphs) | set(builds)
    for bench in committed:
        if not any(k[0] == bench and k[1] == "bundled" for k in keys):
            keys.add(_key(bench, "bundled", str(committed[bench].get("world_id") or "")))
    rows = []
    for bench, src, wid in sorted(keys):
        if source is not None and not source_matches(source, src):
            continue
        smp = samples.get((bench, src, wid), {})
        grp = graphs.get((bench, src, wid), {})
        bld = builds.get((bench, src, wid), {})
        gstats: dict[str, Any] = {}
        parts: list[dict[str, Any]] = []
        verified = True
        if bld.get("graphs") or bld.get("samples"):
            graph_builds = list(_latest(bld.get("graphs", [])).values())
            gstats = graph_builds[-1] if graph_builds else {}
            parts = list(_latest(bld.get("samples", [])).values())
        elif bld.get("import"):
            gstats = list(_latest(bld["import"]).values())[-1]
            verified = False
        elif src == "bundled" and bench in committed:
            gstats, parts = _bundled_build(committed[bench])
        ver = _verifier(parts) if verified and parts else None
        built = sum(int(p.get("samples", 0) or 0) for p in parts) if ver else None
        n_graphs = int(grp.get("graphs", 0))
        n_samples = int(smp.get("samples", 0))
        if src == "bundled" and not smp and bench in committed:
            n_samples = int(committed[bench].get("totals", {}).get("samples", 0))
            n_graphs = int(gstats.get("graphs", 0) or 0)
        by_type = dict(sorted(smp.get("by_fault_type", Counter()).items()))
        if src == "bundled" and not smp and parts:
            agg: Counter[str] = Counter()
            for p in parts:
                agg.update(p.get("by_fault_type", {}))
            by_type = dict(sorted(agg.items()))
        executable = gstats.get("executable_seeds")
        if executable is None and "tasks" in gstats and "roots_rejected" in gstats:
            executable = int(gstats["tasks"]) - int(gstats["roots_rejected"])
        if executable is None and not verified:
            executable = len(grp.get("roots", ())) or None
        row: dict[str, Any] = {
            "benchmark": bench,
            "source": src,
            "world_id": wid or None,
            "world": names.get(wid, "bundled" if src == "bundled" else None),
            "host_tasks": gstats.get("host_tasks"),
            "tasks": executable,
            "graphs": n_graphs,
            "candidates": ver["candidates"] if ver else None,
            "rejected_by_step": ver["rejected_by_step"] if ver else None,
            "rejection_rate": ver["rejection_rate"] if ver else None,
            "samples": n_samples,
            "admitted": built,
            "by_fault_type": by_type,
            "by_k": dict(sorted(smp.get("by_k", Counter()).items())),
            "splits": dict(sorted(smp.get("splits", Counter()).items())),
            "by_operator": dict(sorted(grp.get("by_operator", Counter()).items()))
            or gstats.get("by_operator", {}),
            "edge_candidates": gstats.get("candidates"),
            "gate_removed": gstats.get("gate_removed"),
            "gate_removed_by_operator": gstats.get("gate_removed_by_operator"),
        }
        committed_only = src == "bundled" and not smp and bench in committed
        if committed_only:
            totals = committed[bench].get("totals", {})
            row["by_k"] = {
                k: int(totals[t])
                for k, t in (("k1", "single"), ("k2", "k2"), ("k4", "k4"))
                if totals.get(t)
            }
            row["splits"] = dict(totals.get("splits") or {})
        if text:
            row["text"] = (
                text_of(_committed_samples(bench), _tool_names(bench))
                if committed_only
                else text_stats(store, bench, src, wid)
            )
        rows.append(row)
    return {"benchmarks": rows}


# ---------------------------------------------------------------------------------- text
TOP_TEMPLATES = 3
"""Surface templates kept per fault type in the text statistics."""

_TEMPLATE_WORDS = 6


def _tool_names(benchmark: str) -> set[str]:
    from core.envs.registry import load_world

    try:
        return {t.name.lower() for t in load_world(benchmark).tools()}
    except Exception:  # noqa: BLE001 - an unavailable host has no tool names to count
        return set()


def tool_patterns(tools: Iterable[str]) -> re.Pattern[str] | None:
    """Whole-word pattern of tool-name phrasing (None when the host has none).

    Multi-word tool names count as an id and in their spaced form (``cancel_pending_order``,
    ``cancel pending order``); single-word tool names (``think``, ``search``) are ordinary
    words and are not counted.
    """
    forms: set[str] = set()
    for t in tools:
        t = t.lower()
        if "_" in t:
            forms |= {t, t.replace("_", " ")}
    if not forms:
        return None
    alt = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9_])(?:{alt})(?![a-z0-9_])")


def surface_template(sample: Sample) -> str:
    """The opening skeleton of a request (``hello, i need to change the``).

    Its first words after any off-topic passage, with numbers and ids masked. Requests
    that all open the same way share a template, so the most frequent templates per fault
    type show a wording regression at a glance.
    """
    text = sample.query
    for m in sample.mask:
        if m.kind == "noise" and m.surface and text.startswith(m.surface):
            text = text[len(m.surface) :]
    words = [
        "#" if any(ch.isdigit() for ch in w) else w.strip("\"'").lower()
        for w in text.split()[:_TEMPLATE_WORDS]
    ]
    return " ".join(words)


def text_of(samples: Iterable[Sample], tools: set[str]) -> dict[str, Any]:
    """Request-text statistics of ``samples``.

    ``median_words`` (words per opening request), ``tool_name_rate`` (share of requests that
    name one of the host's tools, as an id or in its spaced form, see :func:`tool_patterns`),
    ``distinct_offtopic_passages`` (distinct off-topic passages of contextual-irrelevance
    samples) and ``top_templates`` (fault type → the most frequent opening skeletons with their
    counts, :func:`surface_template`). Undefined values (no samples) are ``None``.
    """
    words: list[int] = []
    naming = 0
    passages: set[str] = set()
    templates: dict[str, Counter[str]] = {}
    pattern = tool_patterns(tools)
    for s in samples:
        words.append(len(s.query.split()))
        if pattern is not None and pattern.search(s.query.lower()):
            naming += 1
        for m in s.mask:
            if m.fault is FaultType.CONTEXTUAL_IRRELEVANCE and m.kind == "noise" and m.surface:
                passages.add(" ".join(m.surface.split()).lower())
        key = "+".join(f.value for f in s.faults)
        templates.setdefault(key, Counter())[surface_template(s)] += 1
    return {
        "median_words": statistics.median(words) if words else None,
        "tool_name_rate": round(naming / len(words), 4) if words else None,
        "distinct_offtopic_passages": len(passages) if words else None,
        "top_templates": {
            k: [
                {"template": t, "count": n, "share": round(n / sum(c.values()), 4)}
                for t, n in sorted(c.items(), key=lambda x: (-x[1], x[0]))[:TOP_TEMPLATES]
            ]
            for k, c in sorted(templates.items())
            if "+" not in k
        }
        if words
        else None,
    }


def _stored_samples(
    store: Store, benchmark: str, source: str, world_id: str | None
) -> Iterator[Sample]:
    rows = store.conn.execute(
        "SELECT body FROM samples WHERE benchmark=? AND source=? "
        "AND coalesce(json_extract(body, '$.world.world_id'), '')=?",
        (benchmark, source, world_id or ""),
    ).fetchall()
    for (body,) in rows:
        yield Sample.model_validate_json(body)


def text_stats(store: Store, benchmark: str, source: str, world_id: str | None) -> dict[str, Any]:
    """:func:`text_of` the stored samples of one report row."""
    return text_of(_stored_samples(store, benchmark, source, world_id), _tool_names(benchmark))
