"""Per-host construction adapters (witnesses, slot domains, validity, answer views)."""

from __future__ import annotations

from core.envs.base import HostWorld
from core.graph.hosts.base import HostAdapter

_REGISTRY: dict[str, type[HostAdapter]] = {}


def register_adapter(benchmark: str, cls: type[HostAdapter]) -> None:
    """Register a construction adapter class for a benchmark id (tests, new hosts)."""
    _REGISTRY[benchmark] = cls


def adapter_for(world: HostWorld) -> HostAdapter:
    """Return the construction adapter for a loaded world (generic when none is specific).

    Args:
        world: A loaded host world.

    Returns:
        A :class:`HostAdapter` (WebShop and τ² get their own subclasses).
    """
    bench = world.benchmark
    if bench in _REGISTRY:
        return _REGISTRY[bench](world)
    if bench == "webshop":
        from core.graph.hosts.webshop import WebShopAdapter

        return WebShopAdapter(world)
    if bench.startswith("tau2"):
        from core.graph.hosts.tau2 import Tau2Adapter

        return Tau2Adapter(world)
    return HostAdapter(world)


__all__ = ["HostAdapter", "adapter_for", "register_adapter"]
