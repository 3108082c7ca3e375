"""Simulated-user personas.

A persona changes what the simulated user *says*, never what is *true*: it sets how many slots
an answer discloses, how often the user volunteers or declines, the patience multiplier, how
often a rejection names what is wrong, where silent shifts are placed on the patience axis and
how suggestible the user is. Persona files live in ``personas/`` (one YAML file per persona).
"""

from __future__ import annotations

from pydantic import Field, field_validator

from core.model.base import SCHEMA_VERSION, Strict


class Persona(Strict):
    """One simulated-user persona (parameters of DECISIONS.md plus voice style)."""

    schema_version: int = SCHEMA_VERSION
    id: str = Field(description="Persona id (the YAML file name without extension).")
    name: str = Field(description="Display name.")
    bio: str = Field(description="A short bio written for this project (shown to LLM voices).")
    slots_per_answer: int = Field(ge=1, le=8, description="Slots disclosed per answered question.")
    volunteer: float = Field(ge=0.0, le=1.0, description="Probability of volunteering a slot.")
    decline: float = Field(ge=0.0, le=1.0, description="Probability of declining a question.")
    patience_multiplier: float = Field(gt=0.0, le=10.0, description="Budget = base × this.")
    hint_on_rejection: float = Field(
        ge=0.0, le=1.0, description="Probability that a rejection reaction names what is wrong."
    )
    shift_placements: tuple[float, ...] = Field(
        description="Shift thresholds as fractions of the initial budget (each in (0, 1])."
    )
    suggestibility: float = Field(
        ge=0.0, le=1.0, description="Probability that an on-topic question triggers a shift."
    )
    voice: str = Field(
        default="",
        description="Voice style file under data/voices/ (defaults to the persona id).",
    )
    traits: tuple[str, ...] = Field(
        default=(), description="A few style words for voices (e.g. 'concise', 'warm')."
    )

    @field_validator("shift_placements")
    @classmethod
    def _placements(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        for p in v:
            if not 0.0 < p <= 1.0:
                raise ValueError(f"placement {p} must be in (0, 1]")
        return tuple(sorted(v, reverse=True))

    @property
    def voice_style(self) -> str:
        """The voice style file stem (``voice`` or the persona id)."""
        return self.voice or self.id

    def budget(self, base: float) -> float:
        """Return the initial patience budget for ``base`` (a float, never rounded)."""
        return base * self.patience_multiplier

    def thresholds(self, base: float) -> tuple[float, ...]:
        """Return the absolute shift thresholds, highest first."""
        b = self.budget(base)
        return tuple(p * b for p in self.shift_placements)
