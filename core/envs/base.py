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
writes state. :class:`WorldBase` declares every hook a world may provide, with its documented
default; :func:`core.envs.check.check_world` checks a world against the contract.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from core.envs.requirement_lexicon import (
    ActionLexicon,
    Problem,
    SlotLexicon,
    content_words,
    default_slot_label,
)
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
    """Everything the engine, the simulated user, the agents and construction call on a world.

    A world implements the first group itself (tools, sessions, seeds, execution, its own
    judgement and phrasing) and inherits the rest from :class:`WorldBase`, overriding a hook
    only where its documented default does not fit. Nothing in ``core`` probes a world for an
    attribute: every name below exists on every world.

    Attributes:
        benchmark: Benchmark id (``webshop``, ``tau2_retail``, ``tau2_airline``, ``mock``).
        world_id: Content hash of the loaded data (identifies bundled vs imported worlds).
        source: Where the world's data came from (a directory; ``""`` when not known).
        max_observation_chars: How many characters of an observation the agent sees.
    """

    benchmark: str
    world_id: str
    source: str
    max_observation_chars: int

    # ---- what every world implements ----------------------------------------------------
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

    def judge(self, intent: Intent, session: EnvSession, config: ProtocolConfig) -> Verdict:
        """The one acceptance: judge the session's proposal against ``intent`` under ``config``.

        The engine (proposals, forced finals, stale checks), construction's verifier and
        :func:`core.envs.check.check_world` all call this; there is no second judgement.
        """
        ...

    def phrase(self, condition: Condition) -> str:
        """Phrase one condition the way a customer would say it (for template voices)."""
        ...

    # ---- hooks with defaults in WorldBase -----------------------------------------------

    def is_proposal_action(self, action: EnvAction) -> bool:
        """Whether a tool call is itself a proposal, judged when it succeeds (Buy Now)."""
        ...

    def is_mutating(self, action: EnvAction) -> bool:
        """Whether a tool call writes state."""
        ...

    def slot_label(self, condition: Condition) -> str:
        """The user-facing name of a condition's slot (never its value)."""
        ...

    def slot_words(self, condition: Condition) -> set[str]:
        """Lower-cased words that show a message is about a condition's slot."""
        ...

    def context_facts(self, intent: Intent) -> dict[str, str]:
        """Facts the simulated user may state freely (account ids, names)."""
        ...

    def context_of(self, intent: Intent) -> dict[str, str]:
        """The context construction records on an intent (the customer its writes concern)."""
        ...

    def unmet_slots(self, intent: Intent, session: EnvSession) -> list[str] | None:
        """The slots a rejected proposal fails (None when the world cannot tell)."""
        ...

    def unmet_problems(self, intent: Intent, session: EnvSession) -> list[Problem] | None:
        """What a rejected proposal gets wrong, in plain words (None when it cannot tell)."""
        ...

    def slot_lexicon(self, condition: Condition) -> SlotLexicon:
        """How people talk about a condition's slot."""
        ...

    def context_lexicon(self, key: str) -> SlotLexicon:
        """How people ask for the context fact ``key``."""
        ...

    def lexicon_families(self) -> tuple[SlotLexicon, ...]:
        """Slot families beyond an intent's own slots (questions about unrequired things)."""
        ...

    def action_lexicon(self, intent: Intent) -> ActionLexicon | None:
        """The kind of action an intent asks for (None when the world cannot tell)."""
        ...

    def final_answer_format(self) -> str:
        """The note telling the agent how to give its final answer."""
        ...

    def compile_intent(self, intent: Intent) -> list[EnvAction]:
        """The environment actions that realise ``intent`` (the oracle's plan)."""
        ...

    def catalogue_words(self) -> CatalogueWords | None:
        """The attribute phrases and option values a catalogue sells (None without one)."""
        ...

    def task_count(self) -> int:
        """How many host tasks the world holds."""
        ...

    def task_splits(self) -> dict[str, list[str]]:
        """The host's named task splits (split name → task ids)."""
        ...

    def memo(self, name: str, size: int = ...) -> LockedLRU[Any, Any]:
        """The world's memo table ``name`` (bounded, locked)."""
        ...


