"""Shared fixtures: a tiny hand-made shop and the bundled world."""

from __future__ import annotations

import pytest
from webshop_fixtures import tiny_payload

from core.envs.webshop import load_webshop_world
from core.envs.webshop.world import WebShopWorld


@pytest.fixture(scope="session")
def tiny_world() -> WebShopWorld:
    return WebShopWorld(tiny_payload())


@pytest.fixture(scope="session")
def bundled_world() -> WebShopWorld:
    return load_webshop_world()
