"""The world of a play episode: resolved once per episode and remembered in this process.

Views built from an agent view alone (the WebShop page the person playing the agent is on)
need the episode's own world; :func:`episode_loader` resolves it from the store (the world the
sample was built on) and remembers it per episode id. :func:`shop_page` renders that page by
replaying the agent's own tool calls on a fresh session of the public catalogue.
"""

from __future__ import annotations

from typing import Any

from core.construction.worlds import WorldLoader, episode_world_loader
from core.envs.base import HostWorld
from core.errors import ConfigError
from core.model.actions import EnvOp
from core.model.episode import AgentView
from core.store import Store

_WORLDS: dict[str, HostWorld] = {}
"""Episode id → its world, for views built from an agent view alone (the shop page)."""


def remember(episode_id: str, world: HostWorld) -> None:
    """Remember ``world`` as the world of ``episode_id`` (a bounded process-wide memo)."""
    if len(_WORLDS) > 256:
        _WORLDS.clear()
    _WORLDS[episode_id] = world


def episode_loader(log: Any, episode_id: str) -> WorldLoader:
    """The world loader of a stored episode: the world its sample was built on."""
    inner = episode_world_loader(log if isinstance(log, Store) else None, log, episode_id)

    def loader(benchmark: str) -> HostWorld:
        world = inner(benchmark)
        remember(episode_id, world)
        return world

    return loader


def shop_page(view: AgentView, store: Any = None) -> Any:
    """Return the WebShop page (``PageView``) the agent is on, or None for other hosts.

    Built only from the agent view: the agent's own tool calls are replayed on a fresh
    session of the (public) catalogue of the episode's own world (the one its views were
    built on in this process; else resolved from ``store``).
    """
    if view.benchmark != "webshop":
        return None
    world = _WORLDS.get(view.episode_id)
    if world is None:
        world = episode_loader(store, view.episode_id)("webshop") if store is not None else None
    if world is None:
        raise ConfigError(f"the world of episode {view.episode_id} is not loaded", field="episode")
    session = world.open_session()
    for e in view.transcript:
        if e.role == "agent" and isinstance(e.action, EnvOp):
            session.act(e.action.action)
    page = getattr(session, "page", None)
    return page() if callable(page) else None
