"""Sample building end to end: coverage, determinism, bundled files and the report."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from core.construction.pipeline import (
    BUNDLED_DIR,
    build_bundled,
    build_graphs,
    build_samples,
    bundled_stats,
    construction_report,
    load_bundled,
    read_samples,
    write_samples,
)
from core.errors import ConfigError
from core.faults.plan import hidden_slots
from core.model.base import canonical_json
from core.model.sample import FaultType as F
from tests.core.graph.fake_worlds import FakeDesk, FakeShop


def test_single_fault_samples_cover_types_and_are_deterministic() -> None:
    w = FakeDesk()
    graphs, _ = build_graphs(w)
    s1, st1 = build_samples(w, graphs, seed=5)
    s2, st2 = build_samples(w, graphs, seed=5)
    assert [canonical_json(s) for s in s1] == [canonical_json(s) for s in s2] and st1 == st2
    types = {s.faults[0] for s in s1}
    assert F.TOOL_CAPABILITY_MISMATCH in types and F.FACTUAL_ERROR in types
    assert sum(st1["rejected_by_step"].values()) + st1["samples"] <= st1["candidates"]
    for s in s1:
        assert s.hidden_slots == hidden_slots(s.mask)
        assert (
            s.root_ground_truth
            == next(g for g in graphs if g.graph_id == s.graph_id).root.ground_truth
        )
        assert s.verifier.passed and s.verifier.writer == "template"
        assert s.faults[0].value not in s.sample_id


def test_shop_realises_capability_mismatch_as_a_missing_shop_capability() -> None:
    from core.faults.surface import capabilities_of

    w = FakeShop()
    graphs, _ = build_graphs(w)
    samples, _ = build_samples(w, graphs)
    caps = [s for s in samples if s.faults == (F.TOOL_CAPABILITY_MISMATCH,)]
    assert caps, "the shop must realise tool-capability mismatch (a filter, a size guide …)"
    pool = capabilities_of("webshop")
    for s in caps:
        entry = next(e for e in s.mask if e.kind == "capability")
        assert entry.surface in pool and entry.surface in s.query
        assert entry.stated_value == entry.true_value  # the value is stated, the means is not


def test_the_same_extractor_twice_is_refused() -> None:
    w = FakeShop()
    graphs, _ = build_graphs(w)
    for pair in (("rule", "rule"), ("openai/m@http://127.0.0.1:9", "openai/m@http://127.0.0.1:8")):
        with pytest.raises(ConfigError, match="must differ"):
            build_samples(w, graphs, extractors=pair)


def test_k_must_be_supported() -> None:
    with pytest.raises(ConfigError):
        build_samples(FakeShop(), [], k=3)


def test_samples_file_is_byte_identical(tmp_path: Path) -> None:
    w = FakeShop()
    graphs, _ = build_graphs(w)
    samples, _ = build_samples(w, graphs)
    write_samples(tmp_path / "a.jsonl.gz", samples)
    write_samples(tmp_path / "b.jsonl.gz", list(reversed(samples)))
    a = (tmp_path / "a.jsonl.gz").read_bytes()
    assert a == (tmp_path / "b.jsonl.gz").read_bytes()
    assert a[4:8] == b"\x00\x00\x00\x00"  # gzip mtime 0
    assert read_samples(tmp_path / "a.jsonl.gz") == sorted(samples, key=lambda s: s.sample_id)


def test_bad_samples_file_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl.gz"
    p.write_bytes(gzip.compress(b'{"sample_id": 1}\n'))
    with pytest.raises(ConfigError) as e:
        read_samples(p)
    assert str(p) in str(e.value) and (e.value.field or "").startswith("line 1")


def test_bundled_rebuild_is_byte_identical(tmp_path: Path) -> None:
    build_bundled("tau2_airline", tmp_path)
    first = {p.name: p.read_bytes() for p in (tmp_path / "tau2_airline").iterdir()}
    build_bundled("tau2_airline", tmp_path)
    second = {p.name: p.read_bytes() for p in (tmp_path / "tau2_airline").iterdir()}
    assert first == second
    committed = BUNDLED_DIR / "tau2_airline" / "samples.jsonl.gz"
    assert committed.read_bytes() == first["samples.jsonl.gz"], "committed data is stale"


@pytest.mark.parametrize("bench", ["webshop", "tau2_retail", "tau2_airline"])
def test_committed_benchmarks(bench: str) -> None:
    graphs, samples = load_bundled(bench)
    single = [s for s in samples if len(s.faults) == 1]
    assert len(single) >= 300
    assert {len(s.faults) for s in samples} == {1, 2, 4}
    types = {s.faults[0] for s in single}
    must = {
        F.CONTEXTUAL_IRRELEVANCE,
        F.INDIRECT_INTENT,
        F.FACTUAL_ERROR,
        F.FALSE_PRESUPPOSITION,
        F.INSUFFICIENT_INFORMATION,
        F.IRRELEVANT_INFORMATION,
        F.REFERENTIAL_AMBIGUITY,
    }
    assert must <= types
    assert types == set(F), f"{bench} lacks {sorted(t.value for t in set(F) - types)}"
    for k in (2, 4):
        assert any(len(s.faults) == k for s in samples)
    ids = {g.graph_id for g in graphs}
    assert all(s.graph_id in ids and s.source == "bundled" for s in samples)
    assert load_bundled(bench)[1][0] is samples[0] or load_bundled(bench)[1] == samples


def test_report_shape() -> None:
    rep = construction_report(bundled_stats())
    rows = {r["benchmark"]: r for r in rep["benchmarks"]}
    assert {"webshop", "tau2_retail", "tau2_airline"} <= set(rows)
    for r in rows.values():
        assert set(r) >= {
            "benchmark",
            "tasks",
            "graphs",
            "candidates",
            "rejected_by_step",
            "rejection_rate",
            "samples",
            "by_fault_type",
        }
        assert set(r["rejected_by_step"]) == {"1", "2", "3"}
        rej = sum(r["rejected_by_step"].values())
        assert r["rejection_rate"] == round(rej / r["candidates"], 4)
