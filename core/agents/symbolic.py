"""Symbolic (offline) policies for the method ladder.

An offline approximation of the LLM methods, labelled as such wherever its numbers appear. A
symbolic agent starts from the *literal reading* of the opening request (the conditions a rule
reader extracts from the query text, compiled over the request's host task) and updates a belief
by *reading the text* of the user's replies (:mod:`core.agents.reading`): it consumes its agent
view alone — the transcript's text, its own actions and the observations — never an event, a
structured disclosure or a slot id it did not form itself (docs/PROTOCOL.md). It plans real
tool calls through the host's ``compile_intent`` hook over its belief (relaxing conditions the
host cannot satisfy), executes them one per turn, and proposes. Methods differ only in their
question strategy:

* B0 / L0 / LIT never ask (L0 additionally faces a mute user; LIT never revises its reading);
  B0 revises after a rejection by dropping the literal condition the rejection's words point
  at, or else the next unconfirmed one.
* A0 asks one question before its first proposal and keeps only the latest reply.
* A1 remembers every reply (newer values replace older ones) and opens with one wide question.
* A2 plans questions against the visible patience meter (keeps one rejection survivable),
  re-asks declined slots, and verifies executed writes before committing.
* A3 is A2 plus an :class:`~core.agents.askbook.AskBook` shared within its run unit (moving
  only between generations): it skips question families that did not pay off for requests
  with the same signature.
* RS is told the current intent (a privileged feed) and never asks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from core.agents import reading
from core.agents.askbook import AskBook, signature, slot_family
from core.agents.base import AgentBase, EpisodeBinding, EventFeed
from core.agents.methods import MethodSpec, method_spec
from core.envs.base import HostWorld
from core.errors import DriftBenchError
from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.config import DEFAULT_COSTS
from core.model.episode import AgentView
from core.model.intent import Condition, Intent
from core.model.world import EnvAction

ActionT = EnvOp | Ask | Propose | Malformed
IntentSource = Callable[[], Intent]
"""Returns the user's current intent (RS skyline only)."""

OPEN_QUESTION = "Is there anything else about what you want that I should know?"
"""The open question a text-reading agent asks when nothing specific is left to ask."""

RESERVE_REJECTIONS = 1
"""A2/A3 keep this many rejections affordable when planning questions."""


_Plan = tuple[EnvAction, ...]
_UNCOMPILABLE: Any = object()
"""Memo value of a belief the host cannot compile."""


class _NotCompilable(Exception):
    """The host cannot compile this belief (the planner relaxes a condition and retries)."""


def _label(slot: str) -> str:
    tail = slot.rsplit(":", 1)[-1] if slot.startswith("arg:") else slot.split(":", 1)[0]
    return {"attr": "features", "option": "options", "price_upper": "price limit"}.get(
        tail, tail.replace("_", " ")
    )


