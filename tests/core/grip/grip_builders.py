"""Hand-built episodes for the GRIP tests (typed events, validated by the real models)."""

from __future__ import annotations

from typing import Any

from core.model.actions import Ask, EnvOp, Propose
from core.model.config import ProtocolConfig
from core.model.episode import EpisodeHeader, Outcome, TerminationReason
from core.model.events import (
    AgentActed,
    Disclosure,
    EpisodeEnded,
    EpisodeStarted,
    ForcedFinal,
    ObservationRecorded,
    PatienceCharged,
    ProposalJudged,
    ShiftEdge,
    ShiftFired,
    StaleCheck,
    TurnStarted,
    UserReplied,
)
from core.model.intent import Condition, Edge, Intent, IntentGraph, ShiftOperator
from core.model.sample import MaskEntry, Sample
from core.model.world import EnvAction
from core.protocol.personas import load_persona

BENCH = "webshop"
ENV = "shop"


def _intent(base: str, conds: dict[str, Any]) -> Intent:
    return Intent.build(
        benchmark=BENCH,
        env_id=ENV,
        base=base,
        conditions=[Condition(slot=s, value=v) for s, v in conds.items()],
    )


ROOT = _intent("shirt", {"color": "black", "size": "large", "material": "cotton", "price": 40})
REFINE = _intent(
    "shirt",
    {"color": "black", "size": "large", "material": "cotton", "price": 40, "pattern": "striped"},
)
SUBST = _intent("shirt", {"color": "red", "size": "large", "material": "cotton", "price": 40})
RELAX = _intent("shirt", {"color": "black", "material": "cotton", "price": 40})
PIVOT = _intent("kettle", {"brand": "acme", "capacity": "1.7 litre"})

_OPS = {
    REFINE.intent_id: (ShiftOperator.REFINE, True, "added pattern"),
    SUBST.intent_id: (ShiftOperator.SUBSTITUTE, True, "color black->red"),
    RELAX.intent_id: (ShiftOperator.RELAX, False, "dropped size"),
    PIVOT.intent_id: (ShiftOperator.PIVOT, True, "pivot_to: kettle"),
}

GRAPH = IntentGraph(
    graph_id="g1",
    benchmark=BENCH,
    env_id=ENV,
    root=ROOT,
    children=(REFINE, SUBST, RELAX, PIVOT),
    edges=tuple(
        Edge(src=ROOT.intent_id, dst=dst, operator=op, delta=d, gt_moved=m)
        for dst, (op, m, d) in _OPS.items()
    ),
)


def make_sample(hidden: tuple[str, ...] = ("color", "size"), k: int = 1) -> Sample:
    """A sample over GRAPH hiding ``hidden``; ``k`` faults."""
    faults = (
        "insufficient_information",
        "lexical_ambiguity",
        "factual_error",
        "vagueness_subjectivity",
    )
    mask = tuple(
        MaskEntry(slot=s, kind="withheld" if s in hidden else "stated", true_value=v)
        for s, v in ((c.slot, c.value) for c in ROOT.conditions)
    )
    return Sample(
        sample_id=f"s-{'-'.join(hidden) or 'none'}-k{k}",
        benchmark=BENCH,
        graph_id=GRAPH.graph_id,
        env_id=ENV,
        root_intent_id=ROOT.intent_id,
        query="I need a cotton shirt under $40.",
        faults=faults[:k],  # type: ignore[arg-type]
        mask=mask,
        hidden_slots=hidden,
    )


