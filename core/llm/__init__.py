"""The only door to language models.

A small interface (messages and optional tools in; text, tool calls, usage and cost out) over
litellm, with an SQLite response cache, bounded retries with backoff, typed errors and cost from
litellm's local cost map. Calls to OpenAI-compatible endpoints (``openai/…@API_BASE``) skip
litellm's per-call CPU and POST directly (:mod:`core.llm.openai_http`). ``ScriptedLLM`` is the
deterministic fake with the same interface.

Importing this package is cheap: it only sets litellm's offline switches (``setdefault``);
litellm itself is imported on the first real call. Keys come from the environment only and are
never stored or logged.

Example:
    client = make_client("openai/gpt-4o-mini", cache_path=store_path)
    reply = client.complete([{"role": "user", "content": "hi"}])
"""

from core.llm.env import ensure_offline_env

ensure_offline_env()

from core.llm.cache import CACHE_SCHEMA, CacheEntry, ResponseCache, request_payload  # noqa: E402
from core.llm.client import LLMClient, make_client, normalize_messages  # noqa: E402
from core.llm.env import configured_providers, load_litellm, offline_switches  # noqa: E402
from core.llm.scripted import ScriptedCall, ScriptedLLM  # noqa: E402
from core.llm.types import (  # noqa: E402
    OFFLINE_NAMES,
    ChatMessage,
    ChatModel,
    LLMResponse,
    LLMStats,
    ModelSpec,
    ToolCall,
    Usage,
    is_offline_name,
)

__all__ = [
    "CACHE_SCHEMA",
    "OFFLINE_NAMES",
    "CacheEntry",
    "ChatMessage",
    "ChatModel",
    "LLMClient",
    "LLMResponse",
    "LLMStats",
    "ModelSpec",
    "ResponseCache",
    "ScriptedCall",
    "ScriptedLLM",
    "ToolCall",
    "Usage",
    "configured_providers",
    "ensure_offline_env",
    "is_offline_name",
    "load_litellm",
    "make_client",
    "normalize_messages",
    "offline_switches",
    "request_payload",
]
