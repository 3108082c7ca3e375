"""Typed form fields from a tool's JSON schema, and back into tool arguments (Play as agent)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from core.errors import ConfigError
from core.model.base import Strict
from core.model.world import ToolSpec

ArgKind = Literal["string", "integer", "number", "boolean", "list", "json"]


class ArgField(Strict):
    """One typed form field derived from a tool's JSON schema."""

    name: str
    kind: ArgKind
    required: bool
    description: str = ""
    item_kind: str = Field(default="string", description="Item type of a 'list' field.")
    example: str = Field(default="", description="A placeholder for 'json' fields.")


def _example(schema: Mapping[str, Any]) -> Any:
    t = schema.get("type")
    if t == "object":
        return {k: _example(v) for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        return [_example(schema.get("items") or {})]
    return {"integer": 0, "number": 0.0, "boolean": False}.get(str(t), "")


def arg_fields(tool: ToolSpec) -> list[ArgField]:
    """Return the typed form fields of ``tool`` (in schema order)."""
    props: Mapping[str, Any] = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or [])
    out = []
    for name, schema in props.items():
        t = schema.get("type")
        items = schema.get("items") or {}
        kind: ArgKind
        item_kind = "string"
        if t in ("string", "integer", "number", "boolean"):
            kind = t
        elif t == "array" and items.get("type") in ("string", "integer", "number"):
            kind, item_kind = "list", str(items["type"])
        else:
            kind = "json"
        out.append(
            ArgField(
                name=name,
                kind=kind,
                required=name in required,
                description=str(schema.get("description", "")),
                item_kind=item_kind,
                example=json.dumps(_example(schema)) if kind == "json" else "",
            )
        )
    return out


def _number(raw: Any, integer: bool, name: str) -> int | float:
    try:
        num = float(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: {raw!r} is not a number", field=name) from None
    if integer:
        if not num.is_integer():
            raise ConfigError(f"{name}: {raw!r} is not a whole number", field=name)
        return int(num)
    return num


def _empty(raw: Any) -> bool:
    return raw is None or (isinstance(raw, str) and not raw.strip())


def build_args(tool: ToolSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    """Turn form values into tool arguments, typed by the tool's schema.

    Strings stay strings; integer/number fields accept numbers or numeric text; booleans
    accept ``true``/``false``; list fields take one item per line (or comma-separated);
    other fields take JSON. Empty optional fields are left out.

    Raises:
        ConfigError: A required field is empty or a value does not fit its type (``field``
            names the argument).
    """
    out: dict[str, Any] = {}
    for f in arg_fields(tool):
        raw = values.get(f.name)
        if _empty(raw) or (f.kind == "list" and isinstance(raw, list) and not raw):
            if f.required:
                raise ConfigError(f"{f.name} is required", field=f.name)
            continue
        if f.kind == "string":
            out[f.name] = str(raw)
        elif f.kind in ("integer", "number"):
            out[f.name] = _number(raw, f.kind == "integer", f.name)
        elif f.kind == "boolean":
            if isinstance(raw, bool):
                out[f.name] = raw
            elif str(raw).strip().lower() in ("true", "false"):
                out[f.name] = str(raw).strip().lower() == "true"
            else:
                raise ConfigError(f"{f.name}: use true or false", field=f.name)
        elif f.kind == "list":
            items = raw if isinstance(raw, list) else _split(str(raw))
            if f.item_kind in ("integer", "number"):
                items = [_number(x, f.item_kind == "integer", f.name) for x in items]
            out[f.name] = [str(x) if f.item_kind == "string" else x for x in items]
        else:
            try:
                out[f.name] = json.loads(raw) if isinstance(raw, str) else raw
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{f.name}: not valid JSON ({exc.msg})", field=f.name) from exc
    return out


def _split(text: str) -> list[str]:
    parts = text.splitlines() if "\n" in text else text.split(",")
    return [p.strip() for p in parts if p.strip()]
