"""Page-test fixtures: an empty store and a demo store (bundled samples + demo sweep)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.bootstrap import initialise
from core.store import Store


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DRIFTBENCH_HOME whose store holds the bundled samples and the demo run."""
    home = tmp_path_factory.mktemp("demo_home")
    store = Store.open(home / "driftbench.db")
    initialise(store)
    store.close()
    return home


@pytest.fixture
def demo_store(demo_home: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    """Point the studio at the demo store and return it."""
    monkeypatch.setenv("DRIFTBENCH_HOME", str(demo_home))
    return Store.open(demo_home / "driftbench.db")


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the studio at a fresh, empty store."""
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    return tmp_path
