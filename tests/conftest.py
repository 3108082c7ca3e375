"""Suite-wide fixtures: an isolated DRIFTBENCH_HOME, a fresh store, the offline plugin."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.paths import shared_dir

pytest_plugins = ["tests.fakes.plugin"]

SHARED = shared_dir()
HOSTDATA = SHARED / "hostdata"
RELEASE = SHARED / "driftbench_release"


@pytest.fixture(autouse=True, scope="session")
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point DRIFTBENCH_HOME at a temporary folder so no test touches var/."""
    home = tmp_path_factory.mktemp("driftbench_home")
    old = os.environ.get("DRIFTBENCH_HOME")
    os.environ["DRIFTBENCH_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("DRIFTBENCH_HOME", None)
    else:
        os.environ["DRIFTBENCH_HOME"] = old


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """Path for a fresh store file."""
    return tmp_path / "store.db"


@pytest.fixture
def store(store_path: Path):  # type: ignore[no-untyped-def]
    """A freshly created store."""
    from core.store import Store

    s = Store.open(store_path)
    yield s
    s.close()


def require_hostdata(name: str) -> Path:
    """Return ``../shared/hostdata/<name>`` or skip the test with a visible reason."""
    path = HOSTDATA / name
    if not path.is_dir():
        pytest.skip(f"../shared/hostdata/{name} absent: third-party data not available here")
    return path
