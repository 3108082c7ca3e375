"""The τ² host world (``tau2_retail`` / ``tau2_airline``) and its copy-on-write sessions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.envs.base import EnvSession, WorldBase
from core.envs.requirement_lexicon import ActionLexicon, Problem, SlotLexicon
from core.envs.tau2.db import BaseDB, OverlayState, clone
from core.envs.tau2.loader import (
    base_for_path,
    base_for_payload,
    check_domain,
    parse_split,
    parse_tasks,
    read_json_file,
)
from core.envs.tau2.schema import COLLECTIONS, typed
from core.envs.tau2.tasks import Task
from core.envs.tau2.toolkit import Toolkit, render
from core.errors import ConfigError
from core.model.base import content_hash
from core.model.config import ProtocolConfig
from core.model.intent import Condition, GroundTruth, Intent
from core.model.world import EnvAction, Observation, ToolSpec, Verdict
from core.paths import DATA_DIR


@dataclass(frozen=True)
class CallRecord:
    """One tool call made in a session."""

    tool: str
    args: dict[str, Any]
    kind: str
    ok: bool
    text: str


class Tau2Session:
    """A per-episode, copy-on-write view of a τ² world. Implements ``EnvSession``."""

    def __init__(self, world: Tau2World, task: Task | None = None):
        self.world = world
        self.state = OverlayState(world.base)
        self.toolkit: Toolkit = world.toolkit_cls(self.state)
        self.history: list[CallRecord] = []
        if task is not None and task.initial_state is not None:
            self._initialise(task)

    def _initialise(self, task: Task) -> None:
        init = task.initial_state
        assert init is not None
        data = init.initialization_data
        if data is not None and data.agent_data:
            models = COLLECTIONS[self.world.domain]
            for coll, recs in data.agent_data.items():
                if coll not in models or not isinstance(recs, dict):
                    raise ConfigError(
                        "unknown collection in initialization data",
                        file="tasks.json",
                        field=f"{task.id}.initial_state.initialization_data.agent_data.{coll}",
                    )
                for key, partial in recs.items():
                    current = clone(self.state.get(coll, key)) if self.state.has(coll, key) else {}
                    self.state.put(coll, key, typed(models[coll], _deep_merge(current, partial)))
        for call in init.initialization_actions or []:
            obs = self.act(EnvAction(tool=call.func_name, args=call.arguments), record=False)
            if not obs.ok:
                raise ConfigError(
                    f"initialization action failed: {obs.text}",
                    file="tasks.json",
                    field=f"{task.id}.initial_state.initialization_actions",
                )

    def act(self, action: EnvAction, *, record: bool = True) -> Observation:
        """Run one tool call; tool errors become ``ok=False`` observations, never exceptions."""
        kind = self.toolkit.kind_of(action.tool) or "unknown"
        args = clone(action.args)
        try:
            result = self.toolkit.invoke(action.tool, args)
        except Exception as exc:  # noqa: BLE001 - τ² turns every tool exception into text
            obs = Observation(ok=False, text=f"Error: {exc}", data=None)
        else:
            obs = Observation(ok=True, text=render(result), data=clone(result))
        if record:
            self.history.append(CallRecord(action.tool, clone(action.args), kind, obs.ok, obs.text))
        return obs

    def write_calls(self) -> list[CallRecord]:
        """Every write call made so far (successful or not), in order (what τ² replays)."""
        return [c for c in self.history if c.kind == "write"]

    def executed_writes(self) -> list[EnvAction]:
        """The successful write calls, in order."""
        return [
            EnvAction(tool=c.tool, args=c.args) for c in self.history if c.kind == "write" and c.ok
        ]

    def proposal(self) -> dict[str, Any]:
        """Return ``{"executed_writes": [{"tool", "args"}, ...]}`` (successful writes)."""
        return {
            "executed_writes": [{"tool": a.tool, "args": a.args} for a in self.executed_writes()]
        }

    def state_hash(self) -> str:
        """Return the τ² hash of the session's database."""
        return self.state.state_hash()


def _deep_merge(dst: dict[str, Any], src: Any) -> Any:
    if not isinstance(src, dict):
        return clone(src)
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            dst[k] = _deep_merge(dst[k], v)
        else:
            dst[k] = clone(v)
    return dst


