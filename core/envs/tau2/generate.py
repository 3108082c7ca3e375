"""Seeded generator of the bundled τ² worlds (``data/tau2_retail``, ``data/tau2_airline``).

The worlds are project-authored and small: a few dozen users, orders or reservations,
products or flights, and tasks whose golden actions cover every write tool of the domain. The
files follow τ²-bench's layout (``db.json``, ``tasks.json``, ``split_tasks.json``,
``policy.md``). Generation is a pure function of the seed; every task's golden actions are
replayed with the real tool table before anything is written, and output is byte-stable.

Run ``python -m core.envs.tau2.generate`` to regenerate both bundled worlds.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.envs.tau2.db import BaseDB, OverlayState
from core.envs.tau2.loader import check_domain, type_db
from core.envs.tau2.tasks import Task
from core.errors import ConfigError
from core.model.world import EnvAction
from core.paths import DATA_DIR

BUNDLED_SEEDS = {"retail": 20240515, "airline": 20240516}
"""Seeds of the committed bundled worlds."""

FIRST_NAMES = (
    "Ava", "Liam", "Maya", "Noah", "Zoe", "Omar", "Lena", "Ivan", "Nora", "Raj",
    "Emma", "Yuki", "Sara", "Mateo", "Aisha", "Lucas", "Mei", "Daniel", "Fatima", "Ethan",
    "Chloe", "Hugo", "Priya", "Leo", "Ines", "Kofi", "Anya", "Tariq", "Elena", "Sam",
)  # fmt: skip
LAST_NAMES = (
    "Garcia", "Nguyen", "Smith", "Kowalski", "Okafor", "Rossi", "Tanaka", "Novak", "Silva",
    "Khan", "Muller", "Larsen", "Moreau", "Cohen", "Patel", "Ortiz", "Dubois", "Kim", "Lopez",
    "Haddad", "Jensen", "Costa", "Ivanova", "Brown", "Sato", "Ali", "Fischer", "Reyes",
)  # fmt: skip
PLACES = (
    ("Denver", "CO", "80"), ("Austin", "TX", "78"), ("Seattle", "WA", "98"),
    ("Boston", "MA", "02"), ("Chicago", "IL", "60"), ("Phoenix", "AZ", "85"),
    ("Portland", "OR", "97"), ("Atlanta", "GA", "30"), ("Columbus", "OH", "43"),
    ("San Diego", "CA", "92"), ("Charlotte", "NC", "28"), ("Minneapolis", "MN", "55"),
)  # fmt: skip
STREETS = (
    "Maple Avenue", "Cedar Street", "Hillcrest Road", "Lakeview Drive", "Elm Street",
    "Sunset Boulevard", "River Road", "Oak Lane", "Park Place", "Willow Way",
)  # fmt: skip
TONES = (
    "You are polite and patient, and you answer one question at a time.",
    "You are in a hurry and keep your messages short.",
    "You are friendly but a little unsure of the details.",
    "You are precise and want every step confirmed.",
    "You are calm and methodical.",
)


def digits(rng: random.Random, n: int) -> str:
    """Return ``n`` random digits (no leading zero)."""
    return str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(n - 1))


def unique(rng: random.Random, n: int, used: set[str], prefix: str = "") -> str:
    """Return a fresh ``prefix + digits`` id not in ``used`` (and record it)."""
    while True:
        v = prefix + digits(rng, n)
        if v not in used:
            used.add(v)
            return v


def credit_cards(rng: random.Random, used: set[str]) -> dict[str, Any]:
    """One or two credit cards of a customer, keyed by their payment method id."""
    methods: dict[str, Any] = {}
    for _ in range(rng.randint(1, 2)):
        cid = unique(rng, 7, used, "credit_card_")
        methods[cid] = {
            "source": "credit_card",
            "id": cid,
            "brand": rng.choice(("visa", "mastercard")),
            "last_four": digits(rng, 4),
        }
    return methods


def person(rng: random.Random, used_ids: set[str]) -> tuple[str, str, str]:
    """Return (first, last, user_id) with a unique user id."""
    while True:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        uid = f"{first.lower()}_{last.lower()}_{rng.randint(1000, 9999)}"
        if uid not in used_ids:
            used_ids.add(uid)
            return first, last, uid


def customers(
    rng: random.Random, n: int, used: set[str]
) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """``n`` customers, one at a time: (first, last, unique user id, their credit cards).

    Draws each customer's name and cards just before the caller draws the rest of that
    customer (the draws happen in the order a loop over customers made them).
    """
    used_ids: set[str] = set()
    for _ in range(n):
        first, last, uid = person(rng, used_ids)
        yield first, last, uid, credit_cards(rng, used)


def address(rng: random.Random, optional_line2: bool = False) -> dict[str, Any]:
    """Return a random US address."""
    city, state, zp = rng.choice(PLACES)
    line2: str | None = f"Suite {rng.randint(100, 999)}"
    if optional_line2 and rng.random() < 0.3:
        line2 = None
    return {
        "address1": f"{rng.randint(10, 999)} {rng.choice(STREETS)}",
        "address2": line2,
        "city": city,
        "country": "USA",
        "state": state,
        "zip": zp + digits(rng, 3),
    }


def action(task_id: str, k: int, name: str, **arguments: Any) -> dict[str, Any]:
    """Return one golden action in τ²-bench's task format."""
    return {"action_id": f"{task_id}_{k}", "name": name, "arguments": arguments, "info": None}


