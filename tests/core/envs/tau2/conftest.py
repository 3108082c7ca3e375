from __future__ import annotations

from pathlib import Path

import pytest
from tau2_fixtures import write_domain

from core.envs.tau2 import Tau2World, load_tau2_world
from core.paths import shared_dir


@pytest.fixture(scope="module")
def retail_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_domain(tmp_path_factory.mktemp("tau2") / "retail", "retail")


@pytest.fixture(scope="module")
def airline_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_domain(tmp_path_factory.mktemp("tau2") / "airline", "airline")


@pytest.fixture(scope="module")
def retail(retail_dir: Path) -> Tau2World:
    return load_tau2_world("retail", retail_dir)


@pytest.fixture(scope="module")
def airline(airline_dir: Path) -> Tau2World:
    return load_tau2_world("airline", airline_dir)


def shared_domain(domain: str) -> Path:
    path = shared_dir() / "hostdata" / f"tau2_{domain}"
    if not (path / "db.json").is_file():
        pytest.skip(f"../shared/hostdata absent: {path} not found")
    return path
