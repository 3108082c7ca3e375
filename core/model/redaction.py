r"""Secrets never stored, logged or exported: the one redaction every such text passes.

:func:`redact` replaces with ``***``:

* every **fragment of 8 or more characters** of a secret the process knows — a provider may
  quote a key back half-masked (``sk-test-SECR...ETKEY-abcdef``), so whole-key matching is not
  enough. Known secrets are the values (8 characters or more) of every environment variable
  whose name says it holds one (``*_API_KEY``, ``*_SECRET*``, ``*_TOKEN``, ``*_PASSWORD``,
  ``*_ACCESS_KEY*``) and of every variable registered with :func:`register_secret_env`
  (``--api-key-env``, a models file's ``api_key_env``, the providers' standard variables);
* anything **shaped like a credential**, known or not: ``sk-…``/``sk-ant-…``/``sk-proj-…``
  provider keys, ``gsk_``, ``xai-``, ``hf_``, ``AIza…``, ``AKIA…``, ``ghp_…``, ``xox?-…`` tokens,
  ``Bearer …`` and ``api_key=…``/``Authorization: …`` values.

The patterns never produce or consume a quote or a backslash, so a JSON document stays valid
JSON after redaction and a JSON-escaped newline before a key (``\nsk-…``) still counts as a
boundary: the store redacts event bodies as JSON text (:mod:`core.store`), exports and log
records pass the same function.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable

MASK = "***"
"""What a redacted secret becomes."""

MIN_SECRET_CHARS = 8
"""Shorter values (and fragments) are not treated as secrets: that would mangle plain text."""

_SECRET_NAME = re.compile(
    r"(?i)(_API_KEY|APIKEY|SECRET|_TOKEN|_PASSWORD|_PASSWD|_ACCESS_KEY|_PRIVATE_KEY)"
)
_EXTRA: set[str] = set()
_LOCK = threading.Lock()

_SHAPES = re.compile(
    r"(?:sk|rk|pk)-(?=[A-Za-z0-9_\-]*[\dA-Z])[A-Za-z0-9_\-]{8,}"  # sk-…, sk-proj-…, sk-ant-…
    r"|(?:sk|rk|pk)-[A-Za-z0-9_\-]{20,}"
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}"
    r"|gsk_[A-Za-z0-9]{16,}"
    r"|xai-[A-Za-z0-9]{16,}"
    r"|hf_[A-Za-z0-9]{16,}"
    r"|AIza[0-9A-Za-z_\-]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"
)
_LABELLED = re.compile(
    r"(bearer|token|api[_\-]?key|x-api-key|authorization|password|secret)"
    r"((?:\s+|[\"']?\s*[:=]\s*[\"']?)(?:(?:bearer|basic)\s+)?)"
    r"([A-Za-z0-9._~+/=\-]{8,})",
    re.IGNORECASE,
)
_LABEL_NEEDS_SEPARATOR = {"token", "password", "secret", "authorization"}
_SHAPE_ANCHORS = (
    "sk-", "rk-", "pk-", "sk_", "rk_", "pk_", "gsk_", "xai-", "hf_", "AIza", "AKIA", "ASIA",
    "gh", "xox",
)  # fmt: skip
"""Literal starts of :data:`_SHAPES` (a text holding none of them is not scanned)."""
_LABEL_ANCHORS = ("bearer", "token", "key", "authorization", "password", "secret")
"""Lower-case words of :data:`_LABELLED` (a text holding none of them is not scanned)."""
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _starts_token(text: str, i: int) -> bool:
    r"""Whether position ``i`` starts a token (no word character before it; ``\n`` counts)."""
    if i == 0 or text[i - 1] not in _WORD:
        return True
    return i >= 2 and text[i - 2] == "\\" and text[i - 1] in "nrtbf"


def register_secret_env(name: str | None) -> None:
    """Also treat the value of variable ``name`` as a secret (no-op for None)."""
    if name:
        with _LOCK:
            _EXTRA.add(name)


_NAMES_MEMO: dict[str, tuple[tuple[int, int], list[str]]] = {}


def secret_env_names() -> list[str]:
    """Names of the variables whose values count as secrets (sorted; never the values).

    The scan of the environment's names is redone whenever the number of variables or the
    registered names change (values are always read fresh).
    """
    with _LOCK:
        key = (len(os.environ), len(_EXTRA))
        memo = _NAMES_MEMO.get("names")
        if memo is None or memo[0] != key:
            names = set(_EXTRA) | {n for n in os.environ if _SECRET_NAME.search(n)}
            memo = (key, sorted(names))
            _NAMES_MEMO["names"] = memo
        return list(memo[1])


def known_secrets(extra: Iterable[str] = ()) -> list[str]:
    """The secret values set in this process (≥ 8 characters), longest first."""
    values = {os.environ.get(n) or "" for n in secret_env_names()}
    values.update(extra)
    return sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True)


@functools.lru_cache(maxsize=32)
def _fragment_matcher(secret: str) -> tuple[re.Pattern[str], frozenset[str]]:
    """Runs of the secret's own characters, and its 8-character windows."""
    chars = "".join(sorted({re.escape(c) for c in secret}))
    n = MIN_SECRET_CHARS
    grams = frozenset(secret[i : i + n] for i in range(len(secret) - n + 1))
    return re.compile(f"[{chars}]{{{n},}}"), grams


