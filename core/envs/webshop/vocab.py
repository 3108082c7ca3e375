"""Project-authored vocabulary for the bundled shop catalogue (one entry per cluster).

Every brand, phrase and sentence here was written for this project. The generator checks the
vocabulary before use: attributes of a cluster never fuzzy-match each other, and no attribute
occurs inside another attribute, a product type, a brand or a filler sentence (so a product
only ever "has" the attributes it was given).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OptionSpec:
    """One customisation option: its name, value pool and how many values a product offers."""

    name: str
    values: tuple[str, ...]
    min_k: int
    max_k: int


@dataclass(frozen=True)
class ClusterSpec:
    """Everything needed to generate one cluster (a WebShop scrape query) of products."""

    query: str
    category: str
    breadcrumbs: tuple[str, ...]
    prefix: str
    types: tuple[tuple[str, bool], ...]  # (type phrase, is plural)
    brands: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[OptionSpec, ...]
    price_range: tuple[float, float]
    suffixes: tuple[str, ...]
    descriptions: tuple[str, ...]
    features: tuple[str, ...]


PREMIUM_WORDS: tuple[str, ...] = ("Pro", "Elite", "Signature", "Deluxe", "Premier")
"""Title words of the higher-priced edition of a product (the price-band near miss)."""

OPENERS: tuple[str, ...] = (
    "i'm looking for",
    "i need",
    "i want",
    "find me",
    "i would like",
    "looking for",
    "can you find me",
    "i am looking for",
    "please get me",
    "i want to buy",
)

_SIZES_CLOTHES = ("x-small", "small", "medium", "large", "x-large", "xx-large")

CLUSTERS: tuple[ClusterSpec, ...] = (
    ClusterSpec(
        query="men's running shoes",
        category="fashion",
        breadcrumbs=(
            "Clothing, Shoes & Jewelry › Men › Shoes › Athletic › Running",
            "Clothing, Shoes & Jewelry › Men › Shoes › Athletic › Trail Running",
        ),
        prefix="Men's",
        types=(
            ("running shoes", True),
            ("trail running shoes", True),
            ("road running shoes", True),
        ),
        brands=("Stridewell", "Korvane", "Peakrun", "Altovia", "Runmark", "Tessaro", "Fleetfoot"),
        attributes=(
            "arch support",
            "rubber sole",
            "memory foam insole",
            "breathable mesh",
            "non slip",
            "wide toe box",
            "water resistant",
            "shock absorbing",
            "reflective heel",
            "lace up",
        ),
        options=(
            OptionSpec(
                "color",
                (
                    "black",
                    "white",
                    "navy",
                    "grey",
                    "red",
                    "blue",
                    "green",
                    "orange",
                    "black | white",
                    "charcoal",
                ),
                3,
                5,
            ),
            OptionSpec("size", ("7", "8", "9", "10", "11", "12", "13"), 4, 7),
        ),
        price_range=(39.0, 119.0),
        suffixes=(
            "Athletic Sneakers",
            "Jogging Trainers",
            "Gym Workout Sneakers",
            "Everyday Trainers",
        ),
        descriptions=(
            "{brand} builds shoes for runners who log miles every day.",
            "These {type} keep a steady stride on pavement and gravel alike.",
            "A sculpted midsole returns energy with every step.",
            "The padded collar and tongue hug the ankle without pressure.",
            "Ideal for tempo runs, gym sessions and weekend errands.",
        ),
        features=(
            "Padded collar for a secure heel fit",
            "Durable outsole tread for daily mileage",
            "Removable insole fits custom orthotics",
            "Pull tab makes them easy to put on",
        ),
    ),
    ClusterSpec(
        query="women's sandals",
        category="fashion",
        breadcrumbs=(
            "Clothing, Shoes & Jewelry › Women › Shoes › Sandals › Flat Sandals",
            "Clothing, Shoes & Jewelry › Women › Shoes › Sandals › Platform & Wedge",
        ),
        prefix="Women's",
        types=(
            ("flat sandals", True),
            ("slide sandals", True),
            ("wedge sandals", True),
            ("platform sandals", True),
        ),
        brands=("Solenne", "Marisol", "Baylee", "Corava", "Dunelle", "Palomi"),
        attributes=(
            "ankle strap",
            "open toe",
            "cushioned footbed",
            "adjustable buckle",
            "faux leather",
            "arch support",
            "anti skid outsole",
            "braided straps",
            "quick drying",
            "vegan suede",
        ),
        options=(
            OptionSpec(
                "color",
                (
                    "black",
                    "tan",
                    "white",
                    "brown",
                    "silver",
                    "gold",
                    "nude",
                    "pink",
                    "beige",
                    "red",
                ),
                3,
                5,
            ),
            OptionSpec("size", ("5", "6", "7", "8", "9", "10", "11"), 4, 7),
        ),
        price_range=(19.0, 69.0),
        suffixes=("Summer Beach Shoes", "Casual Vacation Sandal", "Dressy Summer Sandal"),
        descriptions=(
            "{brand} designs sandals for long summer days.",
            "These {type} pair with sundresses, shorts and jeans.",
            "A contoured sole keeps every step steady on boardwalks and patios.",
            "Pack them for vacations, weddings and weekend markets.",
        ),
        features=(
            "Lightly padded insole for all-day wear",
            "Flexible sole bends with your foot",
            "True to size; order your usual size",
            "Spot clean with a damp cloth",
        ),
    ),
    ClusterSpec(
        query="men's dress shirts",
        category="fashion",
        breadcrumbs=(
            "Clothing, Shoes & Jewelry › Men › Clothing › Shirts › Dress Shirts",
            "Clothing, Shoes & Jewelry › Men › Clothing › Shirts › Casual Button-Down Shirts",
        ),
        prefix="Men's",
        types=(("dress shirt", False), ("button down shirt", False), ("oxford shirt", False)),
        brands=("Harwick", "Bellmont", "Corbin & Vale", "Ashgrove", "Tailorfield", "Renzo"),
        attributes=(
            "long sleeve",
            "short sleeve",
            "slim fit",
            "regular fit",
            "wrinkle free",
            "machine wash",
            "spread collar",
            "stretch fabric",
            "cotton blend",
            "chest pocket",
        ),
        options=(
            OptionSpec(
                "color",
                (
                    "white",
                    "light blue",
                    "black",
                    "pink",
                    "navy",
                    "grey",
                    "lavender",
                    "burgundy",
                    "mint",
                ),
                3,
                5,
            ),
            OptionSpec("size", _SIZES_CLOTHES, 3, 6),
        ),
        price_range=(19.0, 59.0),
        suffixes=("Business Formal Shirt", "Office Work Shirt", "Wedding Party Shirt"),
        descriptions=(
            "{brand} tailors shirts for the office and the evening after.",
            "This {type} tucks in neatly and holds a crisp look all day.",
            "Pair it with a blazer for meetings or wear it open over a tee.",
            "Buttons are sewn with reinforced thread.",
        ),
        features=(
            "Curved hem works tucked or untucked",
            "Classic button front",
            "Sewn-in collar stays keep the shape",
            "Adjustable button cuffs",
        ),
    ),
    ClusterSpec(
        query="women's yoga leggings",
        category="fashion",
        breadcrumbs=(
            "Clothing, Shoes & Jewelry › Women › Clothing › Active › Leggings",
            "Sports & Outdoors › Exercise & Fitness › Yoga › Clothing › Leggings",
        ),
        prefix="Women's",
        types=(("yoga leggings", True), ("workout leggings", True), ("running leggings", True)),
        brands=("Lunara", "Zenfield", "Kalia", "Motiva", "Serafit", "Aurelle"),
        attributes=(
            "high waist",
            "tummy control",
            "side pockets",
            "squat proof",
            "moisture wicking",
            "four way stretch",
            "buttery soft",
            "full length",
            "capri length",
            "hidden key pocket",
        ),
        options=(
            OptionSpec(
                "color",
                ("black", "navy", "grey", "olive", "wine", "purple", "teal", "charcoal", "coral"),
                3,
                5,
            ),
            OptionSpec("size", _SIZES_CLOTHES, 3, 6),
        ),
        price_range=(15.0, 49.0),
        suffixes=("Gym Tights", "Athletic Pants for Pilates", "Active Tights"),
        descriptions=(
            "{brand} makes activewear that moves with you.",
            "These {type} stay put through lunges, bends and sprints.",
            "A flat seam construction prevents chafing during long sessions.",
            "Wear them to the studio, on the trail or around the house.",
        ),
        features=(
            "Gusseted crotch for freedom of movement",
            "Flatlock seams",
            "Opaque fabric in every pose",
            "Wash cold with like colors",
        ),
    ),
    ClusterSpec(
        query="shampoo",
        category="beauty",
        breadcrumbs=("Beauty & Personal Care › Hair Care › Shampoo & Conditioner › Shampoos",),
        prefix="",
        types=(("shampoo", False), ("hair shampoo", False), ("daily shampoo", False)),
        brands=("Verdalis", "Ondine", "Maple & Moss", "Lustra", "Kerasol", "Bramblewood"),
        attributes=(
            "sulfate free",
            "paraben free",
            "color safe",
            "dry scalp",
            "curly hair",
            "argan oil",
            "tea tree oil",
            "cruelty free",
            "fine hair",
            "dandruff control",
        ),
        options=(
            OptionSpec(
                "scent",
                (
                    "lavender",
                    "coconut",
                    "rose",
                    "citrus",
                    "vanilla",
                    "unscented",
                    "eucalyptus",
                    "peppermint",
                ),
                2,
                4,
            ),
            OptionSpec("size", ("12 fl oz", "25 fl oz", "33.8 fl oz"), 1, 3),
        ),
        price_range=(7.0, 39.0),
        suffixes=("Salon Quality Hair Wash", "Gentle Cleanser for Men and Women", "Hair Care Wash"),
        descriptions=(
            "{brand} blends botanical extracts into a rich lather.",
            "This {type} rinses clean and leaves hair soft and manageable.",
            "Massage into wet hair, lather and rinse thoroughly.",
            "Made in small batches and bottled in recyclable plastic.",
        ),
        features=(
            "Rich lather with a small amount",
            "Rinses clean without residue",
            "Suitable for daily use",
            "Recyclable bottle",
        ),
    ),
    ClusterSpec(
        query="face moisturizer",
        category="beauty",
        breadcrumbs=(
            "Beauty & Personal Care › Skin Care › Face › Creams & Moisturizers › Face Moisturizers",
            "Beauty & Personal Care › Skin Care › Face › Creams & Moisturizers › Day Creams",
        ),
        prefix="",
        types=(
            ("face moisturizer", False),
            ("daily face moisturizer", False),
            ("face moisturizer cream", False),
        ),
        brands=("Dermaleaf", "Clairine", "Solace Skin", "Pureveil", "Aveluna", "Hydrelle"),
        attributes=(
            "fragrance free",
            "hyaluronic acid",
            "spf 30",
            "oil free",
            "non comedogenic",
            "vitamin c",
            "sensitive skin",
            "anti aging",
            "dry skin",
            "ceramides",
        ),
        options=(
            OptionSpec("size", ("1.7 oz", "2.5 oz", "3.4 oz", "5 oz"), 1, 3),
            OptionSpec("pack", ("single", "twin pack"), 1, 2),
        ),
        price_range=(9.0, 59.0),
        suffixes=("Facial Lotion for Women and Men", "Daily Hydrating Lotion", "Face Lotion"),
        descriptions=(
            "{brand} formulates skincare with dermatologists.",
            "This {type} absorbs quickly and leaves no greasy film.",
            "Smooth onto clean skin every morning and evening.",
            "Packaged in an airless pump to keep the formula fresh.",
        ),
        features=(
            "Absorbs in seconds",
            "Dermatologist tested",
            "Wears well under makeup",
            "Airless pump bottle",
        ),
    ),
    ClusterSpec(
        query="potato chips",
        category="food",
        breadcrumbs=("Grocery & Gourmet Food › Snack Foods › Chips & Crisps › Potato Chips",),
        prefix="",
        types=(("potato chips", True), ("thin potato chips", True), ("crinkle cut chips", True)),
        brands=("Crispin's", "Golden Acre", "Harvest Crunch", "Salt & Stone", "Fieldcrest"),
        attributes=(
            "gluten free",
            "non gmo",
            "kettle cooked",
            "low sodium",
            "plant based",
            "zero trans fat",
            "family size",
            "peanut free",
            "small batch",
            "no artificial flavors",
        ),
        options=(
            OptionSpec(
                "flavor",
                (
                    "sea salt",
                    "sour cream onion",
                    "barbecue",
                    "salt vinegar",
                    "jalapeno",
                    "cheddar",
                    "dill pickle",
                    "honey mustard",
                ),
                2,
                4,
            ),
            OptionSpec("size", ("pack of 6", "pack of 12", "pack of 24"), 1, 3),
        ),
        price_range=(9.0, 39.0),
        suffixes=("Snack Bags", "Crunchy Snack", "Party Snack"),
        descriptions=(
            "{brand} slices farm potatoes thick and fries them to a golden crunch.",
            "These {type} are a lunchbox and road trip favorite.",
            "Seasoned right after frying so every chip is evenly coated.",
            "Store in a cool, dry place and enjoy within a month of opening.",
        ),
        features=(
            "Made from whole potatoes",
            "Resealable-friendly bag",
            "Perfect for lunches and picnics",
            "Seasoned right after frying",
        ),
    ),
    ClusterSpec(
        query="ground coffee",
        category="food",
        breadcrumbs=(
            "Grocery & Gourmet Food › Beverages › Coffee, Tea & Cocoa › Coffee › Ground Coffee",
        ),
        prefix="",
        types=(("ground coffee", False), ("whole bean coffee", False), ("drip coffee", False)),
        brands=("Blackridge Roasters", "Morning Mesa", "Copperleaf", "Highbrew", "Cafe Solano"),
        attributes=(
            "fair trade",
            "usda organic",
            "single origin",
            "low acid",
            "kosher",
            "arabica beans",
            "shade grown",
            "nitrogen flushed",
            "rainforest alliance",
            "decaf",
        ),
        options=(
            OptionSpec(
                "roast",
                ("light roast", "medium roast", "dark roast", "french roast", "espresso roast"),
                2,
                4,
            ),
            OptionSpec("size", ("12 ounce", "2 pound", "5 pound"), 1, 3),
        ),
        price_range=(8.0, 34.0),
        suffixes=("Coffee for Drip Brewers", "Roasted Coffee", "Coffee for French Press"),
        descriptions=(
            "{brand} roasts in small lots and ships within days.",
            "This {type} brews a smooth, balanced cup with notes of cocoa.",
            "Use two tablespoons per six ounces of water.",
            "Sealed in a valve bag to keep it fresh.",
        ),
        features=(
            "Roasted in small lots",
            "Smooth, balanced cup",
            "Valve bag keeps it fresh",
            "Great for drip and pour over",
        ),
    ),
    ClusterSpec(
        query="wireless headphones",
        category="electronics",
        breadcrumbs=(
            "Electronics › Headphones, Earbuds & Accessories › Headphones › Over-Ear Headphones",
        ),
        prefix="",
        types=(
            ("wireless headphones", True),
            ("over ear headphones", True),
            ("bluetooth headphones", True),
        ),
        brands=("Sonique", "Auralis", "Vantor", "Echolite", "Bassline", "Numa Audio"),
        attributes=(
            "noise cancelling",
            "bluetooth 5.3",
            "40 hour battery",
            "built in microphone",
            "foldable design",
            "fast charging",
            "hi res audio",
            "memory foam ear cushions",
            "multipoint connection",
            "transparency mode",
        ),
        options=(
            OptionSpec(
                "color", ("black", "white", "silver", "blue", "rose gold", "green", "beige"), 2, 4
            ),
        ),
        price_range=(25.0, 199.0),
        suffixes=("Headset for Travel and Work", "Stereo Headset", "Headset for Home Office"),
        descriptions=(
            "{brand} tunes its drivers for deep bass and clear vocals.",
            "These {type} pair in seconds with phones, tablets and laptops.",
            "Soft padded headband for long listening sessions.",
            "Includes a carrying pouch and an audio cable.",
        ),
        features=(
            "Pairs in seconds",
            "Deep bass and clear vocals",
            "Carrying pouch included",
            "Works with phones, tablets and laptops",
        ),
    ),
    ClusterSpec(
        query="phone case",
        category="electronics",
        breadcrumbs=("Cell Phones & Accessories › Cases, Holsters & Sleeves › Basic Cases",),
        prefix="",
        types=(("phone case", False), ("protective phone case", False), ("slim phone case", False)),
        brands=("Armorly", "Cellguard", "Nuvex", "Shellcraft", "Tecto"),
        attributes=(
            "shockproof",
            "wireless charging compatible",
            "kickstand",
            "card holder",
            "raised edges",
            "screen protector included",
            "military grade",
            "anti yellowing",
            "magnetic ring",
            "lanyard hole",
        ),
        options=(
            OptionSpec("color", ("black", "clear", "blue", "pink", "purple", "green", "red"), 2, 4),
            OptionSpec("model", ("iphone 14", "iphone 15", "galaxy s23", "pixel 8"), 1, 3),
        ),
        price_range=(8.0, 39.0),
        suffixes=("Protective Cover", "Bumper Cover", "Phone Cover"),
        descriptions=(
            "{brand} molds each case to the exact contours of the phone.",
            "This {type} adds grip without adding bulk.",
            "Precise cutouts keep buttons and ports easy to reach.",
            "Snaps on in seconds and stays put.",
        ),
        features=(
            "Precise cutouts for ports",
            "Tactile button covers",
            "Snaps on in seconds",
            "Grippy textured sides",
        ),
    ),
    ClusterSpec(
        query="bed sheets",
        category="furniture",
        breadcrumbs=("Home & Kitchen › Bedding › Sheets & Pillowcases › Sheet & Pillowcase Sets",),
        prefix="",
        types=(
            ("bed sheet set", False),
            ("bed sheets", True),
            ("bed sheet and pillowcase set", False),
        ),
        brands=("Linden & Rowe", "Dreamhaven", "Softloom", "Nestwell", "Cottonfield"),
        attributes=(
            "deep pocket",
            "egyptian cotton",
            "microfiber",
            "cooling",
            "hypoallergenic",
            "400 thread count",
            "breathable",
            "machine washable",
            "fade resistant",
            "sateen weave",
        ),
        options=(
            OptionSpec(
                "color",
                (
                    "white",
                    "grey",
                    "navy",
                    "sage",
                    "ivory",
                    "beige",
                    "charcoal",
                    "blush",
                    "light blue",
                ),
                3,
                5,
            ),
            OptionSpec("size", ("twin", "full", "queen", "king", "california king"), 2, 5),
        ),
        price_range=(25.0, 99.0),
        suffixes=("4 Piece Bedding Set", "Bedding Set with Pillowcases", "Sheets for Bedroom"),
        descriptions=(
            "{brand} weaves bedding that gets softer with every wash.",
            "This {type} fits snugly and stays put through the night.",
            "Includes a flat sheet, a fitted sheet and two pillowcases.",
            "Tumble dry low and remove promptly.",
        ),
        features=(
            "Includes flat sheet, fitted sheet and two pillowcases",
            "Elastic all around the fitted sheet",
            "Softens with every wash",
            "Gift ready packaging",
        ),
    ),
    ClusterSpec(
        query="bath towels",
        category="furniture",
        breadcrumbs=("Home & Kitchen › Bath › Towels › Bath Towels",),
        prefix="",
        types=(("bath towels", True), ("bath towel set", False), ("bath sheet towels", True)),
        brands=("Tidewell", "Plushline", "Cotswold Home", "Aquaterra", "Brisa"),
        attributes=(
            "quick dry",
            "highly absorbent",
            "turkish cotton",
            "zero twist",
            "oeko tex certified",
            "hotel quality",
            "lint free",
            "hanging loop",
            "ribbed border",
            "extra large",
        ),
        options=(
            OptionSpec(
                "color",
                ("white", "grey", "navy", "aqua", "beige", "sage", "charcoal", "coral"),
                3,
                5,
            ),
            OptionSpec("size", ("set of 2", "set of 4", "set of 6"), 1, 3),
        ),
        price_range=(19.0, 79.0),
        suffixes=("Towels for Bathroom", "Spa Towels", "Shower Towels"),
        descriptions=(
            "{brand} loops long staple yarns into a plush, dense pile.",
            "These {type} wrap you in softness after every shower.",
            "Wash before first use to boost fluffiness.",
            "Tumble dry on low heat and skip fabric softener.",
        ),
        features=(
            "Plush, dense pile",
            "Double stitched hems",
            "Softer after the first wash",
            "Skip fabric softener for best results",
        ),
    ),
    ClusterSpec(
        query="desk lamp",
        category="furniture",
        breadcrumbs=(
            "Tools & Home Improvement › Lighting & Ceiling Fans › Lamps & Shades › Desk Lamps",
        ),
        prefix="",
        types=(("desk lamp", False), ("led desk lamp", False), ("table lamp", False)),
        brands=("Lumora", "Brightwell", "Kelvix", "Studiolux", "Orbis Home"),
        attributes=(
            "dimmable",
            "usb charging port",
            "touch control",
            "eye caring",
            "adjustable arm",
            "memory function",
            "auto timer",
            "wireless charger",
            "clamp mount",
            "night light",
        ),
        options=(
            OptionSpec("color", ("black", "white", "silver", "gold", "walnut", "grey"), 2, 4),
        ),
        price_range=(15.0, 69.0),
        suffixes=("Reading Light for Home Office", "Study Light", "Work Light for Bedroom"),
        descriptions=(
            "{brand} designs lighting for long evenings of reading and work.",
            "This {type} casts even light across the whole desk.",
            "A weighted base keeps it steady.",
            "Energy efficient LEDs rated for years of use.",
        ),
        features=(
            "Even light across the desk",
            "Weighted base",
            "Energy efficient LEDs",
            "Easy setup, no tools needed",
        ),
    ),
    ClusterSpec(
        query="water bottle",
        category="sports",
        breadcrumbs=(
            "Sports & Outdoors › Outdoor Recreation › Camping & Hiking › Hydration › Water Bottles",
            "Home & Kitchen › Kitchen & Dining › Travel & To-Go Drinkware › Water Bottles",
        ),
        prefix="",
        types=(
            ("water bottle", False),
            ("sports water bottle", False),
            ("travel water bottle", False),
        ),
        brands=("Hydroloom", "Summitflask", "Aquaveil", "Trailcup", "Glacier & Co"),
        attributes=(
            "bpa free",
            "leak proof",
            "double wall vacuum",
            "keeps drinks cold",
            "straw lid",
            "dishwasher safe",
            "wide mouth",
            "powder coated",
            "carry handle",
            "sweat free",
        ),
        options=(
            OptionSpec(
                "color",
                ("black", "white", "navy", "mint", "lavender", "pink", "olive", "red"),
                3,
                5,
            ),
            OptionSpec("size", ("18 oz", "24 oz", "32 oz", "40 oz"), 1, 4),
        ),
        price_range=(12.0, 49.0),
        suffixes=("Flask for Gym and Hiking", "Drink Flask", "Bottle for School and Office"),
        descriptions=(
            "{brand} makes drinkware for trails, gyms and desks.",
            "This {type} fits most cup holders and backpack pockets.",
            "Rinse with warm water before first use.",
            "Built from food grade stainless steel.",
        ),
        features=(
            "Fits most cup holders",
            "Food grade stainless steel",
            "Easy to clean",
            "Rinse before first use",
        ),
    ),
)