class SymbolicAgent(AgentBase):
    """One symbolic policy (see the module docstring for the per-method strategies).

    Args:
        method: Method id.
        world: The host world (tools and the ``compile_intent`` planner hook).
        literal: The literal reading of the request as an intent.
        askbook: A3's shared book (ignored by other methods).
        intent_source: RS's privileged current-intent feed.
        costs: Patience costs (``question``, ``rejected_proposal``) for planning.
    """

    spec = "symbolic"

    def __init__(
        self,
        method: str,
        world: HostWorld,
        literal: Intent,
        *,
        askbook: AskBook | None = None,
        intent_source: IntentSource | None = None,
        costs: dict[str, float] | None = None,
    ) -> None:
        self.method: MethodSpec = method_spec(method)
        self.world = world
        self.literal = literal
        self.askbook = askbook if self.method.self_evolving else None
        self.intent_source = intent_source
        self.costs = {**DEFAULT_COSTS, **(costs or {})}
        self.belief: dict[str, Condition] = {c.slot: c for c in literal.conditions}
        self.confirmed: set[str] = set()
        self.dropped: set[str] = set()
        self.hinted: list[str] = []
        self.declined: list[str] = []
        self.context: dict[str, str] = {}
        self.asked: dict[str, int] = {}
        self.pending_ask: tuple[str, ...] = ()
        self.ask_log: list[tuple[str, bool]] = []
        self.questions = 0
        self.questions_since_rejection = 0
        self.proposals = 0
        self.rejections = 0
        self.plan: list[EnvAction] = []
        self.plan_key: tuple[Any, ...] | None = None
        self.done_writes: list[str] = []
        self.failed_writes: list[EnvAction] = []
        self.acted = False
        self.awaiting_verdict = False
        self.sig = signature(literal.benchmark, self.belief)
        self._seen = 0
        self._tools = {t.name: t for t in world.tools()}
        self._binding: EpisodeBinding | None = None
        self._reader = reading.ReplyReader(world, self._tools)
        self._family_slots = reading.family_slots(world, self.belief)
        self._named_write: str | None = None
        self._looked_up: set[str] = set()
        self._observed: dict[str, Any] = {}
        self._replies: list[str] = []
        self._seen_texts: list[str] = [""]
        self._last_action: Any = None
        self._reaction_next = False
        # compile_intent is a pure function of the intent's content, and the same beliefs
        # recur across personas, methods and seeds of one sample: compiled once per world
        self._plans = world.memo("symbolic_plans")
        self._call_keys = world.memo("symbolic_call_keys")

    # -- observation ---------------------------------------------------------------------------
    def bind(self, ctx: EpisodeBinding) -> None:
        """Keep the binding (only RS uses it: the truth probe). No event is ever read.

        A symbolic agent consumes its agent view alone: the transcript's text and its own
        actions, read in :meth:`act`. Binding again (a later drive of the same episode) keeps
        the agent's memory; it continues from the transcript entries it has not read yet.
        """
        self._binding = ctx

    def attach(self, log: EventFeed, episode_id: str) -> None:
        """Bind to ``episode_id`` with no truth probe (the feed is not read)."""
        self.bind(EpisodeBinding(episode_id=episode_id))

    def read_view(self, view: AgentView) -> None:
        """Read the transcript entries of ``view`` not read yet (text and own actions only)."""
        entries = view.transcript[self._seen :]
        self._seen = len(view.transcript)
        for e in entries:
            if e.role == "agent":
                self._last_action = e.action
                a = e.action
                if a is not None and (
                    a.kind == "propose"
                    or (a.kind == "env" and self.world.is_proposal_action(a.action))
                ):
                    self._reaction_next = True
            elif e.role == "environment":
                a = self._last_action
                if a is not None and a.kind == "env":
                    self._on_observation(a.action, e.text)
                    self._last_action = None
            elif e.role == "user":
                if self._reaction_next:
                    self._reaction_next = False
                    self._on_reaction(e.text)
                else:
                    self._on_reply(e.text)

    def _on_reaction(self, text: str) -> None:
        """A reaction the episode went on after: a rejection (its words may point somewhere)."""
        self.awaiting_verdict = False
        self.rejections += 1
        self.questions_since_rejection = 0
        pointed = self._pointed_at(text)
        self.hinted = [s for s in pointed if s not in self.hinted] + self.hinted

    def _pointed_at(self, text: str) -> list[str]:
        """Known slots whose plain-word label or cue words occur in ``text``."""
        low = " " + reading.norm(text) + " "
        out = []
        for slot in self._known_slots():
            cond = self.belief.get(slot) or Condition(slot=slot, value="")
            try:
                lex = self.world.slot_lexicon(cond)
                words = {lex.label, *lex.cues}
            except Exception:  # noqa: BLE001 - a slot the world cannot describe
                words = set()
            words.add(_label(slot))
            if any(w and f" {w.lower()} " in low for w in words if len(w) >= 3):
                out.append(slot)
        return out

    def _known_slots(self) -> list[str]:
        """Slots the agent knows of: its belief, its reading, its questions, planned writes."""
        out = dict.fromkeys([*self.belief, *self.literal.slot_map(), *self.pending_ask])
        for slot in self._missing_slots():
            out.setdefault(slot, None)
        for slot in self._family_slots:
            out.setdefault(slot, None)
        for slot in list(out):
            got = reading.parse_slot(slot)
            if got is None:
                continue
            spec = self._tools.get(got[1])
            props = (spec.parameters.get("properties") or {}) if spec is not None else {}
            for p in props:
                out.setdefault(f"arg:{got[0]}:{got[1]}:{p}", None)
        return list(out)

    def _on_reply(self, text: str) -> None:
        """A reply to a question (or unsolicited words): read it into the belief."""
        if not self.method.memory and self.pending_ask:
            # A0 keeps only the latest reply: forget earlier disclosures
            for slot in list(self.confirmed):
                lit = self.literal.slot_map().get(slot)
                if lit is None:
                    self.belief.pop(slot, None)
                else:
                    self.belief[slot] = lit
            self.confirmed.clear()
        before = dict(self.belief)
        self.context.update(self._reader.context(text))
        slots: dict[str, tuple[str, list[Any]]] = {}
        for slot in self._known_slots():
            pair = (self.belief.get(slot), self.literal.slot_map().get(slot))
            held = [c.value for c in pair if c is not None]
            slots[slot] = (self._op(slot), held)
        read = self._reader.read(text, slots, self._seen_texts)
        for cond in read:
            op = self._op(cond.slot)
            self.belief[cond.slot] = Condition(slot=cond.slot, op=op, value=cond.value)
            self.confirmed.add(cond.slot)
            self.dropped.discard(cond.slot)
            if cond.slot in self.hinted:
                self.hinted.remove(cond.slot)
        got = {c.slot for c in read}
        for s in self.pending_ask:
            # paid = the reply told the agent something new about the slot; a question it
            # could read nothing from (declined, or unreadable) did not pay either
            self.ask_log.append((s, s in got and before.get(s) != self.belief.get(s)))
            if s not in got and s not in self.declined:
                self.declined.append(s)
        self.pending_ask = ()
        self._seen_texts.append(text)
        self._replies.append(text)

    def _lookup(self) -> EnvAction | None:
        """A read call that may show the ids a reply named in words (e.g. a payment method).

        When a planned write still lacks a required argument, call a read tool not called yet
        whose required arguments the agent can fill from what it holds (its belief, stated
        context, fields of earlier observations).
        """
        if self.method.literal or self.method.informed or not self._missing_slots():
            return None
        for name, spec in sorted(self._tools.items()):
            if spec.kind != "read":
                continue
            req = list(spec.parameters.get("required") or [])
            if not req:
                continue
            args = {p: self._held_value(p) for p in req}
            if any(v is None for v in args.values()):
                continue
            act = EnvAction(tool=name, args=args)
            key = _plain_call_key(act)
            if key in self._looked_up:
                continue
            self._looked_up.add(key)
            return act
        return None

    def _held_value(self, param: str) -> Any:
        for slot, cond in sorted(self.belief.items()):
            got = reading.parse_slot(slot)
            if got is not None and got[2] == param and slot not in self.dropped:
                try:
                    return json.loads(str(cond.value))
                except json.JSONDecodeError:
                    return cond.value
        if param in self.context:
            return self.context[param]
        return self._observed.get(param)

    def _reread(self) -> None:
        """Read earlier replies again for still-missing arguments (new ids were observed)."""
        missing = self._missing_slots()
        if not missing or not self._replies:
            return
        slots: dict[str, tuple[str, list[Any]]] = {s: (self._op(s), []) for s in missing}
        for text in self._replies:
            for cond in self._reader.read(text, slots, self._seen_texts):
                if cond.slot in slots and cond.slot not in self.belief:
                    self.belief[cond.slot] = cond
                    self.confirmed.add(cond.slot)

    def _on_observation(self, action: EnvAction, text: str) -> None:
        self.acted = True
        self._seen_texts.append(text)
        if self._tools.get(action.tool) is not None and self._tools[action.tool].kind == "read":
            reading.harvest_fields(text, self._observed)
            self._reread()
        spec = self._tools.get(action.tool)
        if spec is not None and spec.kind == "write":
            key = self._call_key(action)
            if not text.lstrip().lower().startswith("error"):
                self.done_writes.append(key)
            else:
                self.failed_writes.append(action)

    def _op(self, slot: str) -> Any:
        lit = self.literal.slot_map().get(slot)
        if lit is not None:
            return lit.op
        return "<=" if slot.startswith("price") else "="

    # -- planning ------------------------------------------------------------------------------
    def _intent(self, conds: list[Condition]) -> Intent:
        return Intent.build(
            benchmark=self.literal.benchmark,
            env_id=self.literal.env_id,
            base=self.literal.base,
            conditions=conds,
        )

    def _current_conditions(self) -> list[Condition]:
        if self.method.informed and self.intent_source is not None:
            return list(self.intent_source().conditions)
        return [c for s, c in sorted(self.belief.items()) if s not in self.dropped]

    def _compile_one(self, conds: list[Condition]) -> list[EnvAction]:
        """``compile_intent`` of the intent over ``conds``, memoised per world (pure)."""
        lit = self.literal
        key = (lit.benchmark, lit.env_id, lit.base, tuple(sorted(c.key() for c in conds)))
        table = self._plans
        got = table.get(key)
        if got is None:
            try:
                got = tuple(self.world.compile_intent(self._intent(conds)))
            except (DriftBenchError, KeyError, ValueError, TypeError):
                got = _UNCOMPILABLE
            table.put(key, got)
        if got is _UNCOMPILABLE:
            raise _NotCompilable
        return list(got)

    def _compile(self, conds: list[Condition]) -> list[EnvAction]:
        order = sorted(conds, key=lambda c: (c.slot in self.confirmed, c.slot))
        attempt = list(conds)
        for _ in range(len(conds) + 1):
            try:
                return self._compile_one(attempt)
            except _NotCompilable:
                if not order:
                    break
                victim = order.pop(0)
                attempt = [c for c in attempt if c.slot != victim.slot]
        return []

    def _build_plan(self) -> None:
        conds = self._current_conditions()
        key = (tuple(sorted((c.slot, repr(c.value)) for c in conds)), self.rejections)
        if key == self.plan_key:
            return
        self.plan_key = key
        actions = self._compile(conds)
        if self.literal.benchmark == "webshop":
            if self.acted and actions and actions[0].tool == "search":
                actions.insert(0, EnvAction(tool="click", args={"target": "back to search"}))
        else:
            done = list(self.done_writes)
            todo = []
            for a in actions:
                k = self._call_key(a)
                if k in done:
                    done.remove(k)
                else:
                    todo.append(a)
            actions = todo
        self.plan = actions

    # -- questions -----------------------------------------------------------------------------
    def _missing_slots(self) -> list[str]:
        """τ²: required arguments of planned writes the belief lacks (schema-derived)."""
        specs = self._tools
        conds = self._current_conditions()
        by_write: dict[tuple[int, str], set[str]] = {}
        for c in conds:
            if c.slot.startswith("arg:"):
                _, idx, tool, arg = c.slot.split(":", 3)
                by_write.setdefault((int(idx), tool), set()).add(arg)
        if not by_write and self._named_write is not None:
            by_write[(0, self._named_write)] = set()
        out = []
        for (i, tool), have in sorted(by_write.items()):
            spec = specs.get(tool)
            if spec is None:
                continue
            for p in spec.parameters.get("required") or []:
                if p not in have:
                    slot = f"arg:{i}:{tool}:{p}"
                    if p in self.context:
                        self.belief[slot] = Condition(slot=slot, value=json.dumps(self.context[p]))
                    else:
                        out.append(slot)
        return out

    def _candidates(self) -> list[str]:
        missing = self._missing_slots()
        hinted = [s for s in self.hinted if s not in self.confirmed]
        failed = []
        for a in self.failed_writes:
            for s in self.belief:
                if s.startswith("arg:") and s.split(":")[2] == a.tool and s not in self.confirmed:
                    failed.append(s)
        unconfirmed = [s for s in sorted(self.belief) if s not in self.confirmed]
        out: list[str] = []
        for s in [*missing, *hinted, *failed, *unconfirmed]:
            if s not in out:
                out.append(s)
        if self.askbook is not None:
            out = [s for s in out if self.askbook.worth_asking(self.sig, slot_family(s))]
            out.sort(key=lambda s: -self.askbook.priority(self.sig, slot_family(s)))  # type: ignore[union-attr]
        return out

    def _affordable_questions(self, view: AgentView) -> int:
        if view.patience is None:
            return 1
        spare = view.patience - RESERVE_REJECTIONS * self.costs["rejected_proposal"]
        return max(0, int((spare + 1e-9) // self.costs["question"]))

    def _question(self, view: AgentView) -> Ask | None:
        m = self.method
        if not m.can_ask or view.forced_final:
            return None
        cands = self._candidates()
        if not cands:
            return self._open_question(view)
        if m.id == "A0":
            # at most one question before the first proposal, then one per rejection
            limit_ok = (self.proposals == 0 and self.questions == 0) or (
                self.rejections > 0 and self.questions_since_rejection == 0
            )
            if not limit_ok:
                return None
            asks = tuple(cands[:1])
        elif m.id == "A1":
            if self.proposals == 0 and self.questions == 0:
                asks = tuple(cands)  # one wide audit question
            elif self.rejections > 0 and self.questions_since_rejection == 0:
                asks = tuple(cands[:2])
            else:
                return None
        else:  # A2 / A3: plan against the meter
            if self._affordable_questions(view) < 1:
                return None
            # re-ask a declined slot once (persistence overrides a decline)
            re_ask = [s for s in self.declined if s in cands and self.asked.get(s, 0) < 2]
            asks = tuple(re_ask[:1]) if re_ask else tuple(cands[:2])
        return self._ask(asks)

    def _open_question(self, view: AgentView) -> Ask | None:
        """Ask one open question when nothing specific is left to ask.

        After a rejection (A0 also before its first proposal): the user then says what is still
        missing in their own words.
        """
        m = self.method
        first = self.proposals == 0 and self.questions == 0
        after_rejection = self.rejections > 0 and self.questions_since_rejection == 0
        if m.id == "A0" and not (first or after_rejection):
            return None
        if m.id != "A0" and not after_rejection:
            return None
        if m.planner and self._affordable_questions(view) < 1:
            return None
        self.questions += 1
        self.questions_since_rejection += 1
        self.pending_ask = ()
        return Ask(text=OPEN_QUESTION, asks=())

    def _ask(self, asks: tuple[str, ...]) -> Ask:
        self.questions += 1
        self.questions_since_rejection += 1
        for s in asks:
            self.asked[s] = self.asked.get(s, 0) + 1
            if s in self.declined:
                self.declined.remove(s)
        self.pending_ask = asks
        labels = ", ".join(dict.fromkeys(self._plain_label(s) for s in asks))
        return Ask(text=f"Could you tell me exactly what you want for: {labels}?", asks=asks)

    def _plain_label(self, slot: str) -> str:
        """The world's customer words for a slot ('street address'), never its field id."""
        cond = self.belief.get(slot) or Condition(slot=slot, value="")
        try:
            label = self.world.slot_lexicon(cond).label.strip()
        except Exception:  # noqa: BLE001 - a slot the world cannot describe
            label = ""
        return label or _label(slot)

    # -- B0 revision -----------------------------------------------------------------------------
    def _revise_without_asking(self) -> None:
        if self.method.literal or self.method.informed:
            return
        lit = self.literal.slot_map()
        target = next((s for s in self.hinted if s in lit and s not in self.dropped), None)
        if target is None:
            pool = [s for s in sorted(lit) if s not in self.dropped and s not in self.confirmed]
            target = pool[(self.rejections - 1) % len(pool)] if pool else None
        if target is not None:
            self.dropped.add(target)

    def _call_key(self, action: EnvAction) -> str:
        """``tool + sorted-JSON args``, memoised per action object (plans are shared, immutable)."""
        memo = self._call_keys
        got = memo.get(id(action))
        if got is not None and got[0] is action:
            return str(got[1])
        key = _plain_call_key(action)
        memo.put(id(action), (action, key))
        return key

    # -- the policy ------------------------------------------------------------------------------
    def act(self, view: AgentView) -> ActionT:
        """Return the next action for ``view`` (read from the view alone)."""
        if not self._seen_texts[0]:
            self._seen_texts[0] = view.query
            if not any(s.startswith("arg:") for s in self.belief):
                self._named_write = reading.named_write(view.query, self._tools)
        self.read_view(view)
        if self.awaiting_verdict:
            self.awaiting_verdict = False
        if view.forced_final:
            return self._propose(view)
        look = self._lookup()
        if look is not None:
            return EnvOp(action=look)
        if self.rejections > self._revised:
            self._revised = self.rejections
            if not self.method.can_ask:
                self._revise_without_asking()
        ask = self._question(view)
        if ask is not None:
            return ask
        self._build_plan()
        if self.plan:
            step = self.plan.pop(0)
            if step.tool == "click" and str(step.args.get("target", "")).lower() == "buy now":
                self.proposals += 1
                self.awaiting_verdict = True
                self.plan = []
                self.plan_key = None
            return EnvOp(action=step)
        return self._propose(view)

    _revised = 0

    def _propose(self, view: AgentView) -> Propose:
        self.proposals += 1
        self.awaiting_verdict = True
        self.plan_key = None
        return Propose(text="done" if view.benchmark.startswith("tau2") else "my purchase")

    def observe_end(self, view: AgentView) -> None:
        """A3: fold this episode's question outcomes into the shared book."""
        self.read_view(view)
        if self.askbook is None:
            return
        for slot, paid in self.ask_log:
            self.askbook.record(self.sig, slot_family(slot), paid)
        self.askbook.episodes += 1


class InformedSymbolicAgent(SymbolicAgent):
    """RS skyline: receives the driver's truth probe for the user's current intent."""

    privileged = True

    def bind(self, ctx: EpisodeBinding) -> None:
        """Bind as any symbolic agent; use the probe's current intent as the belief source."""
        super().bind(ctx)
        if ctx.truth is not None:
            self.intent_source = ctx.truth.current_intent


def _plain_call_key(action: EnvAction) -> str:
    return action.tool + json.dumps(action.args, sort_keys=True, default=str)
