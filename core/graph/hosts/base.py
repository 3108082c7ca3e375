"""The generic construction adapter, built only on the public :class:`HostWorld` protocol.

Worlds expose ``seeds()``, ``execute()``, ``phrase()`` and ``tools()``. Construction needs a few
more hooks (witness conditions for refinements, slot domains for substitutions, validity,
answer views for subset reasoning). The generic versions below derive them from the world's own
seeds; host subclasses refine them from the world's public attributes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from core.envs.base import HostWorld
from core.model.base import canonical_json
from core.model.intent import Condition, ConditionValue, GroundTruth, Intent

Relation = Literal["equal", "subset", "superset", "different", "unexecutable"]
"""How a literal reading's answer relates to the true answer."""

HostClass = Literal["shop", "service", "generic"]

STOPWORDS = frozenset(
    """a an the and or but of in on at to for from with by my your our their his her its it
    it's is are was were be been am i i'm i'd i'll me we you he she they this that these those
    as so if then than too very just also not no don't do does did want would like should
    could can will please ending one ones some any all per""".split()
)
"""Function words never used as value atoms."""

_WORD = re.compile(r"[a-z0-9_]+(?:[.'-][a-z0-9_]+)*")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` (keeps ids like ``gift_card_1`` and ``2024-05-19``)."""
    return _WORD.findall(text.lower())


def contains_atom(text: str, atom: str) -> bool:
    """Return whether ``atom`` occurs in ``text`` as a whole word sequence (case-insensitive)."""
    a = atom.strip().lower()
    if not a:
        return False
    pattern = r"(?<![a-z0-9])" + re.escape(a) + r"(?![a-z0-9])"
    return re.search(pattern, text.lower()) is not None


def json_leaves(value: object) -> list[str]:
    """Flatten a JSON value into its human-visible leaf strings (dict keys excluded)."""
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in json_leaves(value[k])]
    if isinstance(value, list):
        return [leaf for v in value for leaf in json_leaves(v)]
    if value is None:
        return []
    if isinstance(value, bool):
        return ["yes" if value else "no"]
    if isinstance(value, float) and value.is_integer():
        return [str(int(value))]
    return [str(value)]


class HostAdapter:
    """Construction hooks for one loaded world (generic implementation).

    Attributes:
        world: The wrapped world.
        benchmark: Its benchmark id.
        host_class: Which phrasing family the template writer uses.
    """

    host_class: HostClass = "generic"

    def __init__(self, world: HostWorld) -> None:
        self.world = world
        self.benchmark = world.benchmark
        self._seeds: list[Intent] | None = None
        self._gt_cache: dict[str, GroundTruth | None] = {}
        self.executions = 0
        self._atom_cache: dict[tuple[str, str, str], list[str]] = {}
        self._frames: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ seeds and execution
    def seeds(self) -> list[Intent]:
        """Return the world's seeds (cached, in a stable order)."""
        if self._seeds is None:
            self._seeds = sorted(self.world.seeds(), key=lambda s: (s.env_id, s.intent_id))
        return self._seeds

    def execute(self, intent: Intent) -> GroundTruth | None:
        """Execute ``intent``; None when the world cannot execute it (cached by content)."""
        key = intent.intent_id
        if key not in self._gt_cache:
            self.executions += 1
            try:
                self._gt_cache[key] = self.world.execute(intent)
            except Exception:  # noqa: BLE001 - any failure means "not executable"
                self._gt_cache[key] = None
        return self._gt_cache[key]

    def make_intent(self, like: Intent, conditions: Iterable[Condition]) -> Intent:
        """Build an intent over ``like``'s base and env with ``conditions``."""
        return Intent.build(
            benchmark=like.benchmark,
            env_id=like.env_id,
            base=like.base,
            conditions=tuple(conditions),
            context=dict(like.context),
        )

    def is_valid(self, intent: Intent) -> bool:
        """Whether ``intent`` is a meaningful goal for this host (generic: ≥1 condition)."""
        return len(intent.conditions) >= 1

    # ------------------------------------------------------------------ answers
    def answer_view(self, gt: GroundTruth) -> frozenset[str] | None:
        """Monotone view of an answer for subset reasoning (None for state hashes)."""
        if gt.kind == "statehash" or gt.kind == "scalar":
            return None
        return frozenset(gt.value)

    def is_empty(self, gt: GroundTruth) -> bool:
        """Whether an answer is empty (a state hash is never empty)."""
        if gt.kind == "statehash":
            return False
        return gt.cardinality == 0

    def relation(self, truth: GroundTruth, other: GroundTruth | None) -> Relation:
        """Relate another answer to the truth (equal / subset / superset / different)."""
        if other is None:
            return "unexecutable"
        if other.hash == truth.hash:
            return "equal"
        a, b = self.answer_view(truth), self.answer_view(other)
        if a is None or b is None:
            return "different"
        if a == b:
            return "equal"
        if b < a:
            return "subset"
        if b > a:
            return "superset"
        return "different"

    def cardinality(self, gt: GroundTruth | None) -> int:
        """Cardinality of an answer (0 when unexecutable)."""
        return 0 if gt is None else gt.cardinality

    # ------------------------------------------------------------------ slots and values
    def siblings(self, intent: Intent) -> list[Intent]:
        """Other seeds in the same environment."""
        return [
            s for s in self.seeds() if s.env_id == intent.env_id and s.intent_id != intent.intent_id
        ]

    def slot_family(self, slot: str) -> str:
        """Key under which slot values are pooled into a domain (generic: the slot itself)."""
        return slot

    def domain(self, intent: Intent, slot: str) -> list[ConditionValue]:
        """Alternative values for ``slot`` (generic: values siblings hold for the same slot)."""
        fam = self.slot_family(slot)
        cur = intent.slot_map().get(slot)
        seen: dict[str, ConditionValue] = {}
        for s in self.siblings(intent):
            for c in s.conditions:
                if self.slot_family(c.slot) == fam and (cur is None or c.value != cur.value):
                    seen.setdefault(canonical_json(c.value), c.value)
        return [seen[k] for k in sorted(seen)]

    def witnesses(self, intent: Intent, gt: GroundTruth) -> list[tuple[Condition, ...]]:
        """Condition bundles that may refine ``intent`` (generic: siblings' new-slot conditions).

        Each bundle is added as a whole (τ² adds a complete extra request).
        """
        have = {c.slot for c in intent.conditions}
        out: dict[str, tuple[Condition, ...]] = {}
        for s in self.siblings(intent):
            for c in s.conditions:
                if c.slot not in have:
                    out.setdefault(canonical_json(c), (c,))
        return [out[k] for k in sorted(out)]

    def extra_candidates(self, intent: Intent, gt: GroundTruth) -> list[tuple[Condition, ...]]:
        """Bundles a user might add without holding them (irrelevant information)."""
        return self.witnesses(intent, gt)

    def slot_label(self, cond: Condition) -> str:
        """A short human label of a condition's slot ('color', 'payment id')."""
        slot = cond.slot
        if slot == "price_upper":
            return "price"
        tail = slot.split(":")[-1]
        return tail.replace("_", " ").strip() or slot

    def relaxations(self, intent: Intent) -> list[list[Condition]]:
        """Condition lists that relax ``intent`` (generic: drop one condition)."""
        conds = list(intent.conditions)
        return [conds[:i] + conds[i + 1 :] for i in range(len(conds))]

    def is_ordered(self, cond: Condition) -> bool:
        """Whether a slot has an order, so a vague 'reasonable/best' marker makes sense."""
        if cond.op in ("<=", ">="):
            return True
        v = self.decoded(cond.value)
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    def name_reveals_value(self, slot: str) -> bool:
        """Whether the slot name itself carries the value (such slots cannot be marked)."""
        return False

    def decoded(self, value: ConditionValue) -> object:
        """Decode a condition value (τ² values are canonical JSON text)."""
        return value

    def atoms(self, cond: Condition) -> list[str]:
        """Human-visible atoms of a condition's value, as the world's phrasing shows them.

        JSON leaves that the world's phrase repeats verbatim are atoms. When the phrase hides
        some leaves (a payment id said as "my gift card"), the phrase's own words that are not
        part of the slot's frame (words every phrase of the slot shares) are atoms too.
        """
        key = (cond.slot, cond.op, canonical_json(cond.value))
        hit = self._atom_cache.get(key)
        if hit is not None:
            return hit
        leaves = [a for a in json_leaves(self.decoded(cond.value)) if a.strip()]
        try:
            ph = self.phrase(cond).lower()
        except Exception:  # noqa: BLE001 - phrasing is best effort
            ph = ""
        visible = [a for a in leaves if contains_atom(ph, a)]
        out = list(dict.fromkeys(leaves if not ph or len(visible) == len(leaves) else visible))
        if ph and len(visible) < len(leaves):
            frame = self._frame(cond)
            out += [
                t
                for t in tokens(ph)
                if t not in frame and t not in STOPWORDS and len(t) > 1 and t not in out
            ]
        self._atom_cache[key] = out
        return out

    def _frame(self, cond: Condition) -> set[str]:
        """Words every phrase of this slot family shares (the frame around the value)."""
        fam = self.slot_family(cond.slot)
        if fam in self._frames:
            return self._frames[fam]
        values: dict[str, ConditionValue] = {}
        for s in self.seeds():
            for c in s.conditions:
                if self.slot_family(c.slot) == fam:
                    values.setdefault(canonical_json(c.value), c.value)
        values.setdefault(
            "~dummy", canonical_json("zzqx") if self.host_class == "service" else "zzqx"
        )
        phrases = []
        for k in sorted(values)[:12]:
            try:
                phrases.append(
                    set(tokens(self.phrase(cond.model_copy(update={"value": values[k]}))))
                )
            except Exception:  # noqa: BLE001
                continue
        frame = set.intersection(*phrases) if len(phrases) >= 2 else set()
        frame.discard("zzqx")
        self._frames[fam] = frame
        return frame

    def request_of(self, slot: str) -> str | None:
        """Identifier of the request a slot belongs to (τ² writes); None when single-request."""
        return None

    def customer_index(self) -> dict[str, str]:
        """Entity id → customer id for the policy gate (generic: no customers)."""
        return {}

    def customer(self, intent: Intent) -> str | None:
        """The customer an intent belongs to (generic: none)."""
        return None

    def phrase(self, cond: Condition) -> str:
        """Customer wording of one condition (the world's own phrasing)."""
        return self.world.phrase(cond)

    def topic(self, intent: Intent) -> str:
        """A short topical phrase for the request (a shop section, a service)."""
        return intent.env_id.replace("_", " ")

    def tool_names(self) -> list[str]:
        """Names of the agent-visible tools."""
        return sorted(t.name for t in self.world.tools())

    def write_tools(self) -> list[str]:
        """Names of the write tools (capability mismatch needs them)."""
        return sorted(t.name for t in self.world.tools() if t.kind == "write")

    def supports_capability_fault(self) -> bool:
        """Whether tool_capability_mismatch is realisable (needs write tools and requests)."""
        return False
