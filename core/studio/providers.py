"""Language-model access for the pages: which providers are configured, and a client."""

from __future__ import annotations

from pathlib import Path

from core.llm import configured_providers
from core.llm.client import make_client
from core.llm.types import ChatModel

__all__ = ["configured_providers", "play_client", "studio_agents"]


def play_client(spec: str, cache_path: Path) -> ChatModel:
    """A cached chat client for ``spec`` (an LLM agent or voice in the play pages).

    The models file's entry for the agent (``DRIFTBENCH_MODELS``) gives its settings.
    """
    return make_client(spec, cache_path=cache_path, role="agent")


def studio_agents() -> list[str]:
    """The LLM agents the studio offers beside the symbolic ones.

    ``DRIFTBENCH_PLAY_MODEL`` and the models file's ``agent`` (``DRIFTBENCH_MODELS``, e.g.
    the file ``driftbench models local`` writes), each once, in that order.
    """
    from core.errors import ConfigError
    from core.llm.models import role_label
    from core.settings import settings

    out: list[str] = []
    model = settings().play_model.strip()
    if model:
        out.append(model)
    try:
        label = role_label("agent")
    except ConfigError:  # a bad models file: offered nothing (doctor names the problem)
        label = None
    if label and label not in out:
        out.append(label)
    return out


STUDIO_ACTION_FORMAT = "json"
"""The action format of LLM agents in the studio (structured output: valid actions even from a
small local model); sweeps choose theirs with ``--action-format``."""
