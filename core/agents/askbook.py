"""A3's symbolic lesson book: which questions pay off, per request signature, within one run.

The book holds only *counts* keyed by a request signature (the benchmark and, per slot family the
agent's literal reading mentions, how many slots of that family it holds, capped at
:data:`COUNT_CAP`) and by the slot family of a question
(``attr`` / ``option`` / ``price`` on the shop, the argument name on τ²). It never holds values,
sample ids or entity names. It starts empty, grows only from the finished episodes of its own
run unit (one benchmark × persona × seed within one run), in generations (a run option, see
:attr:`core.model.run.RunSpec.a3_generation_size`), and is never persisted across runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

MIN_TRIALS = 3
"""Questions about a family needed before its pay-off rate is trusted."""
SKIP_BELOW = 0.2
"""Families with a trusted pay-off rate below this are no longer asked about."""
COUNT_CAP = 3
"""Slot counts per family above this share one signature (keeps signatures recurring)."""


def slot_family(slot: str) -> str:
    """Return the value-free family of a slot (never its value).

    >>> slot_family("attr:machine wash"), slot_family("option:1"), slot_family("price_upper")
    ('attr', 'option', 'price')
    >>> slot_family("arg:0:cancel_pending_order:reason")
    'reason'
    """
    if slot.startswith("arg:"):
        return slot.rsplit(":", 1)[-1]
    if slot.startswith("attr:"):
        return "attr"
    if slot.startswith("option:"):
        return "option"
    if slot.startswith("price"):
        return "price"
    return slot.split(":", 1)[0]


def signature(benchmark: str, slots: Iterable[str]) -> str:
    """Return the request signature: benchmark, then each slot family with its slot count.

    Only family names and digits appear, so the signature can never spell a hidden value.

    >>> signature("webshop", ["attr:cotton", "attr:machine wash", "price_upper", "option:blue"])
    'webshop|attr2,option1,price1'
    """
    counts: dict[str, int] = {}
    for s in slots:
        fam = slot_family(s)
        counts[fam] = counts.get(fam, 0) + 1
    body = ",".join(f"{f}{min(n, COUNT_CAP)}" for f, n in sorted(counts.items()))
    return f"{benchmark}|{body}"


@dataclass
class AskBook:
    """Per-signature question statistics (asked, paid) by slot family, kept in generations.

    Finished episodes record into a pending table; :meth:`commit` folds it into the book at the
    end of a generation, so every episode of one generation plays against the same book (as the
    LLM lesson book, which is rewritten only between generations).
    """

    stats: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    episodes: int = 0
    generation: int = 0
    pending: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    committed_episodes: int = 0

    def record(self, sig: str, family: str, paid: bool) -> None:
        """Count one answered question about ``family`` under ``sig`` (pending until commit)."""
        cell = self.pending.setdefault(sig, {}).setdefault(family, [0, 0])
        cell[0] += 1
        cell[1] += int(paid)

    def commit(self) -> None:
        """End a generation: fold the pending counts into the book."""
        for sig, fams in self.pending.items():
            for fam, (n, k) in fams.items():
                cell = self.stats.setdefault(sig, {}).setdefault(fam, [0, 0])
                cell[0] += n
                cell[1] += k
        self.pending = {}
        self.generation += 1
        self.committed_episodes = self.episodes

    def event(self, generation_size: int) -> dict[str, object]:
        """The fields of the ``lesson_book`` event recording this book."""
        rows = [
            {"signature": sig, "family": fam, "asked": n, "paid": k}
            for sig, fams in sorted(self.stats.items())
            for fam, (n, k) in sorted(fams.items())
        ]
        return {
            "book": "askbook",
            "generation": self.generation,
            "generation_size": generation_size,
            "episodes_seen": self.committed_episodes,
            "lessons": tuple(rows),
        }

    def rate(self, sig: str, family: str) -> float | None:
        """Trusted pay-off rate of ``family`` under ``sig`` (None with too few trials)."""
        cell = self.stats.get(sig, {}).get(family)
        if cell is None or cell[0] < MIN_TRIALS:
            return None
        return cell[1] / cell[0]

    def worth_asking(self, sig: str, family: str) -> bool:
        """False once experience says questions about ``family`` rarely pay off."""
        r = self.rate(sig, family)
        return r is None or r >= SKIP_BELOW

    def priority(self, sig: str, family: str) -> float:
        """Ordering key (higher first): trusted rate, else a neutral prior of 0.5."""
        r = self.rate(sig, family)
        return 0.5 if r is None else r

    def is_empty(self) -> bool:
        """Whether nothing has been learned yet."""
        return not self.stats

    def snapshot(self) -> dict[str, dict[str, list[int]]]:
        """A JSON-ready copy of the statistics."""
        return {s: {f: list(c) for f, c in fams.items()} for s, fams in self.stats.items()}

    def vocabulary(self) -> set[str]:
        """Every word the book contains, signatures split into their parts (for leakage checks)."""
        out: set[str] = set()
        for sig, fams in self.stats.items():
            bench, _, body = sig.partition("|")
            out.add(bench)
            out.update(part.rstrip("0123456789") for part in body.split(",") if part)
            out.update(fams)
        return out
