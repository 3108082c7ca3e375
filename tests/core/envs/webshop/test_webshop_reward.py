"""WebShop get_reward semantics, component by component, on hand-made products and goals."""

from __future__ import annotations

import pytest
from webshop_fixtures import make_product

from core.envs.webshop.models import GoalSpec
from core.envs.webshop.reward import best_options, get_reward, option_matches, type_reward
from core.envs.webshop.text import fuzzy_score, heuristic_nouns, normalize_color, price_upper_for

CAT = "Clothing › Men › Shoes › Running"


def spec(**kw: object) -> GoalSpec:
    base: dict[str, object] = {
        "name": "Acme Trail Running Shoes",
        "name_nouns": ["acme", "trail", "running", "shoes"],
        "query": "running shoes",
        "product_category": CAT,
        "attributes": ["arch support"],
        "goal_options": [],
        "price_upper": 50.0,
    }
    base.update(kw)
    return GoalSpec.model_validate(base)


# ---------------------------------------------------------------- attributes
def test_attribute_matched_by_fuzzy_token_set_on_attribute_list() -> None:
    p = make_product("B1", attributes=["Support, Arch"])  # token set equal after processing
    r = get_reward(p, spec(), {})
    assert r.attribute_matches[0].via == "attributes"
    assert r.attribute_matches[0].matched_with == "Support, Arch"
    assert r.num_attr_matches == 1 and r.r_att == 1.0


@pytest.mark.parametrize(
    ("field", "value", "via"),
    [
        ("title", "Acme Shoes With ARCH SUPPORT", "title"),
        ("bullet_points", ["grippy", "great arch support inside"], "bullet_points"),
        ("description", "Built-in arch support for long runs.", "description"),
    ],
)
def test_attribute_matched_by_substring_of_text(field: str, value: object, via: str) -> None:
    p = make_product("B1", attributes=["rubber sole"], **{field: value})
    r = get_reward(p, spec(), {})
    assert r.attribute_matches[0].matched and r.attribute_matches[0].via == via


def test_attribute_unmatched_when_absent_everywhere() -> None:
    p = make_product("B1", attributes=["rubber sole", "lace up"])
    r = get_reward(p, spec(), {})
    assert not r.attribute_matches[0].matched
    assert r.num_attr_matches == 0 and r.r_att == 0.0
    # price ok only: 1 / (1 attr + 0 options + 1)
    assert r.reward == pytest.approx(0.5)


def test_fuzzy_threshold_is_strictly_above_85_after_rounding() -> None:
    # thefuzz semantics: lower-case, strip punctuation, token-set ratio, rounded.
    assert fuzzy_score("pack of 6", "pack of 12") == 88  # the famous WebShop leniency
    assert fuzzy_score("set of 2", "set of 4") == 88
    assert fuzzy_score("Machine-Wash", "machine wash") == 100
    assert fuzzy_score("", "anything") == 0
    p = make_product("B1", attributes=["hand wash"])
    assert not get_reward(p, spec(attributes=["machine wash"]), {}).attribute_matches[0].matched


# ------------------------------------------------------------------- options
def test_option_colour_normalisation_first_colour_alphabetically() -> None:
    assert normalize_color("black forest") == "black"
    assert normalize_color("violet lavender") == "lavender"  # alphabetical, not positional
    assert normalize_color("steelivy fuchsia") == "fuchsia"
    assert normalize_color("123alabaster") == "alabaster"
    assert normalize_color("webshop") == "webshop"
    assert normalize_color("") == ""


@pytest.mark.parametrize(
    ("goal", "chosen", "matched"),
    [
        ("black", "jet black", True),  # both normalise to black
        ("navy blue", "royal blue", True),  # both → blue
        ("light pink", "light purple", True),  # both → light (WebShop quirk, kept)
        ("light pink", "light blue", False),  # blue < light alphabetically
        ("red", "blue", False),
        ("large", "x-large", True),  # token-set subset → 100
        ("small", "large", False),
        ("pack of 6", "pack of 12", True),
    ],
)
def test_option_matching(goal: str, chosen: str, matched: bool) -> None:
    (m,) = option_matches([chosen], [goal])
    assert m.matched is matched
    assert m.normalized == normalize_color(goal)


def test_option_reward_counts_each_goal_option_once() -> None:
    p = make_product("B1")
    r = get_reward(p, spec(goal_options=["black", "10"]), {"color": "black", "size": "9"})
    assert r.num_option_matches == 1 and r.r_option == 0.5
    # (1 attr + 1 option + price) / (1 + 2 + 1)
    assert r.reward == pytest.approx(0.75)
    r = get_reward(p, spec(goal_options=["black", "10"]), {"color": "black", "size": "10"})
    assert r.reward == pytest.approx(1.0)


