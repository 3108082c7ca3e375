"""The versioned protocol configuration.

Every default below is the value fixed by DECISIONS.md. Every episode header stores the full
config and its hash, so a run can always say exactly what it measured. Changing a default means
bumping :data:`PROTOCOL_VERSION`, never silently.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, Self

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from core.model.base import Strict, content_hash

PROTOCOL_VERSION = "proto-4"
"""Version of the default protocol configuration."""

OPERATORS = ("refine", "relax", "substitute", "pivot")
"""Shift categories, in canonical order."""

WEBSHOP_ACCEPT_THRESHOLD = 0.999
"""WebShop accepts a purchase whose reward reaches this (and whose price is within the cap)."""

_OMITTED_AT_DEFAULT = {"webshop_accept_threshold": WEBSHOP_ACCEPT_THRESHOLD}
"""Fields added after ``proto-1`` shipped: stored (and hashed) only when they differ from their
default, so every config written before them keeps its hash, its run ids and its bytes."""


class BenchmarkProtocol(Strict):
    """Per-benchmark protocol settings."""

    turn_cap: int = Field(ge=1, description="Agent actions before the forced final answer.")
    category_mix: dict[str, float] = Field(
        description="Shift category probabilities keyed refine/relax/substitute/pivot."
    )
    on_empty_category: Literal["resample", "skip"] = Field(
        default="resample", description="What to do when the drawn category has no edge."
    )

    @field_validator("category_mix")
    @classmethod
    def _mix(cls, v: dict[str, float]) -> dict[str, float]:
        for k, p in v.items():
            if k not in OPERATORS:
                raise ValueError(f"unknown shift category {k!r}")
            if p < 0:
                raise ValueError(f"negative probability for {k!r}")
        if not any(p > 0 for p in v.values()):
            raise ValueError("category mix has no positive probability")
        return {k: v[k] for k in OPERATORS if k in v}


_EQUAL = {"refine": 0.25, "relax": 0.25, "substitute": 0.25, "pivot": 0.25}


def _default_benchmarks() -> dict[str, BenchmarkProtocol]:
    return {
        "webshop": BenchmarkProtocol(
            turn_cap=40,
            category_mix={"refine": 0.25, "relax": 0.25, "substitute": 0.30, "pivot": 0.20},
        ),
        "tau2_retail": BenchmarkProtocol(turn_cap=30, category_mix=dict(_EQUAL)),
        "tau2_airline": BenchmarkProtocol(turn_cap=100, category_mix=dict(_EQUAL)),
        "mock": BenchmarkProtocol(turn_cap=20, category_mix=dict(_EQUAL)),
    }


class ProtocolConfig(Strict):
    """All protocol knobs (DECISIONS.md defaults)."""

    version: str = Field(default=PROTOCOL_VERSION, description="Config version string.")
    base_patience: float = Field(default=10.0, gt=0, description="Budget before the persona ×.")
    cost_question: float = Field(default=2.0, ge=0, description="A message to the user.")
    cost_rejected_proposal: float = Field(default=4.0, ge=0, description="A rejected proposal.")
    cost_malformed: float = Field(default=1.0, ge=0, description="A malformed action.")
    cost_env_action: float = Field(default=0.0, ge=0, description="An environment action.")
    cost_accepted_proposal: float = Field(default=0.0, ge=0, description="An accepted proposal.")
    shift_fire_prob: float = Field(
        default=0.6, ge=0, le=1, description="Fate probability that a crossed threshold fires."
    )
    shifts_enabled: bool = Field(default=True, description="Master switch for silent shifts.")
    suggestibility_enabled: bool = Field(default=True, description="Allow triggered shifts.")
    allow_revisit: bool = Field(default=False, description="May a shift return to a node.")
    benchmarks: dict[str, BenchmarkProtocol] = Field(default_factory=_default_benchmarks)
    default_turn_cap: int = Field(default=40, ge=1, description="Cap for unlisted benchmarks.")
    tau2_acceptance: Literal["actions", "exact_state"] = Field(
        default="actions", description="τ² acceptance: golden writes executed, or state hash."
    )
    webshop_accept_threshold: float = Field(
        default=WEBSHOP_ACCEPT_THRESHOLD,
        gt=0,
        le=1,
        description="WebShop acceptance: a purchase's reward must reach this.",
    )
    patience_visible: bool | None = Field(
        default=None,
        description="Force the meter on/off for agents; None = by method (A2, A3 show it).",
    )
    patience_methods: tuple[str, ...] = Field(
        default=("A2", "A3"), description="Methods that declare budget planning."
    )
    format_repairs: int = Field(default=1, ge=0, description="Forced-final format repairs.")
    voice_regenerations: int = Field(default=1, ge=0, description="LLM voice regenerations.")
    interpreter: str = Field(
        default="offline", min_length=1, description="How the user reads messages: offline | MODEL."
    )
    epsilon: float = Field(default=1e-9, gt=0, description="Float tolerance on patience.")

    def costs(self) -> dict[str, float]:
        """Patience cost of each chargeable action kind (for meters and planning agents)."""
        return {
            "question": self.cost_question,
            "rejected_proposal": self.cost_rejected_proposal,
            "malformed": self.cost_malformed,
            "env_action": self.cost_env_action,
        }

    @model_serializer(mode="wrap")
    def _omit_new_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        for name, default in _OMITTED_AT_DEFAULT.items():
            if name in out and out[name] == default:
                del out[name]
        return out

    @functools.cached_property
    def _hash(self) -> str:
        return content_hash(self.model_dump(mode="json"))

    def config_hash(self) -> str:
        """Return the content hash of the full config (stored in every episode header).

        Computed once per config object (the config is frozen; a sweep shares one).
        """
        return self._hash

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy (with ``update`` applied) that computes its own hash."""
        out = super().model_copy(update=update, deep=deep)
        out.__dict__.pop("_hash", None)
        return out

    def for_benchmark(self, benchmark: str) -> BenchmarkProtocol:
        """Return the settings of ``benchmark`` (equal mix and the default cap if unlisted)."""
        got = self.benchmarks.get(benchmark)
        if got is not None:
            return got
        return BenchmarkProtocol(turn_cap=self.default_turn_cap, category_mix=dict(_EQUAL))

    def shows_patience(self, method: str | None) -> bool:
        """Return whether an agent of ``method`` sees the patience meter."""
        if self.patience_visible is not None:
            return self.patience_visible
        return method is not None and method in self.patience_methods


DEFAULT_COSTS: Mapping[str, float] = MappingProxyType(ProtocolConfig().costs())
"""The patience costs of the default protocol config (what an agent plans with when its view
carries no meter): read from :class:`ProtocolConfig`, never written a second time."""
