"""Sweep specifications: what a run measures, and the deterministic key of every episode.

A :class:`RunSpec` is the identity of a run (benchmarks × methods × personas × seeds × agent ×
user voice × protocol config × sample selection) plus its name. It is stored in the ``runs``
table; running the same spec under the same name again resumes it, and the same spec under a
new name is a new run. How a run executes (backend, workers, cost guard) is a
:class:`RunOptions` and never changes which episodes a run contains.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from core.model.base import Strict, content_hash
from core.model.config import ProtocolConfig

METHODS: tuple[str, ...] = ("B0", "A0", "A1", "A2", "A3", "L0", "RS", "LIT", "ORACLE")
"""Method ids of the agent ladder (DECISIONS.md)."""

BENCHMARKS: tuple[str, ...] = ("webshop", "tau2_retail", "tau2_airline")
"""Benchmark ids (``mock`` is accepted too, for tests)."""

PERSONAS: tuple[str, ...] = ("rational", "dependent", "avoidant", "intuitive", "spontaneous")
"""Persona ids (the files in ``personas/``)."""

FAULT_CONDITIONS: tuple[str, ...] = ("single", "composite", "k1", "k2", "k4")
"""``--faults`` values: one fault (k = 1), composites (k ≥ 2), or exactly k = 1 / 2 / 4."""

SHIFT_CONDITIONS: tuple[str, ...] = ("on", "off")
"""``--shifts`` values (the config's ``shifts_enabled``)."""


def faults_match(condition: str | None, k: int) -> bool:
    """Whether a sample with ``k`` composed faults belongs to a ``--faults`` condition.

    >>> [faults_match(c, 2) for c in (None, "single", "composite", "k2", "k4")]
    [True, False, True, True, False]
    """
    if condition is None:
        return True
    if condition == "single":
        return k == 1
    if condition == "composite":
        return k >= 2
    return k == int(condition[1:])


def parse_sources(text: str | None) -> tuple[str | None, dict[str, str]]:
    """Split a ``--source`` value into (default selector, per-benchmark selectors).

    ``built`` selects one provenance for every benchmark; ``webshop=bundled,tau2_retail=built``
    one per benchmark; ``built,webshop=bundled`` a default plus exceptions.

    >>> parse_sources("built,webshop=bundled")
    ('built', {'webshop': 'bundled'})

    Raises:
        ValueError: Two defaults, an empty part or a benchmark named twice.
    """
    if text is None or not text.strip():
        return None, {}
    default: str | None = None
    per: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise ValueError(f"empty selector in {text!r}")
        if "=" in part:
            bench, _, sel = (x.strip() for x in part.partition("="))
            if not bench or not sel:
                raise ValueError(f"{part!r} must be BENCHMARK=SOURCE")
            if bench in per:
                raise ValueError(f"benchmark {bench!r} given twice")
            per[bench] = sel
        elif default is not None:
            raise ValueError(f"two default sources in {text!r} (use BENCHMARK=SOURCE)")
        else:
            default = part
    return default, per


OFFLINE_AGENT = "symbolic"
"""Agent spec selecting the offline symbolic policies."""


OFFLINE_AGENT_NAMES = frozenset({OFFLINE_AGENT, "heuristic", "template"})
"""Agent specs that select the offline symbolic policies (case and spaces ignored)."""


def is_symbolic_agent(agent: str) -> bool:
    """Whether an agent spec selects the offline symbolic policies.

    >>> is_symbolic_agent(" Heuristic "), is_symbolic_agent("openai/gpt-4o-mini")
    (True, False)
    """
    return agent.strip().lower() in OFFLINE_AGENT_NAMES


def agent_of_spec_json(spec_json: str) -> str:
    """The agent of a stored run spec's JSON (``symbolic`` when unset, ``?`` when unreadable)."""
    try:
        spec = json.loads(spec_json)
    except ValueError:
        return "?"
    return str(spec.get("agent") or OFFLINE_AGENT) if isinstance(spec, dict) else "?"


TRANSPORT_FIELDS = frozenset({"timeout_s", "max_retries", "concurrency", "api_key_env"})
"""Model settings about how calls travel, left out of a run's identity."""


class RunSpec(Strict):
    """The identity of a sweep (everything that decides which episodes it contains)."""

    name: str | None = Field(default=None, description="Human name (defaults to the run id).")
    benchmarks: tuple[str, ...] = Field(min_length=1, description="Benchmark ids.")
    methods: tuple[str, ...] = Field(min_length=1, description="Method ids (B0 … ORACLE).")
    personas: tuple[str, ...] = Field(min_length=1, description="Persona ids.")
    seeds: tuple[int, ...] = Field(default=(0, 1, 2), min_length=1, description="Seeds.")
    agent: str = Field(default=OFFLINE_AGENT, description="'symbolic' or a model spec.")
    user_voice: str = Field(default="template", description="'template' or a model spec.")
    interpreter: str | None = Field(
        default=None,
        description="How the user reads messages: 'offline' or a model spec (None = config's).",
    )
    config: ProtocolConfig = Field(default_factory=ProtocolConfig)
    limit: int | None = Field(default=None, ge=1, description="Samples per benchmark (first N).")
    sample_ids: tuple[str, ...] | None = Field(
        default=None, description="Explicit samples (overrides limit)."
    )
    a3_generation_size: int = Field(
        default=25, ge=1, description="A3: episodes per lesson-book generation."
    )
    source: str | None = Field(
        default=None,
        description="Only samples of this provenance: bundled, built, release or an import "
        "name; per benchmark as 'webshop=bundled,tau2_retail=built' (a bare value is the "
        "default of the benchmarks not named).",
    )
    faults: Literal["single", "composite", "k1", "k2", "k4"] | None = Field(
        default=None,
        description="Only samples with one fault (single), composites (k ≥ 2) or exactly "
        "k = 1 / 2 / 4 faults (None = every sample).",
    )
    split: str | None = Field(default=None, description="Only samples of this split.")
    action_format: Literal["text", "tools", "json"] | None = Field(
        default=None,
        description="LLM agents' action interface: the paper's text format (None/'text'), "
        "native tool calling ('tools') or JSON-schema constrained replies ('json').",
    )
    models: dict[str, dict[str, Any]] | None = Field(
        default=None,
        description="The model settings of every LLM role the run uses (agent, voice, "
        "interpreter, reflection): what each call sends and how, without keys. Part of the "
        "identity, so a resumed run never mixes two settings (None: symbolic/template only).",
    )
    base_prompt: Literal["strategy-free", "premise"] | None = Field(
        default=None,
        description="LLM agents' shared base prompt: strategy-free (None, the paper's) or with "
        "the premise sentence ('the request may be faulty, the person may change their mind').",
    )
    pinned_run_id: str | None = Field(
        default=None,
        description="The stored id of a run created before names were part of run ids.",
    )

    @field_validator("methods")
    @classmethod
    def _methods(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        out = tuple(m.upper() for m in v)
        for m in out:
            if m not in METHODS:
                raise ValueError(f"unknown method {m!r}; known: {' '.join(METHODS)}")
        return tuple(dict.fromkeys(out))

    @field_validator("benchmarks", "personas")
    @classmethod
    def _dedupe(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(x.strip() for x in v if x.strip()))

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(dict.fromkeys(v))

    @field_validator("source")
    @classmethod
    def _source(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None or not v.strip():
            return None
        default, per = parse_sources(v)
        benchmarks = info.data.get("benchmarks") or ()
        for bench in per:
            if benchmarks and bench not in benchmarks:
                raise ValueError(f"names benchmark {bench!r}, which the run does not include")
        parts = ([default] if default is not None else []) + [f"{b}={per[b]}" for b in sorted(per)]
        return ",".join(parts)  # canonical: the same selection is the same identity

    @model_validator(mode="after")
    def _agent(self) -> RunSpec:
        if not self.agent.strip():
            raise ValueError("agent must be 'symbolic' or a model spec")
        if self.interpreter is not None and self.interpreter != self.config.interpreter:
            if not self.interpreter.strip():
                raise ValueError("interpreter must be 'offline' or a model spec")
            cfg = self.config.model_copy(update={"interpreter": self.interpreter.strip()})
            object.__setattr__(self, "config", cfg)
        return self

    def source_for(self, benchmark: str) -> str | None:
        """The ``--source`` selector that applies to ``benchmark`` (None = every source)."""
        default, per = parse_sources(self.source)
        return per.get(benchmark, default)

    @property
    def shifts(self) -> str:
        """``on`` or ``off``: whether silent shifts are enabled (the config's switch)."""
        return "on" if self.config.shifts_enabled else "off"

    def conditions(self) -> dict[str, str]:
        """The paper's conditions of this run: ``{"shifts": on|off, "faults": …|all}``."""
        return {"shifts": self.shifts, "faults": self.faults or "all"}

    @property
    def is_symbolic(self) -> bool:
        """Whether the agents are the offline symbolic policies."""
        return is_symbolic_agent(self.agent)

    def identity(self) -> dict[str, object]:
        """The fields that decide which episodes the run contains (everything but the name).

        Selection fields that are not set are left out, so specs written before they existed
        keep their identity; the interpreter is part of the config and so not repeated here.
        """
        exclude = {"name", "pinned_run_id", "interpreter"}
        exclude |= {
            f
            for f in ("source", "split", "action_format", "faults", "base_prompt", "models")
            if getattr(self, f) is None
        }
        out = self.model_dump(mode="json", exclude=exclude)
        if "models" in out:  # how calls travel (timeouts, retries, keys) never changes a reply
            out["models"] = {
                role: {k: v for k, v in entry.items() if k not in TRANSPORT_FIELDS}
                for role, entry in out["models"].items()
            }
        return out

    def run_id(self) -> str:
        """Deterministic run id: ``run-`` + content hash of :meth:`identity` and the name.

        The same spec under a new name is a new run; an unnamed spec's id is its identity's.
        A run stored before names were hashed keeps its id (``pinned_run_id``).
        """
        if self.pinned_run_id:
            return self.pinned_run_id
        if self.name:
            return "run-" + content_hash({"spec": self.identity(), "name": self.name}, 12)
        return "run-" + content_hash(self.identity(), 12)

    def display_name(self) -> str:
        """The name given, else the run id."""
        return self.name or self.run_id()


class EpisodeKey(Strict):
    """One cell of a sweep: the deterministic key of an episode."""

    run_id: str
    benchmark: str
    sample_id: str
    method: str
    persona: str
    seed: int

    def key(self) -> str:
        """Deterministic episode key (first attempt's episode id)."""
        return "ep-" + content_hash(
            [self.run_id, self.benchmark, self.sample_id, self.method, self.persona, self.seed],
            16,
        )

    def episode_id(self, attempt: int = 0) -> str:
        """Episode id of attempt ``attempt`` (0 = the key itself; retries get ``-rN``)."""
        return self.key() if attempt == 0 else f"{self.key()}-r{attempt}"

    def cell(self) -> tuple[str, str, str, str, int]:
        """(benchmark, sample, method, persona, seed) — how store rows are matched."""
        return (self.benchmark, self.sample_id, self.method, self.persona, self.seed)


class RunOptions(Strict):
    """How a run executes (never changes which episodes it contains)."""

    backend: Literal["local", "ray"] = Field(default="local")
    workers: int | None = Field(default=None, ge=1, description="Processes (None = CPUs).")
    concurrency: int = Field(default=16, ge=1, description="Concurrent LLM episodes.")
    max_cost_usd: float | None = Field(default=None, ge=0, description="Stop past this spend.")
    progress: bool | None = Field(default=None, description="Progress bar (None = on a TTY).")
    max_attempts: int = Field(default=3, ge=1, description="ERROR retries per episode per call.")
    retry_backoff_s: float = Field(default=0.5, ge=0, description="First retry backoff.")
    write_batch: int = Field(
        default=256, ge=1, description="Most finished episodes written in one transaction."
    )
    write_interval_s: float = Field(
        default=0.25, ge=0, description="Longest a finished episode waits to be written."
    )


class RunResult(Strict):
    """What one call of the runner did (the ``driftbench run --json`` payload)."""

    run: str = Field(description="Run name.")
    run_id: str
    episodes: int = Field(description="Episodes in the spec.")
    completed: int = Field(description="Episodes ended with a scored outcome.")
    errors: int = Field(description="Episodes whose latest attempt ended in ERROR.")
    skipped: int = Field(default=0, description="Finished before this call (resume).")
    seconds: float
    cost_usd: float
    status: str
