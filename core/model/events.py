"""The typed, versioned episode event schema.

An episode is its header plus an append-only list of events. Every event carries ``kind`` (the
discriminator), ``v`` (its schema version), ``seq`` (0-based position in the log, contiguous)
and ``turn`` (the agent turn it belongs to; 0 = before the first agent action).

Older versions are upgraded on read by :func:`parse_event` through the :data:`UPGRADERS`
table (one function per ``(kind, from_version)``), so stored logs stay readable forever.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from core.model.actions import AgentAction
from core.model.base import Strict
from core.model.episode import Outcome, TerminationReason
from core.model.intent import ConditionValue, IntentGraph
from core.model.intent import ShiftEdge as ShiftEdge
from core.model.persona import Persona
from core.model.sample import Sample
from core.model.world import EnvAction

EVENT_VERSION = 1
"""Current schema version of every event kind."""


class _Event(Strict):
    v: int = Field(default=EVENT_VERSION, description="Schema version of this event.")
    seq: int = Field(ge=0, description="Position in the episode log (contiguous from 0).")
    turn: int = Field(ge=0, description="Agent turn (0 = before the first action).")


class EpisodeStarted(_Event):
    """First event: everything the protocol needs, frozen at start."""

    kind: Literal["episode_started"] = "episode_started"
    sample: Sample = Field(description="The sample (query, mask, hidden slots).")
    graph: IntentGraph = Field(description="The intent graph shifts move on.")
    persona: Persona = Field(description="The persona parameters in force.")
    rng_key: str = Field(description="Key of every random stream: '<sample>:<seed>'.")
    budget: float = Field(description="Initial patience (base × multiplier).")
    thresholds: tuple[float, ...] = Field(description="Absolute shift thresholds, highest first.")
    fates: tuple[bool, ...] = Field(description="Pre-drawn fire (True) / skip fate per threshold.")
    turn_cap: int = Field(description="Agent actions before the forced final answer.")
    patience_visible: bool = Field(description="Whether the agent sees the meter.")
    tools: tuple[str, ...] = Field(default=(), description="Tool names offered to the agent.")


class TurnStarted(_Event):
    """An agent turn begins."""

    kind: Literal["turn_started"] = "turn_started"
    patience: float = Field(description="Patience before the action.")
    intent_id: str = Field(description="The intent current at the start of the turn.")


class AgentActed(_Event):
    """The agent's action for this turn (as received)."""

    kind: Literal["agent_action"] = "agent_action"
    action: AgentAction = Field(description="The typed action.")
    asked_slots: tuple[str, ...] = Field(
        default=(), description="Slots a message asks about (structured or matched by words)."
    )
    forced_final: bool = Field(default=False, description="Answer to the forced-final prompt.")


DisclosureHow = Literal["answer", "volunteer", "rejection_hint", "context"]


class Disclosure(Strict):
    """One fact the user's reply discloses."""

    slot: str = Field(description="Slot name (or context key for context facts).")
    value: ConditionValue | None = Field(description="Disclosed value (None = named only).")
    how: DisclosureHow = Field(description="answer / volunteer / rejection_hint / context.")


ReplyKind = Literal[
    "answer",
    "decline",
    "already_asked",
    "confusion",
    "context",
    "rejection",
    "acceptance",
    "mute",
]


class UserReplied(_Event):
    """The simulated (or human) user's reply, with structured disclosures."""

    kind: Literal["user_reply"] = "user_reply"
    reply_kind: ReplyKind = Field(description="What the reply does.")
    text: str = Field(description="The words the agent sees.")
    disclosures: tuple[Disclosure, ...] = Field(default=(), description="Facts disclosed.")
    asked: tuple[str, ...] = Field(default=(), description="Slots the question asked about.")
    declined: tuple[str, ...] = Field(default=(), description="Asked slots declined.")
    repeated: tuple[str, ...] = Field(default=(), description="Asked slots already disclosed.")
    hinted: tuple[str, ...] = Field(default=(), description="Slots a rejection named.")
    voice: str = Field(description="Voice that phrased it (template, human, mute, a model).")
    intent_id: str = Field(description="Intent the reply reflects.")


class ObservationRecorded(_Event):
    """An environment action was executed."""

    kind: Literal["observation"] = "observation"
    action: EnvAction = Field(description="The executed tool call.")
    ok: bool = Field(description="False when the tool returned an error.")
    text: str = Field(description="Agent-visible text (truncated).")
    mutating: bool = Field(default=False, description="Whether the tool writes state.")


ChargeReason = Literal["question", "rejected_proposal", "malformed", "env_action"]


class PatienceCharged(_Event):
    """Patience was spent."""

    kind: Literal["patience_charged"] = "patience_charged"
    reason: ChargeReason = Field(description="What was bought.")
    cost: float = Field(description="Nominal cost of the action.")
    before: float = Field(description="Patience before.")
    after: float = Field(description="Patience after (never below 0).")


