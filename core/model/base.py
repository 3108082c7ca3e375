"""Shared base classes and canonical hashing for persisted models."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1
"""Schema version written into every persisted model; bumped with a migration note."""


class Strict(BaseModel):
    """Immutable model that rejects unknown fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class StrictMutable(BaseModel):
    """Mutable model that rejects unknown fields (for builders and view models)."""

    model_config = ConfigDict(extra="forbid")


def _canon(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return _canon(obj.model_dump(mode="json"))
    if isinstance(obj, dict):
        return {str(k): _canon(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_canon(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((_canon(v) for v in obj), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(obj, float):
        return int(obj) if obj.is_integer() else repr(obj)
    return obj


def canonical_json(obj: Any) -> str:
    """Return canonical JSON: sorted keys, compact, integral floats collapsed, sets sorted.

    >>> canonical_json({"b": 1.0, "a": [2.5]})
    '{"a":["2.5"],"b":1}'
    """
    return json.dumps(_canon(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(obj: Any, length: int = 16) -> str:
    """Return the first ``length`` hex digits of sha256 over :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:length]
