"""Reading and validating τ²-bench domain directories and payloads.

A domain directory holds ``db.json`` and ``tasks.json`` (required) plus ``split_tasks.json``
and ``policy.md`` (optional), laid out exactly as in τ²-bench. Every problem is reported as a
:class:`~core.errors.ConfigError` naming the file and the dotted field. Parsed, typed bases
are cached per process (keyed by resolved path + size + mtime, or by payload content) and
shared read-only by every world and session.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.envs.tau2.airline import AirlineTools
from core.envs.tau2.db import BaseDB
from core.envs.tau2.retail import RetailTools
from core.envs.tau2.schema import COLLECTIONS, collection_adapter
from core.envs.tau2.tasks import Task
from core.envs.tau2.toolkit import Toolkit
from core.errors import ConfigError
from core.model.reading import DOCUMENT, load_json

DOMAINS: dict[str, type[Toolkit]] = {"retail": RetailTools, "airline": AirlineTools}
"""Tool table of each supported domain."""

_LOCK = threading.Lock()
_BASES: dict[tuple[Any, ...], BaseDB] = {}


def check_domain(domain: str) -> type[Toolkit]:
    """Return the toolkit class of ``domain`` or raise ConfigError."""
    if domain not in DOMAINS:
        raise ConfigError(
            f"unknown τ² domain {domain!r} (expected one of {sorted(DOMAINS)})", field="domain"
        )
    return DOMAINS[domain]


def _loc(prefix: str, loc: tuple[Any, ...]) -> str:
    parts = [prefix] if prefix else []
    parts += [str(p) for p in loc]
    return ".".join(parts)


def _read_json(path: Path) -> Any:
    """A τ² file through the bounded reader (depth, values, size; NaN and 1e999 refused)."""
    if not path.is_file():
        raise ConfigError("file is missing", file=path)
    return load_json(path, DOCUMENT)


def type_db(domain: str, raw: Any, file: str | Path) -> dict[str, dict[str, Any]]:
    """Validate a raw database and return τ²'s typed records (plain dicts).

    Args:
        domain: ``retail`` or ``airline``.
        raw: The parsed ``db.json``.
        file: File name for error messages.

    Returns:
        ``{collection: {key: record}}`` in file order, typed as τ²-bench types them.

    Raises:
        ConfigError: naming the file and the first offending field.
    """
    check_domain(domain)
    spec = COLLECTIONS[domain]
    if not isinstance(raw, dict):
        raise ConfigError("the database must be a JSON object", file=file)
    for key in raw:
        if key not in spec:
            raise ConfigError(
                f"unexpected top-level key for the {domain} domain", file=file, field=key
            )
    out: dict[str, dict[str, Any]] = {}
    for coll, model in spec.items():
        if coll not in raw:
            raise ConfigError("required collection is missing", file=file, field=coll)
        adapter = collection_adapter(model)
        try:
            out[coll] = adapter.dump_python(adapter.validate_python(raw[coll]))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ConfigError(
                str(first.get("msg")), file=file, field=_loc(coll, tuple(first.get("loc", ())))
            ) from None
    return out


def parse_tasks(domain: str, raw: Any, file: str | Path) -> list[Task]:
    """Validate ``tasks.json`` content and return typed tasks.

    Checks the schema of every task, unique ids, golden action names against the domain's
    tools, and that no task needs an unsupported initial state (a message history).
    """
    toolkit = check_domain(domain)
    if not isinstance(raw, list):
        raise ConfigError("tasks must be a JSON array", file=file)
    tasks: list[Task] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        try:
            task = Task.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ConfigError(
                str(first.get("msg")), file=file, field=_loc(f"[{i}]", tuple(first.get("loc", ())))
            ) from None
        if task.id in seen:
            raise ConfigError(f"duplicate task id {task.id!r}", file=file, field=f"[{i}].id")
        seen.add(task.id)
        for j, action in enumerate(task.actions):
            if toolkit.kind_of(action.name) is None:
                raise ConfigError(
                    f"unknown {domain} tool {action.name!r}",
                    file=file,
                    field=f"[{i}].evaluation_criteria.actions.{j}.name",
                )
        init = task.initial_state
        if init is not None:
            if init.message_history:
                raise ConfigError(
                    "initial message histories are not supported",
                    file=file,
                    field=f"[{i}].initial_state.message_history",
                )
            for j, call in enumerate(init.initialization_actions or []):
                if toolkit.kind_of(call.func_name) is None or call.env_type != "assistant":
                    raise ConfigError(
                        f"unsupported initialization action {call.func_name!r}",
                        file=file,
                        field=f"[{i}].initial_state.initialization_actions.{j}.func_name",
                    )
        tasks.append(task)
    return tasks


REFERENCE_ARGS: dict[str, str] = {"user_id": "users"}
"""Golden-action arguments that must name a record of the database (argument → collection)."""


def check_task_references(tasks: list[Task], raw_db: Any, file: str | Path) -> None:
    """Refuse golden actions whose arguments name records the database does not have.

    A golden solution that looks up a user who does not exist can never be replayed; it is an
    import error, not an episode error later.

    Raises:
        ConfigError: Naming the task, the action and the argument.
    """
    if not isinstance(raw_db, dict):
        return
    for i, task in enumerate(tasks):
        for j, action in enumerate(task.actions):
            for arg, coll in REFERENCE_ARGS.items():
                value = action.arguments.get(arg)
                records = raw_db.get(coll)
                if value is None or not isinstance(records, dict):
                    continue
                if not isinstance(value, str) or value not in records:
                    raise ConfigError(
                        f"golden action {action.name!r} names {arg} {value!r}, which is not in "
                        f"db.json {coll}",
                        file=file,
                        field=f"[{i}].evaluation_criteria.actions.{j}.arguments.{arg}",
                    )


def parse_split(raw: Any, task_ids: set[str], file: str | Path) -> dict[str, list[str]]:
    """Validate ``split_tasks.json``: ``{split: [task id, ...]}`` naming existing tasks."""
    if not isinstance(raw, dict):
        raise ConfigError("split_tasks must be a JSON object", file=file)
    out: dict[str, list[str]] = {}
    for name, ids in raw.items():
        if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
            raise ConfigError("a split must be a list of task ids", file=file, field=str(name))
        for k, tid in enumerate(ids):
            if tid not in task_ids:
                raise ConfigError(f"unknown task id {tid!r}", file=file, field=f"{name}.{k}")
        out[str(name)] = list(ids)
    return out


def read_domain_dir(domain: str, src: Path) -> dict[str, Any]:
    """Validate a τ²-bench domain directory fully and return its JSON-serialisable payload.

    Args:
        domain: ``retail`` or ``airline``.
        src: Directory with ``db.json``, ``tasks.json`` and optionally ``split_tasks.json``
            and ``policy.md``.

    Returns:
        ``{"domain", "db", "tasks", "split_tasks", "policy"}`` (``db`` and ``tasks`` as read;
        ``split_tasks`` ``{}`` and ``policy`` ``""`` when the files are absent).

    Raises:
        ConfigError: naming the file and field of the first problem.
    """
    check_domain(domain)
    src = Path(src)
    if not src.is_dir():
        raise ConfigError("not a directory", file=src)
    db_path = src / "db.json"
    raw_db = _read_json(db_path)
    base_for_path(domain, db_path, raw_db)  # validates (and warms the cache)
    tasks_path = src / "tasks.json"
    raw_tasks = _read_json(tasks_path)
    tasks = parse_tasks(domain, raw_tasks, tasks_path)
    check_task_references(tasks, raw_db, tasks_path)
    split: dict[str, list[str]] = {}
    split_path = src / "split_tasks.json"
    if split_path.exists():
        split = parse_split(_read_json(split_path), {t.id for t in tasks}, split_path)
    policy = ""
    policy_path = src / "policy.md"
    if policy_path.exists():
        try:
            policy = policy_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read: {exc}", file=policy_path) from None
    return {
        "domain": domain,
        "db": raw_db,
        "tasks": raw_tasks,
        "split_tasks": split,
        "policy": policy,
    }


def base_for_path(domain: str, db_path: Path, raw: Any | None = None) -> BaseDB:
    """Return the cached typed base of ``db_path`` (loading it on first use)."""
    resolved = db_path.resolve()
    try:
        st = resolved.stat()
    except OSError:
        raise ConfigError("file is missing", file=db_path) from None
    key = ("path", domain, str(resolved), st.st_size, st.st_mtime_ns)
    with _LOCK:
        hit = _BASES.get(key)
    if hit is not None:
        return hit
    if raw is None:
        raw = _read_json(db_path)
    base = BaseDB(type_db(domain, raw, db_path))
    with _LOCK:
        _BASES[key] = base
    return base


def base_for_payload(domain: str, raw_db: Any, file: str = "<payload>.db") -> BaseDB:
    """Return the cached typed base of an in-memory database (keyed by its content)."""
    digest = hashlib.sha256(
        json.dumps(raw_db, sort_keys=True, default=str).encode("utf-8")
    ).hexdigest()
    key = ("payload", domain, digest)
    with _LOCK:
        hit = _BASES.get(key)
    if hit is not None:
        return hit
    base = BaseDB(type_db(domain, raw_db, file))
    with _LOCK:
        _BASES[key] = base
    return base


def read_json_file(path: Path) -> Any:
    """Read a JSON file, raising ConfigError naming it on any problem."""
    return _read_json(path)


def clear_cache() -> None:
    """Forget every cached base (tests)."""
    with _LOCK:
        _BASES.clear()
