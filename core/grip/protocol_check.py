"""Recount a run's persona statistics from its events: did it obey the persona table?

``driftbench grip RUN --check-protocol`` folds every ended episode of the run(s) with the
protocol's own fold (:func:`core.protocol.state.evolve`) and recounts, per persona:

* **rates** (one binomial count each, with a Wilson interval) — decline per eligible question,
  volunteer per answer that could volunteer, hint per rejection, the shift *fire* coin per
  crossed placement and suggestibility per on-topic question;
* **deterministic rules** (violation counts, which must be zero) — budget = base × multiplier,
  at most ``slots_per_answer`` answered slots, never declining a slot the agent was persistent
  about, at most one volunteered slot, patience never below 0.

Coins are keyed by (sample, seed) and the counter of the draw, so the same draw is shared by
every method (and persona) on a sample — common random numbers (docs/PROTOCOL.md). A count over
a sweep would count one draw once per method; each rate is therefore **de-duplicated by draw
key** (episode rng key + draw counter) within a persona before it is counted.

The expected value of each rate is the parameter stored in the episodes' ``episode_started``
event (what the run used); ``table5`` says whether it equals the bundled persona file (the
published Table 5 values, DECISIONS.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.envs.base import HostWorld
from core.model.config import ProtocolConfig
from core.model.events import (
    AgentActed,
    EpisodeStarted,
    Event,
    PatienceCharged,
    ShiftDue,
    ShiftFired,
    ShiftSkipped,
    UserReplied,
)
from core.protocol import shifts, user
from core.protocol.state import EpisodeState, evolve

Z99 = 2.576
"""Normal quantile of a two-sided 99% interval."""

RATES = ("decline", "volunteer", "hint_on_rejection", "shift_fire_prob", "suggestibility")
"""The recounted rates, in report order."""

RULES = ("budget", "slots_per_answer", "persistence", "one_volunteer", "patience_floor")
"""The deterministic rules whose violations are counted."""


def wilson(k: int, n: int, z: float = Z99) -> tuple[float, float]:
    """Wilson score interval of ``k`` successes in ``n`` trials ((nan, nan) for n = 0)."""
    if n <= 0:
        return (math.nan, math.nan)
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    lo = 0.0 if k == 0 else max(0.0, mid - half)
    hi = 1.0 if k == n else min(1.0, mid + half)
    return (lo, hi)


@dataclass
class _Count:
    draws: dict[tuple[str, int], bool] = field(default_factory=dict)
    expected: set[float] = field(default_factory=set)

    def add(self, key: tuple[str, int], hit: bool, expected: float) -> None:
        self.draws.setdefault(key, hit)
        self.expected.add(expected)


@dataclass(frozen=True)
class RateRow:
    """One recounted rate of one persona."""

    persona: str
    statistic: str
    k: int
    n: int
    rate: float | None
    low: float | None
    high: float | None
    expected: float | None
    table5: bool
    ok: bool | None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (undefined values as None)."""
        return dict(self.__dict__)


