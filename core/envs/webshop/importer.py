"""Import WebShop's own data files into a shop-world payload.

Reads ``items_shuffle*.json`` (products), ``items_ins_v2*.json`` (attributes and synthetic
instructions) and, when present, ``items_human_ins.json`` (human instructions), following
WebShop's ``load_products`` / ``get_goals`` semantics:

* products with ASIN ``nan`` or longer than 10 characters are skipped, as are repeated ASINs;
* ``Title`` = name, ``Description`` = full_description, ``BulletPoints`` = small_description;
* options: lower-cased names; values stripped, ``/`` → `` | ``, lower-cased;
* ``Attributes`` from items_ins_v2 (``['DUMMY_ATTR']`` when missing); ``query`` lower-cased;
* human goals (when items_human_ins.json exists): one per instruction with non-empty
  ``instruction_attributes``; otherwise synthetic goals, one per option combination;
* goals are shuffled with ``random.Random(233)`` as WebShop does; with ``human_goals.json``
  (the baselines' instruction list) goal ``hNNNNN`` is the goal of entry NNNNN, so
  ``h00000``–``h00499`` are the paper's 500 test tasks.

Every file is streamed (ijson, batched inserts, resumable) by :mod:`core.envs.webshop.stream`
into a catalogue file (:mod:`core.envs.webshop.shopdb`); small catalogues are then stored inline
in the world row, big ones (over :data:`INLINE_MAX` products) stay in their file.

Documented differences: a range price ("$10.00 - $20.00") is stored as its midpoint instead of a
random draw at load time; ``price_upper`` is the second $10 step above the price (not a random
pick); MTurk worker and assignment ids are not kept; reviews/ratings are not imported;
``name_nouns`` come from a heuristic, not spaCy.
"""

from __future__ import annotations

import hashlib
import math
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ConfigDict

from core.envs.webshop.loader import validate_payload
from core.envs.webshop.models import WorldPayload
from core.envs.webshop.text import round_money
from core.model.base import content_hash
from core.store import Store

GOAL_SHUFFLE_SEED = 233


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)  # 1e999 names its field


class RawOption(_Loose):
    """One customisation value as scraped."""

    value: str


class RawItem(_Loose):
    """The fields of a raw WebShop product this importer reads."""

    asin: str
    name: str
    query: str
    full_description: str | None = ""
    small_description: list[str] | str | None = None
    pricing: str | list[float | str] | None = None
    product_category: str | None = ""
    category: str | None = ""
    customization_options: dict[str, list[RawOption] | None] | str | None = None


class RawAttributes(_Loose):
    """One entry of items_ins_v2.json."""

    attributes: list[str] | None = None
    instruction: str | None = None
    instruction_attributes: list[str] | None = None


class RawHumanInstruction(_Loose):
    """One entry of items_human_ins.json (worker/assignment ids are ignored)."""

    instruction: str
    instruction_attributes: list[str] = []
    instruction_options: list[str] | dict[str, str] = []


def _pick(src: Path, preferred: tuple[str, ...], pattern: str) -> Path | None:
    for name in preferred:
        if (src / name).is_file():
            return src / name
    found = sorted(p for p in src.glob(pattern) if p.is_file())
    return found[0] if found else None


def parse_pricing(pricing: str | list[float | str] | None) -> tuple[float, str]:
    """Return ``(fixed price, price tag)`` following WebShop's parsing.

    >>> parse_pricing("$12.99"), parse_pricing("$10.00 - $20.00"), parse_pricing(None)
    ((12.99, '$12.99'), (15.0, '$10.0 to $20.0'), (100.0, '$100.0'))
    """
    values: list[float] = []
    if isinstance(pricing, str):
        for part in pricing.split("$")[1:]:
            digits = re.sub(r"[^\d.]", "", part)
            try:
                values.append(float(digits))
            except ValueError:
                continue
    elif isinstance(pricing, list):
        for v in pricing:
            try:
                values.append(float(v))
            except ValueError:
                continue
    values = [v for v in values if math.isfinite(v)]  # a 400-digit "price" is not a price
    if not values:
        return 100.0, "$100.0"
    if len(values) == 1:
        return values[0], f"${values[0]}"
    lo, hi = values[0], values[1]
    return round_money((lo + hi) / 2), f"${lo} to ${hi}"


def _options(raw: dict[str, list[RawOption] | None] | str | None) -> dict[str, list[str]]:
    if not isinstance(raw, dict):
        return {}
    out: dict[str, list[str]] = {}
    for name, contents in raw.items():
        if contents is None:
            continue
        values = [c.value.strip().replace("/", " | ").lower() for c in contents]
        if values and name:
            out[name.lower()] = values
    return out


INLINE_MAX = 50_000
"""Catalogues up to this many products are stored inline in the world row (as before);
larger ones stay in their catalogue file, which the stored world points at."""


def _scratch_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="driftbench-webshop-"))


