"""Generate WebShop-format catalogues of any size (1k … 1.18M products) for tests and benchmarks.

WebShop's full catalogue (``items_shuffle.json`` ≈ 5.2 GB) cannot be downloaded here, so this
module writes files in WebShop's own formats, shaped like its data, which the streaming
importer (:mod:`core.envs.webshop.stream`) then reads exactly like the real ones:

* ``items_shuffle.json`` — a JSON list of raw scraped products (``asin``, ``name``,
  ``full_description``, ``small_description`` bullets, ``pricing`` as ``"$x"`` or
  ``"$x - $y"``, ``images``, ``product_category`` breadcrumb, ``category``, ``query``,
  ``customization_options`` {name: [{value, image}]}, ``product_information``, rating, brand);
* ``items_ins_v2.json`` — {asin: {attributes, instruction, instruction_attributes}};
* ``items_human_ins.json`` — {asin: [{instruction, instruction_attributes,
  instruction_options, worker_id, assignment_id}]} (ids included so the importer's stripping is
  exercised);
* ``human_goals.json`` — the human instruction strings, without price text, in a seeded order
  (the baselines take the first 500 as the test split).

Words come from the project-authored cluster vocabulary of the bundled shop (``vocab_*.py``),
whose attributes never fuzzy-match each other, so every human goal is exactly satisfiable by
its target (reward 1.0). Every name carries a unique model code, so a title search always
reaches its product even among a million near-identical ones. Files are written streaming:
memory stays flat in the number of products.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from core.envs.webshop.vocab import OPENERS, ClusterSpec
from core.envs.webshop.vocab_home import HOME_CLUSTERS
from core.envs.webshop.vocab_personal import PERSONAL_CLUSTERS
from core.errors import ConfigError

CLUSTERS: tuple[ClusterSpec, ...] = HOME_CLUSTERS + PERSONAL_CLUSTERS
_B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SPACE = 36**8
_MULT = 2_654_435_761 % _SPACE  # odd and not a multiple of 3: a permutation of Z/36^8
_OFFSET = 1_234_567
_FILLERS = (
    "Backed by a one-year limited warranty and friendly customer support.",
    "Each unit is inspected before it leaves the warehouse.",
    "Packaged in a recyclable box with printed care instructions.",
    "Designed in-house and tested by a panel of everyday users.",
    "Ships in frustration-free packaging.",
    "Please check the size chart or specifications before ordering.",
    "Colors may vary slightly between screens.",
    "Suitable as a gift for birthdays, holidays and housewarmings.",
)
_INFO_KEYS = ("Item Weight", "Package Dimensions", "Manufacturer", "Date First Available")


def _b36(n: int, width: int) -> str:
    out = []
    for _ in range(width):
        n, r = divmod(n, 36)
        out.append(_B36[r])
    return "".join(reversed(out))


def asin_for(index: int) -> str:
    """Return the unique, random-looking 10-character ASIN of product ``index``."""
    return "B0" + _b36((index * _MULT + _OFFSET) % _SPACE, 8)


def model_code(index: int) -> str:
    """Return product ``index``'s unique model code (part of its name)."""
    n = (index * 48_271 + 977) % (36**6)
    return _b36(n, 6)[:2] + "-" + _b36(n, 6)[2:]


