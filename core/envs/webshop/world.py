"""The shop host world: catalogue + sessions + the adapter hooks the engine needs.

Intents over the shop use three kinds of conditions (as in the Drift-Bench++ release):
``attr:<a> = <a>`` (a required attribute), ``option:<i> = <value>`` (a required option value;
``<i>`` is the goal-option index, an option name is accepted too) and ``price_upper <= <cap>``.
An intent's ``env_id`` is the cluster (scrape query) and its ``base`` the goal id whose target
product defines the wanted *type* (name, query and breadcrumb for the type reward).

Ground truth of an intent = every product of its cluster, with its best option choice, whose
WebShop reward is ≥ 0.999 and whose price is within the cap.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.envs.base import CatalogueWords, EnvSession, WorldBase
from core.envs.requirement_lexicon import Problem, SlotLexicon
from core.envs.webshop.catalogue import Catalogue, CatalogueLike, page_count
from core.envs.webshop.loader import BUNDLED_DIR, load_payload_dir, validate_payload
from core.envs.webshop.models import Goal, GoalSpec, Product, RewardBreakdown, WorldPayload
from core.envs.webshop.reward import best_options, get_reward
from core.envs.webshop.search import PAGE_SIZE
from core.envs.webshop.session import BUY_NOW, ShopSession, rating_text
from core.envs.webshop.text import heuristic_nouns
from core.envs.webshop.views import ResultItem, ResultsView
from core.errors import ConfigError
from core.model.base import content_hash
from core.model.config import WEBSHOP_ACCEPT_THRESHOLD, ProtocolConfig
from core.model.intent import Condition, GroundTruth, Intent
from core.model.world import EnvAction, ToolSpec, Verdict

ACCEPT_THRESHOLD = WEBSHOP_ACCEPT_THRESHOLD
GROUND_TRUTH_MEMO = "webshop.ground_truth"
"""The world's memo table of executed ground truths (intent id → ground truth)."""
"""A purchase is accepted when its reward reaches this (and the price is within the cap)."""

NO_CAP = 1_000_000.0

_TOOLS = (
    ToolSpec(
        name="search",
        description=(
            "Search the shop's catalogue (only on the search page). Returns up to 50 products, "
            "10 per page. Equivalent to WebShop's search[keywords]."
        ),
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Search keywords."}},
            "required": ["query"],
        },
        kind="read",
    ),
    ToolSpec(
        name="click",
        description=(
            "Click a button or link on the current page: a product id on a results page, "
            "'next >', '< prev', 'back to search', an option value, 'description', 'features', "
            "'reviews', 'attributes', or 'buy now' (commits the purchase). Equivalent to "
            "WebShop's click[target]."
        ),
        parameters={
            "type": "object",
            "properties": {"target": {"type": "string", "description": "Clickable text."}},
            "required": ["target"],
        },
        kind="write",
    ),
)


def _option_key(slot: str) -> tuple[int, int, str]:
    key = slot.split(":", 1)[1]
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


def gt_row(asin: str, options: Mapping[str, str]) -> str:
    """Encode one purchase as the release's compact JSON row ``[asin, [[opt, val], ...]]``."""
    pairs = [[k, options[k]] for k in sorted(options)]
    return json.dumps([asin, pairs], ensure_ascii=False, separators=(",", ":"))


