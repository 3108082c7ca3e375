"""The 4-family / 11-type fault taxonomy and how each type is realised.

Each fault type maps to one *mask kind* (how the opening request treats the target slot), one
*admission rule* (how the literal reading must move the executed answer) and a *diff class*
the extractors must report (the one-flaw contract: exactly that class is non-empty).
"""

from __future__ import annotations

import random
from typing import Literal

from core.model.sample import FAMILY_OF, FaultFamily, FaultType, MaskKind

AdmissionRule = Literal["move", "shrink", "widen", "ambiguous", "unchanged"]
"""What executing the literal reading must do to the answer, relative to the truth."""

DiffClass = Literal[
    "substituted",
    "presupposed",
    "capability",
    "withheld",
    "extra",
    "marked",
    "ambiguous",
    "noise",
    "oblique",
]
"""Flaw classes an extractor reports (one per fault type)."""

DIFF_CLASSES: tuple[DiffClass, ...] = (
    "substituted",
    "presupposed",
    "capability",
    "withheld",
    "extra",
    "marked",
    "ambiguous",
    "noise",
    "oblique",
)

MASK_KIND: dict[FaultType, MaskKind] = {
    FaultType.INDIRECT_INTENT: "noise",
    FaultType.CONTEXTUAL_IRRELEVANCE: "noise",
    FaultType.FACTUAL_ERROR: "substituted",
    FaultType.FALSE_PRESUPPOSITION: "presupposed",
    FaultType.TOOL_CAPABILITY_MISMATCH: "capability",
    FaultType.INSUFFICIENT_INFORMATION: "withheld",
    FaultType.IRRELEVANT_INFORMATION: "extra",
    FaultType.LEXICAL_AMBIGUITY: "ambiguous",
    FaultType.SYNTACTIC_AMBIGUITY: "ambiguous",
    FaultType.REFERENTIAL_AMBIGUITY: "marked",
    FaultType.VAGUENESS_SUBJECTIVITY: "marked",
}
"""Mask kind of the entry a fault type writes for its target."""

FAULT_OF_KIND: dict[str, FaultType] = {
    kind: fault for fault, kind in MASK_KIND.items() if list(MASK_KIND.values()).count(kind) == 1
}
"""The fault type a mask kind implies, for the kinds exactly one fault type writes."""

GLOSS: dict[FaultType, str] = {
    FaultType.INDIRECT_INTENT: "the goal is only implied, never stated",
    FaultType.CONTEXTUAL_IRRELEVANCE: "the request is buried in unrelated conversation",
    FaultType.FACTUAL_ERROR: "the user states a wrong value (later corrected or contradicted)",
    FaultType.FALSE_PRESUPPOSITION: "the request assumes something untrue",
    FaultType.TOOL_CAPABILITY_MISMATCH: "asks for a tool or capability the agent lacks",
    FaultType.INSUFFICIENT_INFORMATION: "required details are missing",
    FaultType.IRRELEVANT_INFORMATION: "extra details that do not matter to the task",
    FaultType.LEXICAL_AMBIGUITY: "a word with two meanings",
    FaultType.SYNTACTIC_AMBIGUITY: "a phrase that attaches two ways",
    FaultType.REFERENTIAL_AMBIGUITY: "'that one', 'the usual': unclear what is referred to",
    FaultType.VAGUENESS_SUBJECTIVITY: "subjective or vague wording ('nice', 'not too pricey')",
}
"""Each fault type in plain words (what a judge or an annotator is told it means)."""

DIFF_CLASS: dict[FaultType, DiffClass] = {
    FaultType.INDIRECT_INTENT: "oblique",
    FaultType.CONTEXTUAL_IRRELEVANCE: "noise",
    FaultType.FACTUAL_ERROR: "substituted",
    FaultType.FALSE_PRESUPPOSITION: "presupposed",
    FaultType.TOOL_CAPABILITY_MISMATCH: "capability",
    FaultType.INSUFFICIENT_INFORMATION: "withheld",
    FaultType.IRRELEVANT_INFORMATION: "extra",
    FaultType.LEXICAL_AMBIGUITY: "ambiguous",
    FaultType.SYNTACTIC_AMBIGUITY: "ambiguous",
    FaultType.REFERENTIAL_AMBIGUITY: "marked",
    FaultType.VAGUENESS_SUBJECTIVITY: "marked",
}
"""Diff class an extractor must find (and nothing else) for each fault type."""

ADMISSION_RULE: dict[MaskKind, AdmissionRule] = {
    "substituted": "move",
    "presupposed": "move",
    "capability": "move",
    "extra": "shrink",
    "withheld": "widen",
    "marked": "widen",
    "ambiguous": "ambiguous",
    "noise": "unchanged",
}
"""Executable admission rule per mask kind (DECISIONS.md, three-step verifier step 3)."""

FAMILY_OF_CLASS: dict[DiffClass, FaultFamily] = {
    "substituted": FaultFamily.PREMISE,
    "presupposed": FaultFamily.PREMISE,
    "capability": FaultFamily.PREMISE,
    "withheld": FaultFamily.PARAMETER,
    "extra": FaultFamily.PARAMETER,
    "marked": FaultFamily.EXPRESSION,
    "ambiguous": FaultFamily.EXPRESSION,
    "noise": FaultFamily.INTENTION,
    "oblique": FaultFamily.INTENTION,
}
"""The family a reported diff class belongs to (used to compare extractions)."""

TARGETED: frozenset[FaultType] = frozenset(
    {
        FaultType.FACTUAL_ERROR,
        FaultType.FALSE_PRESUPPOSITION,
        FaultType.TOOL_CAPABILITY_MISMATCH,
        FaultType.INSUFFICIENT_INFORMATION,
        FaultType.LEXICAL_AMBIGUITY,
        FaultType.SYNTACTIC_AMBIGUITY,
        FaultType.REFERENTIAL_AMBIGUITY,
        FaultType.VAGUENESS_SUBJECTIVITY,
    }
)
"""Fault types that act on one true slot (the others add text or change the frame)."""

UNBOUND: frozenset[FaultType] = frozenset(
    {
        FaultType.LEXICAL_AMBIGUITY,
        FaultType.SYNTACTIC_AMBIGUITY,
        FaultType.REFERENTIAL_AMBIGUITY,
        FaultType.VAGUENESS_SUBJECTIVITY,
    }
)
"""The expression types that leave one slot without its exact value (at most one per composite)."""

REPEATABLE: frozenset[FaultType] = frozenset(
    {
        FaultType.FACTUAL_ERROR,
        FaultType.IRRELEVANT_INFORMATION,
        FaultType.INSUFFICIENT_INFORMATION,
    }
)
"""Types a composite may repeat (up to three times) when the pool is smaller than k."""

FAMILY_TYPES: dict[FaultFamily, tuple[FaultType, ...]] = {
    fam: tuple(t for t in FaultType if FAMILY_OF[t] is fam) for fam in FaultFamily
}
"""Fault types of each family, in taxonomy order."""


def draw_single(rng: random.Random, allowed: set[FaultType]) -> FaultType | None:
    """Draw one fault type: family uniformly among families with an allowed type, then a type.

    Args:
        rng: The random stream.
        allowed: Types that are applicable here.

    Returns:
        The drawn type, or None when nothing is allowed.
    """
    families = [f for f in FaultFamily if any(t in allowed for t in FAMILY_TYPES[f])]
    if not families:
        return None
    fam = rng.choice(families)
    return rng.choice([t for t in FAMILY_TYPES[fam] if t in allowed])
