"""Seeded generator of the bundled, project-authored WebShop-schema catalogue.

Run ``python -m core.envs.webshop.generate`` to rewrite ``data/webshop/``. Output is
byte-identical for a given seed (explicit ``random.Random``, sorted iteration, gzip with
``mtime=0``).

Design: each cluster holds *families*. A family is one target product plus three near misses
of the same type, each differing from the target in exactly one goal-relevant way:

* an attribute miss (one of the goal's attributes swapped for another of the cluster's);
* an option miss (the goal's first option value not offered);
* a price miss (a higher-priced edition above the goal's cap).

Every family yields one goal whose instruction is phrased from the target's attributes, options
and cap. The generator verifies with the real reward that each near miss scores below 1 and
keeps only goals whose target is in the top 50 of a search for the instruction text.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import sys
from pathlib import Path
from typing import Any

from core.envs.webshop.loader import BUNDLED_DIR
from core.envs.webshop.models import Goal, GoalSpec, Product, WorldPayload
from core.envs.webshop.reward import best_options, get_reward
from core.envs.webshop.search import SearchIndex
from core.envs.webshop.text import fuzzy_match, heuristic_nouns, price_text, price_upper_for
from core.envs.webshop.vocab import OPENERS, PREMIUM_WORDS, ClusterSpec
from core.envs.webshop.vocab_home import HOME_CLUSTERS
from core.envs.webshop.vocab_personal import PERSONAL_CLUSTERS
from core.model.config import WEBSHOP_ACCEPT_THRESHOLD

DEFAULT_SEED = 20240905
CLUSTERS: tuple[ClusterSpec, ...] = (*PERSONAL_CLUSTERS, *HOME_CLUSTERS)
FAMILIES_PER_CLUSTER = 40
WORLD_FILE = "world.json.gz"
MANIFEST_FILE = "manifest.json"

_ASIN_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def check_vocab(spec: ClusterSpec) -> None:
    """Raise ValueError if a cluster's vocabulary would let products 'have' foreign attributes."""
    texts = [*spec.brands, *(t for t, _ in spec.types), *spec.suffixes, *spec.descriptions]
    texts += [*spec.features, spec.prefix, *PREMIUM_WORDS]
    for i, a in enumerate(spec.attributes):
        for b in spec.attributes[i + 1 :]:
            if a in b or b in a or fuzzy_match(a, b):
                raise ValueError(f"{spec.query}: attributes {a!r} and {b!r} overlap")
        for t in texts:
            if a in t.lower():
                raise ValueError(f"{spec.query}: attribute {a!r} occurs in {t!r}")


def _title_case(phrase: str) -> str:
    return " ".join(w if any(c.isdigit() for c in w) else w.capitalize() for w in phrase.split())


def _price(rng: random.Random, lo: float, hi: float) -> float:
    whole = rng.randint(int(lo), int(hi))
    return round(whole + rng.choice((0.99, 0.49, 0.95, 0.0, 0.79)), 2)


