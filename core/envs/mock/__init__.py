"""The mock host world: a tiny deterministic shop, its intent graph and samples (for tests)."""

from core.envs.mock.samples import mock_graph, mock_sample, mock_samples
from core.envs.mock.world import ITEMS, Item, MockSession, MockWorld, load_mock_world

__all__ = [
    "ITEMS",
    "Item",
    "MockSession",
    "MockWorld",
    "load_mock_world",
    "mock_graph",
    "mock_sample",
    "mock_samples",
]
