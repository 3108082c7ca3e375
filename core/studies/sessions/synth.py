"""A project-authored generator of synthetic production sessions (for tests and the demo).

Every session is plain JSONL in the format of docs/SESSIONS.md. A seeded draw decides whether
the opening request carries a communication fault and whether the user later shifts intent;
the truth is recorded under ``metadata.synthetic`` (judges never read metadata). Misaligned
sessions get more tool calls and a lower platform score on average, so the validation report
has an effect to find. Nothing here comes from a real log.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from core.model.intent import ShiftOperator
from core.model.sample import FaultType

F, S = FaultType, ShiftOperator

_COLOURS = ("red", "blue", "green", "black", "white")
_CITIES = ("Boston", "Denver", "Seattle", "Austin", "Miami", "Chicago")

# Opening requests carrying one fault. {n}, {m}, {c}, {city} are filled in.
_FAULTY: dict[FaultType, tuple[str, ...]] = {
    F.VAGUENESS_SUBJECTIVITY: (
        "I want something nice for my sister, not too expensive.",
        "Find me a decent jacket, kind of sporty.",
    ),
    F.REFERENTIAL_AMBIGUITY: (
        "Can you reorder that one like last time?",
        "Book the usual for me, same as before.",
    ),
    F.INDIRECT_INTENT: (
        "I was wondering if my trip could look a bit different somehow.",
        "I've been thinking my order is not really what I had in mind.",
    ),
    F.INSUFFICIENT_INFORMATION: ("I need help.", "Help me with my order."),
    F.TOOL_CAPABILITY_MISMATCH: (
        "Please fax me the receipt for order W{n}.",
        "Can you call me about reservation R{n}?",
    ),
    F.IRRELEVANT_INFORMATION: (
        "So my neighbour, who has lived next door for years and always complains about the "
        "parcels piling up at the door because the courier never rings, told me that my dog "
        "chewed the box last summer, which was funny at the time, and anyway I would like to "
        "return item 2 of order W{n} for a refund to my card.",
    ),
    F.FALSE_PRESUPPOSITION: ("Apply the discount you promised to order W{n}.",),
    F.FACTUAL_ERROR: ("Cancel order W{n}, it arrived broken.",),
    F.LEXICAL_AMBIGUITY: ("I need a light jacket in size {m} for the trip.",),
    F.CONTEXTUAL_IRRELEVANCE: (
        "The weather is awful today. By the way, change seat on flight {n} to aisle.",
    ),
}

_CLEAN: tuple[str, ...] = (
    "Please return item 3 of order W{n} and refund it to the credit card ending {m}.",
    "Change reservation R{n} to the flight on May {m} from {city} in economy class.",
    "I need a {c} cotton t-shirt in size {m} under {n} dollars.",
    "Cancel order W{n} because it arrived {m} days late.",
)

_SHIFTS: dict[ShiftOperator, tuple[str, ...]] = {
    S.PIVOT: ("Actually, forget it, book a hotel room in {city} for Friday night.",),
    S.SUBSTITUTE: ("Actually, change it to size {m2} instead.",),
    S.RELAX: ("Actually, the colour doesn't matter, any colour is fine.",),
    S.REFINE: ("Actually, also make sure it ships within {m} days.",),
}

_CORRECTION = "Sorry, I meant order W{n2}, my mistake."
_FOLLOW_UPS = ("Yes, that's right, go ahead.", "Yes please.", "Great, thank you!")
_TOOLS = ("get_order_details", "search_items", "get_reservation", "list_flights", "get_user")


def _fill(text: str, rng: random.Random) -> str:
    return text.format(
        n=rng.randint(100, 999),
        n2=rng.randint(100, 999),
        m=rng.randint(2, 12),
        m2=rng.randint(2, 12),
        c=rng.choice(_COLOURS),
        city=rng.choice(_CITIES),
    )


def _tool_block(rng: random.Random, k: int, index: list[int]) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    for _ in range(k):
        index[0] += 1
        call_id = f"call_{index[0]}"
        name = rng.choice(_TOOLS)
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps({"id": index[0]})},
                    }
                ],
            }
        )
        msgs.append({"role": "tool", "tool_call_id": call_id, "content": '{"status": "ok"}'})
    return msgs


def synthetic_session(rng: random.Random, index: int) -> dict[str, Any]:
    """Draw one synthetic session (a JSON-ready dict)."""
    fault: FaultType | None = None
    if rng.random() < 0.45:
        fault = rng.choice(sorted(_FAULTY))
    shift: ShiftOperator | None = rng.choice(list(S)) if rng.random() < 0.3 else None
    opening = _fill(rng.choice(_FAULTY[fault] if fault else _CLEAN), rng)
    calls = [0]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful customer-service agent."},
        {"role": "user", "content": opening},
    ]
    misaligned = fault is not None or shift is not None
    k_tools = rng.randint(1, 3) + (rng.randint(2, 4) if misaligned else 0)
    if fault is F.TOOL_CAPABILITY_MISMATCH:
        messages.append(
            {"role": "assistant", "content": "I can't do that here, but I can email it to you."}
        )
        messages.append({"role": "user", "content": "Yes please."})
    elif fault is not None:
        messages.append({"role": "assistant", "content": "Could you tell me a bit more?"})
        messages.append({"role": "user", "content": f"It is order W{rng.randint(100, 999)}."})
    first = k_tools if shift is None else max(1, k_tools // 2)
    messages += _tool_block(rng, first, calls)
    messages.append({"role": "assistant", "content": "I found it. Shall I go ahead?"})
    if fault is F.FACTUAL_ERROR:
        messages.append({"role": "user", "content": _fill(_CORRECTION, rng)})
        messages.append({"role": "assistant", "content": "Thanks, updated."})
    if shift is not None:
        messages.append({"role": "user", "content": _fill(rng.choice(_SHIFTS[shift]), rng)})
        messages += _tool_block(rng, max(1, k_tools - first), calls)
        messages.append({"role": "assistant", "content": "Done, here is the updated plan."})
    messages.append({"role": "user", "content": rng.choice(_FOLLOW_UPS)})
    messages.append({"role": "assistant", "content": "All set."})
    score: float | None = None
    if rng.random() > 0.1:
        mu, sd = (0.58, 0.12) if misaligned else (0.82, 0.08)
        score = round(min(1.0, max(0.0, rng.gauss(mu, sd))), 2)
    return {
        "session_id": f"synth-{index:05d}",
        "messages": messages,
        "score": score,
        "metadata": {
            "task": rng.choice(("retail", "airline", "shop")),
            "synthetic": {
                "fault_types": [fault.value] if fault else [],
                "shift_types": [shift.value] if shift else [],
            },
        },
    }


def generate_sessions(n: int, rng: random.Random) -> list[dict[str, Any]]:
    """Draw ``n`` synthetic sessions."""
    return [synthetic_session(rng, i) for i in range(n)]


def write_sessions_jsonl(path: Path, n: int, seed: int = 0) -> Path:
    """Write ``n`` synthetic sessions to a JSONL file and return its path."""
    rng = random.Random(seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for s in generate_sessions(n, rng):
            fh.write(json.dumps(s, ensure_ascii=False) + "\n")
    return path
