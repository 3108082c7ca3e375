"""Language-model access for the pages: which providers are configured, and a client."""

from __future__ import annotations

from pathlib import Path

from core.llm import configured_providers
from core.llm.client import make_client
from core.llm.types import ChatModel

__all__ = ["configured_providers", "play_client"]


def play_client(spec: str, cache_path: Path) -> ChatModel:
    """A cached chat client for ``spec`` (an LLM agent or voice in the play pages)."""
    return make_client(spec, cache_path=cache_path)
