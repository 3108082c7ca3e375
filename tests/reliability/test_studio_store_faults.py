"""The studio on a damaged store: a plain page saying what is wrong, never a traceback.

A file that is not a database (or is truncated) stops every page at the store with the
friendly page of :func:`pages.common.store.store_error_page`; a store that opens but fails
``PRAGMA quick_check`` shows the failed check on Data → Store health.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from tests.reliability.test_malformed_inputs import template_store  # noqa: F401 - fixture
from tests.reliability.test_store_integrity import _flip_page

PAGES = ["data.py", "home.py", "runs.py", "grip.py"]


def _home(tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    db = tmp_path / "driftbench.db"
    shutil.copy(template, db)
    return db


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_every_page_shows_a_plain_store_error(
    tmp_path: Path,
    template_store: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    page: str,
    damage: str,
) -> None:
    db = _home(tmp_path, template_store, monkeypatch)
    data = db.read_bytes()
    db.write_bytes(b"\x13garbage!" * 512 if damage == "garbage" else data[: len(data) // 2])
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    at = AppTest.from_file(str(PROJECT_ROOT / "pages" / page), default_timeout=60).run()
    assert not at.exception, at.exception
    texts = [e.value for e in at.error]
    assert any("cannot use its store file" in t and "driftbench doctor" in t for t in texts), texts
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_store_health_shows_the_failed_check(
    tmp_path: Path,
    template_store: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = _home(tmp_path, template_store, monkeypatch)
    conn = sqlite3.connect(db)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name='episodes_cell'").fetchone()
    conn.close()
    db.write_bytes(_flip_page(db.read_bytes(), int(root[0])))
    at = AppTest.from_file(str(PROJECT_ROOT / "pages" / "data.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    assert "FAILED" in [m.value for m in at.metric]
    assert any("Integrity check failed" in e.value for e in at.error)
