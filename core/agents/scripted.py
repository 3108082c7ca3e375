"""Scripted agents for tests and conformance: ORACLE (perfect play) and NOOP (never works).

The oracle is privileged (``privileged = True``): the driver hands it the truth probe in its
:class:`~core.agents.base.EpisodeBinding`, so it knows the user's current intent and whether a
shift is due. It flushes due shifts with a question, asks about still-owed hidden slots while
patience allows, then executes the host's compiled recipe for the current intent and proposes.
Everything else it needs is read from the agent view, so a fresh instance continues any episode
(forks reproduce exactly).
"""

from __future__ import annotations

from core.agents import register_agent
from core.agents.base import AgentBase, EpisodeBinding, TruthProbe
from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.episode import AgentView
from core.model.world import EnvAction


def _tail_env_actions(view: AgentView) -> list[EnvAction]:
    """Env actions the agent made since its last non-environment action."""
    out: list[EnvAction] = []
    for e in reversed(view.transcript):
        if e.role != "agent" or e.action is None:
            continue
        if e.action.kind != "env":
            break
        out.append(e.action.action)
    return out[::-1]


def _times_asked(view: AgentView, slot: str) -> int:
    return sum(
        1
        for e in view.transcript
        if e.action is not None and e.action.kind == "ask" and slot in (e.action.asks or ())
    )


class OracleAgent(AgentBase):
    """Perfect scripted play (needs to be bound, with the truth probe, before ``act``)."""

    spec = "ORACLE"
    privileged = True

    def __init__(self, recover: bool = True, max_asks_per_slot: int = 2) -> None:
        self.recover = recover
        self.max_asks_per_slot = max_asks_per_slot
        self.truth: TruthProbe | None = None

    def bind(self, ctx: EpisodeBinding) -> None:
        """Receive the privileged truth probe."""
        self.truth = ctx.truth

    def act(self, view: AgentView) -> EnvOp | Ask | Propose | Malformed:
        """Return the next perfect action."""
        if view.forced_final:
            return Propose(text="done")
        t = self.truth
        if t is None:
            raise RuntimeError(
                "OracleAgent needs the truth probe (drive it with core.engine.episode.run)"
            )
        cfg = t.config
        cq, eps = cfg.cost_question, cfg.epsilon
        tail = _tail_env_actions(view)
        if not tail:
            p = t.patience()
            owed = [s for s in t.owed_hidden() if _times_asked(view, s) < self.max_asks_per_slot]
            if t.due() > 0 and cq <= p + eps:
                return self._ask(owed[:1])
            if self.recover and owed and p - cq > cq + eps:
                return self._ask(owed[:1])
        plan = t.world.compile_intent(t.current_intent())
        if len(tail) < len(plan) and plan[: len(tail)] == tail:
            return EnvOp(action=plan[len(tail)])
        return Propose(text="done")

    def _ask(self, slots: list[str]) -> Ask:
        if not slots:
            return Ask(text="Is there anything else I should know?", asks=())
        assert self.truth is not None
        cond = self.truth.current_intent().slot_map()[slots[0]]
        label = self.truth.world.slot_label(cond)
        return Ask(text=f"What {label} would you like?", asks=tuple(slots))


class NoOpAgent(AgentBase):
    """Never works the environment; proposes at once, every turn (runs to exhaustion)."""

    spec = "NOOP"

    def act(self, view: AgentView) -> EnvOp | Ask | Propose | Malformed:
        """Propose immediately."""
        return Propose(text="done")


register_agent("ORACLE", OracleAgent)
register_agent("NOOP", NoOpAgent)
