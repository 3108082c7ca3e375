"""WebShop-style shop host world: catalogue, BM25 search, page state machine, exact reward.

Public entry points (used by the CLI and the registry):

* :func:`load_webshop_world` / :func:`load_webshop_world_from_payload` → :class:`WebShopWorld`
* :func:`golden_report` (``driftbench env golden --benchmark webshop``)
* :func:`play_terminal` (``driftbench env play --benchmark webshop``)
* :func:`read_webshop_dir` / :func:`import_webshop` (``driftbench import webshop --from DIR``)
* :func:`generate_bundled` (``python -m core.envs.webshop.generate``)
"""

from __future__ import annotations

from pathlib import Path

from core.envs.webshop.golden import golden_report
from core.envs.webshop.importer import import_webshop, read_webshop_dir
from core.envs.webshop.models import Goal, GoalSpec, Product, RewardBreakdown, WorldPayload
from core.envs.webshop.session import ShopSession, parse_action
from core.envs.webshop.terminal import play_terminal
from core.envs.webshop.views import PageView
from core.envs.webshop.world import (
    WebShopWorld,
    load_webshop_world,
    load_webshop_world_from_payload,
)


def generate_bundled(seed: int, out_dir: Path) -> None:
    """Write the bundled catalogue for ``seed`` into ``out_dir`` (see ``generate``)."""
    from core.envs.webshop.generate import generate_bundled as _generate

    _generate(seed, out_dir)


__all__ = [
    "Goal",
    "GoalSpec",
    "PageView",
    "Product",
    "RewardBreakdown",
    "ShopSession",
    "WebShopWorld",
    "WorldPayload",
    "generate_bundled",
    "golden_report",
    "import_webshop",
    "load_webshop_world",
    "load_webshop_world_from_payload",
    "parse_action",
    "play_terminal",
    "read_webshop_dir",
]
