"""A tool result in full, as a person working the tools reads it (never cut).

:mod:`core.studio.toolcalls` gives one-line summaries (for timelines and titles); a person
playing the agent needs the whole result: every field of an order, every item of it, every id.
:func:`full_result` turns a result text into

* ``fields`` — the top-level scalars as ``name: value`` lines, uncut;
* ``tables`` — every list of objects, wherever it sits (``items`` of an order, the
  ``variants`` of a product), one table each, every row and column kept;
* ``ids`` — every identifier in the result with the path it was found at
  (``items[1].item_id``), so the page can offer each one to copy;
* ``json_text`` — the result pretty-printed, for a JSON view.

A result that is not JSON stays text (``text``), with the ids it mentions still listed.
Nothing here knows Streamlit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from core.model.base import Strict
from core.studio.toolcalls import Line, cell_text

ID_KEY = re.compile(r"(^|_)(id|ids|asin|number|code)$", re.IGNORECASE)
"""Keys whose values are identifiers (``order_id``, ``item_ids``, ``asin``, ``flight_number``)."""

ID_TEXT = re.compile(r"(?<![\w#.-])(#?[A-Z]{1,3}\d{4,}|B0[0-9A-Z]{8}|\d{8,})(?![\w])")
"""Identifier-looking tokens in free text (``#W6356180``, ``B07XYZ1234``, ``2677513916``)."""


class Table(Strict):
    """A list of objects from a result, as a table."""

    path: str = Field(description="Where the list sits (``items``, ``orders[0].items``).")
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


class IdRef(Strict):
    """One identifier in a result and where it was found."""

    path: str
    value: str


class FullResult(Strict):
    """A tool result ready to show in full."""

    summary: str = Field(description="One line: what kind of result this is.")
    fields: tuple[Line, ...] = ()
    tables: tuple[Table, ...] = ()
    ids: tuple[IdRef, ...] = ()
    json_text: str | None = Field(default=None, description="Pretty JSON (None: not JSON).")
    text: str = Field(default="", description="The result text when it is not JSON.")


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, Mapping) for r in value)


def _is_keyed(value: Any) -> bool:
    """An object of objects keyed by ids (``{"1008292230": {...}, "gift_card_72": {...}}``)."""
    return (
        isinstance(value, Mapping)
        and bool(value)
        and all(isinstance(v, Mapping) for v in value.values())
        and all(any(ch.isdigit() for ch in str(k)) for k in value)
    )


def _is_table(value: Any) -> bool:
    return _is_records(value) or _is_keyed(value)


def _is_id_key(key: str) -> bool:
    return bool(ID_KEY.search(key))


def _walk_ids(value: Any, path: str, key: str, out: list[IdRef]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _walk_ids(v, f"{path}.{k}" if path else str(k), str(k), out)
        return
    if isinstance(value, list):
        for i, v in enumerate(value):
            _walk_ids(v, f"{path}[{i}]", key, out)
        return
    if isinstance(value, bool) or value is None:
        return
    if _is_id_key(key) and str(value).strip():
        out.append(IdRef(path=path, value=str(value)))


def _map_key_ids(value: Any, path: str, out: list[IdRef]) -> None:
    """Ids used as object keys (``variants: {"1008292230": {...}}``)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            here = f"{path}.{k}" if path else str(k)
            if isinstance(v, Mapping) and _is_keyed(value):
                out.append(IdRef(path=here, value=str(k)))
            _map_key_ids(v, here, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _map_key_ids(v, f"{path}[{i}]", out)


def _tables(value: Any, path: str, out: list[Table]) -> None:
    """Every list of objects (and every object of objects keyed by id) as a table."""
    if _is_records(value):
        columns: list[str] = []
        for r in value:
            columns += [str(k) for k in r if str(k) not in columns]
        rows = tuple(tuple(cell_text(r.get(c)) for c in columns) for r in value)
        out.append(Table(path=path or "result", columns=tuple(columns), rows=rows))
        for i, r in enumerate(value):
            for k, v in r.items():
                if isinstance(v, (list, Mapping)):
                    _tables(v, f"{path}[{i}].{k}", out)
        return
    if isinstance(value, Mapping):
        if _is_keyed(value):
            columns = ["id"]
            for v in value.values():
                columns += [str(k) for k in v if str(k) not in columns]
            rows = tuple(
                (str(k), *(cell_text(v.get(c)) for c in columns[1:])) for k, v in value.items()
            )
            out.append(Table(path=path or "result", columns=tuple(columns), rows=rows))
            for k, v in value.items():
                for kk, vv in v.items():
                    if isinstance(vv, (list, Mapping)):
                        _tables(vv, f"{path}.{k}.{kk}" if path else f"{k}.{kk}", out)
            return
        for k, v in value.items():
            if isinstance(v, (list, Mapping)):
                _tables(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (list, Mapping)):
                _tables(v, f"{path}[{i}]", out)


def _dedupe(ids: list[IdRef]) -> tuple[IdRef, ...]:
    seen: set[tuple[str, str]] = set()
    out = []
    for ref in ids:
        if (ref.path, ref.value) not in seen:
            seen.add((ref.path, ref.value))
            out.append(ref)
    return tuple(out)


def _summary(data: Any) -> str:
    if isinstance(data, Mapping):
        return f"an object with {len(data)} field{'s' if len(data) != 1 else ''}"
    if isinstance(data, list):
        return f"a list of {len(data)} entr{'ies' if len(data) != 1 else 'y'}"
    return "a value"


def full_result(text: str) -> FullResult:
    """The whole tool result: fields, tables, ids and pretty JSON (nothing cut).

    >>> r = full_result('{"order_id": "#W1", "items": [{"item_id": "11"}, {"item_id": "22"}]}')
    >>> [i.value for i in r.ids]
    ['#W1', '11', '22']
    >>> r.tables[0].path, r.tables[0].rows
    ('items', (('11',), ('22',)))
    """
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        found = [IdRef(path="text", value=m.group(1)) for m in ID_TEXT.finditer(text or "")]
        return FullResult(summary="text", text=text or "", ids=_dedupe(found))
    ids: list[IdRef] = []
    if isinstance(data, (Mapping, list)):
        _walk_ids(data, "", "", ids)
        _map_key_ids(data, "", ids)
    elif data is not None and not isinstance(data, bool):
        ids += [IdRef(path="result", value=m.group(1)) for m in ID_TEXT.finditer(str(data))]
    fields: tuple[Line, ...] = ()
    if isinstance(data, Mapping):
        fields = tuple(
            Line(name=str(k), value=cell_text(v)) for k, v in data.items() if not _is_table(v)
        )
    tables: list[Table] = []
    _tables(data, "", tables)
    pretty = json.dumps(data, indent=2, ensure_ascii=False)
    return FullResult(
        summary=_summary(data),
        fields=fields,
        tables=tuple(tables),
        ids=_dedupe(ids),
        json_text=pretty,
        text="" if isinstance(data, (Mapping, list)) else cell_text(data),
    )
