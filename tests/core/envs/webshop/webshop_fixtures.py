"""Hand-made products and goals for the shop tests."""

from __future__ import annotations

from core.envs.webshop.models import Goal, Product, WorldPayload


def make_product(asin: str, **kw: object) -> Product:
    base: dict[str, object] = {
        "asin": asin,
        "name": f"Acme Trail Running Shoes {asin}",
        "title": f"Acme Trail Running Shoes {asin}",
        "description": "Shoes for the trail.",
        "bullet_points": ["Grippy outsole"],
        "price": 40.0,
        "price_text": "$40.00",
        "category": "fashion",
        "product_category": "Clothing › Men › Shoes › Running",
        "query": "running shoes",
        "attributes": ["arch support"],
        "options": {"color": ["black", "white"], "size": ["9", "10"]},
        "name_nouns": ["acme", "trail", "running", "shoes"],
    }
    base.update(kw)
    return Product.model_validate(base)


def tiny_payload() -> WorldPayload:
    products = [
        make_product(
            "B000000001",
            attributes=["arch support", "rubber sole"],
            description="Trail shoes with arch support.",
        ),
        make_product("B000000002", attributes=["rubber sole"], price=35.0),
        make_product("B000000003", options={"color": ["red"], "size": ["9"]}, price=20.0),
        make_product("B000000004", price=99.0, title="Acme Pro Trail Running Shoes"),
        make_product(
            "B000000005",
            name="Zest Lemon Shampoo",
            title="Zest Lemon Shampoo",
            description="Lemon scented shampoo for shiny hair.",
            bullet_points=["Sulfate free formula", "Second bullet mentions unicorns"],
            query="shampoo",
            product_category="Beauty › Hair Care › Shampoo",
            category="beauty",
            attributes=["sulfate free"],
            options={"size": ["12 fl oz"]},
            name_nouns=["zest", "lemon", "shampoo"],
            price=9.5,
        ),
    ]
    # 23 filler shoes so the results span three pages.
    products += [
        make_product(f"B0000001{i:02d}", attributes=["lace up"], price=30.0 + i) for i in range(23)
    ]
    goals = [
        Goal(
            goal_id="g0",
            asin="B000000001",
            instruction_text="i need running shoes with arch support in black size 10, "
            "and price lower than 50.00 dollars",
            attributes=["arch support"],
            goal_options=["black", "10"],
            price_upper=50.0,
            category="fashion",
            query="running shoes",
            name="Acme Trail Running Shoes B000000001",
            product_category="Clothing › Men › Shoes › Running",
        ),
        Goal(
            goal_id="g1",
            asin="B000000005",
            instruction_text="i want sulfate free shampoo, and price lower than 20.00 dollars",
            attributes=["sulfate free"],
            goal_options=[],
            price_upper=20.0,
            category="beauty",
            query="shampoo",
            name="Zest Lemon Shampoo",
            product_category="Beauty › Hair Care › Shampoo",
        ),
    ]
    return WorldPayload(products=products, goals=goals)
