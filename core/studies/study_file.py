"""A study described in one file (``STUDY.yaml``): which items, who, how — resolved and created.

One study asks one thing (``kind``): ``label`` (label episodes, episode pairs or sessions),
``play_user`` (people play the customer against an agent) or ``play_agent`` (people play the
agent against the simulated user). Samples are chosen by a filter (benchmark, provenance, split,
fault types, explicit ids) and a **seeded** random draw; personas become the play conditions;
the other seat is named (``agent`` + ``method`` for play_user, ``user_reader`` for play_agent);
annotators must be **accounts** (an unknown id is refused, nothing is stored); ``overlap`` is the
number of people per item, assigned balanced (:mod:`core.studies.assignment`).

>>> StudyFile.model_validate({"name": "pilot", "kind": "play_user",
...     "samples": {"benchmark": "webshop", "count": 3, "seed": 7},
...     "annotators": ["ann", "bob"]}).overlap
2
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from core.errors import ConfigError, pydantic_error_to_config_error
from core.model.base import Strict
from core.model.bounds import load_yaml
from core.store import Store
from core.studies.models import LabelKind, StudyCondition, StudyRole, StudySpec

BENCHMARKS = ("webshop", "tau2_retail", "tau2_airline", "mock")


class SampleFilter(Strict):
    """Which samples a play study covers: a filter, then a seeded random draw."""

    benchmark: str = Field(description="webshop, tau2_retail, tau2_airline (or mock).")
    source: str | None = Field(default=None, description="bundled, built, release or a name.")
    split: str | None = Field(default=None, description="learn, eval or test.")
    fault_types: tuple[str, ...] = Field(default=(), description="Keep samples with any of these.")
    ids: tuple[str, ...] = Field(default=(), description="Explicit sample ids (then filtered).")
    count: int | None = Field(default=None, ge=1, le=100_000, description="How many to draw.")
    seed: int = Field(default=0, description="Seed of the draw.")

    @model_validator(mode="after")
    def _known(self) -> SampleFilter:
        if self.benchmark not in BENCHMARKS:
            raise ValueError(f"unknown benchmark {self.benchmark!r}; use one of {BENCHMARKS}")
        return self


class EpisodeFilter(Strict):
    """Which stored episodes a label study covers."""

    ids: tuple[str, ...] = ()
    run: str | None = Field(default=None, description="Episodes of this run.")
    benchmark: str | None = None
    count: int | None = Field(default=None, ge=1, le=100_000)
    seed: int = 0


class StudyFile(Strict):
    """The contents of ``STUDY.yaml``."""

    name: str = Field(min_length=1, max_length=120)
    kind: StudyRole
    description: str = ""
    samples: SampleFilter | None = None
    episodes: EpisodeFilter | None = None
    sessions: tuple[str, ...] = ()
    personas: tuple[str, ...] = Field(default=(), description="Play conditions, one per persona.")
    agent: str = Field(default="symbolic", min_length=1)
    method: str = "A2"
    user_reader: str = Field(default="offline", min_length=1)
    patience_visible: bool = False
    label_kinds: tuple[LabelKind, ...] = ()
    annotators: tuple[str, ...] = Field(min_length=1)
    overlap: int = Field(default=2, ge=1, le=50)
    blind: bool = True
    seed: int = 0

    @model_validator(mode="after")
    def _shape(self) -> StudyFile:
        if self.kind != "label" and self.samples is None:
            raise ValueError(f"a {self.kind} study needs 'samples'")
        if self.kind == "label" and self.episodes is None and not self.sessions:
            raise ValueError("a label study needs 'episodes' or 'sessions'")
        if len(set(self.annotators)) != len(self.annotators):
            raise ValueError("annotators repeat")
        return self


def load_study_file(path: Path) -> StudyFile:
    """Read and validate ``STUDY.yaml`` (ConfigError naming the file and the field)."""
    data = load_yaml(path, what="study file")  # size-capped, no anchors or aliases
    return parse_study(data, file=str(path))


def parse_study(data: Any, *, file: str = "study") -> StudyFile:
    """Validate a study description (a dict), naming the field of the first problem."""
    if not isinstance(data, Mapping):
        raise ConfigError("a study file holds one mapping (name, kind, samples …)", file=file)
    try:
        return StudyFile.model_validate(dict(data))
    except ValidationError as exc:
        raise pydantic_error_to_config_error(exc, file) from exc


def select_samples(store: Store, f: SampleFilter) -> list[str]:
    """The sample ids a filter selects: filtered in id order, then a seeded draw of ``count``."""
    rows = store.sample_rows(f.benchmark)
    if not rows:
        raise ConfigError(
            f"no {f.benchmark} samples in the store; run 'driftbench init' first",
            field="samples.benchmark",
        )
    wanted = set(f.ids)
    keep = []
    for r in rows:
        if wanted and r["sample_id"] not in wanted:
            continue
        if f.source and r.get("source") != f.source:
            continue
        if f.split and r.get("split") != f.split:
            continue
        if f.fault_types:
            kinds = str(r.get("fault_types") or "")
            if not any(ft in kinds for ft in f.fault_types):
                continue
        keep.append(str(r["sample_id"]))
    missing = sorted(wanted - set(keep)) if wanted else []
    if missing:
        raise ConfigError(
            f"samples not in the store or not matching the filter: {missing[:5]}",
            field="samples.ids",
        )
    keep.sort()
    if f.count is not None:
        if f.count > len(keep):
            raise ConfigError(
                f"the filter selects {len(keep)} sample(s), fewer than count {f.count}",
                field="samples.count",
            )
        keep = sorted(random.Random(f.seed).sample(keep, f.count))
    if not keep:
        raise ConfigError("the sample filter selects no sample", field="samples")
    return keep


def select_episodes(store: Store, f: EpisodeFilter) -> list[str]:
    """The ended episode ids a filter selects (seeded draw of ``count``)."""
    rows = store.episode_rows(status="ended")
    wanted = set(f.ids)
    keep = [
        str(r["episode_id"])
        for r in rows
        if (not wanted or r["episode_id"] in wanted)
        and (f.run is None or r.get("run_id") == f.run)
        and (f.benchmark is None or r.get("benchmark") == f.benchmark)
    ]
    keep.sort()
    if f.count is not None and f.count < len(keep):
        keep = sorted(random.Random(f.seed).sample(keep, f.count))
    if not keep:
        raise ConfigError("the episode filter selects no ended episode", field="episodes")
    return keep


def check_annotators(annotators: Collection[str], accounts: Collection[str], *, file: str) -> None:
    """Refuse annotator ids that are not accounts (one error naming them)."""
    unknown = [a for a in annotators if a not in set(accounts)]
    if unknown:
        raise ConfigError(
            f"not accounts of this studio: {unknown} (known: {sorted(accounts)[:20]})",
            file=file,
            field="annotators",
        )


def study_spec_of(store: Store, f: StudyFile, *, file: str = "study") -> StudySpec:
    """Resolve a study file into the stored spec (samples drawn, personas as conditions)."""
    from core.agents.methods import method_spec
    from core.studies.labels import persona_ids

    for p in f.personas:
        if p not in persona_ids():
            raise ConfigError(f"unknown persona {p!r}", file=file, field="personas")
    data: dict[str, Any] = {
        "name": f.name,
        "description": f.description,
        "roles": (f.kind,),
        "personas": f.personas,
        "overlap": f.overlap,
        "blind": f.blind,
        "seed": f.seed,
        "agent": f.agent.strip(),
        "user_reader": f.user_reader.strip(),
    }
    if f.kind == "play_user":
        try:
            data["method"] = method_spec(f.method).id
        except (ConfigError, KeyError, ValueError) as exc:
            raise ConfigError(str(exc), file=file, field="method") from exc
    try:
        if f.kind == "label":
            data["episodes"] = select_episodes(store, f.episodes) if f.episodes else ()
            data["sessions"] = f.sessions
            data["label_kinds"] = f.label_kinds
        else:
            assert f.samples is not None
            data["samples"] = select_samples(store, f.samples)
            data["selection"] = f.samples.model_dump_json(exclude_defaults=True)
            data["conditions"] = [
                StudyCondition(persona_id=p, patience_visible=f.patience_visible).model_dump()
                for p in (f.personas or ("rational",))
            ]
    except ConfigError as exc:
        raise ConfigError(str(exc).split(": ", 1)[-1], file=file, field=exc.field) from exc
    try:
        return StudySpec.model_validate(data)
    except ValidationError as exc:
        raise pydantic_error_to_config_error(exc, file) from exc


def create_from_file(
    store: Store, f: StudyFile, accounts: Collection[str], *, file: str = "study"
) -> dict[str, Any]:
    """Create and assign a study; everything is checked before anything is stored.

    Returns:
        ``{"study_id", "items", "assignments"}`` (items: units of work; assignments: rows).

    Raises:
        ConfigError: A bad field, an unknown annotator, an empty selection, a taken name.
    """
    from core.studies.studies import (
        _items,
        add_annotator,
        assign_study,
        create_study,
        list_annotators,
    )

    check_annotators(f.annotators, accounts, file=file)
    spec = study_spec_of(store, f, file=file)
    taken = store.conn.execute("SELECT 1 FROM studies WHERE name=?", (spec.name,)).fetchone()
    if taken:
        raise ConfigError(f"a study named {spec.name!r} exists", file=file, field="name")
    study = create_study(store, spec)
    registered = {a.annotator_id for a in list_annotators(store)}
    for a in f.annotators:
        if a not in registered:
            add_annotator(store, a)
    made = assign_study(store, study.study_id, list(f.annotators), overlap=f.overlap)
    return {
        "study_id": study.study_id,
        "items": len(_items(spec)),
        "assignments": sum(made.values()),
        "per_annotator": made,
    }