class ShiftDue(_Event):
    """A threshold was crossed and its fate is *fire*: one shift is now due."""

    kind: Literal["shift_due"] = "shift_due"
    threshold: float = Field(description="The crossed threshold.")


ShiftSkipReason = Literal["fate_skip", "no_destination", "disabled", "cap_reached"]


class ShiftSkipped(_Event):
    """A crossed threshold (or due shift) did not move the goal."""

    kind: Literal["shift_skipped"] = "shift_skipped"
    threshold: float | None = Field(default=None, description="The threshold, if any.")
    reason: ShiftSkipReason = Field(description="Why nothing moved.")


class ShiftTrigger(Strict):
    """Why a triggered shift fired."""

    kind: Literal["agent_ask"] = "agent_ask"
    slots: tuple[str, ...] = Field(description="Edge slots the question's words matched.")
    categories: tuple[str, ...] = Field(description="Matched categories.")


class ShiftFired(_Event):
    """The user's goal silently moved."""

    kind: Literal["shift_fired"] = "shift_fired"
    edge: ShiftEdge = Field(description="The followed edge.")
    dst_slots: tuple[str, ...] = Field(description="Slot names of the destination.")
    trigger: ShiftTrigger | None = Field(default=None, description="Set for triggered shifts.")
    after_reply: bool = Field(description="Fired after a user reply (reply reflects old goal).")
    consumed: Literal["due", "placement"] = Field(
        description="'due' = a due shift; 'placement' = a trigger used the last placement."
    )
    threshold: float | None = Field(default=None, description="Placement consumed, if any.")


ProposalVia = Literal["answer", "operation", "final_shot", "forced_final"]


class ProposalJudged(_Event):
    """A proposal was adjudicated by execution against the current intent."""

    kind: Literal["proposal_judged"] = "proposal_judged"
    intent_id: str = Field(description="Intent current at adjudication.")
    accepted: bool
    reason: str = Field(description="Machine-readable reason from the host.")
    score: float | None = Field(default=None, description="Host score (WebShop reward).")
    via: ProposalVia = Field(description="How the proposal was made.")
    proposal: Any = Field(default=None, description="The session's committed state (JSON).")


class StaleCheck(_Event):
    """A failed final answer re-judged against the superseded intent."""

    kind: Literal["stale_check"] = "stale_check"
    old_intent_id: str
    valid_under_old: bool
    reason: str = ""


ForcedReason = Literal["exhausted", "turn_cap", "unaffordable_question"]


class ForcedFinal(_Event):
    """The agent is told to give its final answer now."""

    kind: Literal["forced_final"] = "forced_final"
    reason: ForcedReason
    message: str = Field(description="The user's words.")
    format_hint: str = Field(description="The environment's answer-format note.")


class Repair(_Event):
    """A repair of something an agent or voice produced.

    Targets: the forced-final format re-prompt, an LLM voice contradiction fix, the tolerant
    action parser's fix of an agent reply (``action_format``; also a reply cut at the
    completion cap, ``truncated: …``, and the window fitted to the model's context), an LLM
    voice reply refused for echoing its prompt or a private line (``voice_rejected``), and an
    A3 reflection whose lessons were rejected (``reflection``, recorded at the start of each
    episode of the next generation).
    """

    kind: Literal["repair"] = "repair"
    target: Literal[
        "final_format",
        "voice_regenerate",
        "voice_fallback",
        "action_format",
        "voice_rejected",
        "reflection",
    ]
    detail: str = Field(description="What was wrong.")
    original: str = Field(default="", description="The rejected text.")
    replacement: str = Field(default="", description="What replaced it (if any).")


class QuestionRead(_Event):
    """How an LLM interpreter read an agent message (recorded whether or not it was valid)."""

    kind: Literal["question_read"] = "question_read"
    interpreter: str = Field(description="The interpreter's model spec.")
    act: Literal["slots", "open", "confirm", "offtopic"] = Field(description="The act used.")
    slots: tuple[str, ...] = Field(default=(), description="Slots asked about or described.")
    confirm: bool | None = Field(default=None, description="Confirmations: does it match.")
    valid: bool = Field(description="Whether the model's answer passed validation.")
    fallback: bool = Field(description="Whether the offline interpreter's reading was used.")
    detail: str = Field(default="", description="Why the answer was rejected (if it was).")
    raw: str = Field(default="", description="The model's answer (cut to 2000 characters).")


class ReadContradiction(Strict):
    """A value a reply states that differs from the user's goal."""

    slot: str = Field(description="Slot of the current intent.")
    said: str = Field(description="The words the reply used.")
    goal: ConditionValue | None = Field(description="The intent's value.")


ReplyReadAct = Literal["answer", "decline", "confirm_yes", "confirm_no", "other"]