@dataclass
class ProtocolCheck:
    """The recount of one or more runs."""

    runs: list[str]
    episodes: int = 0
    rates: list[RateRow] = field(default_factory=list)
    violations: dict[str, dict[str, int]] = field(default_factory=dict)
    unchecked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No rule violated and every defined rate's interval holds its expected value."""
        return not any(sum(v.values()) for v in self.violations.values()) and all(
            r.ok is not False for r in self.rates
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready report."""
        return {
            "runs": self.runs,
            "episodes": self.episodes,
            "ok": self.ok,
            "interval": "wilson-99",
            "dedup": "draw key (episode rng key, draw counter) within a persona",
            "rates": [r.to_json() for r in self.rates],
            "violations": self.violations,
            "unchecked": self.unchecked,
        }


@dataclass
class _Persona:
    rates: dict[str, _Count] = field(default_factory=lambda: {s: _Count() for s in RATES})
    violations: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RULES, 0))
    table5: dict[str, bool] = field(default_factory=dict)


def _bundled() -> dict[str, Any]:
    from core.protocol.personas import load_personas

    try:
        return dict(load_personas())
    except Exception:  # noqa: BLE001 - a missing persona folder only hides the table5 flag
        return {}


class _Recount:
    def __init__(self, worlds: Any) -> None:
        self.by: dict[str, _Persona] = {}
        self.bundled = _bundled()
        self.worlds = worlds
        self.unchecked: set[str] = set()

    def episode(self, config: ProtocolConfig, events: Sequence[Event]) -> None:
        if not events or not isinstance(events[0], EpisodeStarted):
            return
        start = events[0]
        p = start.persona
        acc = self.by.setdefault(p.id, _Persona())
        ref = self.bundled.get(p.id)
        for stat in RATES:
            if ref is not None:
                ok = getattr(ref, stat, None) == getattr(p, stat, None)
                if stat == "shift_fire_prob":
                    ok = config.shift_fire_prob == 0.6
                acc.table5[stat] = acc.table5.get(stat, True) and ok
        if not math.isclose(start.budget, config.base_patience * p.patience_multiplier):
            acc.violations["budget"] += 1
        world = self.worlds(start.sample.benchmark)
        if world is None:
            self.unchecked.add(f"suggestibility on {start.sample.benchmark} (world not loadable)")
        state = EpisodeState()
        key = start.rng_key
        question = ""
        fates = list(range(len(start.fates)))  # draw counter of each placement still pending
        for i, ev in enumerate(events):
            was_question = isinstance(ev, UserReplied) and state.phase == "awaiting_user"
            if isinstance(ev, UserReplied) and state.persona is not None:
                self._reply(acc, state, ev, key)
            if isinstance(ev, ShiftDue) and fates:
                acc.rates["shift_fire_prob"].add((key, fates.pop(0)), True, config.shift_fire_prob)
            elif isinstance(ev, ShiftSkipped) and ev.reason == "fate_skip" and fates:
                acc.rates["shift_fire_prob"].add((key, fates.pop(0)), False, config.shift_fire_prob)
            elif isinstance(ev, ShiftFired) and ev.consumed == "placement" and fates:
                fates.pop()  # a trigger used the last placement: its fate is never drawn on
            if isinstance(ev, PatienceCharged) and ev.after < -config.epsilon:
                acc.violations["patience_floor"] += 1
            if isinstance(ev, AgentActed) and ev.action.kind == "ask" and not ev.forced_final:
                question = str(ev.action.text)
            evolve(state, ev)
            if was_question and world is not None and question:
                self._suggest(acc, state, key, question, config, world, events[i + 1 :])

    def _reply(self, acc: _Persona, st: EpisodeState, ev: UserReplied, key: str) -> None:
        p = st.persona
        assert p is not None
        turn = st.turn
        answers = [d for d in ev.disclosures if d.how == "answer"]
        vols = [d for d in ev.disclosures if d.how == "volunteer"]
        if len(answers) > p.slots_per_answer:
            acc.violations["slots_per_answer"] += 1
        if len(vols) > 1:
            acc.violations["one_volunteer"] += 1
        if ev.reply_kind in ("rejection",):
            acc.rates["hint_on_rejection"].add(
                (key, turn), self._hinted(ev, p), p.hint_on_rejection
            )
            return
        if ev.reply_kind not in ("answer", "decline") or st.phase != "awaiting_user":
            return
        if any(user.is_persistent(st, s) for s in ev.declined):
            acc.violations["persistence"] += 1
        fresh = [s for s in ev.asked if s not in ev.repeated]
        eligible = [s for s in fresh if not user.is_persistent(st, s)]
        if eligible:
            fell = bool(set(ev.declined) & set(eligible)) or ev.reply_kind == "decline"
            acc.rates["decline"].add((key, turn), fell, p.decline)
            if fell:
                return
        if ev.reply_kind == "answer" and answers:
            taken = {d.slot for d in answers} | set(ev.asked) | set(ev.declined)
            if any(s not in taken for s in st.owed_slots()):
                acc.rates["volunteer"].add((key, turn), bool(vols), p.volunteer)

    def _hinted(self, ev: UserReplied, persona: Any) -> bool:
        """Whether a rejection carried a hint.

        It names slots, or (template voice) its words are not one of the persona's plain
        rejection lines (a hint may name no slot, e.g. "you haven't bought anything yet").
        """
        if ev.hinted:
            return True
        if ev.voice != "template":
            self.unchecked.add(f"hints without slots under the {ev.voice} voice (counted as none)")
            return False
        from core.protocol.voices.template import load_style

        plain = {x.strip().lower() for x in load_style(persona.voice_style)["rejection_plain"]}
        return ev.text.strip().lower() not in plain

    def _suggest(
        self,
        acc: _Persona,
        after: EpisodeState,
        key: str,
        question: str,
        config: ProtocolConfig,
        world: HostWorld,
        rest: Sequence[Event],
    ) -> None:
        """After a question's reply: was it on-topic with a placement left, and did it fire?"""
        p = after.persona
        assert p is not None
        if not (shifts.shifting_on(config) and config.suggestibility_enabled):
            return
        if after.shifts_fired >= after.max_shifts or (not after.thresholds and after.due <= 0):
            return
        try:
            matches = shifts.trigger_matches_text(after, question, world, config)
        except Exception:  # noqa: BLE001 - a world that cannot read the question: not counted
            return
        if not matches:
            return
        nxt = next((e for e in rest if not isinstance(e, ShiftSkipped)), None)
        fired = isinstance(nxt, ShiftFired) and nxt.trigger is not None
        acc.rates["suggestibility"].add((key, after.turn), fired, p.suggestibility)

    def report(self, runs: list[str], episodes: int) -> ProtocolCheck:
        out = ProtocolCheck(runs=runs, episodes=episodes, unchecked=sorted(self.unchecked))
        for pid in sorted(self.by):
            acc = self.by[pid]
            out.violations[pid] = dict(acc.violations)
            for stat in RATES:
                c = acc.rates[stat]
                n = len(c.draws)
                k = sum(c.draws.values())
                exp = next(iter(c.expected)) if len(c.expected) == 1 else None
                lo, hi = wilson(k, n)
                defined = n > 0
                out.rates.append(
                    RateRow(
                        persona=pid,
                        statistic=stat,
                        k=k,
                        n=n,
                        rate=k / n if defined else None,
                        low=lo if defined else None,
                        high=hi if defined else None,
                        expected=exp,
                        table5=acc.table5.get(stat, False),
                        ok=(lo <= exp <= hi) if defined and exp is not None else None,
                    )
                )
        return out


def _world_cache() -> Any:
    cache: dict[str, HostWorld | None] = {}

    def get(benchmark: str) -> HostWorld | None:
        if benchmark not in cache:
            from core.envs.registry import load_world

            try:
                cache[benchmark] = load_world(benchmark)
            except Exception:  # noqa: BLE001 - reported as unchecked
                cache[benchmark] = None
        return cache[benchmark]

    return get


def check_episodes(
    episodes: Iterable[tuple[ProtocolConfig, Sequence[Event]]],
    *,
    runs: Sequence[str] = (),
    worlds: Any = None,
) -> ProtocolCheck:
    """Recount ``(config, events)`` pairs (see the module docstring)."""
    rc = _Recount(worlds or _world_cache())
    n = 0
    for config, events in episodes:
        rc.episode(config, events)
        n += 1
    return rc.report(list(runs), n)


def check_runs(store: Any, runs: Sequence[str]) -> ProtocolCheck:
    """Recount every ended episode of ``runs`` (names or ids) in ``store``."""
    from core.grip.cache import resolve_runs

    run_ids = resolve_runs(store, runs)

    def pairs() -> Iterable[tuple[ProtocolConfig, Sequence[Event]]]:
        for rid in run_ids:
            for row in store.episode_rows(run_id=rid):
                if row["outcome"] is None:
                    continue
                header = store.header(row["episode_id"])
                yield header.config, store.events(row["episode_id"])

    return check_episodes(pairs(), runs=run_ids)


def check_table(check: ProtocolCheck) -> str:
    """A plain-text table of the recount."""

    def f(x: float | None) -> str:
        return "—" if x is None else f"{x:.3f}"

    lines = [
        f"protocol check of {', '.join(check.runs) or '-'}: {check.episodes} episodes, "
        f"{'OK' if check.ok else 'DEPARTURES FOUND'} (Wilson 99%, de-duplicated by draw key)",
        f"{'persona':<12} {'statistic':<18} {'k/n':>11} {'rate':>6} {'99% interval':>15} "
        f"{'expected':>8} {'table5':>6} {'ok':>3}",
    ]
    for r in check.rates:
        iv = "—" if r.low is None else f"[{r.low:.3f}, {r.high:.3f}]"
        ok = "—" if r.ok is None else ("yes" if r.ok else "NO")
        lines.append(
            f"{r.persona:<12} {r.statistic:<18} {f'{r.k}/{r.n}':>11} {f(r.rate):>6} {iv:>15} "
            f"{f(r.expected):>8} {('yes' if r.table5 else 'no'):>6} {ok:>3}"
        )
    lines.append("rule violations (must be 0): ")
    for pid, v in check.violations.items():
        lines.append(f"  {pid:<12} " + "  ".join(f"{k}={n}" for k, n in v.items()))
    for u in check.unchecked:
        lines.append(f"not checked: {u}")
    return "\n".join(lines)
