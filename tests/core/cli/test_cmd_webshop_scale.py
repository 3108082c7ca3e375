"""`driftbench env catalogue` and `driftbench import webshop --from DIR` on generated catalogues."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import core.envs.webshop.importer as importer
from core.cli import main
from core.store import Store


def _catalogue(tmp_path: Path, n: int, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "ws"
    assert main(["env", "catalogue", "--products", str(n), "--seed", "2", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"wrote {n:,} products" in captured.out
    return out


def test_catalogue_then_import_inline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _catalogue(tmp_path, 400, capsys)
    assert {p.name for p in src.iterdir()} == {
        "items_shuffle.json",
        "items_ins_v2.json",
        "items_human_ins.json",
        "human_goals.json",
    }
    store = tmp_path / "store.db"
    assert main(["--store", str(store), "import", "webshop", "--from", str(src), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # quiet under --json
    out = json.loads(captured.out)
    assert out["products"] == 400 and out["storage"] == "inline" and out["goals"] > 100
    assert Store.open(store).get_world(out["world_id"]) is not None
    # the progress bar goes to stderr without --json
    assert main(["--store", str(store), "import", "webshop", "--from", str(src)]) == 0
    captured = capsys.readouterr()
    assert "already imported" in captured.out and "400 products" in captured.out
    assert "products" in captured.err and "ETA" in captured.err and "/s" in captured.err


def test_big_import_stays_in_its_catalogue_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _catalogue(tmp_path, 300, capsys)
    monkeypatch.setattr(importer, "INLINE_MAX", 100)
    store = tmp_path / "store.db"
    assert main(["--store", str(store), "import", "webshop", "--from", str(src), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["storage"].endswith("catalogue.sqlite") and Path(out["storage"]).is_file()
    assert out["world_id"].startswith("ws-")
    record = Store.open(store).get_world(out["world_id"])
    assert record is not None and record.payload["format"] == "driftbench-webshop-db"
    assert "products" not in record.payload or isinstance(record.payload["products"], int)
    args = ["--store", str(store), "env", "golden", "--benchmark", "webshop"]
    assert main([*args, "--world", out["world_id"], "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["all_one"] is True and report["goals"] == out["goals"]


def test_empty_product_list_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "empty"
    src.mkdir()
    (src / "items_shuffle.json").write_text("[]")
    store = tmp_path / "store.db"
    assert main(["--store", str(store), "import", "webshop", "--from", str(src)]) == 2
    err = capsys.readouterr().err
    assert "items_shuffle.json" in err and "no products" in err
    assert not Store.open(store).list_worlds("webshop")


def test_catalogue_rejects_bad_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["env", "catalogue", "--products", "0", "--out", str(tmp_path / "x")]) == 2
    assert "--products" in capsys.readouterr().err


@pytest.mark.parametrize("inline_max", [None, 100])
def test_import_webshop_check_runs_the_world_contract(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    inline_max: int | None,
) -> None:
    src = _catalogue(tmp_path, 300, capsys)
    if inline_max is not None:
        monkeypatch.setattr(importer, "INLINE_MAX", inline_max)
    store = tmp_path / "store.db"
    args = ["--store", str(store), "import", "webshop", "--from", str(src), "--check"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["check"] == {"passed": True, "problems": []}
    assert main(args) == 0
    assert "world check: passed" in capsys.readouterr().out
