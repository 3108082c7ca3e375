"""Key values the process knows, and their redaction from anything stored, logged or printed.

The redaction itself is :func:`core.model.redaction.redact` — one function that the store (event
bodies, headers, summaries, run rows), exports, log records, the CLI's error line and this
package's client all pass text through. It masks every fragment of 8 or more characters of a
known key (providers quote keys back half-masked) and anything shaped like a credential
(``sk-…``, ``Bearer …``). This module adds the language-model side: the providers' standard key
variables (:data:`core.llm.env.PROVIDER_KEY_ENV`) and the variables named by
``--api-key-env`` / a models file count as keys; the client redacts every error text and reply
before it leaves :mod:`core.llm`.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.llm.env import PROVIDER_KEY_ENV
from core.model import redaction
from core.model.redaction import MASK, MIN_SECRET_CHARS

__all__ = [
    "MASK",
    "MIN_SECRET_CHARS",
    "known_secrets",
    "redact",
    "register_key_env",
]

for _name in PROVIDER_KEY_ENV:
    redaction.register_secret_env(_name)


def register_key_env(name: str | None) -> None:
    """Also treat the value of variable ``name`` as a key (no-op for None)."""
    redaction.register_secret_env(name)


def known_secrets() -> list[str]:
    """The key values set in this process, longest first (so a key's prefix never wins)."""
    return redaction.known_secrets()


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """Return ``text`` with every known key, its fragments and credential shapes masked.

    >>> redact("Incorrect API key provided: Bearer sk-abcdef123456")
    'Incorrect API key provided: Bearer ***'
    """
    return redaction.redact(text, secrets)
