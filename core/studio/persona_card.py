"""The persona card of the play-as-user page: one consistent person, and their current goal.

A person playing the user must see one customer, not two: the persona files' bios are written
around an invented person ("Inge, 54, …") while a τ² world knows its own customer
(``first_name: Raj``). The card therefore takes the customer's **identity from the world** —
name, and age from the date of birth, where the world's profile has them — and the persona's
**manner** from its parameters (how much they say, how often they decline, how patient they
are), never the bio's invented name. A world without customer profiles (the shop) gets no name
at all: "You are the customer".

The goal lines are rebuilt from the *current* intent on every call, so after a silent shift
they show the new wishes, and each line's "not in your request" marker is recomputed against
what the opening request literally says: a value the request states (truthfully, or — for a
wrong value that the shift has since made right — literally) is in the request; a slot the
request never mentions, or a value it states differently, is not.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

from pydantic import Field

from core.engine import episode
from core.engine.eventlog import EventLog
from core.model.base import Strict
from core.model.events import EpisodeStarted
from core.model.persona import Persona
from core.model.sample import Sample
from core.studio.roleplay import world_for

NAME_KEYS: tuple[tuple[str, ...], ...] = (("first_name", "last_name"), ("name",), ("full_name",))
"""Profile keys that carry the customer's name, in order of preference."""

BIRTH_KEYS: tuple[str, ...] = ("dob", "date_of_birth", "birthday")
"""Profile keys that carry the customer's date of birth."""


PLAIN_STATEMENTS: frozenset[str] = frozenset({"stated", "substituted", "extra"})
"""Mask kinds whose ``stated_value`` the request plainly asserts as the customer's wish."""


class GoalLine(Strict):
    """One requirement of the customer's current goal, as the card shows it."""

    slot: str
    label: str
    phrase: str
    in_request: bool = Field(description="The opening request states this current value.")
    told: bool = Field(description="The person has told the agent this current value.")


class PersonaCard(Strict):
    """Who the person plays and what they want now."""

    name: str | None = Field(default=None, description="The world's customer name, if any.")
    age: int | None = Field(default=None, description="From the world's date of birth, if any.")
    persona: str = Field(description="The persona's display name (how they behave).")
    manner: tuple[str, ...] = Field(description="How this persona talks, in the second person.")
    traits: tuple[str, ...] = ()
    facts: dict[str, str] = Field(default_factory=dict, description="The world's profile facts.")
    goal: tuple[GoalLine, ...] = ()

    @property
    def heading(self) -> str:
        """``You are Raj Patel, 41`` — or ``You are the customer`` when the world has no name."""
        if self.name is None:
            return "You are the customer"
        return f"You are {self.name}" + (f", {self.age}" if self.age is not None else "")


def customer_name(facts: dict[str, str]) -> str | None:
    """The customer's name from a world profile (``first_name`` + ``last_name``, ``name``)."""
    for keys in NAME_KEYS:
        parts = [str(facts[k]).strip() for k in keys if str(facts.get(k, "")).strip()]
        if parts and all(k in facts for k in keys[:1]):
            return " ".join(parts)
    return None


def age_on(facts: dict[str, str], when: date) -> int | None:
    """Whole years from the profile's date of birth to ``when`` (None without a valid date)."""
    for key in BIRTH_KEYS:
        raw = str(facts.get(key, "")).strip()
        try:
            born = date.fromisoformat(raw[:10])
        except ValueError:
            continue
        years = when.year - born.year - ((when.month, when.day) < (born.month, born.day))
        return years if 0 <= years < 130 else None
    return None


def manner(persona: Persona) -> tuple[str, ...]:
    """How a persona behaves, in plain second-person sentences drawn from its parameters."""
    out: list[str] = []
    n = persona.slots_per_answer
    out.append(
        "You answer one thing per question."
        if n == 1
        else f"You tell up to {n} things in one answer."
    )
    v = persona.volunteer
    if v <= 0:
        out.append("You never add details nobody asked for.")
    elif v < 0.2:
        out.append("You rarely add details nobody asked for.")
    elif v < 0.4:
        out.append("You sometimes add details nobody asked for.")
    else:
        out.append("You often add details nobody asked for.")
    d = persona.decline
    if d >= 0.4:
        out.append("You sidestep about half of the questions.")
    elif d > 0:
        out.append("Now and then you sidestep a question.")
    p = persona.patience_multiplier
    if p < 0.95:
        out.append("Your patience runs out quickly.")
    elif p > 1.05:
        out.append("You are patient with questions.")
    if persona.suggestibility >= 0.5:
        out.append("A suggestion that sounds reasonable can change your mind.")
    return tuple(out)


def _norm(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True).lower()
    return str(value).strip().lower()


def request_values(sample: Sample, root_conditions: Any) -> dict[str, set[str]]:
    """Per slot, the values the opening request states (truthfully or literally).

    Truthfully stated slots carry the root intent's value; a mask entry that plainly asserts a
    value — a wrong value (factual error) or an extra requirement — carries what the request
    literally says. Other treatments state no value as such: a vague or ambiguous word, a
    false premise, a capability the host lacks (the value may be named, but not as what the
    customer asks for), a withheld slot, irrelevant context.
    """
    hidden = set(sample.hidden_slots)
    out: dict[str, set[str]] = {}
    for c in root_conditions:
        if c.slot not in hidden:
            out.setdefault(c.slot, set()).add(_norm(c.value))
    for m in sample.mask:
        if m.kind == "stated" and m.true_value is not None:
            out.setdefault(m.slot, set()).add(_norm(m.true_value))
        if m.kind in PLAIN_STATEMENTS and m.stated_value is not None:
            out.setdefault(m.slot, set()).add(_norm(m.stated_value))
    return out


def persona_card(log: EventLog, episode_id: str) -> PersonaCard:
    """The card of an episode a person plays as the user, built from the stored events."""
    header = log.header(episode_id)
    view = episode.user_view(log, episode_id, world_loader=lambda _b: world_for(log, episode_id))
    start = next((e for e in log.events(episode_id) if isinstance(e, EpisodeStarted)), None)
    stated: dict[str, set[str]] = {}
    if start is not None:
        root = start.graph.node(start.sample.root_intent_id)
        stated = request_values(start.sample, root.conditions)
    goal = tuple(
        GoalLine(
            slot=line.slot,
            label=line.label,
            phrase=line.phrase,
            in_request=_norm(line.value) in stated.get(line.slot, set()),
            told=line.disclosed,
        )
        for line in view.intent
    )
    facts = {str(k): str(v) for k, v in view.context.items()}
    when = header.created_at or datetime.now(UTC)
    return PersonaCard(
        name=customer_name(facts),
        age=age_on(facts, when.date()),
        persona=view.persona.name,
        manner=manner(view.persona),
        traits=tuple(view.persona.traits),
        facts=facts,
        goal=goal,
    )
