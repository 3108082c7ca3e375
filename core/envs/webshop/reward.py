"""WebShop's ``get_reward``, component by component.

Semantics follow WebShop's ``engine/goal.py`` (the human-goal path):

* type reward: query equality, ≥2 shared breadcrumb components, and the share of the goal
  name's nouns found among the purchased name's nouns (``name_nouns`` are precomputed; nothing
  runs spaCy here). r_type = 1, then 0.5 if none of the three signals holds, then 0.1 if the
  noun share is below 0.1, then 0 if it is 0 (the three steps are applied in sequence);
* attributes: a goal attribute matches a product attribute with token-set ratio > 85, else when
  it is a substring of the lower-cased title, bullet points (joined by spaces) or description;
* options: colour-normalise both sides, then each goal option matches if any chosen value has
  token-set ratio > 85;
* price: 1 when the price is within the cap;
* reward = (attr hits + option hits + price) / (n_attr + n_opt + 1) × r_type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.envs.webshop.models import (
    AttributeMatch,
    GoalSpec,
    OptionMatch,
    Product,
    RewardBreakdown,
)
from core.envs.webshop.text import fuzzy_match, fuzzy_score, normalize_color


def _category_parts(breadcrumb: str) -> set[str]:
    return {part.strip() for part in breadcrumb.split("›")}


def type_reward(product: Product, goal: GoalSpec) -> tuple[float, bool, bool, float]:
    """Return ``(r_type, query_match, category_match, title_score)``.

    Args:
        product: The purchased product.
        goal: The goal (its name nouns, query and breadcrumb are used).
    """
    query_match = product.query == goal.query
    category_match = (
        len(_category_parts(product.product_category) & _category_parts(goal.product_category)) >= 2
    )
    desired = goal.name_nouns
    if not desired:
        title_score = 0.2
    else:
        title_score = len(set(product.name_nouns) & set(desired)) / len(desired)
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type, query_match, category_match, title_score


def attribute_matches(product: Product, attributes: Iterable[str]) -> list[AttributeMatch]:
    """Match each goal attribute against the product (attribute list first, then text)."""
    title = product.title.lower()
    bullets = " ".join(product.bullet_points).lower()
    description = product.description.lower()
    out: list[AttributeMatch] = []
    for g in attributes:
        hit = next((p for p in product.attributes if fuzzy_match(p, g)), None)
        if hit is not None:
            out.append(
                AttributeMatch(attribute=g, matched=True, via="attributes", matched_with=hit)
            )
        elif g in title:
            out.append(AttributeMatch(attribute=g, matched=True, via="title"))
        elif g in bullets:
            out.append(AttributeMatch(attribute=g, matched=True, via="bullet_points"))
        elif g in description:
            out.append(AttributeMatch(attribute=g, matched=True, via="description"))
        else:
            out.append(AttributeMatch(attribute=g, matched=False))
    return out


def option_matches(chosen: Iterable[str], goal_options: Iterable[str]) -> list[OptionMatch]:
    """Match each goal option against the chosen option values (after colour normalisation)."""
    chosen_norm = [(normalize_color(c), c) for c in chosen]
    out: list[OptionMatch] = []
    for g in goal_options:
        gn = normalize_color(g)
        hit = next((raw for norm, raw in chosen_norm if fuzzy_match(norm, gn)), None)
        out.append(
            OptionMatch(goal_option=g, normalized=gn, matched=hit is not None, matched_with=hit)
        )
    return out


def get_reward(
    product: Product, goal: GoalSpec, options: Mapping[str, str], price: float | None = None
) -> RewardBreakdown:
    """Compute WebShop's reward for buying ``product`` with ``options`` against ``goal``.

    Args:
        product: The purchased product.
        goal: Reward-relevant goal fields.
        options: Chosen option name → value (only the values matter, as in WebShop).
        price: The paid price; defaults to the product's fixed price.

    Returns:
        The reward and all of its components.
    """
    paid = product.price if price is None else price
    r_type, query_match, category_match, title_score = type_reward(product, goal)
    attrs = attribute_matches(product, goal.attributes)
    opts = option_matches(options.values(), goal.goal_options)
    n_att = sum(m.matched for m in attrs)
    n_opt = sum(m.matched for m in opts)
    r_price = paid <= goal.price_upper
    denom = len(goal.attributes) + len(goal.goal_options) + 1
    total = (n_att + n_opt + int(r_price)) / denom
    return RewardBreakdown(
        reward=total * r_type,
        total=total,
        r_type=r_type,
        query_match=query_match,
        category_match=category_match,
        title_score=title_score,
        r_att=n_att / len(goal.attributes) if goal.attributes else None,
        num_attr_matches=n_att,
        attribute_matches=attrs,
        r_option=n_opt / len(goal.goal_options) if goal.goal_options else None,
        num_option_matches=n_opt,
        option_matches=opts,
        r_price=r_price,
        price=paid,
        price_upper=goal.price_upper,
    )


def best_options(product: Product, goal_options: Iterable[str]) -> dict[str, str]:
    """Choose, per goal option, the product option value that matches it best.

    Each option name is used at most once (goal options are served in order); a goal option
    with no fuzzy match leaves nothing chosen for it. Ties keep the first value in catalogue
    order, so the result is deterministic.

    Returns:
        Chosen option name → value, in the product's option order.
    """
    chosen: dict[str, str] = {}
    for g in goal_options:
        gn = normalize_color(g)
        best: tuple[int, str, str] | None = None
        for name, values in product.options.items():
            if name in chosen:
                continue
            for v in values:
                score = 101 if v == g else fuzzy_score(normalize_color(v), gn)
                if score > 85 and (best is None or score > best[0]):
                    best = (score, name, v)
        if best is not None:
            chosen[best[1]] = best[2]
    return {name: chosen[name] for name in product.options if name in chosen}
