"""Import the Drift-Bench++ release formats into canonical graphs and samples.

Recognised files (found recursively under the source folder):

* **graph files** — one intent graph per JSON object with ``root``, ``children``, ``edges`` and
  ``tree_id``/``graph_id`` (τ² ``graphs/``/``trees/`` folders, WebShop ``tree_*.json``);
* **τ² bundles** — ``{"results": [...], "summary": {...}}`` sample ledgers (rejected ledger
  entries are listed as skipped, never imported);
* **WebShop per-sample files** — one sample per JSON object with ``query``, ``mask`` and
  ``tree_id``.

Everything else (datasheets, notes) is ignored. Malformed recognised files raise
:class:`ConfigError` naming the file and field.

τ² nodes are converted from their recipes (:mod:`core.construction.release_nodes`): every
argument of every call — derived ones like ``nonfree_baggages`` and whole ``also:`` requests
included — becomes a condition, so the engine executes exactly the release's calls. When
worlds are given, each graph is placed on the first candidate world on which its root
reproduces the released state (:mod:`core.construction.release_worlds`); nodes that do not
reproduce are dropped, the policy gate runs, and every sample is checked by the oracle
(:mod:`core.construction.verify`) — a sample is imported only when ORACLE succeeds on it.
Everything left out is listed in ``skipped`` with its reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.construction.release_graphs import (
    ReleaseGraph,
    conditions_from,
    convert_graph,
    ground_truth_from,
    need,
)
from core.construction.release_nodes import SlotMap
from core.construction.release_worlds import PlacementStats, place_tau2, place_webshop
from core.construction.verify import verify_sample
from core.construction.worlds import LoadedWorld, ref_for
from core.envs.base import HostWorld
from core.errors import ConfigError
from core.faults.taxonomy import FAULT_OF_KIND
from core.model.base import canonical_json
from core.model.intent import Condition, Intent, IntentGraph
from core.model.reading import DOCUMENT, load_json
from core.model.sample import FaultType, MaskEntry, MaskKind, Sample, VerifierRecord

_SUPPORTED = ("webshop", "tau2_retail", "tau2_airline")


@dataclass
class ReleaseImport:
    """What :func:`read_release` produced."""

    graphs: list[IntentGraph] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)


def _fault(name: Any, file: Path, path: str) -> FaultType:
    try:
        return FaultType(str(name))
    except ValueError:
        raise ConfigError(f"unknown fault type {name!r}", file=file, field=path) from None


def convert_mask(
    mask: Any,
    root: Intent,
    faults: list[FaultType],
    file: Path,
    path: str,
    slot_map: SlotMap | None = None,
) -> tuple[tuple[MaskEntry, ...], tuple[str, ...], tuple[tuple[Condition, ...], ...]]:
    """Turn a release mask into (entries, canonical hidden slots, literal readings).

    With a ``slot_map`` (τ² roots converted from recipes) release slot names are translated;
    derived arguments no release condition names are ``stated`` entries and are added to every
    literal reading (the agent computes them from the host's data, as the release's compiler
    did), and ``also:`` extras become one ``extra`` entry per argument of the request.
    """
    if not isinstance(mask, dict):
        raise ConfigError("expected an object", file=file, field=path)
    smap = slot_map or SlotMap()

    def slots_of(release_slot: str) -> list[str]:
        if release_slot in smap.requests:
            return list(smap.requests[release_slot])
        return [smap.slot(release_slot)]

    assigned_any = mask.get("assigned_slots")
    assigned: dict[str, Any] = assigned_any if isinstance(assigned_any, dict) else {}
    by_slot_fault: dict[str, FaultType] = {}
    for k, v in assigned.items():
        for slot in slots_of(str(v)):
            by_slot_fault[slot] = _fault(k, file, f"{path}.assigned_slots")

    def fault_for(slot: str, kind: str) -> FaultType:
        if slot in by_slot_fault:
            return by_slot_fault[slot]
        if len(faults) == 1:
            return faults[0]
        for f in faults:
            if FAULT_OF_KIND.get(kind) is f:
                return f
        return faults[0]

    treat: dict[str, tuple[MaskKind, Any, str]] = {}

    def mark(release_slot: str, entry: tuple[MaskKind, Any, str], *, keep: bool = False) -> None:
        for slot in slots_of(release_slot):
            if keep:
                treat.setdefault(slot, entry)
            else:
                treat[slot] = entry

    for i, s in enumerate(mask.get("substituted") or []):
        if not (isinstance(s, list) and len(s) >= 3):
            raise ConfigError(
                "must be [slot, true, stated]", file=file, field=f"{path}.substituted[{i}]"
            )
        mark(str(s[0]), ("substituted", s[2], ""))
    for i, p in enumerate(mask.get("presupposed") or []):
        if not isinstance(p, dict):
            raise ConfigError("must be an object", file=file, field=f"{path}.presupposed[{i}]")
        about = p.get("about") or (p.get("condition") or [None])[0]
        if about:
            mark(str(about), ("presupposed", p.get("alternative"), str(p.get("text") or "")))
    for s in mask.get("withheld") or []:
        mark(str(s), ("withheld", None, ""))
    for i, m in enumerate(mask.get("marked") or []):
        slot = m[0] if isinstance(m, list) and m else m
        if not isinstance(slot, str):
            raise ConfigError("must be [slot, kind]", file=file, field=f"{path}.marked[{i}]")
        mark(slot, ("marked", None, str(m[1]) if isinstance(m, list) and len(m) > 1 else ""))
    root_slots = root.slot_map()
    for i, a in enumerate(mask.get("ambiguous") or []):
        if not isinstance(a, dict):
            raise ConfigError("must be an object", file=file, field=f"{path}.ambiguous[{i}]")
        for pl in a.get("placements") or []:
            if not (isinstance(pl, list) and pl and isinstance(pl[0], str)):
                continue
            if all(x in root_slots for x in slots_of(pl[0])):
                mark(pl[0], ("ambiguous", None, str(a.get("surface") or "")), keep=True)
    entries: list[MaskEntry] = []
    for c in root.conditions:
        t = treat.get(c.slot)
        if t is None:
            entries.append(
                MaskEntry(slot=c.slot, kind="stated", true_value=c.value, stated_value=c.value)
            )
            continue
        kind, stated, surface = t
        stated_v = stated if isinstance(stated, (str, int, float, bool)) else None
        entries.append(
            MaskEntry(
                slot=c.slot,
                kind=kind,
                fault=fault_for(c.slot, kind),
                true_value=c.value,
                stated_value=stated_v,
                surface=surface,
            )
        )
    extra_fault = (
        FaultType.IRRELEVANT_INFORMATION
        if FaultType.IRRELEVANT_INFORMATION in faults
        else faults[0]
    )
    for e in mask.get("extras") or []:
        cond = e.get("condition") if isinstance(e, dict) else None
        text = str(e.get("text") or "") if isinstance(e, dict) else ""
        if isinstance(cond, list) and len(cond) >= 3 and isinstance(cond[0], str):
            op = cond[1] if cond[1] in ("=", "<=", ">=", "!=", "contains") else "="
            value = (
                cond[2] if isinstance(cond[2], (str, int, float, bool)) else canonical_json(cond[2])
            )
            extra = smap.translate([Condition(slot=cond[0], op=op, value=value)])
        else:
            extra = []
        if not extra:
            entries.append(MaskEntry(slot="*", kind="extra", fault=extra_fault, surface=text))
            continue
        for x in extra:
            entries.append(
                MaskEntry(
                    slot=x.slot,
                    kind="extra",
                    fault=fault_for(x.slot, "extra")
                    if FaultType.IRRELEVANT_INFORMATION in faults
                    else faults[0],
                    stated_value=x.value,
                    surface=text,
                )
            )
    for f in faults:
        if f in (FaultType.CONTEXTUAL_IRRELEVANCE, FaultType.INDIRECT_INTENT):
            span = mask.get("offtopic_span") if f is FaultType.CONTEXTUAL_IRRELEVANCE else ""
            entries.append(MaskEntry(slot="*", kind="noise", fault=f, surface=str(span or "")))
    entries.sort(key=lambda e: (e.slot, e.kind, e.fault or ""))
    hidden = tuple(sorted({e.slot for e in entries if e.hidden}))
    derived = [root_slots[s] for s in smap.derived if s in root_slots]
    readings = []
    for i, r in enumerate(mask.get("literal_readings") or []):
        conds = smap.translate(conditions_from(r, file, f"{path}.literal_readings[{i}]"))
        have = {c.slot for c in conds}
        conds += [d for d in derived if d.slot not in have]
        readings.append(tuple(sorted(conds, key=Condition.key)))
    return tuple(entries), hidden, tuple(readings)


def _verifier(entry: dict[str, Any], mask: dict[str, Any]) -> VerifierRecord:
    sig_any = entry.get("signature")
    sig: dict[str, Any] = sig_any if isinstance(sig_any, dict) else {}
    attempts = entry.get("attempts") or entry.get("render_attempts") or mask.get("attempt") or 1
    return VerifierRecord(
        passed=True,
        attempts=int(attempts) if isinstance(attempts, int) else 1,
        extraction_agreed=bool(mask.get("extractor_agreement", True)),
        strings_ok=True,
        admission=str(sig.get("verdict", ""))
        + (f" ({sig.get('rule')})" if sig.get("rule") else ""),
        extractors=("release",),
        writer="release",
    )


def _make_sample(
    rg: ReleaseGraph,
    query: str,
    faults: list[FaultType],
    mask: Any,
    entry: dict[str, Any],
    split: str,
    source_id: str,
    file: Path,
    path: str,
) -> Sample:
    graph = rg.graph
    entries, hidden, readings = convert_mask(
        mask, graph.root, faults, file, f"{path}.mask", rg.root_map
    )
    return Sample(
        sample_id=Sample.make_id(graph.graph_id, query, entries),
        benchmark=graph.benchmark,
        graph_id=graph.graph_id,
        env_id=graph.env_id,
        root_intent_id=graph.root.intent_id,
        query=query,
        faults=tuple(faults),
        mask=entries,
        hidden_slots=hidden,
        literal_readings=readings,
        root_ground_truth=graph.root.ground_truth,
        verifier=_verifier(entry, mask if isinstance(mask, dict) else {}),
        split=split,
        source="release",
        source_id=source_id,
        world=graph.world,
    )


def _load(path: Path) -> Any:
    """A release file through the bounded reader (depth, values, size, finite numbers)."""
    return load_json(path, DOCUMENT)


def _faults_of(entry: dict[str, Any], file: Path, path: str) -> list[FaultType]:
    ids = entry.get("strategy_ids")
    if isinstance(ids, list) and ids:
        return [_fault(x, file, f"{path}.strategy_ids") for x in ids]
    return [_fault(need(entry, "strategy", str, file, path), file, f"{path}.strategy")]


def _candidates(
    worlds: Mapping[str, HostWorld] | None,
    candidates: Mapping[str, Sequence[LoadedWorld]] | None,
) -> dict[str, list[LoadedWorld]] | None:
    if candidates is not None:
        return {b: list(ws) for b, ws in candidates.items()}
    if worlds is None:
        return None
    return {b: [LoadedWorld(w, ref_for(w))] for b, w in worlds.items()}


def read_release(
    src: Path,
    worlds: Mapping[str, HostWorld] | None = None,
    *,
    candidates: Mapping[str, Sequence[LoadedWorld]] | None = None,
    verify: bool = True,
) -> ReleaseImport:
    """Read a release folder into canonical graphs and samples.

    Args:
        src: The release folder (searched recursively).
        worlds: One loaded world per benchmark id (shorthand for ``candidates``).
        candidates: Candidate worlds per benchmark, in preference order. With worlds (either
            argument), samples of benchmarks without one are skipped; every graph is placed
            on a world (see :mod:`core.construction.release_worlds`) and every sample must
            pass the oracle there (``verify``). Without, the files are only converted.
        verify: Check every sample with the oracle on its world (needs worlds).

    Returns:
        A :class:`ReleaseImport` whose report has ``imported``, ``graphs``, ``by_benchmark``,
        ``by_fault_type``, ``skipped`` [{source, reason}], ``ground_truth_matches``
        {checked, matched, mismatched} (roots of the samples' graphs executed as converted),
        ``nodes`` (children reproduced / dropped), ``gate`` (children the policy gate removed),
        ``oracle`` {checked, passed} and ``worlds`` (world id → graphs placed on it).

    Raises:
        ConfigError: the folder is missing, or a recognised file is malformed (file + field).
    """
    src = Path(src)
    if not src.is_dir():
        raise ConfigError("release folder does not exist", file=src)
    cands = _candidates(worlds, candidates)
    files = sorted(p for p in src.rglob("*.json") if p.is_file())
    rgs: dict[str, ReleaseGraph] = {}
    bundles: list[tuple[Path, dict[str, Any]]] = []
    ws_samples: list[tuple[Path, dict[str, Any]]] = []
    for p in files:
        obj = _load(p)
        if isinstance(obj, dict) and {"root", "children", "edges"} <= set(obj):
            rg = convert_graph(obj, p)
            rgs[rg.graph.graph_id] = rg
        elif isinstance(obj, dict) and "results" in obj and "summary" in obj:
            if not isinstance(obj["results"], list):
                raise ConfigError("must be a list", file=p, field="results")
            if not isinstance(obj["summary"], dict):
                raise ConfigError("must be an object", file=p, field="summary")
            bundles.append((p, obj))
        elif isinstance(obj, dict) and "query" in obj and "mask" in obj:
            ws_samples.append((p, obj))
    skipped: list[dict[str, str]] = []
    samples: dict[str, Sample] = {}
    placement = PlacementStats()
    placed: dict[str, tuple[ReleaseGraph | None, LoadedWorld | None, str | None]] = {}
    oracle = {"checked": 0, "passed": 0}
    tried: dict[str, bool] = {}
    wanted: set[str] = set()

    def place(rg: ReleaseGraph) -> tuple[ReleaseGraph | None, LoadedWorld | None, str | None]:
        gid = rg.graph.graph_id
        if gid in placed:
            return placed[gid]
        bench = rg.graph.benchmark
        out: tuple[ReleaseGraph | None, LoadedWorld | None, str | None]
        if bench not in _SUPPORTED:
            out = (None, None, f"benchmark {bench!r} is not supported")
        elif cands is None:
            out = (rg, None, None)
        elif not cands.get(bench):
            out = (None, None, f"host world {bench!r} is not loaded")
        else:
            if bench == "webshop":
                g, w, why = place_webshop(rg.graph, rg.products, cands[bench], placement)
            else:
                g, w, why = place_tau2(rg.graph, cands[bench], placement)
                tried[gid] = g is not None
            out = (replace(rg, graph=g), w, None) if g is not None else (None, None, why)
        placed[gid] = out
        return out

    def admit(
        rg: ReleaseGraph,
        query: str,
        faults: list[FaultType],
        mask: dict[str, Any],
        entry: dict[str, Any],
        split: str,
        source_id: str,
        source: str,
        file: Path,
        path: str,
    ) -> None:
        wanted.add(rg.graph.graph_id)
        got, loaded, why = place(rg)
        if got is None:
            skipped.append({"source": source, "reason": why or "graph not placed"})
            return
        s = _make_sample(got, query, faults, mask, entry, split, source_id, file, path)
        if loaded is not None and verify:
            oracle["checked"] += 1
            reason = verify_sample(loaded.world, s, got.graph)
            if reason is not None:
                skipped.append({"source": source, "reason": f"ORACLE fails: {reason}"})
                return
            oracle["passed"] += 1
        samples[s.sample_id] = s

    for p, bundle in bundles:
        split = str(bundle["summary"].get("split") or "test")
        for i, entry in enumerate(bundle["results"]):
            path = f"results[{i}]"
            if not isinstance(entry, dict):
                raise ConfigError("expected an object", file=p, field=path)
            tree = need(entry, "tree", str, p, path)
            faults = _faults_of(entry, p, path)
            source = f"{p.name}:{path}:{tree}__{'+'.join(f.value for f in faults)}"
            status = entry.get("status", "admitted")
            if status != "admitted":
                skipped.append({"source": source, "reason": f"status {status!r}"})
                continue
            query = need(entry, "query", str, p, path)
            mask = need(entry, "mask", dict, p, path)
            found = rgs.get(tree)
            if found is None:
                skipped.append({"source": source, "reason": f"graph {tree} not found"})
                continue
            sid = f"{tree}__{'+'.join(f.value for f in faults)}"
            admit(found, query, faults, mask, entry, split, sid, source, p, path)
    for p, obj in ws_samples:
        tree = need(obj, "tree_id", str, p, "")
        faults = _faults_of(obj, p, "")
        query = need(obj, "query", str, p, "")
        mask = need(obj, "mask", dict, p, "")
        found = rgs.get(tree)
        if found is None:
            found = _root_only_graph(obj, tree, p)
            rgs[tree] = found
        sid = str(obj.get("sample_id") or p.stem)
        split = str(obj.get("split") or "test")
        admit(found, query, faults, mask, obj, split, sid, p.name, p, "")
    used = {s.graph_id for s in samples.values()}
    for rg in rgs.values():
        if cands is not None and rg.graph.benchmark in cands:
            place(rg)
    kept_graphs = sorted(
        (
            hit[0].graph
            for gid, hit in placed.items()
            if hit[0] is not None
            and (gid in used or rgs[gid].graph.config.get("root_only") is not True)
        ),
        key=lambda g: g.graph_id,
    )
    if cands is None:
        kept_graphs = sorted(
            (
                rg.graph
                for gid, rg in rgs.items()
                if gid in used or not rg.graph.config.get("root_only")
            ),
            key=lambda g: g.graph_id,
        )
    checked = sorted(gid for gid in wanted if gid in tried)
    mism = [gid for gid in checked if not tried[gid]]
    out = sorted(samples.values(), key=lambda s: s.sample_id)
    report = {
        "imported": len(out),
        "graphs": len(kept_graphs),
        "by_benchmark": dict(sorted(Counter(s.benchmark for s in out).items())),
        "by_fault_type": dict(
            sorted(Counter("+".join(f.value for f in s.faults) for s in out).items())
        ),
        "skipped": skipped,
        "ground_truth_matches": {
            "checked": len(checked),
            "matched": len(checked) - len(mism),
            "mismatched": mism,
        },
        "nodes": {
            **placement.as_dict(),
            "identical_after_conversion": sum(rg.duplicates for rg in rgs.values()),
            "unmapped_root_conditions": sum(
                len(rg.root_map.unmapped) for rg in rgs.values() if rg.root_map is not None
            ),
        },
        "gate": placement.gate.as_dict(),
        "oracle": oracle,
        "worlds": dict(sorted(placement.worlds.items())),
    }
    return ReleaseImport(graphs=kept_graphs, samples=out, report=report)


def _root_only_graph(obj: dict[str, Any], tree: str, p: Path) -> ReleaseGraph:
    """A one-node graph from a sample's ``hidden_intent`` when its graph file is absent."""
    bench = str(obj.get("adapter") or "webshop")
    hidden = need(obj, "hidden_intent", dict, p, "")
    conds = conditions_from(
        need(hidden, "conditions", list, p, "hidden_intent"), p, "hidden_intent.conditions"
    )
    root = Intent.build(
        benchmark=bench,
        env_id=str(obj.get("cluster") or bench),
        base=str(obj.get("goal_idx", tree)),
        conditions=conds,
        ground_truth=ground_truth_from(obj.get("ground_truth"), p, "ground_truth"),
        is_seed=True,
    )
    graph = IntentGraph(
        graph_id=tree,
        benchmark=bench,
        env_id=root.env_id,
        root=root,
        config={"source": "release", "root_only": True},
    )
    return ReleaseGraph(graph, p)
