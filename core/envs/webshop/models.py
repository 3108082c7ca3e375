"""Typed records of the shop world: products, goals, the stored payload and reward breakdowns.

Field names follow WebShop's loaded-product schema in snake case (``Title`` → ``title``,
``BulletPoints`` → ``bullet_points``, ``Attributes`` → ``attributes``). Two deliberate
differences from WebShop: every product has one fixed ``price`` (WebShop draws a price for
range-priced items at load time) and a precomputed ``name_nouns`` list (WebShop runs spaCy on
the name inside the reward).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from core.model.base import SCHEMA_VERSION, Strict

PAYLOAD_FORMAT: Literal["driftbench-webshop"] = "driftbench-webshop"
"""Marker stored in every world payload (bundled file and importer output)."""


class Product(Strict):
    """One catalogue item in WebShop's product schema."""

    asin: str = Field(min_length=1, max_length=10, description="Amazon-style id, unique.")
    name: str = Field(min_length=1, description="Product name (WebShop's raw 'name').")
    title: str = Field(min_length=1, description="Shown title (WebShop 'Title' = name).")
    description: str = Field(default="", description="Full description ('Description').")
    bullet_points: list[str] = Field(default_factory=list, description="'BulletPoints'.")
    price: float = Field(ge=0, description="Fixed price in dollars.")
    price_text: str = Field(default="", description="Price as scraped ('$x' or '$x to $y').")
    category: str = Field(default="", description="Top-level category (beauty, fashion …).")
    product_category: str = Field(default="", description="Breadcrumb 'A › B › C'.")
    query: str = Field(min_length=1, description="Scrape query = the product's cluster.")
    attributes: list[str] = Field(default_factory=list, description="'Attributes'.")
    options: dict[str, list[str]] = Field(
        default_factory=dict, description="Option name → values (lower-cased, '/' → ' | ')."
    )
    name_nouns: list[str] = Field(
        default_factory=list, description="Nouns of the name, lower-cased, in order."
    )
    rating: float | None = Field(default=None, description="Average rating, if known.")

    @field_validator("options")
    @classmethod
    def _non_empty_options(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        for name, values in v.items():
            if not name:
                raise ValueError("option names must be non-empty")
            if not values:
                raise ValueError(f"option '{name}' has no values")
        return v


class Goal(Strict):
    """A shopping goal in WebShop's human-goal structure (plus a stable id)."""

    goal_id: str = Field(min_length=1, description="Stable id (bundled: g0000 …).")
    asin: str = Field(min_length=1, description="Target product.")
    instruction_text: str = Field(min_length=1, description="Instruction incl. price text.")
    attributes: list[str] = Field(description="Required attributes (instruction_attributes).")
    goal_options: list[str] = Field(default_factory=list, description="Required option values.")
    price_upper: float = Field(gt=0, description="Price cap in dollars (1e6 = none).")
    category: str = Field(default="", description="Target's top-level category.")
    query: str = Field(min_length=1, description="Target's scrape query (cluster).")
    name: str = Field(min_length=1, description="Target's product name.")
    product_category: str = Field(default="", description="Target's breadcrumb.")


class GoalSpec(Strict):
    """The reward-relevant part of a goal (what ``get_reward`` reads)."""

    name: str
    name_nouns: list[str]
    query: str
    product_category: str = ""
    attributes: list[str] = Field(default_factory=list)
    goal_options: list[str] = Field(default_factory=list)
    price_upper: float = 1_000_000.0


class WorldPayload(Strict):
    """A whole shop world as stored (bundled file or importer output)."""

    format: Literal["driftbench-webshop"] = PAYLOAD_FORMAT
    schema_version: int = SCHEMA_VERSION
    name: str = Field(default="webshop", description="Human label of the catalogue.")
    source: str = Field(default="", description="Where it came from (generator seed / dir).")
    notes: list[str] = Field(default_factory=list, description="Documented deviations.")
    products: list[Product]
    goals: list[Goal]


class AttributeMatch(Strict):
    """How one goal attribute was (or was not) matched."""

    attribute: str
    matched: bool
    via: Literal["attributes", "title", "bullet_points", "description"] | None = None
    matched_with: str | None = None


class OptionMatch(Strict):
    """How one goal option was (or was not) matched by the chosen options."""

    goal_option: str
    normalized: str
    matched: bool
    matched_with: str | None = None


class RewardBreakdown(Strict):
    """WebShop's ``get_reward`` with every component visible."""

    reward: float = Field(description="total × r_type.")
    total: float = Field(description="(attr hits + option hits + r_price) / (n_att + n_opt + 1).")
    r_type: float
    query_match: bool
    category_match: bool
    title_score: float
    r_att: float | None
    num_attr_matches: int
    attribute_matches: list[AttributeMatch]
    r_option: float | None
    num_option_matches: int
    option_matches: list[OptionMatch]
    r_price: bool
    price: float
    price_upper: float
