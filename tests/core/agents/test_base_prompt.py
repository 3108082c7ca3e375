"""Ruling: the shared base prompt is strategy-free; the premise sentence is an explicit option.

The paper's base tells no method how to treat the request: the sentence "The request may be
unclear, mistaken or incomplete, and the person may change their mind without saying so" is
left out by default and added only under ``--base-prompt premise`` (recorded in the run id).
"""

from __future__ import annotations

import pytest

from core.agents.llm_agent import LLMAgent
from core.agents.methods import method_spec
from core.agents.prompts import load_prompt, system_prompt
from core.envs.mock import load_mock_world
from core.llm import ScriptedLLM
from core.model.episode import AgentView
from core.model.run import RunSpec

STRATEGY_WORDS = (
    "change their mind",
    "without saying so",
    "may be unclear",
    "mistaken",
    "incomplete",
    "clarif",
    "patience",
    "ask ",
)
LADDER = ("B0", "A0", "A1", "A2", "A3", "L0", "RS", "LIT")


def _base(method: str, **kw: str) -> str:
    """The system prompt without the method's own guidance (the shared part)."""
    w = load_mock_world()
    full = system_prompt(method_spec(method), "mock", w.tools(), **kw)
    return full.split("Method guidance")[0]


@pytest.mark.parametrize("method", LADDER)
def test_default_base_is_strategy_free_for_every_method(method: str) -> None:
    base = _base(method).lower()
    fmt = load_prompt("format" if method_spec(method).can_ask else "format_noask").lower()
    shared = base.replace(fmt, "")  # the wire format may name the Clarify action
    for word in STRATEGY_WORDS:
        assert word not in shared, (method, word)


def test_premise_is_an_explicit_option() -> None:
    sentence = " ".join(load_prompt("base_premise").split())
    assert "change their mind without saying so" in sentence
    for method in ("B0", "A2"):
        assert sentence not in _base(method)
        assert sentence not in _base(method, base_prompt="strategy-free")
        assert sentence in _base(method, base_prompt="premise")
    with pytest.raises(Exception, match="unknown base prompt"):
        _base("B0", base_prompt="chatty")


def test_premise_option_is_part_of_the_run_identity_and_reaches_the_agent() -> None:
    spec = RunSpec(benchmarks=("mock",), methods=("A0",), personas=("rational",))
    premise = spec.model_copy(update={"base_prompt": "premise"})
    assert "base_prompt" not in spec.identity()  # old run ids are unchanged
    assert premise.identity()["base_prompt"] == "premise"
    assert premise.run_id() != spec.run_id()
    agent = LLMAgent("A0", ScriptedLLM(["x"]), "mock")
    w = load_mock_world()
    view = AgentView(
        episode_id="e",
        benchmark="mock",
        query="hello",
        tools=tuple(w.tools()),
        turn=0,
        turns_left=5,
    )
    sentence = " ".join(load_prompt("base_premise").split())
    assert sentence not in agent.messages(view)[0]["content"]
    agent.base_prompt = "premise"
    assert sentence in agent.messages(view)[0]["content"]
