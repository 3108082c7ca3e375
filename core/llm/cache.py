"""SQLite response cache: identical requests are answered from disk, so re-runs are free.

The key is a hash of (model, api_base, messages, tools, sampling params, namespace). Transport
settings (timeouts, retries, streaming) and anything secret are excluded from both the key and
the stored request. A ``seed`` counts only when the model samples (temperature above 0, or no
temperature sent): at temperature 0 every seed shares one answer; above it each seed has its
own, so a temperature > 0 run replays exactly. Replies are checked before they are stored
(lone surrogates are replaced), so a bad reply can never make a write fail.
The table is defined once, in :mod:`core.store.schema`, so the cache may live
in the store's file or in a file of its own with the very same layout.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field

from core.llm.openai_http import sampling_params
from core.llm.types import LLMResponse, ModelSpec, ToolCall, Usage
from core.model.base import Strict, canonical_json
from core.model.bounds import fits_stored_cap
from core.model.redaction import redact
from core.store.schema import LLM_CACHE_DDL

CACHE_SCHEMA = LLM_CACHE_DDL
"""DDL of the cache table: the store's own definition (:data:`core.store.LLM_CACHE_DDL`)."""

NON_KEY_PARAMS = frozenset(
    {
        "api_key",
        "api_base",
        "base_url",
        "api_version",
        "extra_headers",
        "headers",
        "timeout",
        "stream_timeout",
        "num_retries",
        "max_retries",
        "stream",
        "stream_options",
        "metadata",
        "user",
    }
)
"""Parameters that change how a request travels, not what it asks; never keyed or stored."""


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def storable(text: str) -> str:
    """``text`` redacted of secrets, lone surrogates replaced by U+FFFD (SQLite: UTF-8 only)."""
    return redact(_SURROGATE.sub("\ufffd", text))


class CacheEntry(Strict):
    """One cached completion, as stored."""

    key: str = Field(description="Request hash.")
    model: str = Field(description="Model string.")
    namespace: str = Field(description="Cache namespace.")
    request: dict[str, Any] = Field(description="The keyed request (no secrets).")
    response: LLMResponse = Field(description="The reply, as first received.")
    created_at: str = Field(description="UTC ISO timestamp of the first answer.")


def request_payload(
    spec: ModelSpec,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    params: dict[str, Any],
    namespace: str,
) -> dict[str, Any]:
    """Return the JSON-ready request that is hashed and stored (secrets and transport removed).

    Args:
        spec: The model spec (its sampling defaults are merged under ``params``).
        messages: OpenAI-form messages.
        tools: OpenAI-form tool definitions, or None.
        params: Extra sampling parameters for this call.
        namespace: Cache namespace (e.g. a run id to force fresh samples).

    Returns:
        ``{"model", "api_base", "messages", "tools", "params", "namespace"}``.
    """
    merged: dict[str, Any] = sampling_params(spec)
    merged.update(params)
    clean = {k: v for k, v in merged.items() if k not in NON_KEY_PARAMS and v is not None}
    if clean.get("temperature") == 0:
        clean.pop("seed", None)  # deterministic sampling: one answer for every seed
    return {
        "model": spec.model,
        "api_base": spec.api_base,
        "messages": messages,
        "tools": tools or None,
        "params": clean,
        "namespace": namespace,
    }


class ResponseCache:
    """A thread-safe SQLite cache of completions (WAL, 30 s busy timeout).

    One connection per process, guarded by a lock; it is reopened after a fork.

    Args:
        path: The SQLite file (created with its parent folder if missing).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1

    @staticmethod
    def key_for(
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        namespace: str,
    ) -> str:
        """Return the cache key (sha256 hex) of a request; see :func:`request_payload`."""
        payload = request_payload(spec, messages, tools, params, namespace)
        return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=30.0, check_same_thread=False, isolation_level=None
            )
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(CACHE_SCHEMA)
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def get(self, key: str) -> CacheEntry | None:
        """Return the entry stored under ``key``, or None."""
        with self._lock:
            row = (
                self._connect()
                .execute(
                    "SELECT key, model, namespace, request, response, prompt_tokens,"
                    " completion_tokens, cost_usd, created_at FROM llm_cache WHERE key = ?",
                    (key,),
                )
                .fetchone()
            )
        if row is None:
            return None
        body = json.loads(row[4])
        response = LLMResponse(
            text=body.get("text") or "",
            tool_calls=[ToolCall(**call) for call in body.get("tool_calls") or []],
            usage=Usage(prompt_tokens=row[5] or 0, completion_tokens=row[6] or 0),
            cost_usd=max(0.0, float(row[7] or 0.0)),
            model=row[1],
            finish_reason=body.get("finish_reason"),
        )
        return CacheEntry(
            key=row[0],
            model=row[1],
            namespace=row[2],
            request=json.loads(row[3]),
            response=response,
            created_at=row[8],
        )

    def put(
        self,
        key: str,
        *,
        model: str,
        namespace: str,
        request: dict[str, Any],
        response: LLMResponse,
        replace: bool = False,
    ) -> None:
        """Store a response under ``key``; the first answer wins if two writers race.

        A reply longer than :data:`core.model.bounds.MAX_STORED_TEXT_CHARS` is not stored (the
        store stays bounded; the caller still gets the reply).

        Args:
            key: From :meth:`key_for`.
            model: The spec's model string.
            namespace: Cache namespace.
            request: From :func:`request_payload` (must not contain secrets).
            response: The provider's reply.
            replace: ``--no-cache``: overwrite an existing answer with this fresh one.
        """
        if not fits_stored_cap(response.text):
            return  # too large to keep whole: an identical request asks the provider again
        body = {
            "text": response.text,
            "tool_calls": [call.model_dump() for call in response.tool_calls],
            "finish_reason": response.finish_reason,
        }
        row = (
            key,
            model,
            namespace,
            storable(json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)),
            storable(json.dumps(body, sort_keys=True, ensure_ascii=False)),
            response.usage.prompt_tokens,
            response.usage.completion_tokens,
            response.cost_usd,
            datetime.now(UTC).isoformat(timespec="seconds"),
        )
        with self._lock:
            verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
            self._connect().execute(
                f"{verb} INTO llm_cache (key, model, namespace, request, response,"
                " prompt_tokens, completion_tokens, cost_usd, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )

    def __bool__(self) -> bool:
        return True  # a cache object is truthy even when empty

    def __len__(self) -> int:
        with self._lock:
            row = self._connect().execute("SELECT COUNT(*) FROM llm_cache").fetchone()
        return int(row[0])

    def clear(self, namespace: str | None = None) -> int:
        """Delete entries (all, or one namespace's); return how many were removed."""
        with self._lock:
            conn = self._connect()
            if namespace is None:
                cur = conn.execute("DELETE FROM llm_cache")
            else:
                cur = conn.execute("DELETE FROM llm_cache WHERE namespace = ?", (namespace,))
        return int(cur.rowcount)

    def close(self) -> None:
        """Close the connection (it is reopened on next use)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
