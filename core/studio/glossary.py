"""Plain words for every label an annotator chooses: the fault glossary and the shift types.

The text lives with the taxonomy (:data:`core.faults.taxonomy.GLOSSARY`,
:data:`core.model.shift.SHIFT_GLOSSARY`); this module only shapes it for the pages: a title per
choice (``indirect_intent`` → ``Indirect intent``) for pickers and tables, and a glossary —
description and example for each choice, grouped by fault family — for the Annotate page, the
Construction page and anywhere else a fault type is named.
"""

from __future__ import annotations

from core.faults.taxonomy import FAMILY_GLOSSARY, FAMILY_TYPES, GLOSSARY
from core.model.base import Strict
from core.model.sample import FaultType
from core.model.shift import SHIFT_GLOSSARY, ShiftOperator

NONE = "none"
"""The "no fault / no shift" choice of the label vocabularies."""


class GlossEntry(Strict):
    """One choice of a label in plain words."""

    value: str
    title: str
    group: str = ""
    description: str
    example: str = ""


def fault_title(value: str) -> str:
    """``indirect_intent`` → ``Indirect intent`` (an unknown value becomes words)."""
    try:
        return GLOSSARY[FaultType(value)].title
    except ValueError:
        return "No fault" if value == NONE else value.replace("_", " ").capitalize()


def fault_glossary() -> list[GlossEntry]:
    """The 11 fault types by family, each with its description and an example, then "none"."""
    out = [
        GlossEntry(
            value=t.value,
            title=GLOSSARY[t].title,
            group=f"{fam.value.capitalize()} — {FAMILY_GLOSSARY[fam]}",
            description=GLOSSARY[t].description,
            example=GLOSSARY[t].example,
        )
        for fam, types in FAMILY_TYPES.items()
        for t in types
    ]
    out.append(
        GlossEntry(
            value=NONE,
            title="No fault",
            description="The request says plainly and correctly everything the task needs.",
        )
    )
    return out


def shift_glossary() -> list[GlossEntry]:
    """The four shift operators, each with its description and an example, then "none"."""
    out = [
        GlossEntry(value=op.value, title=op.value.capitalize(), description=d, example=e)
        for op, (d, e) in SHIFT_GLOSSARY.items()
    ]
    out.append(GlossEntry(value=NONE, title="No shift", description="The goal never changes."))
    return out


def choice_title(kind: str, value: object) -> str:
    """How a label choice reads in a picker: ``Indirect intent`` for ``indirect_intent``."""
    text = str(value)
    if kind == "fault_type":
        return fault_title(text)
    if kind == "shift_type":
        try:
            return ShiftOperator(text).value.capitalize()
        except ValueError:
            return "No shift" if text == NONE else text
    return text


def glossary(kind: str) -> list[GlossEntry]:
    """The glossary of a label kind (empty for kinds whose choices need no words)."""
    if kind == "fault_type":
        return fault_glossary()
    if kind == "shift_type":
        return shift_glossary()
    return []
