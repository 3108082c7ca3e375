"""Communication faults, masks and benchmark samples.

A *sample* is what an episode starts from: an intent graph, its root (the hidden intent), and the
faulty opening request the agent sees. The *mask* records, slot by slot, how the request treats
the truth; ``hidden_slots`` (stored once, canonically) lists every slot the request does not state
truthfully, including false-presupposition slots.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from core.model.base import Strict, content_hash
from core.model.intent import Condition, GroundTruth, WorldRef, drop_none_world

SAMPLE_SCHEMA_VERSION = 2
"""Schema version of samples: v2 added :attr:`Sample.world` (the world it was built on). v1
samples stay readable; how a sample without a world is resolved is documented in
:mod:`core.construction.worlds`."""

SampleSourceKind = Literal["bundled", "built", "release"]
"""Provenance of a sample: bundled with the project, built in a store, imported from a release."""


class FaultFamily(StrEnum):
    """The four families of communication faults."""

    INTENTION = "intention"
    PREMISE = "premise"
    PARAMETER = "parameter"
    EXPRESSION = "expression"


class FaultType(StrEnum):
    """The eleven communication fault types."""

    INDIRECT_INTENT = "indirect_intent"
    CONTEXTUAL_IRRELEVANCE = "contextual_irrelevance"
    FACTUAL_ERROR = "factual_error"
    FALSE_PRESUPPOSITION = "false_presupposition"
    TOOL_CAPABILITY_MISMATCH = "tool_capability_mismatch"
    INSUFFICIENT_INFORMATION = "insufficient_information"
    IRRELEVANT_INFORMATION = "irrelevant_information"
    LEXICAL_AMBIGUITY = "lexical_ambiguity"
    SYNTACTIC_AMBIGUITY = "syntactic_ambiguity"
    REFERENTIAL_AMBIGUITY = "referential_ambiguity"
    VAGUENESS_SUBJECTIVITY = "vagueness_subjectivity"


FAMILY_OF: dict[FaultType, FaultFamily] = {
    FaultType.INDIRECT_INTENT: FaultFamily.INTENTION,
    FaultType.CONTEXTUAL_IRRELEVANCE: FaultFamily.INTENTION,
    FaultType.FACTUAL_ERROR: FaultFamily.PREMISE,
    FaultType.FALSE_PRESUPPOSITION: FaultFamily.PREMISE,
    FaultType.TOOL_CAPABILITY_MISMATCH: FaultFamily.PREMISE,
    FaultType.INSUFFICIENT_INFORMATION: FaultFamily.PARAMETER,
    FaultType.IRRELEVANT_INFORMATION: FaultFamily.PARAMETER,
    FaultType.LEXICAL_AMBIGUITY: FaultFamily.EXPRESSION,
    FaultType.SYNTACTIC_AMBIGUITY: FaultFamily.EXPRESSION,
    FaultType.REFERENTIAL_AMBIGUITY: FaultFamily.EXPRESSION,
    FaultType.VAGUENESS_SUBJECTIVITY: FaultFamily.EXPRESSION,
}
"""Family of each fault type (DECISIONS.md)."""

MaskKind = Literal[
    "stated",  # stated truthfully
    "substituted",  # a wrong value stated (factual error)
    "presupposed",  # a false premise about this slot
    "withheld",  # not stated at all
    "marked",  # replaced by a vague / subjective marker
    "ambiguous",  # stated so that two readings exist, one of them the truth
    "extra",  # an irrelevant extra requirement the user does not hold
    "noise",  # irrelevant context that must not move the answer
    "capability",  # phrased as a request for a tool/capability the host lacks
]


class MaskEntry(Strict):
    """How the opening request treats one slot."""

    slot: str = Field(description="Slot name of the true condition (or the extra one).")
    kind: MaskKind = Field(description="Treatment of the slot in the request.")
    fault: FaultType | None = Field(default=None, description="Fault that caused it, if any.")
    true_value: str | int | float | bool | None = Field(
        default=None, description="The value the user really holds (None for extras/noise)."
    )
    stated_value: str | int | float | bool | None = Field(
        default=None, description="What the request literally says, if anything."
    )
    surface: str = Field(default="", description="The words in the request carrying it.")

    @property
    def hidden(self) -> bool:
        """Whether the request does not state this slot truthfully."""
        return self.kind in {
            "substituted",
            "presupposed",
            "withheld",
            "marked",
            "ambiguous",
            "capability",
        }


class VerifierRecord(Strict):
    """The three-step verifier's verdicts for one sample."""

    passed: bool = Field(description="Whether all three steps accepted the sample.")
    attempts: int = Field(default=1, description="Generation attempts spent.")
    extraction_agreed: bool = Field(default=True, description="Step 1 verdict.")
    strings_ok: bool = Field(default=True, description="Step 2 verdict.")
    admission: str = Field(default="", description="Step 3 verdict, e.g. 'moved 12->0'.")
    extractors: tuple[str, ...] = Field(default=(), description="Extractor specs used.")
    writer: str = Field(default="template", description="Writer spec used.")


class Sample(Strict):
    """A verified benchmark instance: a faulty opening request over an intent graph."""

    schema_version: int = SAMPLE_SCHEMA_VERSION
    sample_id: str = Field(description="Content hash; never reveals the fault type.")
    benchmark: str = Field(description="Benchmark id.")
    graph_id: str = Field(description="Intent graph this sample is built on.")
    env_id: str = Field(description="Environment within the host.")
    root_intent_id: str = Field(description="The hidden intent at episode start.")
    query: str = Field(description="The opening request: the only agent-visible field.")
    faults: tuple[FaultType, ...] = Field(description="Fault types carried (k = len).")
    mask: tuple[MaskEntry, ...] = Field(description="Per-slot treatment of the truth.")
    hidden_slots: tuple[str, ...] = Field(description="Slots not stated truthfully.")
    literal_readings: tuple[tuple[Condition, ...], ...] = Field(
        default=(), description="Condition sets a literal reader would extract."
    )
    root_ground_truth: GroundTruth | None = Field(default=None, description="Root GT.")
    verifier: VerifierRecord = Field(default_factory=lambda: VerifierRecord(passed=True))
    split: str = Field(default="test", description="Dataset split (learn / eval / test).")
    source: SampleSourceKind = Field(default="built", description="Where the sample came from.")
    source_id: str | None = Field(default=None, description="Original id (release imports).")
    world: WorldRef | None = Field(
        default=None, description="The world it was built on (None: a v1 sample)."
    )

    @model_serializer(mode="wrap")
    def _ser(self, handler: SerializerFunctionWrapHandler) -> Any:
        return drop_none_world(handler, self)

    @property
    def families(self) -> tuple[FaultFamily, ...]:
        """Families of the carried faults."""
        return tuple(FAMILY_OF[f] for f in self.faults)

    @staticmethod
    def make_id(graph_id: str, query: str, mask: tuple[MaskEntry, ...]) -> str:
        """Content-hash id over graph, query and mask (no fault-type label in clear)."""
        return content_hash({"graph": graph_id, "query": query, "mask": mask})