def task_dict(
    task_id: str,
    domain: str,
    purpose: str,
    reason: str,
    known: str,
    unknown: str | None,
    tone: str,
    actions: list[dict[str, Any]],
    communicate: list[str] | None = None,
) -> dict[str, Any]:
    """Return one task in τ²-bench's format (reward basis DB × COMMUNICATE)."""
    return {
        "id": task_id,
        "description": {"purpose": purpose, "relevant_policies": None, "notes": "generated"},
        "user_scenario": {
            "persona": None,
            "instructions": {
                "domain": domain,
                "reason_for_call": reason,
                "known_info": known,
                "unknown_info": unknown,
                "task_instructions": tone,
            },
        },
        "initial_state": None,
        "evaluation_criteria": {
            "actions": actions,
            "communicate_info": communicate or [],
            "nl_assertions": [],
            "reward_basis": ["DB", "COMMUNICATE"],
        },
    }


def check_tasks(domain: str, db: dict[str, Any], tasks: list[dict[str, Any]]) -> None:
    """Replay every task's golden actions; only lookups flagged ``expect_error`` may fail."""
    toolkit_cls = check_domain(domain)
    base = BaseDB(type_db(domain, db, f"<generated {domain}>/db.json"))
    for raw in tasks:
        task = Task.model_validate(raw)
        state = OverlayState(base)
        tools = toolkit_cls(state)
        for a in task.actions:
            act = EnvAction(tool=a.name, args=a.arguments)
            try:
                tools.invoke(act.tool, dict(act.args))
            except Exception as exc:  # noqa: BLE001
                if a.info != "expected lookup failure":
                    raise ConfigError(
                        f"generated golden action {a.action_id} ({a.name}) fails: {exc}",
                        field=f"task {task.id}",
                    ) from exc


def split(task_ids: list[str]) -> dict[str, list[str]]:
    """Deterministic train/test/base split (every third task is a test task)."""
    test = [t for i, t in enumerate(task_ids) if i % 3 == 2]
    train = [t for t in task_ids if t not in test]
    return {"train": train, "test": test, "base": list(task_ids)}


def write_world(
    out_dir: Path,
    db: dict[str, Any],
    tasks: list[dict[str, Any]],
    policy: str,
) -> None:
    """Write the four files of a domain directory (stable bytes)."""
    out_dir.mkdir(parents=True, exist_ok=True)

    def dump(obj: Any) -> str:
        return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"

    (out_dir / "db.json").write_text(dump(db), encoding="utf-8")
    (out_dir / "tasks.json").write_text(dump(tasks), encoding="utf-8")
    (out_dir / "split_tasks.json").write_text(
        dump(split([t["id"] for t in tasks])), encoding="utf-8"
    )
    (out_dir / "policy.md").write_text(policy, encoding="utf-8")


def generate_bundled(domain: str, seed: int, out_dir: Path) -> None:
    """Generate a small world for ``domain`` from ``seed`` into ``out_dir``.

    Args:
        domain: ``retail`` or ``airline``.
        seed: The seed; the same seed always gives the same bytes.
        out_dir: Target directory (created if needed).

    Raises:
        ConfigError: for an unknown domain, or if a generated golden action failed.
    """
    check_domain(domain)
    rng = random.Random(seed)
    if domain == "retail":
        from core.envs.tau2.gen_retail import POLICY, build_retail

        db, tasks = build_retail(rng)
        policy = POLICY
    else:
        from core.envs.tau2.gen_airline import POLICY as APOLICY
        from core.envs.tau2.gen_airline import build_airline

        db, tasks = build_airline(rng)
        policy = APOLICY
    check_tasks(domain, db, tasks)
    write_world(Path(out_dir), db, tasks, policy)


def main() -> None:
    """Regenerate both bundled worlds under ``data/``."""
    for domain, seed in BUNDLED_SEEDS.items():
        out = DATA_DIR / f"tau2_{domain}"
        generate_bundled(domain, seed, out)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
