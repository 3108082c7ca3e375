"""The 4-family / 11-type fault taxonomy and how each type is realised.

Each fault type maps to one *mask kind* (how the opening request treats the target slot), one
*admission rule* (how the literal reading must move the executed answer) and a *diff class*
the extractors must report (the one-flaw contract: exactly that class is non-empty).
"""

from __future__ import annotations

import random
from typing import Literal, NamedTuple

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


# ------------------------------------------------------------------------------ glossary
class Gloss(NamedTuple):
    """A fault type in plain words: what it is and what it looks like."""

    title: str
    description: str
    example: str


FAMILY_GLOSSARY: dict[FaultFamily, str] = {
    FaultFamily.INTENTION: "What the customer wants is buried or never asked for outright.",
    FaultFamily.PREMISE: "The request rests on something untrue about the goal, the stock or the "
    "service.",
    FaultFamily.PARAMETER: "A requirement is missing, or one the customer does not hold is added.",
    FaultFamily.EXPRESSION: "A requirement is worded so that its exact value is unclear.",
}
"""Each fault family in one plain sentence."""

GLOSSARY: dict[FaultType, Gloss] = {
    FaultType.INDIRECT_INTENT: Gloss(
        "Indirect intent",
        "The customer describes their situation but never actually asks for anything; the "
        "helper has to infer the request.",
        "“My sister says the grey hoodie I got runs small, and winter is coming…” "
        "(never: “please exchange it for a large”).",
    ),
    FaultType.CONTEXTUAL_IRRELEVANCE: Gloss(
        "Contextual irrelevance",
        "A long off-topic passage surrounds a request that is itself complete; the extra story "
        "must not change the answer.",
        "Three sentences about last weekend's concert, then: “Anyway, I need a one-way "
        "flight from JFK to SEA on May 18.”",
    ),
    FaultType.FACTUAL_ERROR: Gloss(
        "Factual error",
        "One requirement is stated with a plausible but wrong value — close to what the "
        "customer really wants.",
        "“Pay with my Visa ending in 4318” when the card they mean ends in 4381.",
    ),
    FaultType.FALSE_PRESUPPOSITION: Gloss(
        "False presupposition",
        "The request takes something false for granted, usually in a side clause, and builds "
        "on it.",
        "“Since the blue one is sold out, I'll settle for black” — the blue one is in stock.",
    ),
    FaultType.TOOL_CAPABILITY_MISMATCH: Gloss(
        "Tool capability mismatch",
        "The customer asks for a service or tool the desk does not have, instead of the action "
        "it does offer.",
        "“Use your instant-refund service to swap these items” — the desk can only modify or "
        "exchange them.",
    ),
    FaultType.INSUFFICIENT_INFORMATION: Gloss(
        "Insufficient information",
        "A requirement the task needs is simply left out.",
        "“Book me a flight to Seattle on the 18th” — the cabin class is never said.",
    ),
    FaultType.IRRELEVANT_INFORMATION: Gloss(
        "Irrelevant information",
        "An extra, concrete requirement is added that the customer does not actually need; "
        "honouring it narrows the choice wrongly.",
        "“…and it must be machine-washable” about a mug that never needed to be.",
    ),
    FaultType.LEXICAL_AMBIGUITY: Gloss(
        "Lexical ambiguity",
        "One requirement is named only by a word with two meanings.",
        "“A light jacket” — light in weight, or light in colour?",
    ),
    FaultType.SYNTACTIC_AMBIGUITY: Gloss(
        "Syntactic ambiguity",
        "A phrase could attach to more than one thing in the sentence, so it is unclear what "
        "it describes.",
        "“A water bottle along with my kitchen table, in 40 oz” — is 40 oz the bottle or "
        "the table?",
    ),
    FaultType.REFERENTIAL_AMBIGUITY: Gloss(
        "Referential ambiguity",
        "A requirement is pointed at (“that one”, “the usual”, “same as last time”) instead "
        "of being said.",
        "“Send it to the usual address” when the customer has two addresses on file.",
    ),
    FaultType.VAGUENESS_SUBJECTIVITY: Gloss(
        "Vagueness / subjectivity",
        "A requirement is described only by taste or degree (“good”, “reasonable”, “the "
        "best”), with no exact value.",
        "“A reasonably priced coffee grinder” — is that under $30 or under $80?",
    ),
}
"""Every fault type in plain words with a short example (the one place this text lives)."""