@dataclass(frozen=True)
class CatalogueWords:
    """What a catalogue sells, in the words an agent reads in a request.

    Attributes:
        attributes: Lower-cased attribute phrases (``machine wash``).
        options: Lower-cased option values (``navy``, ``x-large``).
    """

    attributes: frozenset[str]
    options: frozenset[str]


class WorldBase:
    """Every hook a world may provide, each with its documented default.

    A world subclasses this, implements :meth:`tools`, :meth:`open_session`, :meth:`seeds`,
    :meth:`execute`, :meth:`judge` (the one acceptance) and :meth:`phrase`, sets ``benchmark``
    and ``world_id``, and overrides a hook below only where its default does not fit:

    =================================  ====================================================
    hook                               default
    =================================  ====================================================
    ``is_proposal_action(a)``          ``False`` (the agent proposes with ``Propose``)
    ``is_mutating(a)``                 the tool's kind is ``write``
    ``slot_label(c)``                  humanised tail of the slot name
                                       (``arg:0:cancel_order:reason`` → ``reason``)
    ``slot_words(c)``                  label words + value words (no digits, ≥ 3 chars,
                                       no stopwords)
    ``context_facts(i)``               ``intent.context``
    ``context_of(i)``                  ``intent.context``
    ``unmet_slots(i, s)``              ``None`` (the protocol falls back to the owed slots)
    ``unmet_problems(i, s)``           one problem per :meth:`unmet_slots` entry
                                       ("the colour isn't right"); ``None`` with it
    ``slot_lexicon(c)``                label + :meth:`slot_words` as cues, the value as
                                       its phrase
    ``context_lexicon(key)``           the key's words (``first_name`` → ``first name``)
    ``lexicon_families()``             ``()`` (no topics beyond the intent's own slots)
    ``action_lexicon(i)``              ``None`` (confirmations checked slot by slot only)
    ``final_answer_format()``          a generic note
    ``compile_intent(i)``              ``[]`` (the oracle then cannot act)
    ``catalogue_words()``              ``None`` (no catalogue)
    ``task_count()``                   ``len(seeds())``
    ``task_splits()``                  ``{}`` (every task is a test task)
    ``max_observation_chars``          4000
    ``source``                         ``""``
    =================================  ====================================================

    It also gives each world its own memo tables (:meth:`memo`) for data derived purely from
    the world (an agent's compiled plans, a reader's vocabulary), so no module keeps a cache
    keyed by world. :func:`core.envs.check.check_world` exercises every hook on a world's own
    samples.
    """

    MEMO_SIZE = 65_536
    """Entries per memo table (least recently used dropped first)."""

    benchmark: str
    world_id: str
    source: str = ""
    max_observation_chars: int = 4000

    # ---- what every world implements ----------------------------------------------------
    def tools(self) -> Sequence[ToolSpec]:
        """The agent-visible tools (every world defines its own)."""
        raise NotImplementedError

    def open_session(self) -> EnvSession:
        """A fresh session on the pristine state (every world defines its own)."""
        raise NotImplementedError

    def seeds(self) -> list[Intent]:
        """One root intent per host task (every world defines its own)."""
        raise NotImplementedError

    def execute(self, intent: Intent) -> GroundTruth:
        """An intent's ground truth (every world defines its own)."""
        raise NotImplementedError

    def judge(self, intent: Intent, session: EnvSession, config: ProtocolConfig) -> Verdict:
        """Whether the session's proposal satisfies ``intent`` (every world defines its own)."""
        raise NotImplementedError

    def phrase(self, condition: Condition) -> str:
        """A condition in a customer's words (every world defines its own)."""
        raise NotImplementedError

    # ---- tool calls ---------------------------------------------------------------------
    def is_proposal_action(self, action: EnvAction) -> bool:
        """No tool call is a proposal by default (the agent proposes with ``Propose``)."""
        return False

    def is_mutating(self, action: EnvAction) -> bool:
        """A call mutates when its tool is a ``write`` tool (unknown tools do not)."""
        for t in self.tools():
            if t.name == action.tool:
                return t.kind == "write"
        return False

    # ---- how the simulated user talks about requirements ---------------------------------
    def slot_label(self, condition: Condition) -> str:
        """The humanised tail of the slot name (``attr:machine wash`` → ``machine wash``)."""
        return default_slot_label(condition.slot)

    def slot_words(self, condition: Condition) -> set[str]:
        """The label's content words plus, for a text value, the value's."""
        words = content_words(self.slot_label(condition))
        if isinstance(condition.value, str):
            words |= content_words(condition.value)
        return words

    def context_facts(self, intent: Intent) -> dict[str, str]:
        """The intent's context, as recorded."""
        return dict(intent.context)

    def context_of(self, intent: Intent) -> dict[str, str]:
        """The intent's context, as recorded (construction adds nothing)."""
        return dict(intent.context)

    def unmet_slots(self, intent: Intent, session: EnvSession) -> list[str] | None:
        """The world cannot tell (the protocol falls back to the owed slots)."""
        return None

    def unmet_problems(self, intent: Intent, session: EnvSession) -> list[Problem] | None:
        """One plain problem per :meth:`unmet_slots` entry (None when that cannot tell)."""
        slots = self.unmet_slots(intent, session)
        if slots is None:
            return None
        conds = intent.slot_map()
        out = []
        for s in slots:
            label = self.slot_label(conds[s]) if s in conds else default_slot_label(s)
            out.append(Problem(slots=(s,), text=f"the {label} isn't right"))
        return out

    def slot_lexicon(self, condition: Condition) -> SlotLexicon:
        """The label and :meth:`slot_words` as cues, the (text) value as its phrase."""
        label = self.slot_label(condition)
        value = str(condition.value).lower() if isinstance(condition.value, str) else ""
        cues = tuple(sorted(w for w in self.slot_words(condition) if w != value))
        number = (
            float(condition.value)
            if isinstance(condition.value, (int, float)) and not isinstance(condition.value, bool)
            else None
        )
        return SlotLexicon(
            slot=condition.slot,
            label=label,
            family=label,
            cues=cues,
            values=(value,) if value else (),
            number=number,
            op=condition.op,
        )

    def context_lexicon(self, key: str) -> SlotLexicon:
        """The key's own words (``first_name`` → ``first name``)."""
        label = key.replace("_", " ").strip()
        return SlotLexicon(slot=key, label=label, family="context", cues=(label,))

    def lexicon_families(self) -> tuple[SlotLexicon, ...]:
        """No topics beyond the intent's own slots."""
        return ()

    def action_lexicon(self, intent: Intent) -> ActionLexicon | None:
        """The world cannot tell (confirmations are checked slot by slot only)."""
        return None

    # ---- agents ---------------------------------------------------------------------------
    def final_answer_format(self) -> str:
        """A generic note on giving the final answer."""
        return "Give your final answer now (propose it); anything else counts as no answer."

    def compile_intent(self, intent: Intent) -> list[EnvAction]:
        """No plan (the oracle then cannot act)."""
        return []

    def catalogue_words(self) -> CatalogueWords | None:
        """No catalogue."""
        return None

    # ---- construction ---------------------------------------------------------------------
    def task_count(self) -> int:
        """One task per seed."""
        return len(self.seeds())

    def task_splits(self) -> dict[str, list[str]]:
        """No named splits (every task is a test task)."""
        return {}

    # ---- the one per-world cache ------------------------------------------------------------
    def memo(self, name: str, size: int = MEMO_SIZE) -> LockedLRU[Any, Any]:
        """The world's memo table ``name`` (created on first use; locked; bounded).

        Worlds are loaded once per process and shared by threads, so the table of tables is
        created under a module-wide lock and every table is a :class:`LockedLRU`. Memo tables
        hold data derived purely from the world, so they are never pickled with it.

        Args:
            name: The table's name (the owning module's, e.g. ``protocol.interpret``).
            size: Entries kept (used when the table is created).
        """
        tables: dict[str, LockedLRU[Any, Any]] | None = self.__dict__.get("_memo_tables")
        if tables is None:
            with _MEMO_LOCK:
                tables = self.__dict__.setdefault("_memo_tables", {})
        got = tables.get(name)
        if got is None:
            with _MEMO_LOCK:
                got = tables.setdefault(name, LockedLRU(size))
        return got

    def __getstate__(self) -> dict[str, Any]:
        """The world's state without its memo tables (they hold locks; they are rebuilt)."""
        state = dict(self.__dict__)
        state.pop("_memo_tables", None)
        return state


_MEMO_LOCK = threading.Lock()
"""Guards the creation of a world's memo tables (never held while a table is used)."""
