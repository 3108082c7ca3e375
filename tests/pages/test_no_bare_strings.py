"""No page shows a bare string literal: Streamlit "magic" would render it as page text.

Streamlit's magic writes every expression statement of a page script with ``st.write`` —
including a stray docstring-looking string after a constant (the GRIP page once opened with
"Rows of the drill-down list (the count above it is exact)."). Magic skips exactly two places:
the module's docstring and the first statement of a function (a class docstring is rendered).
This test walks the entry point, every page script and every shared page module and fails on
any other expression statement that is a string (plain or f-string). Shared modules under
``pages/common`` are imported, not run as scripts, so their class docstrings are allowed there.
The studio also turns magic off (``.streamlit/config.toml``), which this test checks too.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from core.paths import PROJECT_ROOT

PAGE_FILES = sorted(
    [PROJECT_ROOT / "app.py", *(PROJECT_ROOT / "pages").rglob("*.py")],
    key=lambda p: str(p),
)


def bare_strings(source: str, filename: str = "<page>", *, script: bool = True) -> list[int]:
    """Line numbers of string expression statements magic would render.

    Args:
        source: The module's source.
        filename: For error messages.
        script: A page script (class docstrings count) or an imported module (they do not).
    """
    tree = ast.parse(source, filename=filename)
    skipped: set[int] = set()
    owners: tuple[type, ...] = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)
    if not script:
        owners += (ast.ClassDef,)
    for node in ast.walk(tree):
        if isinstance(node, owners) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first))
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Expr) or id(node) in skipped:
            continue
        value = node.value
        if (isinstance(value, ast.Constant) and isinstance(value.value, str)) or isinstance(
            value, ast.JoinedStr
        ):
            lines.append(node.lineno)
    return sorted(lines)


def test_the_checker_finds_what_magic_renders() -> None:
    src = '''"""module docstring: skipped"""
X = 1
"""a docstring-looking constant note: rendered"""


def f():
    """function docstring: skipped"""
    "a second string in a function: rendered"
    f"an f-string: {X}"


class C:
    """a class docstring: magic renders it"""
'''
    assert bare_strings(src) == [3, 8, 9, 13]
    assert bare_strings(src, script=False) == [3, 8, 9]


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_no_page_has_a_bare_string_literal(path: Path) -> None:
    shared = "common" in path.relative_to(PROJECT_ROOT).parts
    found = bare_strings(path.read_text(encoding="utf-8"), str(path), script=not shared)
    assert not found, f"{path.relative_to(PROJECT_ROOT)}: bare string literal at lines {found}"


def test_every_page_of_the_registry_is_checked() -> None:
    from core.studio.pages import PAGES

    files = {p.relative_to(PROJECT_ROOT).as_posix() for p in PAGE_FILES}
    assert {spec.file for spec in PAGES.values()} <= files


def test_magic_is_off_in_the_studio_config() -> None:
    config = tomllib.loads((PROJECT_ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["magicEnabled"] is False


def test_injected_scripts_hold_no_tag_opening_character() -> None:
    """Streamlit's HTML sanitiser silently drops a script whose body contains "<" + letter."""
    from core.studio.session_token import clear_cookie_script, set_cookie_script
    from pages.common.ui import _SHORTCUTS_JS, scroll_script

    for script in (
        _SHORTCUTS_JS,
        scroll_script("turn-12"),
        set_cookie_script("v1.abc.def", 60),
        clear_cookie_script(),
    ):
        body = script.removeprefix("<script>").removesuffix("</script>")
        assert script.startswith("<script>") and "<" not in body, script[:80]
