"""The contract every host world implements.

A *host world* (WebShop-style shop, τ² Retail, τ² Airline, the mock world) is loaded once per
process and shared read-only. Episodes and ground-truth executions open cheap *sessions* on it
(copy-on-write for τ²; a page state machine for the shop). The world also provides the adapter
hooks that construction, the simulated user and acceptance need.

Actions reach a session as :class:`EnvAction` (a tool name plus JSON arguments). For the shop the
tools are ``search`` (``{"query": ...}``) and ``click`` (``{"target": ...}``), mirroring
WebShop's ``search[...]``/``click[...]`` strings.

**How proposals are judged** is part of the contract, so the episode driver never asks which
benchmark it runs: :meth:`HostWorld.judge` decides a proposal under the protocol config (WebShop:
the purchase's reward reaches ``config.webshop_accept_threshold`` and its price is within the
cap; τ²: every golden write executed, or the exact final state, per ``config.tau2_acceptance``;
mock: the bought item satisfies the intent), :meth:`HostWorld.is_proposal_action` says whether a
tool call is itself a proposal (WebShop's Buy Now) and :meth:`HostWorld.is_mutating` whether it
writes state. :class:`WorldBase` gives every world the documented defaults.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from core.model.cache import LockedLRU
from core.model.config import ProtocolConfig
from core.model.intent import Condition, GroundTruth, Intent
from core.model.world import EnvAction, Observation, ToolSpec, Verdict


@runtime_checkable
class EnvSession(Protocol):
    """A mutable, per-episode view of a host world."""

    def act(self, action: EnvAction) -> Observation:
        """Apply one agent action and return its observation. Never raises for tool errors."""
        ...

    def proposal(self) -> dict[str, Any] | None:
        """Return what the agent has committed so far (a purchase, executed writes …)."""
        ...


@runtime_checkable
class HostWorld(Protocol):
    """A loaded host world plus its adapter hooks.

    Attributes:
        benchmark: Benchmark id (``webshop``, ``tau2_retail``, ``tau2_airline``, ``mock``).
        world_id: Content hash of the loaded data (identifies bundled vs imported worlds).
    """

    benchmark: str
    world_id: str

    def tools(self) -> Sequence[ToolSpec]:
        """Return the agent-visible tools."""
        ...

    def open_session(self) -> EnvSession:
        """Open a fresh session on the pristine initial state."""
        ...

    def seeds(self) -> list[Intent]:
        """Return one root intent per host task (conditions compiled from the task)."""
        ...

    def execute(self, intent: Intent) -> GroundTruth:
        """Execute an intent to its ground truth (raise ConfigError if not executable)."""
        ...

    def adjudicate(self, intent: Intent, session: EnvSession) -> Verdict:
        """Judge the session's current proposal against ``intent`` by execution (host defaults)."""
        ...

    def judge(self, intent: Intent, session: EnvSession, config: ProtocolConfig) -> Verdict:
        """Judge the session's proposal against ``intent`` under the protocol ``config``.

        The episode engine's only acceptance call (proposals, forced finals, stale checks).
        """
        ...

    def is_proposal_action(self, action: EnvAction) -> bool:
        """Whether a tool call is itself a proposal, judged when it succeeds (Buy Now)."""
        ...

    def is_mutating(self, action: EnvAction) -> bool:
        """Whether a tool call writes state."""
        ...

    def phrase(self, condition: Condition) -> str:
        """Phrase one condition the way a customer would say it (for template voices)."""
        ...


class WorldBase:
    """The defaults of the judging hooks; every host world inherits them.

    * :meth:`judge` is :meth:`adjudicate` (a world whose acceptance depends on the protocol
      config overrides it);
    * no tool call is a proposal;
    * a tool call mutates state when its tool's kind is ``write``.

    It also gives each world its own memo tables (:meth:`memo`) for data derived purely from
    the world (an agent's compiled plans), so no module keeps a cache keyed by world.
    """

    MEMO_SIZE = 65_536
    """Entries per memo table (least recently used dropped first)."""

    def tools(self) -> Sequence[ToolSpec]:
        """The agent-visible tools (every world defines its own)."""
        raise NotImplementedError

    def adjudicate(self, intent: Intent, session: EnvSession) -> Verdict:
        """The host's own judgement (every world defines its own)."""
        raise NotImplementedError

    def judge(self, intent: Intent, session: EnvSession, config: ProtocolConfig) -> Verdict:
        """Judge by :meth:`adjudicate` (the config does not change this world's acceptance)."""
        return self.adjudicate(intent, session)

    def is_proposal_action(self, action: EnvAction) -> bool:
        """No tool call is a proposal by default (the agent proposes with ``Propose``)."""
        return False

    def is_mutating(self, action: EnvAction) -> bool:
        """A call mutates when its tool is a ``write`` tool (unknown tools do not)."""
        for t in self.tools():
            if t.name == action.tool:
                return t.kind == "write"
        return False

    def memo(self, name: str) -> LockedLRU[Any, Any]:
        """The world's memo table ``name`` (created on first use; locked; bounded)."""
        tables: dict[str, LockedLRU[Any, Any]] = self.__dict__.setdefault("_memo_tables", {})
        got = tables.get(name)
        if got is None:
            got = tables.setdefault(name, LockedLRU(self.MEMO_SIZE))
        return got
