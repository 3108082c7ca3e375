"""Building the agent of one episode from (method, agent spec) — symbolic, LLM or scripted."""

from __future__ import annotations

from core.agents.askbook import AskBook
from core.agents.base import Agent, EpisodeBinding
from core.agents.lessons import LessonBook
from core.agents.llm_agent import LLMAgent
from core.agents.methods import method_spec
from core.agents.symbolic import InformedSymbolicAgent, SymbolicAgent
from core.envs.base import HostWorld
from core.llm.types import ChatModel
from core.model.intent import Intent

SYMBOLIC_NOTE = (
    "symbolic policies are an offline approximation of the LLM methods: they act on the literal "
    "reading of the request and read the text of the user's replies (never a structured disclosure)"
)
"""The label every report of symbolic numbers carries."""


class InformedLLMAgent(LLMAgent):
    """RS skyline LLM agent: renders the user's current intent from the truth probe."""

    privileged = True

    def bind(self, ctx: EpisodeBinding) -> None:
        """Receive the driver's truth probe."""
        truth = ctx.truth
        if truth is None:
            return
        world = truth.world

        def feed() -> str:
            intent: Intent = truth.current_intent()
            return "\n".join(f"- {world.phrase(c)}" for c in intent.conditions)

        self.intent_feed = feed


def build_agent(
    method: str,
    *,
    world: HostWorld,
    literal: Intent,
    client: ChatModel | None = None,
    askbook: AskBook | None = None,
    lessons: LessonBook | None = None,
    costs: dict[str, float] | None = None,
) -> Agent:
    """Return the policy for ``method`` (symbolic when ``client`` is None, else LLM).

    Args:
        method: Method id.
        world: Host world of the episode.
        literal: Literal reading of the request (symbolic policies).
        client: Chat model for LLM policies.
        askbook: A3's symbolic book for its run unit.
        lessons: A3's LLM lesson book for its run unit.
        costs: Patience costs (symbolic planners).
    """
    spec = method_spec(method)
    if spec.scripted:
        from core.agents import make_agent

        return make_agent(spec.id)
    if client is None:
        cls = InformedSymbolicAgent if spec.informed else SymbolicAgent
        return cls(spec.id, world, literal, askbook=askbook, costs=costs)
    llm_cls = InformedLLMAgent if spec.informed else LLMAgent
    return llm_cls(spec.id, client, literal.benchmark, lessons=lessons)