class ReplyRead(_Event):
    """How a person's typed reply was read, what they corrected, and what the agent learns.

    Recorded just before the ``user_reply`` it explains, only when a person types in the user's
    seat; the ``user_reply``'s disclosures are ``final``.
    """

    kind: Literal["reply_read"] = "reply_read"
    text: str = Field(description="The words the person typed.")
    reader: str = Field(description="'offline' or the model spec that read them.")
    act: ReplyReadAct = Field(description="The reader's act.")
    read: tuple[str, ...] = Field(default=(), description="Slots the reader found disclosed.")
    contradictions: tuple[ReadContradiction, ...] = Field(
        default=(), description="Values stated that differ from the goal."
    )
    added: tuple[str, ...] = Field(default=(), description="Slots the person added.")
    removed: tuple[str, ...] = Field(default=(), description="Slots the person removed.")
    final: tuple[str, ...] = Field(default=(), description="Slots the agent learns (disclosed).")
    deliberate: bool | None = Field(
        default=None, description="Asked about a contradiction: did the person mean it."
    )
    fallback: bool = Field(default=False, description="A model reader failed; offline used.")
    detail: str = Field(default="", description="Why the model reading was not used.")


class LessonBookUsed(_Event):
    """A3: the lesson book in force for this episode (recorded right after the start).

    One book per run unit (benchmark × persona × seed of one run); it is rewritten only between
    generations, so every episode of a generation records the same book.
    """

    kind: Literal["lesson_book"] = "lesson_book"
    book: Literal["lessons", "askbook"] = Field(
        description="'lessons' (LLM reflection) or 'askbook' (symbolic question statistics)."
    )
    generation: int = Field(ge=0, description="Generations distilled so far (0 = empty book).")
    generation_size: int = Field(ge=1, description="Episodes per generation in this run.")
    episodes_seen: int = Field(ge=0, description="Finished episodes the book was built from.")
    lessons: tuple[dict[str, Any], ...] = Field(
        default=(), description="The book's entries (lessons, or family statistics)."
    )


class EpisodeEnded(_Event):
    """Last event."""

    kind: Literal["episode_ended"] = "episode_ended"
    outcome: Outcome
    reason: TerminationReason
    patience_left: float
    turns: int
    error: str | None = Field(default=None, description="Error summary for ERROR outcomes.")


Event = Annotated[
    EpisodeStarted
    | TurnStarted
    | AgentActed
    | UserReplied
    | ObservationRecorded
    | PatienceCharged
    | ShiftDue
    | ShiftSkipped
    | ShiftFired
    | ProposalJudged
    | StaleCheck
    | ForcedFinal
    | Repair
    | QuestionRead
    | ReplyRead
    | LessonBookUsed
    | EpisodeEnded,
    Field(discriminator="kind"),
]
"""Any episode event (discriminated on ``kind``)."""

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
"""Validates / serialises a single event."""

EVENT_LIST_ADAPTER: TypeAdapter[list[Event]] = TypeAdapter(list[Event])
"""Validates / serialises a list of events."""

EVENT_KINDS: tuple[str, ...] = (
    "episode_started",
    "turn_started",
    "agent_action",
    "user_reply",
    "observation",
    "patience_charged",
    "shift_due",
    "shift_skipped",
    "shift_fired",
    "proposal_judged",
    "stale_check",
    "forced_final",
    "repair",
    "question_read",
    "reply_read",
    "lesson_book",
    "episode_ended",
)

Upgrader = Callable[[dict[str, Any]], dict[str, Any]]
UPGRADERS: dict[tuple[str, int], Upgrader] = {}
"""``(kind, version) -> function`` returning the same event at ``version + 1``."""


def parse_event(data: dict[str, Any]) -> Event:
    """Validate a stored event, upgrading older schema versions first.

    Args:
        data: The stored JSON object (``v`` absent means version 1).

    Returns:
        The current-version event.

    Raises:
        ValueError: If the kind is unknown, the version is newer than this reader, or an
            older version has no upgrade path (pydantic's ValidationError is a ValueError).
    """
    d = dict(data)
    kind = d.get("kind")
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}")
    v = int(d.get("v", 1))
    if v > EVENT_VERSION:
        raise ValueError(f"event {kind} v{v} is newer than this reader (v{EVENT_VERSION})")
    while v < EVENT_VERSION:
        up = UPGRADERS.get((str(kind), v))
        if up is None:
            raise ValueError(f"no upgrade for event {kind} v{v}")
        d = up(d)
        v += 1
        d["v"] = v
    d["v"] = v
    return EVENT_ADAPTER.validate_python(d)


def dump_event(event: Event) -> dict[str, Any]:
    """Return the JSON-compatible dict of ``event`` (the stored form)."""
    out: dict[str, Any] = event.model_dump(mode="json")
    return out