class Tau2World(WorldBase):
    """A loaded τ² domain (shared read-only base + tasks) plus its adapter hooks.

    Attributes:
        benchmark: ``tau2_retail`` or ``tau2_airline``.
        world_id: Content hash of the data (database, tasks, splits, policy).
        domain: ``retail`` or ``airline``.
        base: The shared typed base database.
        tasks: Typed tasks in file order.
        split_tasks: Named task splits.
        policy: The agent policy text.
        source: Where the data came from (a directory, or ``payload``).
    """

    def __init__(
        self,
        domain: str,
        base: BaseDB,
        tasks: list[Task],
        split_tasks: dict[str, list[str]],
        policy: str,
        source: str,
    ):
        self.toolkit_cls = check_domain(domain)
        self.domain = domain
        self.benchmark = f"tau2_{domain}"
        self.base = base
        self.tasks = tasks
        self._by_id = {t.id: t for t in tasks}
        self.split_tasks = split_tasks
        self.policy = policy
        self.source = source
        self.world_id = content_hash(
            {
                "domain": domain,
                "db": base.hash,
                "tasks": [t.model_dump(mode="json") for t in tasks],
                "split_tasks": split_tasks,
                "policy": policy,
            }
        )

    # ---- basic world API ---------------------------------------------------------------

    def tools(self) -> list[ToolSpec]:
        """Return the agent-visible tools (sorted by name)."""
        return list(self.toolkit_cls.specs().values())

    def tool_kind(self, name: str) -> str | None:
        """Return ``read``/``write``/``generic`` for a tool name, None when unknown."""
        return self.toolkit_cls.kind_of(name)

    def open_session(self, task: Task | str | None = None) -> Tau2Session:
        """Open a fresh copy-on-write session (with the task's initial state, if any)."""
        if isinstance(task, str):
            task = self.task(task)
        return Tau2Session(self, task)

    def state_hash(self) -> str:
        """Return the τ² hash of the pristine initial database."""
        return self.base.hash

    def task(self, task_id: str) -> Task:
        """Return the task with id ``task_id``."""
        try:
            return self._by_id[task_id]
        except KeyError:
            raise ConfigError(f"unknown task id {task_id!r}", field="task") from None

    # ---- adapter hooks (implemented in core.envs.tau2.adapter) -------------------------

    def seeds(self) -> list[Intent]:
        """Return one root intent per task with at least one effective golden write."""
        from core.envs.tau2 import adapter

        return adapter.seeds(self)

    def compile_intent(self, intent: Intent) -> list[EnvAction]:
        """Return the write actions an intent stands for, in order (for the oracle agent)."""
        from core.envs.tau2 import adapter

        return adapter.compile_intent(intent)

    def execute(self, intent: Intent) -> GroundTruth:
        """Execute an intent's writes on a fresh overlay; ``statehash`` ground truth."""
        from core.envs.tau2 import adapter

        return adapter.execute(self, intent)

    def judge(self, intent: Intent, session: EnvSession, config: ProtocolConfig) -> Verdict:
        """Judge under the protocol: ``config.tau2_acceptance`` picks golden writes or state."""
        from core.envs.tau2 import adapter

        return adapter.adjudicate(self, intent, session, mode=config.tau2_acceptance)

    def executed_golden(self, intent: Intent, session: EnvSession) -> list[bool]:
        """For each golden write of ``intent``, whether the session has executed it."""
        from core.envs.tau2 import adapter

        return adapter.executed_golden(intent, session)

    def slot_lexicon(self, condition: Condition) -> SlotLexicon:
        """Return how customers talk about an argument condition (interpreter hook)."""
        from core.envs.tau2 import argument_lexicon

        return argument_lexicon.slot_lexicon(self, condition)

    def context_lexicon(self, key: str) -> SlotLexicon:
        """Return how an agent asks for a context fact (identification; interpreter hook)."""
        from core.envs.tau2 import argument_lexicon

        return argument_lexicon.context_lexicon(key)

    def lexicon_families(self) -> tuple[SlotLexicon, ...]:
        """Return the domain's slot families (interpreter hook)."""
        from core.envs.tau2 import argument_lexicon

        return argument_lexicon.families(self.domain)

    def action_lexicon(self, intent: Intent) -> ActionLexicon | None:
        """Return the kind of action an intent asks for (confirmation hook)."""
        from core.envs.tau2 import argument_lexicon

        return argument_lexicon.action_lexicon(intent)

    def unmet_problems(self, intent: Intent, session: EnvSession) -> list[Problem]:
        """Return what is still not done or wrong, in plain words (rejection hints)."""
        from core.envs.tau2 import argument_lexicon

        return argument_lexicon.problems(self, intent, session)

    def unmet_slots(self, intent: Intent, session: EnvSession) -> list[str]:
        """Return the slots of the golden writes not executed yet."""
        out: list[str] = []
        for p in self.unmet_problems(intent, session):
            out += [s for s in p.slots if s not in out]
        return out

    def context_of(self, intent: Intent) -> dict[str, str]:
        """The facts of the customer an intent's writes belong to (user id, e-mail, name …)."""
        from core.envs.tau2 import adapter

        return adapter.context_of(self, intent)

    def task_count(self) -> int:
        """One task per τ² task."""
        return len(self.tasks)

    def task_splits(self) -> dict[str, list[str]]:
        """τ²-bench's named splits (``train``, ``test``, ``base``)."""
        return {str(k): [str(t) for t in v] for k, v in self.split_tasks.items()}

    def phrase(self, condition: Condition) -> str:
        """Phrase one condition in a customer's voice."""
        from core.envs.tau2 import adapter

        return adapter.phrase(self, condition)