class _Builder:
    """Generates one cluster's products and goals from a private RNG."""

    def __init__(self, spec: ClusterSpec, rng: random.Random, asins: set[str]) -> None:
        self.spec = spec
        self.rng = rng
        self.asins = asins

    def new_asin(self) -> str:
        while True:
            asin = "B0" + "".join(self.rng.choice(_ASIN_CHARS) for _ in range(8))
            if asin not in self.asins:
                self.asins.add(asin)
                return asin

    def product(
        self,
        *,
        brand: str,
        type_phrase: str,
        attributes: list[str],
        options: dict[str, list[str]],
        price: float,
        breadcrumb: str,
        suffix: str,
        premium: str | None = None,
    ) -> Product:
        spec, rng = self.spec, self.rng
        head = [brand] + ([premium] if premium else []) + ([spec.prefix] if spec.prefix else [])
        in_title = attributes[:2]
        title = (
            " ".join([*head, *(_title_case(a) for a in in_title), _title_case(type_phrase)])
            + f" - {suffix}"
        )
        rest = attributes[2:]
        if rest:
            bullet0 = "Made with " + " and ".join(rest) + " for everyday use"
        else:
            bullet0 = rng.choice(spec.features)
        bullets = [bullet0] + [
            f"{_title_case(a)}: {rng.choice(spec.features).lower()}" for a in in_title
        ]
        bullets += rng.sample(spec.features, 2)
        sentences = rng.sample(spec.descriptions, 3)
        description = " ".join(s.format(brand=brand, type=type_phrase) for s in sentences)
        return Product(
            asin=self.new_asin(),
            name=title,
            title=title,
            description=description,
            bullet_points=bullets,
            price=price,
            price_text=f"${price:.2f}",
            category=spec.category,
            product_category=breadcrumb,
            query=spec.query,
            attributes=list(attributes),
            options=options,
            name_nouns=heuristic_nouns(title),
            rating=round(rng.uniform(3.4, 4.9), 1),
        )

    def family(self) -> tuple[list[Product], Goal | None]:
        spec, rng = self.spec, self.rng
        brand = rng.choice(spec.brands)
        type_phrase, plural = rng.choice(spec.types)
        attrs = rng.sample(spec.attributes, rng.choice((3, 3, 4)))
        options: dict[str, list[str]] = {}
        for o in spec.options:
            k = rng.randint(o.min_k, o.max_k)
            picked = set(rng.sample(o.values, k))
            options[o.name] = [v for v in o.values if v in picked]
        price = _price(rng, *spec.price_range)
        breadcrumb = rng.choice(spec.breadcrumbs)
        suffix = rng.choice(spec.suffixes)
        base = {
            "brand": brand,
            "type_phrase": type_phrase,
            "breadcrumb": breadcrumb,
            "suffix": suffix,
        }
        target = self.product(attributes=attrs, options=options, price=price, **base)

        goal_attrs = rng.sample(attrs, min(len(attrs), rng.choice((1, 2, 2, 2, 3))))
        goal_opts: list[tuple[str, str]] = []
        first = spec.options[0].name
        goal_opts.append((first, rng.choice(options[first])))
        for o in spec.options[1:]:
            if rng.random() < 0.7:
                goal_opts.append((o.name, rng.choice(options[o.name])))
        cap = price_upper_for(price)
        gspec = GoalSpec(
            name=target.name,
            name_nouns=target.name_nouns,
            query=spec.query,
            product_category=breadcrumb,
            attributes=goal_attrs,
            goal_options=[v for _, v in goal_opts],
            price_upper=cap,
        )

        def other_brand() -> str:
            return rng.choice(spec.brands) if rng.random() < 0.5 else brand

        products = [target]
        # attribute miss
        for _ in range(10):
            dropped = rng.choice(goal_attrs)
            spare = [a for a in spec.attributes if a not in attrs]
            swapped = [rng.choice(spare) if a == dropped else a for a in attrs]
            cand = self.product(
                attributes=swapped,
                options=options,
                price=min(cap - 0.01, _price(rng, price * 0.85, price * 1.1)),
                **{**base, "brand": other_brand()},
            )
            if self._is_near_miss(cand, gspec):
                products.append(cand)
                break
        # option miss
        for _ in range(10):
            values = options[first]
            gone = goal_opts[0][1]
            pool = [v for v in spec.options[0].values if v not in values]
            if not pool:
                break
            repl = rng.choice(pool)
            new_vals = [repl if v == gone else v for v in values]
            cand = self.product(
                attributes=attrs,
                options={**options, first: new_vals},
                price=min(cap - 0.01, _price(rng, price * 0.85, price * 1.1)),
                **{**base, "brand": other_brand()},
            )
            if self._is_near_miss(cand, gspec):
                products.append(cand)
                break
        # price miss
        premium = self.product(
            attributes=attrs,
            options=options,
            price=round(cap + rng.randint(3, 30) + 0.99, 2),
            premium=rng.choice(PREMIUM_WORDS),
            **base,
        )
        products.append(premium)
        goal = Goal(
            goal_id="pending",
            asin=target.asin,
            instruction_text=self.instruction(type_phrase, plural, goal_attrs, goal_opts)
            + price_text(cap),
            attributes=goal_attrs,
            goal_options=[v for _, v in goal_opts],
            price_upper=cap,
            category=spec.category,
            query=spec.query,
            name=target.name,
            product_category=breadcrumb,
        )
        return products, goal

    @staticmethod
    def _is_near_miss(p: Product, g: GoalSpec) -> bool:
        r = get_reward(p, g, best_options(p, g.goal_options))
        return r.reward < WEBSHOP_ACCEPT_THRESHOLD

    def instruction(
        self, type_phrase: str, plural: bool, attrs: list[str], opts: list[tuple[str, str]]
    ) -> str:
        rng = self.rng
        joined = attrs[0] if len(attrs) == 1 else ", ".join(attrs[:-1]) + " and " + attrs[-1]
        noun = (
            type_phrase if plural else ("an " if type_phrase[0] in "aeiou" else "a ") + type_phrase
        )
        form = rng.randrange(3)
        if form == 0:
            body = f"{noun} with {joined}"
        elif form == 1:
            body = f"{noun} that {'are' if plural else 'is'} {joined}"
        else:
            body = f"{joined} {type_phrase}"
        clauses = [_option_clause(rng, name, value) for name, value in opts]
        return f"{rng.choice(OPENERS)} {body}" + "".join(clauses)