class WebShopWorld(WorldBase):
    """A loaded shop world (read-only, shareable across threads and sessions).

    Attributes:
        benchmark: Always ``"webshop"``.
        world_id: Content hash of the payload.
        payload: The validated payload.
        goals: Goals in file order.
        products: Products in file order.
        catalogue: Lookup tables and the search index.
    """

    benchmark: str = "webshop"

    def __init__(self, payload: WorldPayload, world_id: str | None = None) -> None:
        """Build the catalogue and search index for ``payload``."""
        self.payload: WorldPayload | None = payload
        self.world_id = world_id or content_hash(payload.model_dump(mode="json"))
        self._setup(Catalogue(payload.products), list(payload.goals))

    @classmethod
    def from_catalogue_file(cls, path: Path, world_id: str | None = None) -> WebShopWorld:
        """Open a world over a catalogue file written by the streaming importer.

        Products stay on disk (decoded when shown); goals are loaded. ``payload`` is None.

        Raises:
            ConfigError: the file is missing, unfinished or broken.
        """
        from core.envs.webshop.shopdb import DiskCatalogue

        cat = DiskCatalogue(path)
        world = cls.__new__(cls)
        world.payload = None
        world.world_id = world_id or "ws-" + (cat.db.meta("content_hash") or "")[:40]
        world._setup(cat, cat.db.goals())
        return world

    def _setup(self, catalogue: CatalogueLike, goals: list[Goal]) -> None:
        self.catalogue: CatalogueLike = catalogue
        self.products: Sequence[Product] = catalogue.products
        self.goals: list[Goal] = goals
        self._goal_by_id = {g.goal_id: g for g in self.goals}

    # ------------------------------------------------------------- protocol
    def tools(self) -> Sequence[ToolSpec]:
        """Return the ``search`` and ``click`` tools."""
        return _TOOLS

    def open_session(
        self, instruction: str | None = None, goal: Goal | GoalSpec | None = None
    ) -> ShopSession:
        """Open a fresh session on the search page.

        Args:
            instruction: Text shown on every page (None for Drift-Bench++ episodes).
            goal: If given, the done page shows the reward against it (play / golden runs).
        """
        spec = self.goal_spec(goal) if goal is not None else None
        return ShopSession(self.catalogue, instruction=instruction, goal=spec)

    def seeds(self) -> list[Intent]:
        """Return one root intent per goal (conditions compiled from the goal)."""
        return [self.goal_intent(g) for g in self.goals]

    def goal_intent(self, goal: Goal) -> Intent:
        """Compile a goal to its root intent (attr:, option:<i>, price_upper)."""
        conds = [Condition(slot=f"attr:{a}", op="=", value=a) for a in goal.attributes]
        conds += [
            Condition(slot=f"option:{i}", op="=", value=v) for i, v in enumerate(goal.goal_options)
        ]
        if goal.price_upper < NO_CAP:
            cap = goal.price_upper
            conds.append(
                Condition(slot="price_upper", op="<=", value=int(cap) if cap.is_integer() else cap)
            )
        return Intent.build(
            benchmark=self.benchmark,
            env_id=goal.query,
            base=goal.goal_id,
            conditions=conds,
            is_seed=True,
            source_record=goal.goal_id,
            context={"product": goal.query},
        )

    def execute(self, intent: Intent) -> GroundTruth:
        """Return every (asin, options) of the intent's cluster that the intent accepts.

        Raises:
            ConfigError: unknown base goal or cluster, or an unsupported condition.
        """
        memo = self.memo(GROUND_TRUTH_MEMO)
        cached: GroundTruth | None = memo.get(intent.intent_id)
        if cached is not None:
            return cached
        spec = self.intent_spec(intent)
        cluster = self.catalogue.clusters.get(intent.env_id)
        if cluster is None:
            raise ConfigError(f"unknown cluster {intent.env_id!r}", field="env_id")
        rows = []
        for p in cluster:
            if p.price > spec.price_upper:
                continue
            opts = best_options(p, spec.goal_options)
            if get_reward(p, spec, opts).reward >= ACCEPT_THRESHOLD:
                rows.append(gt_row(p.asin, opts))
        gt = GroundTruth(kind="purchaseset", value=sorted(rows))
        memo.put(intent.intent_id, gt)
        return gt

    def judge(self, intent: Intent, session: EnvSession, config: ProtocolConfig) -> Verdict:
        """Accept iff the reward reaches ``config.webshop_accept_threshold`` within the cap."""
        threshold = config.webshop_accept_threshold
        proposal = session.proposal()
        if not proposal or not proposal.get("asin"):
            return Verdict(accepted=False, reason="nothing_selected_to_buy", score=0.0)
        product = self.catalogue.get(str(proposal["asin"]))
        if product is None:
            return Verdict(accepted=False, reason="unknown_asin", score=0.0)
        spec = self.intent_spec(intent)
        options = {str(k): str(v) for k, v in dict(proposal.get("options") or {}).items()}
        r = get_reward(product, spec, options)
        if product.price > spec.price_upper:
            return Verdict(accepted=False, reason="over_price_limit", score=r.reward)
        return Verdict(
            accepted=r.reward >= threshold, reason=f"reward={r.reward:.3f}", score=r.reward
        )

    def phrase(self, condition: Condition) -> str:
        """Phrase a condition in the customer's voice (``in black``, ``under $40`` …)."""
        slot, value = condition.slot, condition.value
        if slot.startswith("attr:"):
            return str(value)
        if slot.startswith("option:"):
            return phrase_option(self.option_name(condition), str(value))
        if slot == "price_upper":
            cap = float(value)
            return f"under ${int(cap)}" if cap.is_integer() else f"under ${cap:.2f}"
        return f"{slot} {condition.op} {value}"

    def option_name(self, condition: Condition) -> str:
        """Return the option name an ``option:`` condition refers to ('' when unknown)."""
        key = condition.slot.split(":", 1)[1]
        if not key.isdigit():
            return key
        return self.catalogue.option_name_of(str(condition.value)) or ""

    def slot_label(self, condition: Condition) -> str:
        """Return a short noun for a condition's slot (``color``, ``size``, ``price``, …)."""
        if condition.slot.startswith("attr:"):
            return "feature"
        if condition.slot.startswith("option:"):
            return self.option_name(condition) or "option"
        if condition.slot == "price_upper":
            return "price"
        return condition.slot

    def slot_lexicon(self, condition: Condition) -> SlotLexicon:
        """Return how shoppers talk about a condition (interpreter hook)."""
        from core.envs.webshop import shop_lexicon

        return shop_lexicon.slot_lexicon(self, condition)

    def context_lexicon(self, key: str) -> SlotLexicon:
        """The product type is no fact to ask for: "what kind of product?" is an open question."""
        return SlotLexicon(slot=key, label=key, family="context", cues=())

    def lexicon_families(self) -> tuple[SlotLexicon, ...]:
        """Return the shop's slot families (interpreter hook)."""
        from core.envs.webshop import shop_lexicon

        return shop_lexicon.families()

    def unmet_problems(self, intent: Intent, session: EnvSession) -> list[Problem]:
        """Return what the purchase gets wrong, in plain words (rejection hints)."""
        from core.envs.webshop import shop_lexicon

        return shop_lexicon.problems(self, intent, session)

    def unmet_slots(self, intent: Intent, session: EnvSession) -> list[str] | None:
        """Return the slots the purchase fails (None when nothing was bought)."""
        if not session.proposal():
            return None
        out: list[str] = []
        for p in self.unmet_problems(intent, session):
            out += [s for s in p.slots if s not in out]
        return out

    # --------------------------------------------------------------- helpers
    def catalogue_words(self) -> CatalogueWords | None:
        """The catalogue's attribute phrases and option values (from its counts; None if empty).

        Read from the aggregates a catalogue keeps, so a million-product shop is not scanned.
        """
        if not self.catalogue.products:
            return None
        return CatalogueWords(
            attributes=frozenset(a.lower() for a in self.catalogue.attribute_counts() if a),
            options=frozenset(
                v.lower() for vs in self.catalogue.option_counts().values() for v in vs if v
            ),
        )

    def task_count(self) -> int:
        """One task per goal."""
        return len(self.goals)

    def test_split(self) -> list[Goal]:
        """The paper's 500 WebShop test tasks: goals ``h00000``–``h00499`` (see ``stream``).

        Empty unless the world was imported with ``human_goals.json``.
        """
        return [
            g
            for g in self.goals
            if g.goal_id[:1] == "h" and g.goal_id[1:].isdigit() and int(g.goal_id[1:]) < 500
        ]

    def goal(self, goal_id: str) -> Goal:
        """Return the goal with ``goal_id`` (ConfigError if unknown)."""
        g = self._goal_by_id.get(goal_id)
        if g is None:
            raise ConfigError(f"unknown webshop goal {goal_id!r}", field="goal_id")
        return g

    def goal_spec(self, goal_like: Goal | GoalSpec | Intent) -> GoalSpec:
        """Return the reward-relevant fields of a goal, goal spec or intent."""
        if isinstance(goal_like, GoalSpec):
            return goal_like
        if isinstance(goal_like, Intent):
            return self.intent_spec(goal_like)
        target = self.catalogue.get(goal_like.asin)
        nouns = target.name_nouns if target is not None else heuristic_nouns(goal_like.name)
        return GoalSpec(
            name=goal_like.name,
            name_nouns=nouns,
            query=goal_like.query,
            product_category=goal_like.product_category,
            attributes=list(goal_like.attributes),
            goal_options=list(goal_like.goal_options),
            price_upper=goal_like.price_upper,
        )

    def intent_spec(self, intent: Intent) -> GoalSpec:
        """Build the reward goal of an intent: its base goal's type plus its conditions."""
        base = self._goal_by_id.get(intent.base)
        if base is None:
            raise ConfigError(f"unknown base goal {intent.base!r}", field="base")
        attrs: list[str] = []
        options: list[tuple[tuple[int, int, str], str]] = []
        cap = NO_CAP
        for c in intent.conditions:
            if c.slot.startswith("attr:"):
                attrs.append(str(c.value))
            elif c.slot.startswith("option:"):
                options.append((_option_key(c.slot), str(c.value)))
            elif c.slot == "price_upper":
                cap = float(c.value)
            else:
                raise ConfigError(f"unsupported webshop condition slot {c.slot!r}", field="slot")
        base_spec = self.goal_spec(base)
        return base_spec.model_copy(
            update={
                "attributes": attrs,
                "goal_options": [v for _, v in sorted(options, key=lambda kv: kv[0])],
                "price_upper": cap,
            }
        )

    def search(self, query: str, page: int = 1) -> ResultsView:
        """Run a search and return one page of results."""
        hits = self.catalogue.search(query)
        pages = page_count(len(hits))
        page = min(max(1, page), pages)
        window = hits[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        items = []
        for a in window:
            p = self.catalogue.by_asin[a]
            items.append(
                ResultItem(
                    asin=a,
                    title=p.title,
                    price=p.price,
                    price_text=p.price_text,
                    rating=rating_text(p),
                )
            )
        return ResultsView(
            keywords=query,
            page=page,
            total=len(hits),
            num_pages=pages,
            items=items,
            has_prev=page > 1,
            has_next=page < pages,
        )

    def reward(
        self, goal_like: Goal | GoalSpec | Intent, asin: str, options: Mapping[str, str]
    ) -> RewardBreakdown:
        """Return WebShop's reward (all components) for buying ``asin`` with ``options``."""
        product = self.catalogue.get(asin)
        if product is None:
            raise ConfigError(f"unknown asin {asin!r}", field="asin")
        return get_reward(product, self.goal_spec(goal_like), options)

    def is_proposal_action(self, action: EnvAction) -> bool:
        """Buy Now is the shop's proposal: the engine adjudicates it when the click succeeds."""
        target = str(action.args.get("target", ""))
        return action.tool == "click" and target.strip().lower() == BUY_NOW

    def compile_intent(self, intent: Intent) -> list[EnvAction]:
        """Return an action sequence that buys one ground-truth item of ``intent``.

        Prefers the base goal's target; searches with the intent's own words and falls back to
        the product title when that search does not reach it.

        Raises:
            ConfigError: when the intent has an empty ground truth.
        """
        gt = self.execute(intent)
        if not gt.value:
            raise ConfigError(f"intent {intent.intent_id} has no ground truth", field="conditions")
        rows = [json.loads(r) for r in gt.value]
        base = self._goal_by_id.get(intent.base)
        chosen = next((r for r in rows if base is not None and r[0] == base.asin), rows[0])
        asin, pairs = chosen[0], chosen[1]
        product = self.catalogue.by_asin[asin]
        words = [intent.env_id] + [
            str(c.value) for c in intent.conditions if c.slot != "price_upper"
        ]
        query = " ".join(words)
        hits = self.catalogue.search(query)
        if asin not in hits:
            query = product.title
            hits = self.catalogue.search(query)
        if asin not in hits:  # pragma: no cover - a title search always finds its product
            raise ConfigError(f"cannot reach {asin} by search", field="conditions")
        actions = [EnvAction(tool="search", args={"query": query})]
        actions += [EnvAction(tool="click", args={"target": "next >"})] * (
            hits.index(asin) // PAGE_SIZE
        )
        actions.append(EnvAction(tool="click", args={"target": asin.lower()}))
        actions += [EnvAction(tool="click", args={"target": v}) for _, v in pairs]
        actions.append(EnvAction(tool="click", args={"target": "buy now"}))
        return actions


def phrase_option(name: str, value: str) -> str:
    """Phrase an option value the way a shopper says it."""
    forms = {
        "color": f"in {value}",
        "size": f"in size {value}",
        "scent": f"with a {value} scent",
        "flavor": f"in the {value} flavor",
        "roast": f"a {value}",
        "model": f"for the {value}",
        "pack": f"as a {value}" if value != "single" else "as a single item",
    }
    return forms.get(name, f"with {name} {value}" if name else value)


CATALOGUE_FILE = "catalogue.sqlite"
"""A folder holding this file is opened as a catalogue-file world (``--data DIR``)."""

_CACHE: dict[str, WebShopWorld] = {}
_CACHE_LOCK = threading.Lock()


def load_webshop_world(data_dir: Path | None = None) -> WebShopWorld:
    """Load (once per process) the shop world in ``data_dir``.

    Args:
        data_dir: A folder holding ``world.json.gz``/``world.json`` (this project's format) or
            WebShop's raw ``items_shuffle*.json`` files; None means the bundled
            ``data/webshop/``.

    Raises:
        ConfigError: missing or malformed files (naming file and field).
    """
    folder = (data_dir or BUNDLED_DIR).resolve()
    key = str(folder)
    with _CACHE_LOCK:
        world = _CACHE.get(key)
    if world is not None:
        return world
    if not folder.is_dir():
        raise ConfigError("webshop data folder does not exist", file=folder)
    if (folder / CATALOGUE_FILE).is_file():
        world = WebShopWorld.from_catalogue_file(folder / CATALOGUE_FILE)
        with _CACHE_LOCK:
            return _CACHE.setdefault(key, world)
    if any(folder.glob("items_shuffle*.json")) and not any(folder.glob("world.json*")):
        from core.envs.webshop.importer import INLINE_MAX, catalogue_path, payload_from_catalogue
        from core.envs.webshop.stream import import_catalogue

        # stream into a cached catalogue file (resumable); big catalogues are served from it
        db = catalogue_path(None, folder)
        got = import_catalogue(folder, db, progress=False)
        if got["products"] > INLINE_MAX:
            world = WebShopWorld.from_catalogue_file(db)
            with _CACHE_LOCK:
                return _CACHE.setdefault(key, world)
        payload = validate_payload(payload_from_catalogue(db, folder), folder)
        shutil.rmtree(db.parent, ignore_errors=True)  # a small world lives in memory only
    else:
        payload = load_payload_dir(folder)
    world = WebShopWorld(payload)
    with _CACHE_LOCK:
        _CACHE.setdefault(key, world)
        return _CACHE[key]


def load_webshop_world_from_payload(payload: dict[str, Any]) -> WebShopWorld:
    """Build (once per process and content) a world from a stored payload dict.

    Raises:
        ConfigError: if the payload is malformed (file is reported as ``<payload>``).
    """
    from core.envs.webshop.shopdb import DB_FORMAT

    if isinstance(payload, dict) and payload.get("format") == DB_FORMAT:
        return _from_catalogue_ref(payload)
    model = validate_payload(payload, "<payload>")
    world_id = content_hash(model.model_dump(mode="json"))
    key = f"payload:{world_id}"
    with _CACHE_LOCK:
        world = _CACHE.get(key)
    if world is None:
        world = WebShopWorld(model, world_id=world_id)
        with _CACHE_LOCK:
            world = _CACHE.setdefault(key, world)
    return world


def _from_catalogue_ref(payload: dict[str, Any]) -> WebShopWorld:
    """A stored world that points at a catalogue file (checked against its content hash)."""
    path = Path(str(payload.get("path", "")))
    want = str(payload.get("content_hash", ""))
    key = f"db:{path}:{want}"
    with _CACHE_LOCK:
        world = _CACHE.get(key)
    if world is None:
        world = WebShopWorld.from_catalogue_file(path)
        from core.envs.webshop.shopdb import DiskCatalogue

        cat = world.catalogue
        got = cat.db.meta("content_hash") if isinstance(cat, DiskCatalogue) else None
        if got != want:
            raise ConfigError(
                "catalogue file changed since it was imported (import it again)", file=path
            )
        world.world_id = "ws-" + want[:40]
        with _CACHE_LOCK:
            world = _CACHE.setdefault(key, world)
    return world
