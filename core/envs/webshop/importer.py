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
* goals are shuffled with ``random.Random(233)`` as WebShop does.

Documented differences: a range price ("$10.00 - $20.00") is stored as its midpoint instead of a
random draw at load time; ``price_upper`` is the second $10 step above the price (not a random
pick); MTurk worker and assignment ids are not kept; reviews/ratings are not imported;
``name_nouns`` come from a heuristic, not spaCy.
"""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from core.envs.webshop.loader import read_json_file, validate_payload
from core.envs.webshop.models import Goal, Product, WorldPayload
from core.envs.webshop.text import heuristic_nouns, price_text, price_upper_for, round_money
from core.errors import ConfigError, pydantic_error_to_config_error
from core.model.base import content_hash
from core.store import Store

GOAL_SHUFFLE_SEED = 233


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


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


_ITEMS = TypeAdapter(list[RawItem])
_ATTRS = TypeAdapter(dict[str, RawAttributes])
_HUMAN = TypeAdapter(dict[str, list[RawHumanInstruction]])


def _pick(src: Path, preferred: tuple[str, ...], pattern: str) -> Path | None:
    for name in preferred:
        if (src / name).is_file():
            return src / name
    found = sorted(p for p in src.glob(pattern) if p.is_file())
    return found[0] if found else None


def _validate(adapter: TypeAdapter[Any], data: Any, file: Path) -> Any:
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise pydantic_error_to_config_error(exc, file) from exc


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


def read_webshop_dir(src: Path) -> dict[str, Any]:
    """Read WebShop's data files from ``src`` and return a validated world payload dict.

    Args:
        src: Folder with ``items_shuffle*.json`` and optionally ``items_ins_v2*.json`` and
            ``items_human_ins.json``.

    Raises:
        ConfigError: naming the file and field of the first problem.
    """
    if not src.is_dir():
        raise ConfigError("not a folder", file=src)
    items_file = _pick(
        src, ("items_shuffle_1000.json", "items_shuffle.json"), "items_shuffle*.json"
    )
    if items_file is None:
        raise ConfigError("no items_shuffle*.json product file", file=src)
    attrs_file = _pick(src, ("items_ins_v2_1000.json", "items_ins_v2.json"), "items_ins_v2*.json")
    human_file = src / "items_human_ins.json" if (src / "items_human_ins.json").is_file() else None

    items: list[RawItem] = _validate(_ITEMS, read_json_file(items_file), items_file)
    attrs: dict[str, RawAttributes] = (
        _validate(_ATTRS, read_json_file(attrs_file), attrs_file) if attrs_file else {}
    )
    human: dict[str, list[RawHumanInstruction]] | None = (
        _validate(_HUMAN, read_json_file(human_file), human_file) if human_file else None
    )

    products: list[Product] = []
    seen: set[str] = set()
    for i, it in enumerate(items):
        asin = it.asin
        if asin == "nan" or len(asin) > 10 or not asin or asin in seen:
            continue
        seen.add(asin)
        if not it.name.strip():
            raise ConfigError("empty product name", file=items_file, field=f"{i}.name")
        if not it.query.strip():
            raise ConfigError("empty scrape query", file=items_file, field=f"{i}.query")
        bullets = it.small_description
        bullet_list = bullets if isinstance(bullets, list) else ([bullets] if bullets else [])
        price, tag = parse_pricing(it.pricing)
        entry = attrs.get(asin)
        attributes = (
            entry.attributes if entry is not None and entry.attributes is not None else None
        )
        products.append(
            Product(
                asin=asin,
                name=it.name,
                title=it.name,
                description=it.full_description or "",
                bullet_points=bullet_list,
                price=price,
                price_text=tag,
                category=it.category or "",
                product_category=it.product_category or "",
                query=it.query.lower().strip(),
                attributes=attributes if attributes is not None else ["DUMMY_ATTR"],
                options=_options(it.customization_options),
                name_nouns=heuristic_nouns(it.name),
            )
        )

    goals = (
        _human_goals(products, human) if human is not None else _synthetic_goals(products, attrs)
    )
    random.Random(GOAL_SHUFFLE_SEED).shuffle(goals)
    width = max(4, len(str(max(len(goals) - 1, 0))))
    final = [g.model_copy(update={"goal_id": f"g{i:0{width}d}"}) for i, g in enumerate(goals)]
    payload = WorldPayload(
        name=src.name,
        source=str(src),
        notes=[
            f"imported from {items_file.name}"
            + (f", {attrs_file.name}" if attrs_file else "")
            + (f", {human_file.name}" if human_file else ""),
            "range prices fixed at their midpoint; price_upper = second $10 step above price",
            "worker/assignment ids dropped; reviews not imported; name_nouns heuristic",
            "human goals" if human is not None else "synthetic goals (no items_human_ins.json)",
        ],
        products=products,
        goals=final,
    )
    data = payload.model_dump(mode="json")
    validate_payload(data, src)
    return data


def _goal(product: Product, instruction: str, attributes: list[str], options: list[str]) -> Goal:
    cap = price_upper_for(product.price)
    return Goal(
        goal_id="pending",
        asin=product.asin,
        instruction_text=instruction + price_text(cap),
        attributes=attributes,
        goal_options=options,
        price_upper=cap,
        category=product.category,
        query=product.query,
        name=product.name,
        product_category=product.product_category,
    )


def _human_goals(
    products: list[Product], human: dict[str, list[RawHumanInstruction]]
) -> list[Goal]:
    goals: list[Goal] = []
    for p in products:
        for ins in human.get(p.asin, []):
            if not ins.instruction_attributes:
                continue
            opts = ins.instruction_options
            values = list(opts.values()) if isinstance(opts, dict) else list(opts)
            text = ins.instruction.strip(".")
            if text:
                goals.append(_goal(p, text, list(ins.instruction_attributes), values))
    return goals


def _synthetic_goals(products: list[Product], attrs: dict[str, RawAttributes]) -> list[Goal]:
    goals: list[Goal] = []
    for p in products:
        entry = attrs.get(p.asin)
        if entry is None or not entry.instruction or not entry.instruction_attributes:
            continue
        names = sorted(p.options)
        for combo in itertools.product(*(p.options[n] for n in names)):
            option_text = ", and ".join(f"{n}: {v}" for n, v in zip(names, combo, strict=True))
            text = entry.instruction + (f" with {option_text}" if option_text else "")
            goals.append(_goal(p, text, list(entry.instruction_attributes), list(combo)))
    return goals


def import_webshop(src: Path, store: Store) -> dict[str, Any]:
    """Validate WebShop's files in ``src`` and store them as one world.

    Nothing is written when validation fails.

    Returns:
        ``{"products", "goals", "clusters", "world_id"}``.

    Raises:
        ConfigError: naming the file and field of the first problem.
    """
    payload = read_webshop_dir(src)
    world_id = content_hash(payload)
    clusters = len({p["query"] for p in payload["products"]})
    summary = {
        "products": len(payload["products"]),
        "goals": len(payload["goals"]),
        "clusters": clusters,
    }
    store.put_world(
        benchmark="webshop",
        world_id=world_id,
        name=src.name,
        source=str(src),
        payload=payload,
        summary=summary,
    )
    return {**summary, "world_id": world_id}
