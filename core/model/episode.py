"""Episode headers, endings and the three role-separated view models.

The agent view is built from an explicit allow-list (see :mod:`core.protocol.views`): it never
carries the hidden intent, the mask, persona state, shift destinations or ground truth. The user
view shows the persona card and the private current intent; the researcher view shows all.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from core.model.actions import AgentAction
from core.model.base import SCHEMA_VERSION, Strict
from core.model.config import ProtocolConfig
from core.model.intent import ConditionValue
from core.model.persona import Persona
from core.model.world import ToolSpec


class Outcome(StrEnum):
    """How an episode ended."""

    SUCCESS = "SUCCESS"
    EXHAUSTED = "EXHAUSTED"
    TURNS_EXCEEDED = "TURNS_EXCEEDED"
    ERROR = "ERROR"


class TerminationReason(StrEnum):
    """Why an episode ended (finer than :class:`Outcome`)."""

    ACCEPTED = "accepted"
    FINAL_SHOT_ACCEPTED = "final_shot_accepted"
    FINAL_SHOT_REJECTED = "final_shot_rejected"
    FORCED_FINAL_ACCEPTED = "forced_final_accepted"
    FORCED_FINAL_REJECTED = "forced_final_rejected"
    ENV_ERROR = "env_error"
    AGENT_ERROR = "agent_error"
    VOICE_ERROR = "voice_error"
    INTERNAL_ERROR = "internal_error"
    LLM_ERROR = "llm_error"
    """The agent's model calls failed (after the client's retries)."""
    CANCELLED = "cancelled"
    """The drive was cancelled or interrupted (a resume plays the episode again)."""


class EpisodeHeader(Strict):
    """Everything that identifies an episode (the events hold everything that happened)."""

    schema_version: int = SCHEMA_VERSION
    episode_id: str
    run_id: str | None = None
    sample_id: str
    benchmark: str
    persona_id: str
    seed: int
    method: str = Field(description="Method id (B0 … ORACLE) or 'human'.")
    agent: str = Field(description="Agent spec: 'symbolic', a model id, 'human'.")
    user_voice: str = Field(description="'template', 'human', 'mute' or a model id.")
    config: ProtocolConfig
    config_hash: str
    parent_episode_id: str | None = None
    fork_turn: int | None = None
    created_at: datetime | None = Field(
        default=None, description="Wall-clock creation time; excluded from determinism checks."
    )

    def deterministic_dump(self) -> dict[str, Any]:
        """Return the header without ids and wall-clock fields (for determinism checks)."""
        return self.model_dump(
            mode="json", exclude={"created_at", "episode_id", "run_id", "parent_episode_id"}
        )


Role = Literal["user", "agent", "environment"]


class TranscriptEntry(Strict):
    """One line of the conversation as the agent saw it."""

    turn: int
    role: Role
    text: str
    action: AgentAction | None = Field(default=None, description="The agent's own action.")


class AgentView(Strict):
    """What an agent may see (built from an allow-list)."""

    episode_id: str
    benchmark: str
    query: str = Field(description="The opening request.")
    tools: tuple[ToolSpec, ...] = ()
    transcript: tuple[TranscriptEntry, ...] = ()
    turn: int = Field(description="Number of agent actions so far.")
    turns_left: int
    patience: float | None = Field(default=None, description="Only when the meter is shown.")
    costs: dict[str, float] | None = Field(default=None, description="Only with the meter.")
    forced_final: bool = False
    format_hint: str = ""
    awaiting_user: bool = False
    ended: bool = False
    outcome: Outcome | None = None


class IntentLine(Strict):
    """One requirement of the user's current private intent, for the user view."""

    slot: str
    label: str
    value: ConditionValue
    phrase: str
    hidden: bool = Field(description="Not stated truthfully in the opening request.")
    disclosed: bool = Field(description="Disclosed in a reply (current value).")
    known: bool = Field(description="Known to the agent (stated or disclosed).")


class UserView(Strict):
    """What the person (or voice) playing the user sees."""

    episode_id: str
    persona: Persona
    query: str
    intent_id: str
    intent: tuple[IntentLine, ...]
    context: dict[str, str] = Field(default_factory=dict)
    disclosed: dict[str, ConditionValue] = Field(default_factory=dict)
    shift_notes: tuple[str, ...] = Field(
        default=(), description="Private notes on shifts that happened (what changed)."
    )
    due_shifts: int = 0
    patience: float
    budget: float
    pending_question: str | None = None
    pending_asked: tuple[str, ...] = ()
    pending_reaction: bool = Field(
        default=False,
        description="A person plays the user and the agent's proposal was rejected: their "
        "reaction is awaited.",
    )
    pending_turn: int | None = Field(
        default=None,
        description="While a reply is awaited: the turn of the question (or rejected proposal) "
        "it answers.",
    )
    pending_prompt: int | None = Field(
        default=None,
        description="While a reply is awaited: which prompt of the episode it answers (questions "
        "plus rejections so far; grows with every new prompt). A reply sent with an older "
        "number comes from a stale tab and is refused.",
    )
    unmet: tuple[str, ...] = Field(
        default=(),
        description="While a reaction is awaited: what the rejected proposal gets wrong, in "
        "plain words (empty when the world cannot tell).",
    )
    transcript: tuple[TranscriptEntry, ...] = ()
    ended: bool = False
    outcome: Outcome | None = None


class ResearcherView(Strict):
    """Everything: header, events, state and derived summaries."""

    header: EpisodeHeader
    events: list[dict[str, Any]]
    state: dict[str, Any]
    agent_view: AgentView
    user_view: UserView
