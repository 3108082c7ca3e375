"""The release's WebShop condition format runs on this world (needs ../shared)."""

from __future__ import annotations

import json

import pytest

from core.envs.webshop.world import WebShopWorld
from core.model.intent import Condition, Intent
from core.paths import shared_dir

EXAMPLES = shared_dir() / "driftbench_release" / "webshop_examples"


@pytest.mark.shared
def test_release_sample_conditions_execute_and_phrase(bundled_world: WebShopWorld) -> None:
    sample_file = EXAMPLES / "sample_v2_0020601ac2670baa.json"
    if not sample_file.is_file():
        pytest.skip("../shared/driftbench_release absent: no WebShop sample to read")
    sample = json.loads(sample_file.read_text(encoding="utf-8"))
    conds = [
        Condition(slot=s, op=op, value=v) for s, op, v in sample["hidden_intent"]["conditions"]
    ]
    assert {c.slot.split(":")[0] for c in conds} == {"attr", "option", "price_upper"}
    # The release's ground-truth rows use the same compact encoding as ours.
    row = json.loads(sample["ground_truth"]["value"][0])
    assert isinstance(row[0], str) and all(len(pair) == 2 for pair in row[1])
    # Its conditions are well-formed for this world: they execute over a bundled base and phrase.
    goal = bundled_world.goals[0]
    intent = Intent.build(
        benchmark="webshop", env_id=goal.query, base=goal.goal_id, conditions=conds
    )
    gt = bundled_world.execute(intent)
    assert gt.kind == "purchaseset"  # the shirt attributes need not exist in our catalogue
    phrases = [bundled_world.phrase(c) for c in conds]
    assert phrases == ["long sleeve", "polyester cotton", "in black", "under $20"]
