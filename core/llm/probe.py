"""Checking the configured model endpoints (``driftbench doctor``).

Every entry of the models file (``--models`` or ``DRIFTBENCH_MODELS``) with an ``api_base`` is
asked for its model list (``GET {api_base}/models``, a few seconds at most); an entry of a
hosted provider is reported with whether its key variable is set (names only, never values).
"""

from __future__ import annotations

import os
import time
from typing import Any

from core.llm.env import provider_key_var
from core.llm.models import LIST_ROLES, SINGLE_ROLES, current_config
from core.llm.types import ModelSpec

PROBE_TIMEOUT_S = 5.0


def configured_entries() -> list[tuple[str, ModelSpec]]:
    """(role, spec) of every entry of the process's models file, in file order."""
    models = current_config().models
    if models is None:
        return []
    out: list[tuple[str, ModelSpec]] = []
    for role in SINGLE_ROLES:
        spec = getattr(models, role)
        if spec is not None:
            out.append((role, spec))
    for role in LIST_ROLES:
        for i, spec in enumerate(getattr(models, role)):
            out.append((f"{role}[{i}]", spec))
    return out


def probe(spec: ModelSpec, timeout_s: float = PROBE_TIMEOUT_S) -> dict[str, Any]:
    """Whether one spec's endpoint answers, and which models it serves."""
    out: dict[str, Any] = {"model": spec.model, "api_base": spec.api_base}
    var = spec.api_key_env or provider_key_var(spec.model)
    out["key_env"] = var
    out["key_set"] = bool(var and os.environ.get(var))
    if spec.api_base is None:
        out.update(ok=None, detail="hosted provider (not contacted)")
        return out
    import httpx

    headers = {}
    if out["key_set"] and var:
        headers["Authorization"] = f"Bearer {os.environ[var]}"
    t0 = time.perf_counter()
    try:
        resp = httpx.get(f"{spec.api_base}/models", headers=headers, timeout=timeout_s)
    except httpx.HTTPError as exc:
        out.update(ok=False, detail=f"unreachable: {type(exc).__name__}")
        return out
    out["seconds"] = round(time.perf_counter() - t0, 3)
    if resp.status_code != 200:
        out.update(ok=False, detail=f"HTTP {resp.status_code}")
        return out
    try:
        data = resp.json().get("data") or []
        ids = [str(m.get("id")) for m in data if isinstance(m, dict)]
    except (ValueError, AttributeError):
        ids = []
    out.update(ok=True, detail="answers", served=ids[:10])
    return out


def check_endpoints() -> dict[str, Any]:
    """The doctor's ``models`` section: the file and every entry's check.

    One probe per (model, endpoint), shared by the entries that name it.
    """
    cfg = current_config()
    seen: dict[tuple[str, str | None], dict[str, Any]] = {}
    rows = []
    for role, spec in configured_entries():
        key = (spec.model, spec.api_base)
        if key not in seen:
            seen[key] = probe(spec)
        rows.append({"role": role, **seen[key]})
    return {"file": cfg.models_path, "endpoints": rows}
