"""The patience economy: costs, the affordability rule and charges.

Budget = base × persona multiplier (floats, never rounded). An action costing more than what
remains cannot be bought; patience never goes below 0.
"""

from __future__ import annotations

from core.model.config import ProtocolConfig
from core.model.events import ChargeReason, PatienceCharged
from core.protocol.emit import Emitter


def cost_of(reason: ChargeReason, config: ProtocolConfig) -> float:
    """Return the configured cost of ``reason`` (from :meth:`ProtocolConfig.costs`)."""
    return config.costs()[reason]


def affordable(patience: float, cost: float, eps: float) -> bool:
    """Return whether an action costing ``cost`` can be bought with ``patience`` left.

    >>> affordable(2.0, 2.0, 1e-9), affordable(1.6, 2.0, 1e-9)
    (True, False)
    """
    return cost <= patience + eps


def after_charge(patience: float, cost: float, eps: float) -> float:
    """Return patience after paying ``cost`` (clamped at 0; values within eps of 0 become 0)."""
    left = patience - cost
    return 0.0 if left <= eps else left


def charge(em: Emitter, reason: ChargeReason, config: ProtocolConfig) -> PatienceCharged | None:
    """Charge ``reason``'s cost (no event for free actions) and return the event."""
    cost = cost_of(reason, config)
    if cost <= 0:
        return None
    before = em.state.patience
    return em.emit(
        PatienceCharged,
        reason=reason,
        cost=cost,
        before=before,
        after=after_charge(before, cost, config.epsilon),
    )


def exhausted(patience: float, eps: float) -> bool:
    """Return whether patience is (numerically) zero."""
    return patience <= eps
