"""Typed τ²-bench tasks (``tasks.json``): user scenario, initial state and evaluation criteria."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Description(_M):
    """What a task tests (free text, all optional)."""

    purpose: str | None = None
    relevant_policies: str | None = None
    notes: str | None = None
    info: str | None = None


class StructuredInstructions(_M):
    """The simulated customer's instructions."""

    domain: str
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str


class UserScenario(_M):
    """Persona plus instructions (structured, or one free-text string)."""

    persona: str | None = None
    instructions: StructuredInstructions | str


class Action(_M):
    """One golden action (a tool call)."""

    action_id: str
    requestor: Literal["assistant", "user"] = "assistant"
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    info: str | None = None
    compare_args: list[str] | None = None


class EnvFunctionCall(_M):
    """A function call run to set up the initial state."""

    env_type: Literal["assistant", "user"] = "assistant"
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class InitializationData(_M):
    """Partial records merged into the databases before the episode."""

    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


class InitialState(_M):
    """τ²-bench's optional initial state of a task."""

    initialization_data: InitializationData | None = None
    initialization_actions: list[EnvFunctionCall] | None = None
    message_history: list[dict[str, Any]] | None = None


RewardType = Literal["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]


def _default_basis() -> list[RewardType]:
    return ["DB", "COMMUNICATE"]


class EvaluationCriteria(_M):
    """How a task is graded."""

    actions: list[Action] | None = None
    env_assertions: list[dict[str, Any]] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[RewardType] = Field(default_factory=_default_basis)


class Task(_M):
    """A τ²-bench task."""

    id: str
    description: Description | None = None
    user_scenario: UserScenario
    ticket: str | None = None
    initial_state: InitialState | None = None
    evaluation_criteria: EvaluationCriteria | None = None
    annotations: Any = None
    issues: list[dict[str, Any]] | None = None

    @property
    def actions(self) -> list[Action]:
        """Golden actions (empty when the task has none)."""
        ec = self.evaluation_criteria
        return list(ec.actions or []) if ec else []

    @property
    def communicate_info(self) -> list[str]:
        """Strings the agent must say."""
        ec = self.evaluation_criteria
        return list(ec.communicate_info or []) if ec else []

    @property
    def reward_basis(self) -> list[RewardType]:
        """Reward components multiplied into the final reward."""
        ec = self.evaluation_criteria
        return list(ec.reward_basis) if ec else ["DB", "COMMUNICATE"]