class EpisodeBuilder:
    """Append typed events with contiguous ``seq`` and agent ``turn`` bookkeeping."""

    def __init__(
        self,
        episode_id: str,
        *,
        persona: str = "rational",
        hidden: tuple[str, ...] = ("color", "size"),
        method: str = "A0",
        seed: int = 0,
        k: int = 1,
        benchmark: str = BENCH,
        agent: str = "symbolic",
        shifts_on: bool = True,
        run_id: str | None = None,
    ) -> None:
        self.persona = load_persona(persona)
        self.sample = make_sample(hidden, k)
        self.config = ProtocolConfig(shifts_enabled=shifts_on)
        self.header = EpisodeHeader(
            episode_id=episode_id,
            run_id=run_id,
            sample_id=self.sample.sample_id,
            benchmark=benchmark,
            persona_id=persona,
            seed=seed,
            method=method,
            agent=agent,
            user_voice="template",
            config=self.config,
            config_hash=self.config.config_hash(),
        )
        self.events: list[Any] = []
        self.turn = 0
        self.budget = self.persona.budget(self.config.base_patience)
        self.patience = self.budget
        self.intent = ROOT
        self._add(
            EpisodeStarted,
            sample=self.sample,
            graph=GRAPH,
            persona=self.persona,
            rng_key=f"{self.sample.sample_id}:{seed}",
            budget=self.budget,
            thresholds=self.persona.thresholds(self.config.base_patience),
            fates=(True,) * len(self.persona.shift_placements),
            turn_cap=40,
            patience_visible=False,
        )

    # -- plumbing ----------------------------------------------------------------------------
    def _add(self, cls: Any, **kw: Any) -> None:
        self.events.append(cls(seq=len(self.events), turn=self.turn, **kw))

    def _new_turn(self) -> None:
        self.turn += 1
        self._add(TurnStarted, patience=self.patience, intent_id=self.intent.intent_id)

    def _charge(self, reason: str, cost: float) -> None:
        before = self.patience
        self.patience = max(0.0, before - cost)
        self._add(PatienceCharged, reason=reason, cost=cost, before=before, after=self.patience)

    def _disc(self, slots: tuple[str, ...], how: str, *, named_only: bool = False) -> list[Any]:
        m = self.intent.slot_map()
        return [
            Disclosure(slot=s, value=None if named_only else m[s].value, how=how) for s in slots
        ]

    # -- actions -----------------------------------------------------------------------------
    def ask(
        self,
        slots: tuple[str, ...],
        *,
        answer: tuple[str, ...] | None = None,
        volunteer: tuple[str, ...] = (),
        decline: bool = False,
        text: str = "",
    ) -> EpisodeBuilder:
        """A question about ``slots``; answered (default: the asked slots) or declined."""
        self._new_turn()
        self._add(
            AgentActed, action=Ask(text=f"What {', '.join(slots)}?", asks=slots), asked_slots=slots
        )
        answered = () if decline else (slots if answer is None else answer)
        disc = self._disc(answered, "answer") + self._disc(volunteer, "volunteer")
        self._add(
            UserReplied,
            reply_kind="decline" if decline else "answer",
            text=text or ("I'd rather not say." if decline else "It is " + ", ".join(answered)),
            disclosures=tuple(disc),
            asked=slots,
            declined=slots if decline else (),
            voice="template",
            intent_id=self.intent.intent_id,
        )
        self._charge("question", 2.0)
        return self

    def env(self, query: str, observation: str) -> EpisodeBuilder:
        """An environment search and its observation."""
        self._new_turn()
        act = EnvAction(tool="search", args={"query": query})
        self._add(AgentActed, action=EnvOp(action=act))
        self._add(ObservationRecorded, action=act, ok=True, text=observation)
        return self

    def shift(self, dst: Intent, *, after_reply: bool = True) -> EpisodeBuilder:
        """The goal silently moves to ``dst`` (at the current turn)."""
        op, moved, delta = _OPS[dst.intent_id]
        edge = ShiftEdge(
            src=self.intent.intent_id,
            dst=dst.intent_id,
            operator=op.value,
            delta=delta,
            gt_moved=moved,
        )
        self._add(
            ShiftFired,
            edge=edge,
            dst_slots=tuple(c.slot for c in dst.conditions),
            after_reply=after_reply,
            consumed="due",
        )
        self.old_intent = self.intent
        self.intent = dst
        return self

    def propose(
        self,
        accepted: bool,
        *,
        score: float | None = None,
        hint: tuple[str, ...] = (),
        via: str = "answer",
        shift_before: Intent | None = None,
        forced: bool = False,
    ) -> EpisodeBuilder:
        """A proposal adjudicated against the current intent (rejections get a reaction)."""
        self._new_turn()
        self._add(AgentActed, action=Propose(text="buy item"), forced_final=forced)
        if shift_before is not None:
            self.shift(shift_before, after_reply=False)
        self._add(
            ProposalJudged,
            intent_id=self.intent.intent_id,
            accepted=accepted,
            reason="ok" if accepted else "reward=0.5",
            score=score,
            via=via,
        )
        if accepted:
            self._add(
                UserReplied,
                reply_kind="acceptance",
                text="Yes, that is right.",
                voice="template",
                intent_id=self.intent.intent_id,
            )
            return self
        if via in ("answer", "operation"):
            self._charge("rejected_proposal", 4.0)
        self._add(
            UserReplied,
            reply_kind="rejection",
            text="No, the " + ", ".join(hint) + " is wrong." if hint else "No, that's not it.",
            disclosures=tuple(self._disc(hint, "rejection_hint", named_only=True)),
            hinted=hint,
            voice="template",
            intent_id=self.intent.intent_id,
        )
        return self

    def forced_final(self, reason: str = "exhausted") -> EpisodeBuilder:
        """The user demands the final answer."""
        self._add(ForcedFinal, reason=reason, message="Final answer now.", format_hint="buy X")
        return self

    def stale(self, valid: bool) -> EpisodeBuilder:
        """A stale check of the failed final answer against the superseded intent."""
        self._add(StaleCheck, old_intent_id=self.old_intent.intent_id, valid_under_old=valid)
        return self

    def end(self, outcome: Outcome, reason: TerminationReason | None = None) -> EpisodeBuilder:
        """The last event."""
        if reason is None:
            reason = {
                Outcome.SUCCESS: TerminationReason.ACCEPTED,
                Outcome.EXHAUSTED: TerminationReason.FORCED_FINAL_REJECTED,
                Outcome.TURNS_EXCEEDED: TerminationReason.FORCED_FINAL_REJECTED,
                Outcome.ERROR: TerminationReason.ENV_ERROR,
            }[outcome]
        self._add(
            EpisodeEnded,
            outcome=outcome,
            reason=reason,
            patience_left=self.patience,
            turns=self.turn,
        )
        return self

    def store_into(self, store: Any) -> None:
        """Write header and events into ``store`` and mark the episode ended."""
        store.create_episode(self.header)
        store.append(self.header.episode_id, self.events)
        ended = self.events[-1]
        store.finish(self.header.episode_id, ended.outcome, {"turns": ended.turns})
