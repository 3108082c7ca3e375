"""LLM writer and extractors (through :mod:`core.llm`), with prompts as data files.

* :class:`LLMWriter` renders a plan with ``data/prompts/fault_writer.md``; it is given the true
  requirements and the plan's instructions, never the answer set.
* :class:`LLMExtractor` answers the questionnaire of ``data/prompts/fault_extractor.md`` with a
  JSON object; unusable replies become an unparsed :class:`Extraction` (a step-1 rejection).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

from core.errors import ConfigError
from core.faults.cue_lexicon import FAULTS_DIR
from core.faults.extract import Extraction, ExtractionContext
from core.faults.plan import FaultPlan
from core.faults.surface import goal_of
from core.faults.taxonomy import DIFF_CLASS, DIFF_CLASSES, FAMILY_OF_CLASS
from core.faults.writer import WHOLE_MESSAGE, Written
from core.graph.hosts.base import HostAdapter, contains_atom
from core.model.bounds import load_yaml
from core.model.intent import Intent
from core.model.sample import FaultType
from core.paths import PROMPTS_DIR


class _Completer(Protocol):
    def complete(self, messages: Sequence[Any], **kw: Any) -> Any: ...


WRITER_TEMPERATURE = 0.7
"""Default sampling temperature of the LLM writer (the reference's); extractors use 0."""


def _client(
    spec: str, temperature: float | None = None, *, role: str, default_temperature: float
) -> _Completer:
    """A cached client (the store's response cache, like every other LLM call).

    The models file's entry for the role (or the one naming this model) gives every setting
    — cap, timeout, retries, endpoint, key variable, temperature; ``temperature`` overrides
    the entry's, and ``default_temperature`` applies only when neither sets one.

    Args:
        spec: The model spec.
        temperature: Override the spec's temperature (None: the entry's, else the default).
        role: ``writer`` or ``extractor`` (its calls are priced under that role).
        default_temperature: The role's temperature when nothing sets one.
    """
    from core.llm import make_client
    from core.llm.models import resolve_spec
    from core.paths import default_store_path

    resolved = resolve_spec(spec, role)
    if temperature is not None:
        resolved = resolved.model_copy(update={"temperature": temperature})
    elif "temperature" not in resolved.model_fields_set:
        resolved = resolved.model_copy(update={"temperature": default_temperature})
    return make_client(resolved, cache_path=default_store_path(), role=role)


def same_model(a: str, b: str) -> bool:
    """Whether two extractor specs name the same model (then they are not independent)."""
    from core.model.families import same_model as _same

    return _same(a, b)


@lru_cache(maxsize=8)
def _prompt(name: str) -> str:
    path = PROMPTS_DIR / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError("prompt file is missing", file=path) from exc


@lru_cache(maxsize=1)
def _cards() -> dict[str, dict[str, str]]:
    path = FAULTS_DIR / "cards.yaml"
    data = load_yaml(path, what="fault cards")
    if not isinstance(data, dict):
        raise ConfigError("must be a mapping of fault type to card", file=path)
    for t in FaultType:
        card = data.get(t.value)
        if not isinstance(card, dict):
            raise ConfigError("card missing", file=path, field=t.value)
        for key in CARD_FIELDS:
            if not isinstance(card.get(key), str) or not card[key].strip():
                raise ConfigError(f"card needs a {key}", file=path, field=f"{t.value}.{key}")
    return data


CARD_FIELDS = ("name", "description", "example", "final_rule")
"""What every fault card holds (``data/faults/cards.yaml``)."""


def card_block(plans: Sequence[FaultPlan]) -> tuple[str, str, str, str]:
    """(names, descriptions, examples, final rules) of the plans' cards, for a writer prompt."""
    cards = _cards()
    seen = list(dict.fromkeys(p.fault.value for p in plans))
    names = " + ".join(cards[t]["name"] for t in seen)
    desc = " / ".join(cards[t]["description"] for t in seen)
    examples = "\n".join(f"- {cards[t]['name']}: {cards[t]['example']}" for t in seen)
    rules = "\n".join(f"- {cards[t]['final_rule']}" for t in seen)
    return names, desc, examples, rules


@lru_cache(maxsize=1)
def extraction_questions() -> dict[str, dict[str, str]]:
    """The type-specific extraction questions (``data/faults/extraction.yaml``), per type.

    Raises:
        ConfigError: A type without questions (names the file and the type).
    """
    path = FAULTS_DIR / "extraction.yaml"
    data = load_yaml(path, what="extraction questions")
    if not isinstance(data, dict):
        raise ConfigError("must be a mapping of fault type to questions", file=path)
    out: dict[str, dict[str, str]] = {}
    for t in FaultType:
        qs = (data.get(t.value) or {}).get("questions")
        if not isinstance(qs, dict) or not qs:
            raise ConfigError("needs questions", file=path, field=t.value)
        out[t.value] = {str(k): str(v) for k, v in qs.items()}
    return out


def questions_block(types: Sequence[FaultType]) -> str:
    """The questions of ``types`` as prompt lines (``- type.id: question``)."""
    qs = extraction_questions()
    return "\n".join(f"- {t.value}.{qid}: {q}" for t in types for qid, q in qs[t.value].items())


def _truthy(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    text = str(v).strip().lower()
    if text in ("true", "yes", "y", "1"):
        return True
    if text in ("false", "no", "n", "0", ""):
        return False
    return None


def _empty(v: Any) -> bool:
    if isinstance(v, (list, tuple)):
        return not any(str(x).strip() for x in v)
    return not str(v or "").strip()


def check_answers(answers: dict[str, Any]) -> tuple[list[str], bool]:
    """What the type-specific answers say is wrong: (other changes, plausible).

    Each fault type's own questions check its contract: an indirect request must state no
    request, a buried request must stay complete, a factual error must not also state the true
    value, a presupposition must name its fallback, an unbound expression must not state its
    exact value elsewhere, an ambiguity must have two readings (else it is not plausible), an
    extra wish must leave the true requirements intact.
    """
    other: list[str] = []
    plausible = True

    def get(t: FaultType, q: str) -> Any:
        got = answers.get(t.value)
        return got.get(q) if isinstance(got, dict) else None

    def flag(t: FaultType, q: str, bad: bool, why: str) -> None:
        if t.value in answers and _truthy(get(t, q)) is bad:
            other.append(f"{t.value}: {why}")

    flag(FaultType.INDIRECT_INTENT, "request_stated", True, "a request is stated")
    flag(FaultType.CONTEXTUAL_IRRELEVANCE, "request_complete", False, "request incomplete")
    flag(FaultType.FACTUAL_ERROR, "true_value_present", True, "the true value is stated too")
    flag(FaultType.INSUFFICIENT_INFORMATION, "hinted", True, "the omission is hinted at")
    flag(FaultType.IRRELEVANT_INFORMATION, "requirements_intact", False, "a requirement moved")
    for t in (
        FaultType.LEXICAL_AMBIGUITY,
        FaultType.REFERENTIAL_AMBIGUITY,
        FaultType.VAGUENESS_SUBJECTIVITY,
    ):
        flag(t, "exact_value_stated", True, "the exact value is stated elsewhere")
    if FaultType.FALSE_PRESUPPOSITION.value in answers and _empty(
        get(FaultType.FALSE_PRESUPPOSITION, "fallback")
    ):
        other.append("false_presupposition: no fallback value")
    if FaultType.TOOL_CAPABILITY_MISMATCH.value in answers and _empty(
        get(FaultType.TOOL_CAPABILITY_MISMATCH, "capability")
    ):
        other.append("tool_capability_mismatch: no capability named")
    for t, q in (
        (FaultType.LEXICAL_AMBIGUITY, "readings"),
        (FaultType.SYNTACTIC_AMBIGUITY, "attachments"),
    ):
        if t.value in answers:
            v = get(t, q)
            parts = (
                v
                if isinstance(v, list)
                else re.split(r"\s*(?:;|/|\bor\b|\bvs\.?\b)\s*", str(v or ""))
            )
            if len([x for x in parts if str(x).strip()]) < 2:
                plausible = False
    return other, plausible


def plan_instructions(adapter: HostAdapter, intent: Intent, plan: FaultPlan) -> str:
    """One-line instruction telling a writer how to realise ``plan`` (no answer set)."""
    smap = intent.slot_map()
    cond = smap.get(plan.target) if plan.target else None
    true_phrase = adapter.phrase(cond) if cond is not None else ""
    other = (
        adapter.phrase(cond.model_copy(update={"value": plan.stated_value}))
        if cond is not None and plan.stated_value is not None
        else ""
    )
    label = adapter.slot_label(cond) if cond is not None else ""
    kind = plan.mask_kind
    if kind == "substituted":
        return f"- Say '{other}' instead of '{true_phrase}'; never mention '{true_phrase}'."
    if kind == "presupposed":
        return f"- Presuppose that '{true_phrase}' is not possible and settle for '{other}'."
    if kind == "withheld":
        return f"- Do not mention '{true_phrase}' (or the {label}) at all."
    if kind == "marked":
        return f"- Refer to the {label} only as '{plan.surface}', never its exact value."
    if kind == "ambiguous" and plan.sub_kind == "polysemous":
        return (
            f"- Refer to the {label} only with the word '{plan.surface}' "
            f"(it could also mean '{other}')."
        )
    if kind == "ambiguous":
        return f"- Put '{true_phrase}' at the very end, where it could attach to something else."
    if kind == "extra":
        extra = "; ".join(adapter.phrase(c) for c in plan.extra)
        return f"- Also ask for '{extra}', which the customer does not actually need."
    if kind == "capability":
        req = adapter.request_of(plan.target or "") or ""
        goal = goal_of(adapter, req, 0) if req else f"check the {label}"
        return f"- Ask the assistant to use its {plan.surface} (which it does not have) to {goal}."
    if plan.fault is FaultType.CONTEXTUAL_IRRELEVANCE:
        return "- Open with three or four sentences (25+ words) of unrelated personal chatter."
    return "- Never state a request; only describe the situation."


def _requirements(adapter: HostAdapter, intent: Intent, with_slots: bool) -> str:
    lines = []
    for c in intent.conditions:
        ph = adapter.phrase(c)
        lines.append(f"- {c.slot}: {ph}" if with_slots else f"- {ph}")
    return "\n".join(lines)


def infer_surfaces(
    text: str, plans: Sequence[FaultPlan], adapter: HostAdapter, intent: Intent
) -> dict[int, str]:
    """Locate each component's words in a free-form text (for string checks)."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]
    atoms = [a for c in intent.conditions for a in adapter.atoms(c)]
    out: dict[int, str] = {}
    for i, p in enumerate(plans):
        if p.fault is FaultType.CONTEXTUAL_IRRELEVANCE:
            lead = []
            for s in sentences:
                if any(contains_atom(s, a) for a in atoms):
                    break
                lead.append(s)
            out[i] = " ".join(lead)
        elif p.mask_kind == "presupposed":
            hits = [s for s in sentences if p.stated_value is not None]
            out[i] = hits[-1] if hits else ""
        else:
            out[i] = p.surface
    return out


class LLMWriter:
    """Writer backed by a language model."""

    def __init__(
        self,
        spec: str,
        client: _Completer | None = None,
        temperature: float | None = None,
    ) -> None:
        self.name = spec
        self.client = client or _client(
            spec, temperature, role="writer", default_temperature=WRITER_TEMPERATURE
        )
        # a given client is any ChatModel: only a configured model's carries a spec
        got = getattr(getattr(self.client, "spec", None), "temperature", temperature)
        self.temperature = got if isinstance(got, float) else WRITER_TEMPERATURE

    def write(
        self,
        adapter: HostAdapter,
        intent: Intent,
        plans: Sequence[FaultPlan],
        *,
        variant: int,
        rng: random.Random,
    ) -> Written:
        """Ask the model for the request text.

        With three or more faults, the whole-message faults (indirect intent, contextual
        irrelevance) are not written in the first pass: the model first writes the request with
        the other faults, then a second, transformation-only call applies the whole-message
        faults to that text (``fault_writer_transform.md``) — the paper's two-stage render.
        """
        two_pass = len(plans) >= 3 and any(p.fault in WHOLE_MESSAGE for p in plans)
        first = [p for p in plans if not (two_pass and p.fault in WHOLE_MESSAGE)]
        text = self._first_pass(adapter, intent, first, variant)
        if two_pass:
            frame = [p for p in plans if p.fault in WHOLE_MESSAGE]
            text = self._transform(adapter, intent, frame, text, variant)
        return Written(text=text, surfaces=infer_surfaces(text, plans, adapter, intent))

    def _first_pass(
        self, adapter: HostAdapter, intent: Intent, plans: Sequence[FaultPlan], variant: int
    ) -> str:
        names, desc, examples, rules = card_block(plans)
        prompt = _prompt("fault_writer.md").format(
            topic=adapter.topic(intent),
            requirements=_requirements(adapter, intent, with_slots=False),
            card_name=names,
            card_description=desc,
            card_example=examples,
            final_rules=rules,
            instructions="\n".join(plan_instructions(adapter, intent, p) for p in plans),
            variation=variant,
        )
        return self._ask(prompt)

    def _transform(
        self,
        adapter: HostAdapter,
        intent: Intent,
        plans: Sequence[FaultPlan],
        text: str,
        variant: int,
    ) -> str:
        names, desc, examples, rules = card_block(plans)
        prompt = _prompt("fault_writer_transform.md").format(
            topic=adapter.topic(intent),
            message=text,
            card_name=names,
            card_description=desc,
            card_example=examples,
            final_rules=rules,
            instructions="\n".join(plan_instructions(adapter, intent, p) for p in plans),
            variation=variant,
        )
        return self._ask(prompt)

    def _ask(self, prompt: str) -> str:
        reply = self.client.complete([{"role": "user", "content": prompt}])
        return " ".join(str(getattr(reply, "text", "") or "").split()).strip().strip('"')


def parse_extraction(
    name: str, raw: str, questionnaire: Sequence[FaultType], slots: set[str]
) -> Extraction:
    """Parse an extractor's JSON reply (tolerating code fences); unusable → ``parsed=False``."""
    m = re.search(r"\{.*\}", raw, re.DOTALL)
    try:
        obj = json.loads(m.group(0)) if m else None
    except ValueError:
        obj = None
    if not isinstance(obj, dict) or not isinstance(obj.get("classes"), dict):
        return Extraction(extractor=name, parsed=False, detail=raw[:200])
    classes: dict[str, tuple[str, ...]] = {}
    for k in DIFF_CLASSES:
        v = obj["classes"].get(k) or []
        if not isinstance(v, list):
            return Extraction(extractor=name, parsed=False, detail=f"class {k} not a list")
        items = [str(x) for x in v]
        if k not in ("noise", "oblique", "extra"):
            items = [x for x in items if x in slots or x == "*"]
        classes[k] = tuple(dict.fromkeys(items))
    wanted: list[str] = [DIFF_CLASS[q] for q in questionnaire]
    main: str | None = next((k for k in wanted if classes.get(k)), None) or next(
        (k for k, v in classes.items() if v), None
    )
    target = classes[main][0] if main and classes[main] and classes[main][0] != "*" else None
    other = obj.get("other_changes") or []
    others = [str(x) for x in other] if isinstance(other, list) else [str(other)]
    answers = obj.get("answers", {})
    answers = {} if answers is None else answers
    if not isinstance(answers, dict):
        return Extraction(extractor=name, parsed=False, detail="answers not an object")
    found, plausible = check_answers(answers)
    return Extraction(
        extractor=name,
        family=FAMILY_OF_CLASS[main] if main else None,  # type: ignore[index]
        target_slot=target,
        classes=classes,
        other_changes=tuple(others + found),
        plausible=bool(obj.get("plausible", True)) and plausible,
        detail=json.dumps(answers, sort_keys=True)[:400] if answers else "",
    )


class LLMExtractor:
    """Extractor backed by a language model (one questionnaire call per text, temperature 0).

    It sees the requirements and the text, and answers the whole questionnaire: it is never
    told which fault was planned.
    """

    def __init__(self, spec: str, client: _Completer | None = None) -> None:
        self.name = spec
        self.client = client or _client(spec, None, role="extractor", default_temperature=0.0)

    def extract(
        self,
        text: str,
        adapter: HostAdapter,
        intent: Intent,
        questionnaire: Sequence[FaultType],
        ctx: ExtractionContext,
    ) -> Extraction:
        """Ask the model and parse its JSON answer."""
        prompt = _prompt("fault_extractor.md").format(
            requirements=_requirements(adapter, intent, with_slots=True),
            text=text,
            questionnaire=", ".join(q.value for q in questionnaire),
            questions=questions_block(questionnaire),
        )
        reply = self.client.complete([{"role": "user", "content": prompt}])
        raw = str(getattr(reply, "text", "") or "")
        extra_slots = {e.slot for b in ctx.extra_pool for e in b}
        return parse_extraction(
            self.name, raw, questionnaire, {c.slot for c in intent.conditions} | extra_slots
        )
