"""``driftbench run`` / ``runs`` / ``export`` handlers (registered on a bare parser)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from core.cli import cmd_run
from core.errors import ConfigError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="driftbench")
    p.add_argument("--store")
    sub = p.add_subparsers(dest="command")
    cmd_run.register(sub)
    return p


def _call(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    args = _parser().parse_args(argv)
    code = args.handler(args)
    return code, capsys.readouterr().out


def test_run_runs_export_json_shapes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "s.db")
    code, out = _call(
        [
            "--store",
            db,
            "run",
            "--benchmark",
            "mock",
            "--method",
            "B0,A2",
            "--persona",
            "rational,avoidant",
            "--seeds",
            "1",
            "--limit",
            "2",
            "--name",
            "t1",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    res = json.loads(out)
    assert {"run", "episodes", "completed", "errors", "seconds", "cost_usd"} <= set(res)
    assert res["run"] == "t1" and res["episodes"] == res["completed"] == 8
    code, out = _call(["--store", db, "runs", "--json"], capsys)
    runs = json.loads(out)["runs"]
    assert runs[0]["name"] == "t1" and runs[0]["completed"] == 8
    code, out = _call(["--store", db, "export", "t1", "--format", "jsonl"], capsys)
    lines = out.strip().splitlines()
    assert len(lines) == 8
    assert {"header", "events", "outcome"} <= set(json.loads(lines[0]))
    out_csv = tmp_path / "x.csv"
    code, out = _call(
        ["--store", db, "export", "t1", "--format", "csv", "--out", str(out_csv), "--json"], capsys
    )
    assert json.loads(out)["episodes"] == 8 and out_csv.read_text().count("\n") == 9


def test_run_rejects_bad_input_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    for argv, field in (
        (["run", "--benchmark", "mock", "--method", "ZZ"], "--methods"),
        (["run", "--benchmark", "mock", "--method", "B0", "--persona", "grumpy"], "--persona"),
        (["run", "--benchmark", "nope", "--method", "B0"], "--benchmark"),
        (["run", "--benchmark", "mock", "--method", "B0", "--seeds", "0"], "--seeds"),
    ):
        with pytest.raises(ConfigError) as exc:
            _call(["--store", str(db), *argv], capsys)
        assert field in str(exc.value)
    from core.store import Store

    assert Store.open(db).list_runs() == []
