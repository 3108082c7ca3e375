"""Process environment for language-model calls: offline switches, provider keys, lazy import.

litellm reads several environment variables at import time; without the offline switches it
tries to download its model cost map (and tokenizers) and stalls when there is no network. So
:func:`ensure_offline_env` runs when ``core.llm`` is imported, and :func:`load_litellm` imports
litellm only when a real call is made, keeping ``import core.llm`` cheap.

Keys are read from the environment only. This module reports *which* providers are configured,
never the values.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from types import ModuleType

from core import OFFLINE_SWITCHES, set_offline_switches

PROVIDER_KEY_ENV: dict[str, str] = {
    "OPENAI_API_KEY": "openai",
    "ANTHROPIC_API_KEY": "anthropic",
    "GEMINI_API_KEY": "gemini",
    "MISTRAL_API_KEY": "mistral",
    "GROQ_API_KEY": "groq",
    "TOGETHERAI_API_KEY": "together_ai",
    "OPENROUTER_API_KEY": "openrouter",
    "AZURE_API_KEY": "azure",
    "DEEPSEEK_API_KEY": "deepseek",
    "COHERE_API_KEY": "cohere",
    "XAI_API_KEY": "xai",
    "FIREWORKS_AI_API_KEY": "fireworks_ai",
    "PERPLEXITYAI_API_KEY": "perplexity",
    "HUGGINGFACE_API_KEY": "huggingface",
    "AWS_ACCESS_KEY_ID": "bedrock",
}
"""Standard key variable of each litellm provider, mapped to the provider's name."""

_KEY_VAR_OF: dict[str, str] = {prov: var for var, prov in PROVIDER_KEY_ENV.items()}
_KEY_VAR_OF.update({"text-completion-openai": "OPENAI_API_KEY", "together": "TOGETHERAI_API_KEY"})


def provider_key_var(model: str) -> str | None:
    """The standard key variable of a litellm model string's provider (None if it has none).

    >>> provider_key_var("openai/gpt-4o-mini"), provider_key_var("hosted_vllm/llama")
    ('OPENAI_API_KEY', None)
    """
    if "/" not in model:
        return None
    return _KEY_VAR_OF.get(model.split("/", 1)[0].lower())


_TRUE = {"1", "true", "yes", "on"}
_lock = threading.Lock()
_litellm: ModuleType | None = None


def ensure_offline_env() -> None:
    """Set litellm's offline switches unless the user already chose a value (``setdefault``).

    ``import core`` has set them already; this repeats it for a process whose environment was
    replaced since (e.g. a test that cleared ``os.environ``).
    """
    set_offline_switches()


def offline_switches() -> dict[str, bool]:
    """Return whether each offline switch is active in this process.

    Returns:
        ``{"LITELLM_LOCAL_MODEL_COST_MAP": True, ...}``, one entry per switch.
    """
    return {name: os.environ.get(name, "").strip().lower() in _TRUE for name in OFFLINE_SWITCHES}


def configured_providers() -> list[str]:
    """Return the names of providers whose standard key variable is set (names only).

    Returns:
        Sorted provider names, e.g. ``["anthropic", "openai"]``; never any key value.
    """
    return sorted({prov for var, prov in PROVIDER_KEY_ENV.items() if os.environ.get(var)})


def load_litellm() -> ModuleType:
    """Import litellm once, after the offline switches are set, and quiet its chatter.

    Returns:
        The ``litellm`` module.
    """
    global _litellm
    if _litellm is not None:
        return _litellm
    with _lock:
        if _litellm is None:
            ensure_offline_env()
            module = importlib.import_module("litellm")
            # litellm prints "Give Feedback / Get Help" banners on every exception otherwise.
            setattr(module, "suppress_debug_info", True)  # noqa: B010 - untyped module attrs
            setattr(module, "set_verbose", False)  # noqa: B010
            if hasattr(module, "telemetry"):
                setattr(module, "telemetry", False)  # noqa: B010
            logging.getLogger("LiteLLM").setLevel(logging.ERROR)
            _litellm = module
    return _litellm


def litellm_loaded() -> bool:
    """Return whether :func:`load_litellm` has imported litellm in this process."""
    return _litellm is not None


def module_locations(name: str) -> list[str]:
    """The folders of an installed package, found without running its code ([] when absent)."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    return list(spec.submodule_search_locations or []) if spec else []


def module_installed(name: str) -> bool:
    """Whether a module can be imported (found without running its code)."""
    import importlib.util

    return importlib.util.find_spec(name) is not None
