"""One construction of a :class:`RunSpec` from a person's choices (``driftbench run``, Runs page).

The command's flags and the studio's Runs form name the same choices; both come here, so a run
started from either gets the same spec and therefore the same run id: the same persona
expansion, seed bounds and shifts condition, and the same role defaults — an agent, user voice,
interpreter or reflection left unnamed is the models file's (``DRIFTBENCH_MODELS`` /
``--models``), else the offline one — with every LLM role's full settings recorded in the spec
(``models``, part of the run's identity, issue 29) so a resumed run calls its models exactly
as it was created with.

Errors name the field the way the caller's person sees it: a flag (``--seeds``) on the command
line, a form field (``seeds``, file ``run form``) in the studio.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from core.errors import ConfigError
from core.model.bounds import MAX_SEEDS
from core.model.config import ProtocolConfig
from core.model.run import OFFLINE_AGENT, PERSONAS, RunSpec

OFFLINE_ROLES = ("symbolic", "heuristic", "template", "human")
"""Agent names that are not a language model."""


def flag_name(field: str) -> str:
    """A spec field as the command-line flag that sets it (``a3_generation_size`` → ``--a3-…``)."""
    return "--" + field.replace("_", "-")


def all_personas() -> tuple[str, ...]:
    """Every persona file: the bundled five in their order (run ids stay put), then the rest."""
    from core.protocol.personas import load_personas

    found = load_personas()
    return tuple([p for p in PERSONAS if p in found] + sorted(set(found) - set(PERSONAS)))


def _role(value: str | None, role: str, offline: str) -> str:
    from core.llm.models import role_label

    return (value or "").strip() or role_label(role) or offline


def build_spec(
    *,
    benchmarks: Sequence[str],
    methods: Sequence[str],
    personas: Sequence[str] | None = None,
    seeds: int = 3,
    agent: str | None = None,
    user_voice: str | None = None,
    interpreter: str | None = None,
    action_format: str | None = None,
    limit: int | None = None,
    name: str | None = None,
    source: str | None = None,
    split: str | None = None,
    shifts: str = "on",
    faults: str | None = None,
    base_prompt: str | None = None,
    a3_generation_size: int | None = None,
    field_of: Callable[[str], str] = flag_name,
    file: str | None = None,
) -> RunSpec:
    """Build and validate the spec of a run (nothing is written).

    Args:
        benchmarks: Benchmark ids.
        methods: Method ids.
        personas: Persona ids; None, empty or ``["all"]``: every persona file.
        seeds: Number of seeds (seeds ``0 … seeds-1``).
        agent: ``symbolic`` or a model spec; None or blank: the models file's agent, else
            ``symbolic``.
        user_voice: ``template`` or a model spec; None or blank: the models file's voice, else
            ``template``.
        interpreter: The question interpreter's model; None or blank: the models file's, else
            the offline interpreter.
        action_format: The LLM agent's action format (None: the default).
        limit: Samples per benchmark (None: all).
        name: Run name (None or blank: the run id).
        source: Only samples of this provenance (None or blank: all).
        split: Only samples of this split (None or blank: all).
        shifts: ``on`` or ``off`` (silent intent shifts).
        faults: ``single``, ``composite``, ``k1``, ``k2``, ``k4``; None, blank or ``all``: every
            sample.
        base_prompt: The agent's base prompt variant (None: the default).
        a3_generation_size: A3's generation size (None: the default).
        field_of: How an error names a spec field (a flag by default).
        file: What an error names as the input (None on the command line).

    Raises:
        ConfigError: One line naming the field that is wrong.
    """
    from core.llm.models import role_label, run_models

    def bad(message: str, field: str) -> ConfigError:
        return ConfigError(message, file=file, field=field_of(field))

    for field, values in (("benchmarks", benchmarks), ("methods", methods)):
        if not values:
            raise bad(f"choose at least one of {field}", field)
    chosen = tuple(personas or ())
    if not chosen or chosen == ("all",):
        chosen = all_personas()
    if seeds < 1:
        raise bad("must be at least 1", "seeds")
    if seeds > MAX_SEEDS:
        raise bad(f"{seeds} is more than {MAX_SEEDS} (the limit)", "seeds")
    if limit is not None and limit < 1:
        raise bad("must be at least 1", "limit")
    if a3_generation_size is not None and a3_generation_size < 1:
        raise bad("must be at least 1", "a3_generation_size")
    if shifts not in ("on", "off"):
        raise bad("must be on or off", "shifts")
    extra: dict[str, Any] = {}
    if a3_generation_size is not None:
        extra["a3_generation_size"] = a3_generation_size
    if shifts == "off":
        extra["config"] = ProtocolConfig(shifts_enabled=False)
    agent = _role(agent, "agent", OFFLINE_AGENT)
    voice = _role(user_voice, "voice", "template")
    interp = (interpreter or "").strip() or role_label("interpreter")
    llm_agent = agent.strip().lower() not in OFFLINE_ROLES
    models = run_models(
        {
            "agent": agent if llm_agent else None,
            "voice": voice,
            "interpreter": interp,
            "reflection": role_label("reflection") if llm_agent else None,
        }
    )
    try:
        return RunSpec(
            name=(name or "").strip() or None,
            benchmarks=tuple(benchmarks),
            methods=tuple(methods),
            personas=chosen,
            seeds=tuple(range(int(seeds))),
            agent=agent,
            user_voice=voice,
            action_format=action_format,
            interpreter=interp,
            models=models,
            limit=limit,
            source=(source or "").strip() or None,
            split=(split or "").strip() or None,
            faults=None if faults in (None, "", "all") else faults,
            base_prompt=base_prompt,
            **extra,
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(x) for x in err.get("loc", ())]
        raise bad(str(err.get("msg")), loc[0] if loc else "spec") from None