def bundled_dir(domain: str) -> Path:
    """Return the bundled data directory of a domain (``data/tau2_<domain>``)."""
    return DATA_DIR / f"tau2_{domain}"


def load_tau2_world(domain: str, data_dir: Path | None = None) -> Tau2World:
    """Load a τ² domain from a directory laid out like τ²-bench's.

    Args:
        domain: ``retail`` or ``airline``.
        data_dir: The directory; None for the bundled ``data/tau2_<domain>/``.

    Returns:
        The world. Its typed base is cached per process (path + size + mtime).

    Raises:
        ConfigError: naming the file and field of the first problem.
    """
    check_domain(domain)
    src = Path(data_dir) if data_dir is not None else bundled_dir(domain)
    if not src.is_dir():
        raise ConfigError("not a directory", file=src)
    base = base_for_path(domain, src / "db.json")
    tasks_path = src / "tasks.json"
    tasks = parse_tasks(domain, read_json_file(tasks_path), tasks_path)
    split: dict[str, list[str]] = {}
    split_path = src / "split_tasks.json"
    if split_path.exists():
        split = parse_split(read_json_file(split_path), {t.id for t in tasks}, split_path)
    policy_path = src / "policy.md"
    policy = ""
    if policy_path.exists():
        try:
            policy = policy_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read: {exc}", file=policy_path) from None
    return Tau2World(domain, base, tasks, split, policy, str(src))


def load_tau2_world_from_payload(domain: str, payload: dict[str, Any]) -> Tau2World:
    """Build a world from an importer payload (``{"domain", "db", "tasks", ...}``).

    Raises:
        ConfigError: naming ``payload.<key>`` and the field when the payload is malformed.
    """
    check_domain(domain)
    if not isinstance(payload, dict):
        raise ConfigError("payload must be an object", file="payload")
    if payload.get("domain", domain) != domain:
        raise ConfigError(
            f"payload is for domain {payload.get('domain')!r}, not {domain!r}",
            file="payload",
            field="domain",
        )
    for key in ("db", "tasks"):
        if key not in payload:
            raise ConfigError("required key is missing", file="payload", field=key)
    base = base_for_payload(domain, payload["db"], "payload.db")
    tasks = parse_tasks(domain, payload["tasks"], "payload.tasks")
    split = parse_split(
        payload.get("split_tasks") or {}, {t.id for t in tasks}, "payload.split_tasks"
    )
    policy = payload.get("policy") or ""
    if not isinstance(policy, str):
        raise ConfigError("policy must be a string", file="payload", field="policy")
    return Tau2World(domain, base, tasks, split, policy, "payload")
