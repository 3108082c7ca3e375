"""core.studio.glossary: every label choice in plain words, the text kept with the taxonomy."""

from __future__ import annotations

from core.faults.taxonomy import GLOSSARY
from core.model.sample import FAMILY_OF, FaultType
from core.model.shift import SHIFT_GLOSSARY, ShiftOperator
from core.studies.labels import FAULT_VALUES, SHIFT_VALUES
from core.studio.glossary import choice_title, fault_glossary, glossary, shift_glossary


def test_every_fault_type_has_a_description_and_an_example() -> None:
    assert set(GLOSSARY) == set(FaultType)
    entries = {g.value: g for g in fault_glossary()}
    assert set(entries) == set(FAULT_VALUES)  # every choice of the label vocabulary
    for t in FaultType:
        g = entries[t.value]
        assert g.title and g.title != t.value and "_" not in g.title
        assert len(g.description.split()) >= 6 and len(g.example.split()) >= 4
        assert g.group.startswith(FAMILY_OF[t].value.capitalize())
    titles = [g.title for g in entries.values()]
    assert len(set(titles)) == len(titles)


def test_every_shift_type_has_a_description_and_an_example() -> None:
    assert set(SHIFT_GLOSSARY) == set(ShiftOperator)
    entries = {g.value: g for g in shift_glossary()}
    assert set(entries) == set(SHIFT_VALUES)
    assert all(entries[o.value].example for o in ShiftOperator)


def test_choice_titles_read_as_words() -> None:
    assert choice_title("fault_type", "indirect_intent") == "Indirect intent"
    assert choice_title("fault_type", "none") == "No fault"
    assert choice_title("shift_type", "pivot") == "Pivot"
    assert choice_title("shift_type", "none") == "No shift"
    assert choice_title("realism", 4) == "4"
    assert glossary("realism") == []
