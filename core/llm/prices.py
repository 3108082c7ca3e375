"""Prices from litellm's local cost map (never fetched), with unpriced models remembered.

A model the map does not know (a local server's) is *unpriced*: its calls cost 0.0 and are
counted as unpriced in the ledger, never shown as ``$0``.
"""

from __future__ import annotations

import math
import threading
from typing import Any

UNPRICED: set[str] = set()
"""Models the local cost map does not know (their cost is 0.0); skips repeated failed lookups."""

_PRICE_CHECKED: set[str] = set()
_PRICE_LOCK = threading.Lock()


def ensure_priced(litellm: Any, model: str) -> None:
    """Give a model the local cost map does not know an explicit zero price, once.

    litellm prices every response; for an unmapped model (a local server's model) it searches
    its whole cost map for a near match on every call, which costs more CPU than the rest of
    the call. A zero-price entry makes that lookup direct; the cost stays 0.0 as before.
    """
    if model in _PRICE_CHECKED:
        return
    with _PRICE_LOCK:
        if model in _PRICE_CHECKED:
            return
        _PRICE_CHECKED.add(model)
        try:
            litellm.get_model_info(model)
            return  # priced (or at least mapped): leave litellm's entry alone
        except Exception:  # noqa: BLE001 - unmapped models raise; anything else: same treatment
            pass
        try:
            provider = litellm.get_llm_provider(model)[1]
            litellm.register_model(
                {
                    model: {
                        "input_cost_per_token": 0.0,
                        "output_cost_per_token": 0.0,
                        "litellm_provider": provider,
                        "mode": "chat",
                    }
                }
            )
            UNPRICED.add(model)
        except Exception:  # noqa: BLE001 - pricing is an optimisation; never fail a call on it
            return


def cost_of(litellm: Any, raw: Any, model: str) -> float:
    """Cost of a litellm reply from the local cost map; 0.0 for models it does not know."""
    hidden = getattr(raw, "_hidden_params", None)
    value: Any = hidden.get("response_cost") if isinstance(hidden, dict) else None
    if value is None and model not in UNPRICED:
        try:
            value = litellm.completion_cost(completion_response=raw)
        except Exception:  # noqa: BLE001 - unknown/local models are not in the cost map
            UNPRICED.add(model)
    try:
        cost = float(value) if value is not None else 0.0
    except (TypeError, ValueError):
        return 0.0
    return cost if math.isfinite(cost) and cost > 0 else 0.0


def supports(litellm: Any, model: str, param: str) -> bool:
    """Whether litellm says the model's provider takes ``param`` (unknown: assume yes)."""
    try:
        supported = litellm.get_supported_openai_params(model=model)
    except Exception:  # noqa: BLE001 - an unknown provider: let the provider decide
        return True
    return supported is None or param in supported
