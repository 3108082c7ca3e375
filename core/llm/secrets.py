"""Key values the process knows, and their redaction from anything stored, logged or printed.

The known keys are the values of every standard provider key variable
(:data:`core.llm.env.PROVIDER_KEY_ENV`), of every variable whose name ends in ``_API_KEY``, and
of every variable registered with :func:`register_key_env` (``--api-key-env``, the
``api_key_env`` of a models file or a spec). :func:`redact` replaces each of them, and any
``Bearer …`` credential, with ``***``. Providers often quote the key back in an error body
("Incorrect API key provided: sk-…"); the client redacts every error text and reply before it
leaves :mod:`core.llm`, so a key never reaches an event, the cache, an export or a log line.
"""

from __future__ import annotations

import os
import re
import threading

from core.llm.env import PROVIDER_KEY_ENV

MASK = "***"
MIN_SECRET_CHARS = 8
"""Shorter values are not treated as keys (redacting them would mangle ordinary text)."""

_BEARER = re.compile(r"(?i)\b(bearer)\s+([A-Za-z0-9._~+/=-]{8,})")
_EXTRA: set[str] = set()
_LOCK = threading.Lock()


def register_key_env(name: str | None) -> None:
    """Also treat the value of variable ``name`` as a key (no-op for None)."""
    if name:
        with _LOCK:
            _EXTRA.add(name)


def key_env_names() -> list[str]:
    """Names of every variable whose value counts as a key (sorted; values are never returned)."""
    with _LOCK:
        extra = set(_EXTRA)
    names = set(PROVIDER_KEY_ENV) | extra
    names |= {n for n in os.environ if n.upper().endswith("_API_KEY")}
    return sorted(names)


def known_secrets() -> list[str]:
    """The key values set in this process, longest first (so a key's prefix never wins)."""
    values = {os.environ.get(n) or "" for n in key_env_names()}
    return sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """Return ``text`` with every known key and ``Bearer`` credential replaced by ``***``.

    >>> redact("Incorrect API key provided: Bearer sk-abcdef123456")
    'Incorrect API key provided: Bearer ***'
    """
    if not text:
        return text
    for value in known_secrets() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, MASK)
    return _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