def test_no_options_chosen_loses_option_credit() -> None:
    r = get_reward(make_product("B1"), spec(goal_options=["black"]), {})
    assert r.num_option_matches == 0 and r.reward == pytest.approx(2 / 3)


def test_best_options_prefers_exact_and_uses_each_option_once() -> None:
    p = make_product("B1", options={"color": ["jet black", "black"], "size": ["x-large", "large"]})
    assert best_options(p, ["black", "large"]) == {"color": "black", "size": "large"}
    assert best_options(p, ["purple"]) == {}
    q = make_product("B2", options={"color": ["black"], "trim": ["black"]})
    assert best_options(q, ["black", "black"]) == {"color": "black", "trim": "black"}


# --------------------------------------------------------------------- price
def test_price_component() -> None:
    p = make_product("B1", price=50.0)
    assert get_reward(p, spec(price_upper=50.0), {}).r_price is True
    over = get_reward(make_product("B1", price=50.01), spec(price_upper=50.0), {})
    assert over.r_price is False and over.reward == pytest.approx(0.5)
    assert get_reward(p, spec(price_upper=10.0), {}, price=5.0).r_price is True


def test_price_upper_rule() -> None:
    assert price_upper_for(34.99) == 50.0
    assert price_upper_for(40.0) == 60.0
    assert price_upper_for(0.5) == 20.0
    assert price_upper_for(985.0) == 1_000_000.0


# ---------------------------------------------------------------- type reward
def test_type_query_match_full_credit() -> None:
    p = make_product("B1", product_category="X › Y", name_nouns=["acme", "boots"])
    r_type, qm, cm, ts = type_reward(p, spec())
    assert (r_type, qm, cm, ts) == (1.0, True, False, 0.25)


def test_type_category_match_needs_two_shared_components() -> None:
    p = make_product("B1", query="other", product_category="Clothing › Women › Shoes")
    _, _, cm, _ = type_reward(p, spec())
    assert cm is True
    p = make_product("B1", query="other", product_category="Clothing › Women › Dresses")
    _, _, cm, _ = type_reward(p, spec())
    assert cm is False


def test_type_title_score_above_point_two_alone_gives_full_credit() -> None:
    p = make_product("B1", query="other", product_category="A › B", name_nouns=["trail", "x"])
    r_type, qm, cm, ts = type_reward(p, spec())
    assert (qm, cm, ts, r_type) == (False, False, 0.25, 1.0)


def test_type_half_credit_when_no_signal() -> None:
    goal = spec(name_nouns=["a", "b", "c", "d", "trail"])
    p = make_product("B1", query="other", product_category="A › B", name_nouns=["trail"])
    r_type, _, _, ts = type_reward(p, goal)
    assert ts == pytest.approx(0.2) and r_type == 0.5  # 0.2 is not > 0.2


def test_type_low_title_score_overrides_category_match() -> None:
    goal = spec(name_nouns=[f"n{i}" for i in range(11)] + ["trail"])  # 12 nouns
    p = make_product("B1", query="other", name_nouns=["trail"])  # same breadcrumb
    r_type, _, cm, ts = type_reward(p, goal)
    assert cm and ts == pytest.approx(1 / 12) and r_type == 0.1


def test_type_zero_title_score_zeroes_even_with_query_match() -> None:
    p = make_product("B1", name_nouns=["kettle"])
    r_type, qm, _, ts = type_reward(p, spec())
    assert qm and ts == 0.0 and r_type == 0.0
    assert get_reward(p, spec(), {}).reward == 0.0


def test_type_goal_without_nouns_scores_point_two() -> None:
    p = make_product("B1", query="other", product_category="A › B")
    r_type, _, _, ts = type_reward(p, spec(name_nouns=[]))
    assert ts == 0.2 and r_type == 0.5
    r_type, _, _, _ = type_reward(make_product("B1"), spec(name_nouns=[]))
    assert r_type == 1.0


def test_title_score_denominator_counts_repeated_goal_nouns() -> None:
    p = make_product("B1", name_nouns=["shoes"])
    _, _, _, ts = type_reward(p, spec(name_nouns=["shoes", "shoes", "trail", "acme"]))
    assert ts == pytest.approx(0.25)


def test_reward_is_total_times_type() -> None:
    goal = spec(name_nouns=["a", "b", "c", "d", "trail"], attributes=["arch support", "gel"])
    p = make_product("B1", query="other", product_category="A › B", name_nouns=["trail"])
    r = get_reward(p, goal, {})
    assert r.total == pytest.approx(2 / 3) and r.r_type == 0.5
    assert r.reward == pytest.approx(1 / 3)


def test_heuristic_nouns() -> None:
    assert heuristic_nouns("Stridewell Men's Breathable Running Shoes with Arch Support") == [
        "stridewell",
        "men",
        "running",
        "shoes",
        "arch",
        "support",
    ]
