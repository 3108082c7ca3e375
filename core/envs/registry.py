"""The one registry of host worlds: benchmark id → lazily imported loader, cached per process."""

from __future__ import annotations

import threading
from pathlib import Path

from core.envs.base import HostWorld
from core.errors import ConfigError

BENCHMARKS: list[str] = ["webshop", "tau2_retail", "tau2_airline", "mock"]
"""Every registered benchmark id (``mock`` is the tiny test world)."""

HOST_BENCHMARKS: list[str] = ["webshop", "tau2_retail", "tau2_airline"]
"""The three real hosts (what sweeps default to)."""

_CACHE: dict[tuple[str, str | None], HostWorld] = {}
_LOCK = threading.Lock()


def _load(benchmark: str, data_dir: Path | None) -> HostWorld:
    if benchmark == "mock":
        from core.envs.mock import load_mock_world

        return load_mock_world()
    if benchmark == "webshop":
        from core.envs.webshop.world import load_webshop_world

        return load_webshop_world(data_dir)
    if benchmark in ("tau2_retail", "tau2_airline"):
        from core.envs.tau2 import load_tau2_world

        return load_tau2_world(benchmark.split("_", 1)[1], data_dir)
    raise ConfigError(f"unknown benchmark {benchmark!r}; known: {BENCHMARKS}", field="benchmark")


def load_world(benchmark: str, data_dir: Path | None = None) -> HostWorld:
    """Return the host world of ``benchmark`` (imported lazily, cached per process).

    Args:
        benchmark: One of :data:`BENCHMARKS`.
        data_dir: Host data folder (None = the bundled world).

    Raises:
        ConfigError: Unknown benchmark, or the world's files are missing/malformed.
    """
    key = (benchmark, str(data_dir) if data_dir is not None else None)
    with _LOCK:
        got = _CACHE.get(key)
    if got is not None:
        return got
    world = _load(benchmark, data_dir)
    with _LOCK:
        _CACHE[key] = world
    return world


def _import_host(benchmark: str) -> None:
    """Import the package implementing ``benchmark`` (plain imports the layer test sees)."""
    if benchmark == "webshop":
        import core.envs.webshop  # noqa: F401
    elif benchmark in ("tau2_retail", "tau2_airline"):
        import core.envs.tau2  # noqa: F401
    elif benchmark == "mock":
        import core.envs.mock  # noqa: F401


def available_benchmarks() -> list[str]:
    """Return the registered benchmarks whose implementation package imports."""
    out = []
    for b in BENCHMARKS:
        try:
            _import_host(b)
        except Exception:  # noqa: BLE001 - a broken optional world is simply unavailable
            continue
        out.append(b)
    return out
