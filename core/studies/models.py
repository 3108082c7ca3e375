"""Boundary models of human studies: specs, annotators, assignments, queues and labels."""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import Field, field_validator, model_validator

from core.model.base import SCHEMA_VERSION, Strict, content_hash

TargetKind = Literal["episode", "episode_pair", "session", "sample"]
"""What an assignment points at: an episode, a pair of episodes ('epA|epB'), an imported
production session, or a sample to play (play-as-user / play-as-agent)."""

StudyRole = Literal["label", "play_user", "play_agent"]
"""What a study asks of its annotators."""

AnnotatorRole = Literal["annotator", "researcher"]
"""Annotators label and play; researchers also create studies and see un-blinded views."""

LabelKind = Literal[
    "persona_id",
    "same_persona",
    "realism",
    "fault_type",
    "shift_type",
    "who_broke",
    "comment",
    "intents",
    "play_user_survey",
]
"""Closed vocabulary of label kinds (the ``label_kind`` column of ``annotations``).

``play_user_survey`` is the end-of-episode survey of the play-as-user page; studies cannot ask
for it on their label forms."""

FORM_LABEL_KINDS: frozenset[str] = frozenset(get_args(LabelKind)) - {"play_user_survey"}
"""Label kinds a study's label form may ask for."""

AssignmentStatus = Literal["pending", "done", "skipped"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
PAIR_SEP = "|"
"""Separator of the two episode ids in an ``episode_pair`` target id."""


def pair_id(episode_a: str, episode_b: str) -> str:
    """Return the canonical target id of an episode pair (``'epA|epB'``, order kept).

    >>> pair_id("e1", "e2")
    'e1|e2'
    """
    return f"{episode_a}{PAIR_SEP}{episode_b}"


def split_pair(target_id: str) -> tuple[str, str]:
    """Split an ``episode_pair`` target id into its two episode ids.

    Raises:
        ValueError: When the id does not hold exactly two non-empty parts.
    """
    parts = target_id.split(PAIR_SEP)
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"episode pair id must be 'epA{PAIR_SEP}epB', got {target_id!r}")
    return parts[0], parts[1]


class StudyCondition(Strict):
    """One experimental condition (e.g. "play as user, dependent persona, meter hidden")."""

    persona_id: str | None = Field(default=None, description="Persona played or simulated.")
    patience_visible: bool = Field(default=False, description="Show the patience meter.")
    note: str = Field(default="", description="Free text shown to the annotator.")

    @property
    def label(self) -> str:
        """A short human-readable description."""
        parts = [self.persona_id or "any persona"]
        parts.append("meter shown" if self.patience_visible else "meter hidden")
        if self.note:
            parts.append(self.note)
        return ", ".join(parts)


class StudySpec(Strict):
    """What a study asks: which items, which roles and conditions, which labels, how much overlap.

    Items are the union of ``episodes``, ``episode_pairs``, ``sessions`` (for the ``label``
    role) and ``samples`` × ``conditions`` (for the play roles).
    """

    schema_version: int = SCHEMA_VERSION
    name: str = Field(min_length=1, max_length=120, description="Unique study name.")
    description: str = Field(default="", description="Instructions shown to annotators.")
    roles: tuple[StudyRole, ...] = Field(default=("label",), min_length=1)
    episodes: tuple[str, ...] = Field(default=(), description="Episodes to label.")
    episode_pairs: tuple[tuple[str, str], ...] = Field(
        default=(), description="Episode pairs for SAME/DIFFERENT persona labels."
    )
    sessions: tuple[str, ...] = Field(default=(), description="Imported sessions to judge.")
    samples: tuple[str, ...] = Field(default=(), description="Samples to play.")
    personas: tuple[str, ...] = Field(default=(), description="Personas the study covers.")
    conditions: tuple[StudyCondition, ...] = Field(
        default=(), description="Play conditions; empty = one default condition."
    )
    label_kinds: tuple[LabelKind, ...] = Field(default=(), description="Labels asked for.")
    overlap: int = Field(default=2, ge=1, le=50, description="Annotators per item (k).")
    blind: bool = Field(
        default=True,
        description="Hide model identity, method, user voice and other annotators' labels.",
    )
    seed: int = Field(default=0, description="Seed of the assignment shuffle.")
    agent: str = Field(
        default="symbolic",
        description="play_user: the agent the person faces ('symbolic' or a model spec).",
    )
    method: str = Field(default="A2", description="play_user: the agent's ladder method.")
    user_reader: str = Field(
        default="offline",
        description="play_agent: how the simulated user reads the person ('offline' or a model).",
    )
    selection: str = Field(default="", description="How the samples were chosen (provenance).")

    @model_validator(mode="after")
    def _consistent(self) -> StudySpec:
        if "label" in self.roles and not (self.episodes or self.episode_pairs or self.sessions):
            raise ValueError("a 'label' study needs episodes, episode_pairs or sessions")
        if "label" in self.roles and not self.label_kinds:
            raise ValueError("a 'label' study needs at least one label kind")
        for kind in self.label_kinds:
            if kind not in FORM_LABEL_KINDS:
                raise ValueError(f"{kind!r} is written by its page, not asked by a label form")
        plays = {"play_user", "play_agent"}.intersection(self.roles)
        if plays and not self.samples:
            raise ValueError("a play study needs samples")
        for a, b in self.episode_pairs:
            if a == b or PAIR_SEP in a or PAIR_SEP in b:
                raise ValueError(f"bad episode pair ({a!r}, {b!r})")
        return self

    @property
    def study_id(self) -> str:
        """Stable id derived from the name."""
        return "st-" + content_hash({"study": self.name}, 12)


class Study(Strict):
    """A stored study."""

    study_id: str
    spec: StudySpec
    status: Literal["open", "closed"] = "open"
    created_at: str


class Annotator(Strict):
    """A person who labels or plays."""

    annotator_id: str = Field(description="Login-like id: letters, digits, _ . @ -.")
    display_name: str = Field(default="", description="Shown in tables (defaults to the id).")
    role: AnnotatorRole = "annotator"

    @field_validator("annotator_id")
    @classmethod
    def _id_ok(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("use 1-64 letters, digits, '_', '.', '@' or '-' (no spaces)")
        return value


class QueueItem(Strict):
    """One entry of an annotator's queue (never holds hidden information)."""

    assignment_id: int
    position: int
    ref: str = Field(description="Neutral reference to show ('#3'); never an id.")
    role: StudyRole
    target_kind: TargetKind
    target_id: str | None = Field(
        default=None, description="The raw target id; None in blind studies unless revealed."
    )
    condition: StudyCondition | None = None
    status: AssignmentStatus
    labels_required: tuple[LabelKind, ...] = ()
    labels_done: tuple[LabelKind, ...] = ()


class AnnotatorQueue(Strict):
    """An annotator's queue within one study, with progress."""

    study_id: str
    annotator_id: str
    items: tuple[QueueItem, ...]
    done: int
    skipped: int
    total: int

    @property
    def progress(self) -> float:
        """Fraction of items finished (done or skipped); 1.0 for an empty queue."""
        return (self.done + self.skipped) / self.total if self.total else 1.0

    @property
    def next_item(self) -> QueueItem | None:
        """The first pending item, if any."""
        return next((i for i in self.items if i.status == "pending"), None)


class LabelRecord(Strict):
    """One stored label (a row of ``annotations``)."""

    annotation_id: int
    study_id: str | None
    annotator: str
    target_kind: str
    target_id: str
    label_kind: str
    value: Any
    turn: int | None = None
    self_played: bool = False
    seconds: float | None = None
    created_at: str
