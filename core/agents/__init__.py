"""Agents: the typed action model and policies.

This package init stays import-light (models import :mod:`core.agents.base`). Use
:func:`make_agent` to build an agent from a spec; other modules may :func:`register_agent`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.agents.base import Agent

AgentFactory = Callable[..., Any]
_FACTORIES: dict[str, AgentFactory] = {}


def register_agent(name: str, factory: AgentFactory) -> None:
    """Register ``factory`` under the (case-insensitive) method name ``name``."""
    _FACTORIES[name.upper()] = factory


def make_agent(spec: str, **kwargs: Any) -> Agent:
    """Build an agent from a method name (``ORACLE``, ``NOOP`` or a registered one).

    Args:
        spec: Method name.
        **kwargs: Passed to the factory.

    Returns:
        An object implementing :class:`core.agents.base.Agent`.

    Raises:
        ConfigError: If no agent is registered under ``spec``.
    """
    import core.agents.scripted  # noqa: F401 - registers the scripted agents
    from core.errors import ConfigError

    factory = _FACTORIES.get(spec.upper())
    if factory is None:
        raise ConfigError(f"unknown agent {spec!r}; known: {sorted(_FACTORIES)}", field="agent")
    agent: Agent = factory(**kwargs)
    return agent
