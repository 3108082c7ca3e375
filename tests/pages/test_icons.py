"""Icons are Material icons everywhere: Debian's chromium draws emoji as empty boxes.

Streamlit renders an ``icon=`` / ``page_icon=`` string either as an emoji or, written
``:material/name:``, in the Material Symbols font it ships. Debian's chromium has no colour
emoji font, so an emoji icon (``"⚠️"``) shows as a box. Two checks over the studio's code and
the texts it shows (personas, label glossaries, voices, prompts):

* every string literal passed as ``icon`` or ``page_icon`` is a ``:material/…:`` name;
* no source or data file the studio reads carries an emoji code point at all (a heading, a
  button label or a persona line with one would show the same box).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from core.paths import PROJECT_ROOT

EMOJI = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d\u20e3\U000e0020-\U000e007f]"
)
"""Emoji blocks, dingbats, arrows-and-symbols, the emoji presentation selector and ZWJ."""

MATERIAL = re.compile(r"^:material/[a-z0-9_]+:$")
ICON_ARGS = {"icon", "page_icon"}


def _sources() -> list[Path]:
    files = [PROJECT_ROOT / "app.py"]
    for folder in ("pages", "core"):
        files += sorted((PROJECT_ROOT / folder).rglob("*.py"))
    return files


def _texts() -> list[Path]:
    files = sorted((PROJECT_ROOT / "personas").glob("*.yaml"))
    for ext in ("yaml", "yml", "json", "txt", "md"):
        files += sorted((PROJECT_ROOT / "data").rglob(f"*.{ext}"))
    return files


def icon_literals(source: str, filename: str) -> list[tuple[int, str]]:
    """``(line, value)`` of every string literal given as an ``icon``/``page_icon`` argument."""
    out = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                value = kw.value
                if kw.arg in ICON_ARGS and isinstance(value, ast.Constant):
                    if isinstance(value.value, str):
                        out.append((value.lineno, value.value))
    return out


def test_the_checks_find_an_emoji_icon() -> None:
    src = 'st.warning("x", icon="\u26a0\ufe0f")\nst.button("b", icon=":material/search:")\n'
    found = icon_literals(src, "<test>")
    assert [v for _, v in found if not MATERIAL.match(v)] == ["\u26a0\ufe0f"]
    assert EMOJI.search("Tool result \U0001f50e") and not EMOJI.search("patience 8 → 6 · ± —")


def test_every_icon_argument_is_a_material_icon() -> None:
    bad = []
    for path in _sources():
        for line, value in icon_literals(path.read_text(encoding="utf-8"), str(path)):
            if not MATERIAL.match(value):
                bad.append(f"{path.relative_to(PROJECT_ROOT)}:{line}: icon {value!r}")
    assert not bad, "use ':material/name:' icons:\n" + "\n".join(bad)


def test_no_emoji_in_the_studio_code_or_the_texts_it_shows() -> None:
    bad = []
    for path in [*_sources(), *_texts()]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if m := EMOJI.search(line):
                bad.append(f"{path.relative_to(PROJECT_ROOT)}:{n}: {m.group()!r}")
    assert not bad, "emoji draw as boxes in Debian's chromium:\n" + "\n".join(bad[:30])