def _option_clause(rng: random.Random, name: str, value: str) -> str:
    forms = {
        "color": (f" in {value}", f" in {value} color", f", color {value}"),
        "size": (f" in size {value}", f", size {value}", f" size {value}"),
        "scent": (f" with {value} scent", f" in the {value} scent"),
        "flavor": (f" in {value} flavor", f", {value} flavor"),
        "roast": (f", {value}", f" in {value}"),
        "model": (f" for {value}", f" that fits {value}"),
        "pack": (f", {value}", f" as a {value}"),
    }.get(name, (f" with {name} {value}",))
    return rng.choice(forms)


def build_payload(seed: int = DEFAULT_SEED, families: int = FAMILIES_PER_CLUSTER) -> WorldPayload:
    """Generate the whole catalogue and its goals (deterministic in ``seed``)."""
    rng = random.Random(seed)
    asins: set[str] = set()
    products: list[Product] = []
    goals: list[Goal] = []
    for spec in CLUSTERS:
        check_vocab(spec)
        builder = _Builder(spec, random.Random(rng.randrange(2**32)), asins)
        for _ in range(families):
            fam, goal = builder.family()
            products.extend(fam)
            if goal is not None:
                goals.append(goal)
    rng.shuffle(products)
    index = SearchIndex(products)
    reachable = [g for g in goals if g.asin in index.search(g.instruction_text, cache=False)]
    rng.shuffle(reachable)
    final = [g.model_copy(update={"goal_id": f"g{i:04d}"}) for i, g in enumerate(reachable)]
    return WorldPayload(
        name="Drift-Bench++ bundled shop",
        source=f"core.envs.webshop.generate seed={seed} families={families}",
        notes=[
            "Project-authored synthetic catalogue in WebShop's product schema.",
            "Fixed prices; price_upper = second $10 step above the target's price.",
            "name_nouns precomputed by core.envs.webshop.text.heuristic_nouns.",
        ],
        products=products,
        goals=final,
    )


def payload_bytes(payload: WorldPayload) -> bytes:
    """Serialise a payload as deterministic gzip (mtime 0, no file name)."""
    text = json.dumps(payload.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(text.encode("utf-8"))
    return buf.getvalue()


def manifest(payload: WorldPayload, seed: int) -> dict[str, Any]:
    """Return summary counts of a payload (written beside the data)."""
    clusters: dict[str, int] = {}
    for p in payload.products:
        clusters[p.query] = clusters.get(p.query, 0) + 1
    return {
        "seed": seed,
        "file": WORLD_FILE,
        "products": len(payload.products),
        "goals": len(payload.goals),
        "clusters": dict(sorted(clusters.items())),
    }


def generate_bundled(seed: int, out_dir: Path) -> None:
    """Write ``world.json.gz`` and ``manifest.json`` for ``seed`` into ``out_dir``.

    Args:
        seed: Generator seed (the bundled data uses :data:`DEFAULT_SEED`).
        out_dir: Target folder (created if missing).
    """
    payload = build_payload(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / WORLD_FILE).write_bytes(payload_bytes(payload))
    text = json.dumps(manifest(payload, seed), indent=2, sort_keys=True) + "\n"
    (out_dir / MANIFEST_FILE).write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Regenerate ``data/webshop/`` (optionally ``--seed N`` and ``--out DIR``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    seed, out = DEFAULT_SEED, BUNDLED_DIR
    while args:
        flag = args.pop(0)
        if flag == "--seed" and args:
            seed = int(args.pop(0))
        elif flag == "--out" and args:
            out = Path(args.pop(0))
        else:
            print("usage: python -m core.envs.webshop.generate [--seed N] [--out DIR]")
            return 2
    generate_bundled(seed, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