def payload_from_catalogue(db_path: Path, src: Path) -> dict[str, Any]:
    """Read a finished catalogue file back into an inline world payload dict (small worlds).

    Raises:
        ConfigError: the catalogue is unusable.
    """
    from core.envs.webshop.shopdb import DiskCatalogue
    from core.envs.webshop.source_files import Sources

    cat = DiskCatalogue(db_path)
    names = [p.name for p in Sources(src).files()]
    kind = cat.db.meta("goal_kind") or "human"
    ordered = bool(int(cat.db.meta("human_goals_matched") or 0))
    payload = WorldPayload(
        name=src.name,
        source=str(src),
        notes=[
            "imported from " + ", ".join(names),
            "range prices fixed at their midpoint; price_upper = second $10 step above price",
            "worker/assignment ids dropped; reviews not imported; name_nouns heuristic",
            "human goals" if kind == "human" else "synthetic goals (no items_human_ins.json)",
        ]
        + (
            ["goals hNNNNN follow human_goals.json (h00000-h00499 = test split)"] if ordered else []
        ),
        products=list(cat.products),
        goals=cat.db.goals(),
    )
    data = payload.model_dump(mode="json")
    validate_payload(data, src)
    return data


def read_webshop_dir(src: Path) -> dict[str, Any]:
    """Read WebShop's data files from ``src`` and return a validated inline world payload dict.

    The files are streamed through :func:`core.envs.webshop.stream.import_catalogue` into a
    scratch catalogue file (removed afterwards); use :func:`import_webshop` for big catalogues.

    Args:
        src: Folder with ``items_shuffle*.json`` and optionally ``items_ins_v2*.json``,
            ``items_human_ins.json`` and ``human_goals.json``.

    Raises:
        ConfigError: naming the file and field of the first problem.
    """
    from core.envs.webshop.source_files import Sources
    from core.envs.webshop.stream import import_catalogue

    Sources(src)  # fail on a missing folder or product file before making a scratch dir
    scratch = _scratch_dir()
    try:
        db = scratch / "catalogue.sqlite"
        import_catalogue(src, db, progress=False)
        return payload_from_catalogue(db, src)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def catalogue_path(store: Any, src: Path) -> Path:
    """Where ``import webshop`` keeps the catalogue file of ``src`` for ``store``.

    Next to the store's database (``<store dir>/webshop/<name>-<hash>/catalogue.sqlite``); the
    name depends only on the source folder, so re-running an interrupted import resumes it.
    """
    root = getattr(store, "path", None)
    base = Path(root).parent if root else Path(tempfile.gettempdir()) / "driftbench-webshop"
    key = hashlib.sha256(str(src.resolve()).encode()).hexdigest()[:12]
    return base / "webshop" / f"{src.name}-{key}" / "catalogue.sqlite"


def import_webshop(
    src: Path, store: Store, *, progress: bool = False, out: TextIO | None = None
) -> dict[str, Any]:
    """Stream WebShop's files in ``src`` into a catalogue and store it as one world.

    Up to :data:`INLINE_MAX` products the world row holds the whole payload (and the catalogue
    file is removed); above it the row points at the catalogue file (``format`` =
    ``driftbench-webshop-db``). Nothing is stored when validation fails; an interrupted import
    resumes where it stopped.

    Args:
        src: The WebShop data folder.
        store: Where the world is recorded.
        progress: Draw a progress bar (rate and ETA) on stderr.
        out: Where the progress bar goes (default stderr).

    Returns:
        ``{"products", "goals", "clusters", "world_id", "test_goals", "human_goals_matched",
        "storage", "resumed", "seconds", "already_imported"}`` (``already_imported``: the store
        already held exactly this world; nothing was written).

    Raises:
        ConfigError: naming the file and field of the first problem.
    """
    from core.envs.webshop.shopdb import DB_FORMAT
    from core.envs.webshop.source_files import Sources
    from core.envs.webshop.stream import import_catalogue

    Sources(src)
    db = catalogue_path(store, src)
    got = import_catalogue(src, db, progress=progress, out=out)
    summary = {"products": got["products"], "goals": got["goals"], "clusters": got["clusters"]}
    extra = {
        "test_goals": got["test_goals"],
        "human_goals_matched": got["human_goals_matched"],
        "resumed": got["resumed"],
        "seconds": got["seconds"],
    }
    world_id, already = "", False
    try:
        if got["products"] <= INLINE_MAX:
            payload = payload_from_catalogue(db, src)
            world_id = content_hash(payload)
            shutil.rmtree(db.parent, ignore_errors=True)
            storage = "inline"
        else:
            payload = {
                "format": DB_FORMAT,
                "path": str(db),
                "content_hash": got["content_hash"],
                "name": src.name,
                "source": str(src),
                **summary,
            }
            world_id = "ws-" + got["content_hash"][:40]
            storage = str(db)
        already = store.get_world(world_id) is not None
        if not already:
            store.put_world(
                benchmark="webshop",
                world_id=world_id,
                name=src.name,
                source=str(src),
                payload=payload,
                summary=summary,
            )
    except Exception:  # never leave a catalogue file that no stored world points at
        if not world_id or store.get_world(world_id) is None:
            shutil.rmtree(db.parent, ignore_errors=True)
        raise
    extra["already_imported"] = already
    return {**summary, "world_id": world_id, **extra, "storage": storage}
