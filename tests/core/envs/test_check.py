"""``check_world``: every registered world passes; each deliberately broken world is named."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from core.envs.base import EnvSession
from core.envs.check import CODES, Problem, check_world, describe
from core.envs.mock.world import MockWorld
from core.envs.registry import BENCHMARKS, load_world
from core.envs.requirement_lexicon import Problem as UnmetProblem
from core.envs.requirement_lexicon import SlotLexicon
from core.errors import ConfigError
from core.model.config import ProtocolConfig
from core.model.intent import Condition, GroundTruth, Intent
from core.model.world import EnvAction, ToolSpec, Verdict


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_every_registered_world_passes(benchmark: str) -> None:
    problems = check_world(load_world(benchmark))
    assert problems == [], [str(p) for p in problems]


def test_every_seed_of_the_small_worlds_passes() -> None:
    for benchmark in ("mock", "tau2_retail", "tau2_airline"):
        assert check_world(load_world(benchmark), seeds=0) == []


# ------------------------------------------------------------------ deliberately broken worlds
def _broken(**overrides: Any) -> MockWorld:
    """A mock world whose named members are replaced (functions get ``self``)."""
    cls = type("BrokenWorld", (MockWorld,), overrides)
    world = cls()
    assert isinstance(world, MockWorld)
    return world


def _raise(exc: Exception) -> Callable[..., Any]:
    def fn(*_a: Any, **_k: Any) -> Any:
        raise exc

    return fn


class NotAWorldBase:
    """Has the required methods but inherits no defaults."""

    benchmark = "mock"
    world_id = "x"

    def __init__(self) -> None:
        self._inner = MockWorld()

    def tools(self) -> Any:
        return self._inner.tools()

    def seeds(self) -> list[Intent]:
        return self._inner.seeds()


def _reject_all(self: MockWorld, intent: Intent, session: EnvSession, config: Any) -> Verdict:
    return Verdict(accepted=False, reason="never")


def _accept_all(self: MockWorld, intent: Intent, session: EnvSession, config: Any) -> Verdict:
    return Verdict(accepted=True, reason="always")


def _large_unexecutable(self: MockWorld, intent: Intent) -> GroundTruth:
    if intent.slot_map()["size"].value == "large":
        raise ConfigError("cannot execute")
    return MockWorld.execute(self, intent)


def _anonymous(self: MockWorld) -> None:
    MockWorld.__init__(self)
    self.world_id = ""


def _labels_with_value(self: MockWorld, c: Condition) -> str:
    return f"{c.slot} {c.value}"


def _empty_label(self: MockWorld, c: Condition) -> SlotLexicon:
    return SlotLexicon(slot=c.slot, label="", family=c.slot, cues=())


def _recites(self: MockWorld, intent: Intent, session: EnvSession) -> list[UnmetProblem]:
    return [UnmetProblem(slots=("color",), text=f"it has to be {intent.conditions[0].value}")]


BREAKAGES: dict[str, Callable[[], Any]] = {
    "not-a-worldbase": NotAWorldBase,
    "no-identity": lambda: _broken(__init__=_anonymous),
    "bad-tools": lambda: _broken(
        tools=lambda self: [*MockWorld.tools(self), MockWorld.tools(self)[0]]
    ),
    "no-seeds": lambda: _broken(seeds=lambda self: []),
    "hook-raised": lambda: _broken(phrase=_raise(RuntimeError("boom"))),
    "hook-type": lambda: _broken(final_answer_format=lambda self: 42),
    "not-executable": lambda: _broken(
        execute=_large_unexecutable, seeds=lambda self: MockWorld().seeds()
    ),
    "no-plan": lambda: _broken(compile_intent=lambda self, i: []),
    "unknown-tool": lambda: _broken(
        compile_intent=lambda self, i: [EnvAction(tool="teleport", args={})]
    ),
    "golden-failed": lambda: _broken(
        compile_intent=lambda self, i: [EnvAction(tool="buy", args={"item_id": "nope"})]
    ),
    "golden-rejected": lambda: _broken(judge=_reject_all),
    "empty-accepted": lambda: _broken(judge=_accept_all),
    "perturbed-accepted": lambda: _broken(judge=_accept_all),
    "no-unmet": lambda: _broken(unmet_problems=lambda self, i, s: None),
    "lexicon-gap": lambda: _broken(slot_lexicon=_empty_label),
    "label-reveals": lambda: _broken(slot_label=_labels_with_value),
    "problem-reveals": lambda: _broken(unmet_problems=_recites),
}


def test_every_problem_code_has_a_broken_world() -> None:
    assert set(BREAKAGES) == set(CODES)


@pytest.mark.parametrize("code", sorted(BREAKAGES))
def test_a_broken_world_fails_with_the_problem_named(code: str) -> None:
    problems = check_world(BREAKAGES[code]())
    assert problems, f"{code}: a broken world passed"
    assert code in {p.code for p in problems}, [str(p) for p in problems]
    for p in problems:
        assert isinstance(p, Problem) and p.hook and p.detail and str(p).startswith(p.code)


def test_a_raising_hook_is_a_problem_not_a_crash() -> None:
    world = _broken(slot_label=_raise(KeyError("slot")), judge=_raise(ValueError("x")))
    problems = check_world(world)
    raised = {p.hook for p in problems if p.code == "hook-raised"}
    assert {"slot_label", "judge"} <= raised


def test_the_unbroken_mock_world_passes_and_problems_describe_themselves() -> None:
    assert check_world(MockWorld()) == []
    rows = describe([Problem(code="no-plan", hook="compile_intent", detail="x")])
    assert rows == [
        {"code": "no-plan", "hook": "compile_intent", "detail": "x", "meaning": CODES["no-plan"]}
    ]


def test_a_world_in_one_module_written_from_the_docs_passes() -> None:
    """The WORLDS.md recipe: subclass WorldBase, implement six methods, inherit the rest."""
    from core.envs.base import WorldBase
    from core.model.world import Observation

    class Lamp(WorldBase):
        benchmark = "lamp"
        world_id = "lamp-1"

        def tools(self) -> list[ToolSpec]:
            return [ToolSpec(name="set", description="Set the lamp.", kind="write")]

        def open_session(self) -> EnvSession:
            class S:
                def __init__(self) -> None:
                    self.state: dict[str, Any] | None = None

                def act(self, action: EnvAction) -> Observation:
                    self.state = dict(action.args)
                    return Observation(ok=True, text="done")

                def proposal(self) -> dict[str, Any] | None:
                    return self.state

            return S()

        def seeds(self) -> list[Intent]:
            return [
                Intent.build(
                    benchmark="lamp",
                    env_id="room",
                    base="lamp",
                    conditions=(Condition(slot="color", value=c),),
                )
                for c in ("amber", "violet")
            ]

        def execute(self, intent: Intent) -> GroundTruth:
            return GroundTruth(kind="scalar", value=[str(intent.conditions[0].value)])

        def judge(self, intent: Intent, session: EnvSession, config: Any) -> Verdict:
            got = (session.proposal() or {}).get("color")
            ok = got == intent.conditions[0].value
            return Verdict(accepted=ok, reason="match" if ok else "wrong")

        def phrase(self, condition: Condition) -> str:
            return f"make it {condition.value}"

        def compile_intent(self, intent: Intent) -> list[EnvAction]:
            return [EnvAction(tool="set", args={"color": intent.conditions[0].value})]

        def unmet_slots(self, intent: Intent, session: EnvSession) -> list[str] | None:
            return ["color"]

    lamp = Lamp()
    assert check_world(lamp) == []
    assert lamp.judge(lamp.seeds()[0], lamp.open_session(), ProtocolConfig()).accepted is False
