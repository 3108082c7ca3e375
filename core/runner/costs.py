"""A run's cost ledger by role, summed from its episodes' stored ledgers.

Each written episode carries ``summary.cost_by_role`` (every attempt, every role that spent
for it: agent, voice, interpreter, reflection …; see :mod:`core.llm.ledger`). A run's split is
their sum, so it always equals the run's ``cost_usd`` up to rounding, and ``--max-cost``
bounds exactly what the split shows.
"""

from __future__ import annotations

import json
from typing import Any

from core.llm.ledger import CostLedger, split_view
from core.store import Store


def run_ledger(store: Store, run_id: str) -> dict[str, dict[str, Any]]:
    """The full ledger of ``run_id``: per role calls, provider calls, cache hits, tokens, USD."""
    total = CostLedger()
    rows = store.conn.execute(
        "SELECT summary FROM episodes WHERE run_id=? AND summary LIKE '%cost_by_role%'",
        (run_id,),
    ).fetchall()
    for (summary,) in rows:
        try:
            ledger = json.loads(summary).get("cost_by_role") or {}
        except (TypeError, ValueError, AttributeError):
            continue
        if isinstance(ledger, dict):
            total.merge({str(k): v for k, v in ledger.items() if isinstance(v, dict)})
    return total.to_dict()


def cost_split(store: Store, run_id: str) -> dict[str, Any]:
    """USD per role of ``run_id`` (``"unpriced"`` for a role whose model has no price)."""
    return split_view(run_ledger(store, run_id))


def model_use(store: Store, run_id: str) -> dict[str, Any]:
    """Tokens per ended episode and seconds per provider call of ``run_id`` (every role).

    Returns:
        ``{"tokens", "tokens_per_episode", "provider_calls", "seconds_per_call",
        "truncated"}``; the per-episode and per-call values are None without calls.
    """
    ledger = run_ledger(store, run_id)
    tokens = sum(
        int(r.get("prompt_tokens") or 0) + int(r.get("completion_tokens") or 0)
        for r in ledger.values()
    )
    calls = sum(int(r.get("provider_calls") or 0) for r in ledger.values())
    seconds = sum(float(r.get("seconds") or 0.0) for r in ledger.values())
    truncated = sum(int(r.get("truncated") or 0) for r in ledger.values())
    (episodes,) = store.conn.execute(
        "SELECT COUNT(*) FROM episodes WHERE run_id=? AND status='ended'", (run_id,)
    ).fetchone()
    return {
        "tokens": tokens,
        "tokens_per_episode": round(tokens / episodes, 1) if episodes and calls else None,
        "provider_calls": calls,
        "seconds_per_call": round(seconds / calls, 3) if calls else None,
        "truncated": truncated,
    }
