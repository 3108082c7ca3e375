"""Page-test fixtures: an empty store and a demo store (bundled samples + demo sweep)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.store import Store
from core.studio.bootstrap import initialise


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DRIFTBENCH_HOME whose store holds the bundled samples and the demo run."""
    home = tmp_path_factory.mktemp("demo_home")
    store = Store.open(home / "driftbench.db")
    initialise(store)
    store.close()
    return home


@pytest.fixture(scope="session")
def research_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled data, the demo sweep and a second small run named "second".

    Built once per test session and shared by the research-page tests (construction, runs,
    GRIP dashboard).
    """
    from core.model.run import RunOptions, RunSpec
    from core.runner import run_sweep

    home = tmp_path_factory.mktemp("research_home")
    store = Store.open(home / "driftbench.db")
    initialise(store)
    spec = RunSpec(
        name="second",
        benchmarks=("webshop",),
        methods=("A1",),
        personas=("rational", "avoidant"),
        seeds=(0, 1),
        limit=2,
    )
    run_sweep(store, spec, RunOptions(workers=1, progress=False))
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
