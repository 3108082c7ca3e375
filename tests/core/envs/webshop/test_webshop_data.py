"""Bundled data: regeneration is byte-identical; malformed files fail with file and field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from core.envs.webshop import generate_bundled, load_webshop_world
from core.envs.webshop.loader import BUNDLED_DIR
from core.errors import ConfigError


def test_regeneration_is_byte_identical(tmp_path: Path) -> None:
    manifest = json.loads((BUNDLED_DIR / "manifest.json").read_text())
    generate_bundled(manifest["seed"], tmp_path)
    for name in ("world.json.gz", "manifest.json"):
        assert (tmp_path / name).read_bytes() == (BUNDLED_DIR / name).read_bytes(), name


def _write(folder: Path, data: object, name: str = "world.json.gz") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data).encode()
    path = folder / name
    path.write_bytes(gzip.compress(raw, mtime=0) if name.endswith(".gz") else raw)
    return path


@pytest.fixture(scope="module")
def good() -> dict:
    raw = gzip.decompress((BUNDLED_DIR / "world.json.gz").read_bytes())
    data = json.loads(raw)
    return {**data, "products": data["products"][:40], "goals": []}


@pytest.mark.parametrize(
    ("mutate", "field", "detail"),
    [
        (lambda d: d["products"][3].update(price="cheap"), "products.3.price", "number"),
        (lambda d: d["products"][5].pop("query"), "products.5.query", "required"),
        (
            lambda d: d["products"][2].update(options={"color": []}),
            "products.2.options",
            "no values",
        ),
        (lambda d: d["products"][7].update(colour="red"), "products.7.colour", "xtra"),
        (
            lambda d: d["products"][9].update(asin=d["products"][1]["asin"]),
            "products.9.asin",
            "dup",
        ),
        (
            lambda d: d["goals"].append(
                {
                    "goal_id": "g0",
                    "asin": "NOPE",
                    "instruction_text": "x",
                    "attributes": [],
                    "price_upper": 10,
                    "query": "q",
                    "name": "n",
                }
            ),
            "goals.0.asin",
            "unknown asin",
        ),
    ],
)
def test_malformed_world_file_names_file_and_field(
    tmp_path: Path, good: dict, mutate: object, field: str, detail: str
) -> None:
    data = json.loads(json.dumps(good))
    mutate(data)  # type: ignore[operator]
    path = _write(tmp_path / "w", data)
    with pytest.raises(ConfigError) as err:
        load_webshop_world(tmp_path / "w")
    assert err.value.file == str(path)
    assert err.value.field == field
    assert detail in str(err.value)


def test_unreadable_world_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_webshop_world(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no world.json"):
        load_webshop_world(tmp_path / "empty")
    bad = tmp_path / "badjson"
    bad.mkdir()
    (bad / "world.json").write_text('{"products": [')
    with pytest.raises(ConfigError, match="invalid JSON") as err:
        load_webshop_world(bad)
    assert err.value.file == str(bad / "world.json")
    badgz = tmp_path / "badgz"
    badgz.mkdir()
    (badgz / "world.json.gz").write_bytes(b"\x1f\x8bnot really gzip")
    with pytest.raises(ConfigError, match="gzip"):
        load_webshop_world(badgz)
    arr = tmp_path / "array"
    _write(arr, [1, 2], "world.json")
    with pytest.raises(ConfigError, match="JSON object"):
        load_webshop_world(arr)


def test_plain_json_world_loads(tmp_path: Path, good: dict) -> None:
    _write(tmp_path / "plain", good, "world.json")
    world = load_webshop_world(tmp_path / "plain")
    assert len(world.products) == 40 and world.goals == []
