"""Check a host world against the world contract, the way Gymnasium's ``check_env`` checks an env.

:func:`check_world` exercises every hook of :class:`~core.envs.base.WorldBase` on the world's
own seeds and returns what is wrong as a list of :class:`Problem` (empty = the world passes):

* the contract's surface: the world inherits :class:`~core.envs.base.WorldBase`, names its
  benchmark and content id, lists uniquely named tools, and has seeds;
* every sampled seed executes to a ground truth, compiles to a plan of known tools (the
  oracle's), and that golden plan, played in a fresh session, is accepted by ``judge`` under
  the default protocol config;
* an empty proposal and a perturbed one (another seed's golden plan, whose ground truth
  differs) are rejected, and the world says what is unmet in plain words;
* the lexicons cover every slot (a label, cues or value phrases, the slot id kept) and every
  context fact, and every hook returns its declared type;
* what the simulated user may say hides what it must: a slot's label never names its value
  and a rejection's problem text never recites a requirement's value.

Every hook call is guarded: a hook that raises is a problem naming the hook, never a crash.
``tests/core/envs/test_check.py`` runs it over every registered world and over deliberately
broken worlds; ``driftbench import … --check`` runs it on an imported world.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from core.envs.base import CatalogueWords, EnvSession, HostWorld, WorldBase
from core.envs.requirement_lexicon import ActionLexicon, SlotLexicon
from core.envs.requirement_lexicon import Problem as UnmetProblem
from core.model.cache import LockedLRU
from core.model.config import ProtocolConfig
from core.model.intent import Condition, GroundTruth, Intent
from core.model.world import EnvAction, Observation, ToolSpec, Verdict

CODES: dict[str, str] = {
    "not-a-worldbase": "the world does not inherit WorldBase (its hooks have no defaults)",
    "no-identity": "benchmark or world_id is empty",
    "bad-tools": "tools() is empty, not ToolSpecs, or names a tool twice",
    "no-seeds": "seeds() returns no intents",
    "hook-raised": "a hook raised an exception",
    "hook-type": "a hook returned a value of the wrong type",
    "not-executable": "a seed does not execute to a ground truth",
    "no-plan": "compile_intent gives no plan for a seed (the oracle cannot act)",
    "unknown-tool": "a compiled plan calls a tool the world does not list",
    "golden-failed": "a step of a seed's golden plan failed",
    "golden-rejected": "judge rejects a seed's own golden plan",
    "empty-accepted": "judge accepts a session in which nothing was done",
    "perturbed-accepted": "judge accepts another seed's golden plan for a seed",
    "no-unmet": "a rejected proposal gets no plain-word description of what is unmet",
    "lexicon-gap": "a slot's lexicon has no label, cues or phrases, or a lexicon lost its key",
    "label-reveals": "a slot's label names the slot's value",
    "problem-reveals": "a rejection's problem text recites a requirement's value",
}
"""Every problem code :func:`check_world` can report, with what it means."""

DEFAULT_SEEDS = 6
"""Seeds checked by default (spread over the world's seeds)."""

T = TypeVar("T")


@dataclass(frozen=True)
class Problem:
    """One way a world breaks the contract.

    Attributes:
        code: One of :data:`CODES`.
        hook: The method or attribute that shows it.
        detail: What was seen (the intent id, the value returned, the exception).
    """

    code: str
    hook: str
    detail: str

    def __str__(self) -> str:
        return f"{self.code} [{self.hook}]: {self.detail}"


class _Checker:
    """Collects problems while calling hooks (one per world check)."""

    def __init__(self, world: HostWorld) -> None:
        self.world = world
        self.problems: list[Problem] = []

    def add(self, code: str, hook: str, detail: str) -> None:
        self.problems.append(Problem(code=code, hook=hook, detail=detail))

    def call(self, hook: str, fn: Callable[[], T], want: type | tuple[type, ...]) -> T | None:
        """``fn()``; a raise or a value not of type ``want`` is a problem and gives None."""
        try:
            got = fn()
        except Exception as exc:  # noqa: BLE001 - any failure of a hook is a finding
            self.add("hook-raised", hook, f"{type(exc).__name__}: {exc}")
            return None
        if not isinstance(got, want):
            self.add("hook-type", hook, f"returned {type(got).__name__}")
            return None
        return got


def check_world(world: HostWorld, *, seeds: int = DEFAULT_SEEDS) -> list[Problem]:
    """Exercise every hook of ``world`` on its own seeds; return what breaks the contract.

    Args:
        world: A loaded host world.
        seeds: How many of its seeds to exercise (spread evenly; 0 = every seed).

    Returns:
        The problems found, in the order found (empty when the world passes).
    """
    c = _Checker(world)
    if not isinstance(world, WorldBase):
        # without WorldBase a hook may be missing altogether: nothing further can be called
        c.add("not-a-worldbase", "class", type(world).__name__)
        return c.problems
    if not _text(world.benchmark) or not _text(world.world_id):
        c.add("no-identity", "benchmark/world_id", f"{world.benchmark!r} / {world.world_id!r}")
    tools = _check_tools(c)
    _check_world_hooks(c)
    all_seeds = c.call("seeds", world.seeds, list) or []
    if not all_seeds:
        c.add("no-seeds", "seeds", "no intents")
        return c.problems
    picked = _spread(all_seeds, seeds)
    plans: dict[str, tuple[GroundTruth, list[EnvAction]]] = {}
    for seed in picked:
        got = _check_golden(c, seed, tools)
        if got is not None:
            plans[seed.intent_id] = got
        _check_lexicons(c, seed)
    for seed in picked:
        _check_rejections(c, seed, plans)
    return c.problems


def _text(value: object) -> str:
    """``value`` when it is a string, else ``""`` (a missing identity)."""
    return value if isinstance(value, str) else ""


def _spread(items: Sequence[Intent], n: int) -> list[Intent]:
    if n <= 0 or n >= len(items):
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def _check_tools(c: _Checker) -> dict[str, ToolSpec]:
    tools = c.call("tools", lambda: list(c.world.tools()), list) or []
    names = [t.name for t in tools if isinstance(t, ToolSpec)]
    if not tools or len(names) != len(tools) or len(set(names)) != len(names):
        c.add("bad-tools", "tools", f"{len(tools)} tools, names {sorted(names)}")
    for t in tools:
        if isinstance(t, ToolSpec):
            action = EnvAction(tool=t.name, args={})
            c.call("is_mutating", partial(c.world.is_mutating, action), bool)
            c.call("is_proposal_action", partial(c.world.is_proposal_action, action), bool)
    return {t.name: t for t in tools if isinstance(t, ToolSpec)}


def _check_world_hooks(c: _Checker) -> None:
    w = c.world
    if not isinstance(w.max_observation_chars, int) or w.max_observation_chars <= 0:
        c.add("hook-type", "max_observation_chars", repr(w.max_observation_chars))
    if not isinstance(w.source, str):
        c.add("hook-type", "source", repr(w.source))
    fmt = c.call("final_answer_format", w.final_answer_format, str)
    if fmt is not None and not fmt.strip():
        c.add("hook-type", "final_answer_format", "empty note")
    fams = c.call("lexicon_families", w.lexicon_families, tuple) or ()
    for f in fams:
        if not isinstance(f, SlotLexicon):
            c.add("hook-type", "lexicon_families", f"holds a {type(f).__name__}")
    c.call("catalogue_words", w.catalogue_words, (CatalogueWords, type(None)))
    c.call("task_count", w.task_count, int)
    splits = c.call("task_splits", w.task_splits, dict) or {}
    if any(not isinstance(v, list) for v in splits.values()):
        c.add("hook-type", "task_splits", "a split is not a list of task ids")
    c.call("memo", lambda: w.memo("envs.check"), LockedLRU)


def _play(c: _Checker, plan: Sequence[EnvAction], hook: str, intent: Intent) -> EnvSession | None:
    """A fresh session with ``plan`` played; a failed step is reported under ``hook``."""
    session = c.call("open_session", c.world.open_session, object)
    if session is None:
        return None
    for action in plan:
        obs = c.call("act", partial(session.act, action), object)
        if obs is None:
            return None
        if hook and not (isinstance(obs, Observation) and obs.ok):
            c.add("golden-failed", hook, f"{intent.intent_id}: {action.tool} failed")
            return None
    return session


def _judge(c: _Checker, intent: Intent, session: EnvSession) -> Verdict | None:
    return c.call("judge", lambda: c.world.judge(intent, session, ProtocolConfig()), Verdict)


def _check_golden(
    c: _Checker, seed: Intent, tools: dict[str, ToolSpec]
) -> tuple[GroundTruth, list[EnvAction]] | None:
    gt = c.call("execute", lambda: c.world.execute(seed), GroundTruth)
    if gt is None:
        c.add("not-executable", "execute", seed.intent_id)
        return None
    plan = c.call("compile_intent", lambda: c.world.compile_intent(seed), list)
    if plan is None:
        return None
    if not plan:
        c.add("no-plan", "compile_intent", seed.intent_id)
        return None
    unknown = sorted({a.tool for a in plan if a.tool not in tools})
    if unknown:
        c.add("unknown-tool", "compile_intent", f"{seed.intent_id}: {unknown}")
        return None
    session = _play(c, plan, "compile_intent", seed)
    if session is None:
        return None
    verdict = _judge(c, seed, session)
    if verdict is not None and not verdict.accepted:
        c.add("golden-rejected", "judge", f"{seed.intent_id}: {verdict.reason}")
        return None
    return gt, plan


def _check_rejections(
    c: _Checker, seed: Intent, plans: dict[str, tuple[GroundTruth, list[EnvAction]]]
) -> None:
    empty = _play(c, [], "", seed)
    if empty is not None:
        verdict = _judge(c, seed, empty)
        if verdict is not None and verdict.accepted:
            c.add("empty-accepted", "judge", seed.intent_id)
    own = plans.get(seed.intent_id)
    if own is None:
        return
    other = next((p for i, p in plans.items() if i != seed.intent_id and p[0] != own[0]), None)
    if other is None:
        return
    session = _play(c, other[1], "", seed)
    if session is None:
        return
    verdict = _judge(c, seed, session)
    if verdict is None:
        return
    if verdict.accepted:
        c.add("perturbed-accepted", "judge", f"{seed.intent_id}: {verdict.reason}")
        return
    problems = c.call("unmet_problems", lambda: c.world.unmet_problems(seed, session), list)
    if not problems or not all(isinstance(p, UnmetProblem) and p.text for p in problems):
        c.add("no-unmet", "unmet_problems", f"{seed.intent_id}: {problems!r}")
        return
    values = _value_atoms(seed)
    for p in problems:
        leaked = [v for v in values if _names(p.text, v)]
        if leaked:
            c.add("problem-reveals", "unmet_problems", f"{seed.intent_id}: {p.text!r}")


def _check_lexicons(c: _Checker, seed: Intent) -> None:
    w = c.world
    for cond in seed.conditions:
        label = c.call("slot_label", partial(w.slot_label, cond), str)
        if label is not None and any(_names(label, v) for v in _atoms(cond)):
            c.add("label-reveals", "slot_label", f"{cond.slot}: {label!r}")
        c.call("slot_words", partial(w.slot_words, cond), set)
        c.call("phrase", partial(w.phrase, cond), str)
        lex = c.call("slot_lexicon", partial(w.slot_lexicon, cond), SlotLexicon)
        if lex is not None and (
            lex.slot != cond.slot or not lex.label.strip() or not (lex.cues or lex.values)
        ):
            c.add("lexicon-gap", "slot_lexicon", f"{seed.intent_id}: {cond.slot}")
    for key in sorted(seed.context):
        lex = c.call("context_lexicon", partial(w.context_lexicon, key), SlotLexicon)
        # a world may give a fact no cues on purpose (the shop's product type is no fact to
        # ask for), but never lose the key or its label
        if lex is not None and (lex.slot != key or not lex.label.strip()):
            c.add("lexicon-gap", "context_lexicon", f"{seed.intent_id}: {key}")
    c.call("context_facts", lambda: w.context_facts(seed), dict)
    c.call("context_of", lambda: w.context_of(seed), dict)
    c.call("action_lexicon", lambda: w.action_lexicon(seed), (ActionLexicon, type(None)))


def _atoms(cond: Condition) -> list[str]:
    """The text leaves of a condition's value worth hiding (≥ 4 characters, not a number)."""
    value = cond.value
    if not isinstance(value, str):
        return []
    try:
        decoded: object = json.loads(value)
    except ValueError:
        decoded = value
    out: list[str] = []

    def walk(x: object) -> None:
        if isinstance(x, str):
            s = x.strip().lower()
            if len(s) >= 4 and any(ch.isalpha() for ch in s):
                out.append(s)
        elif isinstance(x, list):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)

    walk(decoded)
    return out


def _value_atoms(intent: Intent) -> list[str]:
    return sorted({a for cond in intent.conditions for a in _atoms(cond)})


def _names(text: str, atom: str) -> bool:
    """Whether ``text`` contains ``atom`` as whole words."""
    return re.search(r"(?<![a-z0-9])" + re.escape(atom) + r"(?![a-z0-9])", text.lower()) is not None


def describe(problems: Sequence[Problem]) -> list[dict[str, str]]:
    """Problems as JSON-ready records (``code``, ``hook``, ``detail``, ``meaning``)."""
    return [
        {"code": p.code, "hook": p.hook, "detail": p.detail, "meaning": CODES.get(p.code, "")}
        for p in problems
    ]