def human_stride(products: int) -> int:
    """Every how many products one carries human instructions (≈ 12k at 1.18M products)."""
    return max(4, products // 8000)


class _Product:
    """Generate one raw product record and its annotations."""

    def __init__(self, index: int, seed: int) -> None:
        self.index = index
        self.rng = random.Random(f"{seed}:{index}")
        self.spec = CLUSTERS[self.rng.randrange(len(CLUSTERS))]
        self.asin = asin_for(index)

    def raw(self) -> dict[str, Any]:
        rng, spec = self.rng, self.spec
        brand = rng.choice(spec.brands)
        type_phrase = rng.choice(spec.types)[0]
        suffix = rng.choice(spec.suffixes)
        self.attributes = rng.sample(spec.attributes, min(len(spec.attributes), rng.randint(2, 4)))
        lead = " ".join(a.title() for a in self.attributes[:1])
        name = f"{brand} {lead} {type_phrase.title()} {suffix} {model_code(self.index)}"
        self.options: dict[str, list[str]] = {}
        custom: dict[str, list[dict[str, Any]]] = {}
        for opt in spec.options:
            k = rng.randint(opt.min_k, min(opt.max_k, len(opt.values)))
            values = rng.sample(opt.values, k)
            self.options[opt.name] = values
            custom[opt.name.title()] = [
                {"value": v, "image": f"https://images.example.invalid/{self.asin}/{i}.jpg"}
                for i, v in enumerate(values)
            ]
        lo, hi = spec.price_range
        price = round(rng.uniform(lo, hi), 2)
        if rng.random() < 0.15:
            pricing = f"${price:.2f} - ${round(price * 1.4, 2):.2f}"
        else:
            pricing = f"${price:.2f}"
        fmt = {"brand": brand, "type": type_phrase}
        sentences = [s.format(**fmt) for s in spec.descriptions]
        rng.shuffle(sentences)
        sentences += [f"{a.capitalize()}." for a in self.attributes]
        sentences += rng.sample(_FILLERS, rng.randint(3, 6))
        bullets = rng.sample(spec.features, min(len(spec.features), rng.randint(2, 4)))
        bullets += [a.capitalize() for a in self.attributes]
        return {
            "asin": self.asin,
            "name": name,
            "full_description": " ".join(sentences),
            "small_description": bullets,
            "pricing": pricing,
            "images": [
                f"https://images.example.invalid/{self.asin}/main-{i}.jpg"
                for i in range(rng.randint(2, 6))
            ],
            "product_category": rng.choice(spec.breadcrumbs),
            "category": spec.category,
            "query": f"{type_phrase} {suffix}".lower(),
            "customization_options": custom,
            "product_information": {
                _INFO_KEYS[0]: f"{rng.randint(2, 90) / 10} ounces",
                _INFO_KEYS[1]: f"{rng.randint(2, 20)} x {rng.randint(2, 20)} x "
                f"{rng.randint(1, 9)} inches",
                _INFO_KEYS[2]: brand,
                _INFO_KEYS[3]: f"{rng.choice(('March', 'June', 'October'))} "
                f"{rng.randint(1, 28)}, {rng.randint(2015, 2021)}",
            },
            "average_rating": round(rng.uniform(3.0, 5.0), 1),
            "total_reviews": rng.randint(0, 5000),
            "brand": brand,
        }

    def instruction(self) -> tuple[str, list[str], list[str]]:
        """A shopper's instruction for this product: (text, attributes, option values)."""
        rng = self.rng
        attrs = rng.sample(self.attributes, min(len(self.attributes), rng.randint(1, 2)))
        values = [rng.choice(v) for _, v in sorted(self.options.items())]
        values = values[: rng.randint(0, len(values))]
        parts = [rng.choice(OPENERS), rng.choice(self.spec.types)[0]]
        parts.append("that is " + " and ".join(attrs))
        if values:
            parts.append("in " + ", ".join(values))
        return " ".join(parts), sorted(attrs), values

    def ins_v2(self) -> dict[str, Any]:
        text, attrs, _ = self.instruction()
        return {"attributes": self.attributes, "instruction": text, "instruction_attributes": attrs}

    def human(self) -> list[dict[str, Any]]:
        out = []
        for _ in range(1 + (self.rng.random() < 0.5)):
            text, attrs, values = self.instruction()
            out.append(
                {
                    "asin": self.asin,
                    "instruction": text + ".",
                    "instruction_attributes": attrs,
                    "instruction_options": values,
                    "worker_id": f"A{self.rng.randrange(10**12):012d}",
                    "assignment_id": f"3{self.rng.randrange(10**15):015d}",
                }
            )
        return out


def _write_list(fh: TextIO, items: Iterator[Any]) -> None:
    fh.write("[")
    for i, item in enumerate(items):
        fh.write(",\n" if i else "\n")
        fh.write(json.dumps(item, ensure_ascii=False))
    fh.write("\n]\n")


def _write_dict(fh: TextIO, items: Iterator[tuple[str, Any]]) -> None:
    fh.write("{")
    for i, (key, value) in enumerate(items):
        fh.write(",\n" if i else "\n")
        fh.write(json.dumps(key) + ": " + json.dumps(value, ensure_ascii=False))
    fh.write("\n}\n")


CATALOGUE_FILES = (
    "items_shuffle.json",
    "items_ins_v2.json",
    "items_human_ins.json",
    "human_goals.json",
)
"""The files :func:`write_catalogue` creates (never over an existing one)."""


def write_catalogue(
    products: int,
    out: Path,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Write a WebShop-format catalogue of ``products`` products into ``out``.

    Args:
        products: Number of products (≥ 1).
        out: Folder to write (created).
        seed: Generator seed (same seed and size → byte-identical files).
        progress: Called with the number of products written so far (every 1,000).

    Returns:
        ``{"products", "human_instructions", "files": {name: bytes}}``.

    Raises:
        ValueError: ``products`` < 1.
        ConfigError: ``out`` already holds one of the four files (nothing is ever replaced:
            the CLI only writes into a new or empty folder).
    """
    if products < 1:
        raise ValueError("a catalogue needs at least one product")
    out.mkdir(parents=True, exist_ok=True)
    for name in CATALOGUE_FILES:
        if (out / name).exists() or (out / name).is_symlink():
            raise ConfigError(
                f"already holds {name}; a catalogue is written into a new folder", file=out
            )
    stride = human_stride(products)
    human_texts: list[str] = []

    def items() -> Iterator[dict[str, Any]]:
        for i in range(products):
            if progress is not None and i % 1000 == 0:
                progress(i)
            yield _Product(i, seed).raw()

    # each file is regenerated from the per-product seed, so nothing is held in memory
    with (out / "items_shuffle.json").open("x", encoding="utf-8") as fh:
        _write_list(fh, items())

    def ins() -> Iterator[tuple[str, Any]]:
        for i in range(products):
            p = _Product(i, seed)
            p.raw()
            yield p.asin, p.ins_v2()

    with (out / "items_ins_v2.json").open("x", encoding="utf-8") as fh:
        _write_dict(fh, ins())

    def human() -> Iterator[tuple[str, Any]]:
        for i in range(0, products, stride):
            p = _Product(i, seed)
            p.raw()
            p.ins_v2()
            records = p.human()
            human_texts.extend(r["instruction"].strip(".") for r in records)
            yield p.asin, records

    with (out / "items_human_ins.json").open("x", encoding="utf-8") as fh:
        _write_dict(fh, human())
    random.Random(seed).shuffle(human_texts)
    with (out / "human_goals.json").open("x", encoding="utf-8") as fh:
        fh.write(json.dumps(human_texts, indent=1))
    if progress is not None:
        progress(products)
    files = sorted(out.glob("*.json"))
    return {
        "products": products,
        "human_instructions": len(human_texts),
        "files": {f.name: f.stat().st_size for f in files},
    }
