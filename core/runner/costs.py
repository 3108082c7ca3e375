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