def _fragment_spans(text: str, secret: str) -> list[tuple[int, int]]:
    """Where ``text`` holds substrings of ``secret`` of 8 or more characters (start, end)."""
    runs, grams = _fragment_matcher(secret)
    if not any(g in text for g in grams):
        return []
    n = MIN_SECRET_CHARS
    spans: list[tuple[int, int]] = []
    for m in runs.finditer(text):
        run = m.group(0)
        i = 0
        while i <= len(run) - n:
            if run[i : i + n] not in grams:
                i += 1
                continue
            j = i + n
            while j < len(run) and run[i : j + 1] in secret:
                j += 1
            spans.append((m.start() + i, m.start() + j))
            i = j
    return spans


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with the union of ``spans`` (overlapping or touching ones merged) masked."""
    out: list[str] = []
    last = 0
    for start, end in sorted(spans):
        if start <= last and out:
            last = max(last, end)
            continue
        out.append(text[last:start])
        out.append(MASK)
        last = end
    out.append(text[last:])
    return "".join(out)


def _shaped(m: re.Match[str]) -> str:
    return MASK if _starts_token(m.string, m.start()) else m.group(0)


def _labelled(m: re.Match[str]) -> str:
    if not _starts_token(m.string, m.start()):
        return m.group(0)
    label, sep, value = m.group(1), m.group(2), m.group(3)
    if label.lower() in _LABEL_NEEDS_SEPARATOR and not re.search(r"[:=]|bearer", sep, re.I):
        return m.group(0)  # "token limit exceeded": a word, not a credential
    if value == MASK:
        return m.group(0)
    return f"{label}{sep}{MASK}"


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with known secrets (and their fragments) and credential-shaped strings masked.

    Args:
        text: Any text: a message, a reply, a JSON document.
        secrets: The secrets to mask (default: :func:`known_secrets`); shapes are always masked.

    >>> redact("Incorrect API key provided: Bearer sk-abcdef123456")
    'Incorrect API key provided: Bearer ***'
    """
    if not text:
        return text
    spans: list[tuple[int, int]] = []
    for value in known_secrets() if secrets is None else secrets:
        if len(value) >= MIN_SECRET_CHARS:
            spans.extend(_fragment_spans(text, value))
    if spans:
        text = _mask_spans(text, spans)
    if any(a in text for a in _SHAPE_ANCHORS):
        text = _SHAPES.sub(_shaped, text)
    lower = text.lower()
    if any(a in lower for a in _LABEL_ANCHORS):
        text = _LABELLED.sub(_labelled, text)
    return text


class _RedactingFactory:
    """A log-record factory whose records carry the redacted message (args already applied)."""

    def __init__(self, inner: Callable[..., logging.LogRecord]) -> None:
        self.inner = inner

    def __call__(self, *args: object, **kwargs: object) -> logging.LogRecord:
        record = self.inner(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logging's own problem
            return record
        cleaned = redact(message)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        return record


def install_log_redaction() -> None:
    """Make every log record of this process pass :func:`redact` (idempotent)."""
    with _LOCK:
        current = logging.getLogRecordFactory()
        if not isinstance(current, _RedactingFactory):
            logging.setLogRecordFactory(_RedactingFactory(current))
