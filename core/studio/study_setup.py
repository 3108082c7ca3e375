"""Building a study from the Data page's form: episode pairs that belong together, clear errors.

A "same persona?" pair only means something when both episodes face the same task: a WebShop
episode next to an airline one can be told apart by its topic alone. :func:`pair_episodes`
pairs the picked episodes of one sample first, then of one benchmark, and never across
benchmarks. :func:`study_spec` validates the form into a :class:`~core.studies.models.StudySpec`
and turns a validation failure into one sentence naming the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from core.errors import ConfigError
from core.store import Store
from core.studies.models import StudySpec


def pair_episodes(
    store: Store, episode_ids: Sequence[str]
) -> tuple[list[tuple[str, str]], list[str]]:
    """Pair ``episode_ids`` within a sample first, then within a benchmark, in the given order.

    Returns:
        (pairs, episodes left without a partner).
    """
    ids = list(dict.fromkeys(episode_ids))
    if not ids:
        return [], []
    ph = ",".join("?" * len(ids))
    meta = {
        str(r[0]): (str(r[1]), str(r[2]))
        for r in store.conn.execute(
            f"SELECT episode_id, benchmark, sample_id FROM episodes WHERE episode_id IN ({ph})",
            ids,
        )
    }
    pairs: list[tuple[str, str]] = []
    waiting: dict[Any, str] = {}
    left: list[str] = []
    for eid in ids:  # same sample
        if eid not in meta:
            continue
        key = meta[eid]
        if key in waiting:
            pairs.append((waiting.pop(key), eid))
        else:
            waiting[key] = eid
    spare: dict[str, str] = {}
    for eid in [e for e in ids if e in waiting.values()]:  # then same benchmark
        bench = meta[eid][0]
        if bench in spare:
            pairs.append((spare.pop(bench), eid))
        else:
            spare[bench] = eid
    left = list(spare.values()) + [e for e in ids if e not in meta]
    return pairs, left


def study_spec(data: dict[str, Any]) -> StudySpec:
    """Validate the study form.

    Raises:
        ConfigError: One sentence naming the first wrong field (never a raw pydantic dump).
    """
    if not str(data.get("name") or "").strip():
        raise ConfigError("give the study a name", file="study form", field="name")
    try:
        return StudySpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ())) or None
        msg = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
        raise ConfigError(msg, file="study form", field=loc) from exc


def create_study_from_form(store: Store, data: dict[str, Any]) -> dict[str, Any]:
    """Create and assign a study from the Data page's form (any kind), checked like a file.

    ``data`` holds the fields of ``STUDY.yaml`` (:class:`core.studies.study_file.StudyFile`);
    annotators must be accounts of this studio (:func:`core.studio.accounts.known_accounts`).

    Returns:
        ``{"study_id", "items", "assignments", "per_annotator"}``.

    Raises:
        ConfigError: One sentence naming the first wrong field; nothing is stored.
    """
    from core.studies.study_file import create_from_file, parse_study
    from core.studio.accounts import known_accounts

    if not str(data.get("name") or "").strip():
        raise ConfigError("give the study a name", file="study form", field="name")
    f = parse_study(data, file="study form")
    return create_from_file(store, f, known_accounts(store), file="study form")
