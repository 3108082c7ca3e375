"""bench/__main__: the report writer, and ``--only`` keeping the other sections intact."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

import bench.__main__ as harness


def _row(name: str, value: float, met: bool | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "value": value,
        "unit": "ms",
        "baseline": 2.0,
        "ratio": None,
        "target": "< 5 ms",
        "met": met,
        "notes": "a | b",
    }


def _fake_module(monkeypatch: pytest.MonkeyPatch, name: str, rows: list[dict[str, Any]]) -> None:
    mod = types.ModuleType(f"bench.{name}")
    mod.run = lambda quick=False: rows  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, f"bench.{name}", mod)


def test_only_rewrites_its_sections_and_keeps_the_others_verbatim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "PERF.md"
    monkeypatch.setattr(harness, "discover", lambda: ["bench_alpha", "bench_beta"])
    _fake_module(monkeypatch, "bench_alpha", [_row("alpha speed", 1.5, True)])
    _fake_module(monkeypatch, "bench_beta", [_row("beta speed", 3.25, False), _row("beta b", 7.0)])
    monkeypatch.setattr(harness, "_now", lambda: "2026-01-01 10:00 UTC")
    assert harness.main(["--out", str(out)]) == 0
    first = out.read_text(encoding="utf-8")
    assert "| beta speed | 3.250 | ms | 2.000 | — | < 5 ms | **no** |" in first

    _fake_module(monkeypatch, "bench_alpha", [_row("alpha speed", 0.5, True)])
    monkeypatch.setattr(harness, "_now", lambda: "2026-02-02 12:00 UTC")
    assert harness.main(["--only", "alpha", "--out", str(out)]) == 0
    second = out.read_text(encoding="utf-8")
    assert "| alpha speed | 0.500 |" in second and "| alpha speed | 1.500 |" not in second

    def section(text: str, title: str) -> list[str]:
        lines = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
        return [ln for ln in lines.splitlines() if ln.startswith("|")]

    assert section(second, "beta") == section(first, "beta")
    assert second.index("## alpha") < second.index("## beta")
    # each section says when it was measured; the kept one keeps its own time
    assert "- Generated: 2026-02-02 12:00 UTC" in second
    beta = second.split("## beta\n", 1)[1]
    alpha = second.split("## alpha\n", 1)[1].split("## beta", 1)[0]
    assert "Measured: 2026-02-02 12:00 UTC" in alpha
    assert "Measured: 2026-01-01 10:00 UTC" in beta


def test_a_failing_benchmark_is_reported_and_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "PERF.md"
    monkeypatch.setattr(harness, "discover", lambda: ["bench_alpha"])
    mod = types.ModuleType("bench.bench_alpha")

    def broken(quick: bool = False) -> list[dict[str, Any]]:
        raise RuntimeError("fake server did not start")

    mod.run = broken  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bench.bench_alpha", mod)
    assert harness.main(["--out", str(out)]) == 1
    assert "`bench_alpha`: RuntimeError: fake server did not start" in out.read_text()
