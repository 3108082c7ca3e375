"""Hostile inputs and bad flags: one line, exit 2, the store byte-identical (issue 22).

Each case builds its input in ``tmp_path`` (nothing large is committed; ``/dev/zero`` stands in
for an endless file), runs the CLI in-process against a copy of a store holding one finished
run, and checks: exit code 2, an ``error:`` line naming the input (file, line or flag), no
traceback, and the store file and its WAL unchanged. Limits: ``core.model.bounds`` and
``docs/RELIABILITY.md``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.errors import ConfigError
from core.model import bounds
from core.paths import DATA_DIR, PERSONAS_DIR
from core.protocol import personas as personas_mod
from core.protocol.personas import load_personas
from core.store import Store
from tests.reliability.test_malformed_inputs import (  # noqa: F401 - fixtures
    _cli,
    _snapshot,
    store_copy,
    template_store,
)

DEEP = "[" * 200_000 + "]" * 200_000
BIG_INT = "7" * 5000
RUN = ["run", "--benchmark", "mock", "--method", "B0", "--persona", "rational", "--limit", "1"]


def _file(t: Path, name: str, text: str | bytes) -> Path:
    p = t / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p


def _tau2(t: Path, **files: str) -> Path:
    out = t / "tau2"
    shutil.copytree(DATA_DIR / "tau2_retail", out)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return out


def _tau2_tasks(t: Path, edit: Callable[[list[dict[str, Any]]], None]) -> Path:
    import json

    tasks = json.loads((DATA_DIR / "tau2_retail" / "tasks.json").read_text(encoding="utf-8"))
    edit(tasks)
    return _tau2(t, **{"tasks.json": json.dumps(tasks)})


def _nan_price(t: Path) -> Path:
    text = (DATA_DIR / "tau2_retail" / "db.json").read_text(encoding="utf-8")
    i = text.index('"price": ') + len('"price": ')
    j = i + next(k for k, c in enumerate(text[i:]) if c in ",}")
    return _tau2(t, **{"db.json": text[:i] + "NaN" + text[j:]})


def _ghost_user(tasks: list[dict[str, Any]]) -> None:
    for task in tasks:
        for action in task["evaluation_criteria"]["actions"] or []:
            if "user_id" in action.get("arguments", {}):
                action["arguments"]["user_id"] = "nobody_0000"
                return
    raise AssertionError("no golden action with a user_id")


def _sessions(t: Path, line: str) -> list[object]:
    return ["import", "sessions", "--from", _file(t, "s.jsonl", line + "\n")]


SESSION_SURROGATE = (
    '{"session_id": "a", "messages": [{"role": "user", "content": "broken \\ud800 text"}]}'
)

# (id, argv builder, text the error line must contain)
CASES: list[tuple[str, Callable[[Path], list[object]], str]] = [
    # -- JSON 200k deep, in every importer and line reader
    ("deep-sessions", lambda t: _sessions(t, DEEP), "nested too deeply"),
    (
        "deep-interpret",
        lambda t: ["user", "interpret", "--from", _file(t, "q.jsonl", DEEP + "\n")],
        "nested too deeply",
    ),
    (
        "deep-tau2-tasks",
        lambda t: [
            "import",
            "tau2",
            "--domain",
            "retail",
            "--from",
            _tau2(t, **{"tasks.json": DEEP}),
        ],
        "tasks.json",
    ),
    (
        "deep-tau2-db",
        lambda t: ["import", "tau2", "--domain", "retail", "--from", _tau2(t, **{"db.json": DEEP})],
        "db.json",
    ),
    (
        "deep-env-golden",
        lambda t: [
            "env",
            "golden",
            "--benchmark",
            "tau2_retail",
            "--data",
            _tau2(t, **{"tasks.json": DEEP}),
        ],
        "nested too deeply",
    ),
    (
        "deep-build-graphs",
        lambda t: [
            "build",
            "graphs",
            "--benchmark",
            "tau2_retail",
            "--data",
            _tau2(t, **{"db.json": DEEP}),
        ],
        "nested too deeply",
    ),
    # -- integers over 4300 digits
    ("int-sessions", lambda t: _sessions(t, '{"session_id": ' + BIG_INT + "}"), "4300 digits"),
    (
        "int-interpret",
        lambda t: ["user", "interpret", "--from", _file(t, "q.jsonl", "[" + BIG_INT + "]\n")],
        "4300 digits",
    ),
    (
        "int-tau2-db",
        lambda t: [
            "import",
            "tau2",
            "--domain",
            "retail",
            "--from",
            _tau2(t, **{"db.json": "[" + BIG_INT + "]"}),
        ],
        "4300 digits",
    ),
    # -- text that is not Unicode, not UTF-8, or endless
    ("surrogate-session", lambda t: _sessions(t, SESSION_SURROGATE), "lone surrogate"),
    (
        "invalid-utf8-session",
        lambda t: ["import", "sessions", "--from", _file(t, "s.jsonl", b'{"a": "\xff\xfe"}\n')],
        "not UTF-8",
    ),
    ("sessions-dev-zero", lambda t: ["import", "sessions", "--from", "/dev/zero"], "16 MiB"),
    ("interpret-dev-zero", lambda t: ["user", "interpret", "--from", "/dev/zero"], "16 MiB"),
    ("sessions-directory", lambda t: ["import", "sessions", "--from", t], "is a directory"),
    # -- silently accepted before
    (
        "tau2-golden-ghost-user",
        lambda t: ["import", "tau2", "--domain", "retail", "--from", _tau2_tasks(t, _ghost_user)],
        "nobody_0000",
    ),
    (
        "tau2-nan-price",
        lambda t: ["import", "tau2", "--domain", "retail", "--from", _nan_price(t)],
        "NaN",
    ),
    (
        "sessions-partial-no-valid-line",
        lambda t: [*_sessions(t, '{"session_id": 1}'), "--partial"],
        "no line was valid",
    ),
    ("agent-openai-at", lambda t: [*RUN, "--agent", "openai/@"], "--agent"),
    ("agent-at-at-at", lambda t: [*RUN, "--agent", "@@@"], "--agent"),
    ("agent-empty-model", lambda t: [*RUN, "--agent", "openai/@http://127.0.0.1:9/v1"], "--agent"),
    ("user-voice-junk", lambda t: [*RUN, "--user-voice", "@@@"], "--user-voice"),
    ("interpreter-junk", lambda t: [*RUN, "--interpreter", "/x"], "--interpreter"),
    # -- numeric flags
    ("seeds-huge", lambda t: [*RUN, "--seeds", "99999999999999999999"], "--seeds"),
    ("seeds-5000-digits", lambda t: [*RUN, "--seeds", BIG_INT], "--seeds"),
    ("seeds-zero", lambda t: [*RUN, "--seeds", "0"], "--seeds"),
    ("seeds-not-a-number", lambda t: [*RUN, "--seeds", "three"], "--seeds"),
    ("max-cost-negative", lambda t: [*RUN, "--max-cost", "-1"], "--max-cost"),
    ("max-cost-nan", lambda t: [*RUN, "--max-cost", "nan"], "--max-cost"),
    ("max-cost-inf", lambda t: [*RUN, "--max-cost", "inf"], "--max-cost"),
    ("limit-zero", lambda t: [*RUN, "--limit", "0"], "--limit"),
    ("workers-negative", lambda t: [*RUN, "--workers", "-2"], "--workers"),
    ("concurrency-zero", lambda t: [*RUN, "--concurrency", "0"], "--concurrency"),
    (
        "branching-negative",
        lambda t: ["build", "graphs", "--benchmark", "tau2_retail", "--branching", "-5"],
        "--branching",
    ),
    (
        "branching-zero",
        lambda t: ["build", "graphs", "--benchmark", "tau2_retail", "--branching", "0"],
        "--branching",
    ),
    (
        "per-graph-negative",
        lambda t: ["build", "samples", "--benchmark", "tau2_retail", "--per-graph", "-1"],
        "--per-graph",
    ),
    ("grip-pairs-zero", lambda t: ["grip", "x", "--pairs", "0"], "--pairs"),
    ("verify-limit-negative", lambda t: ["verify", "--limit", "-1"], "--limit"),
    # -- paths
    ("export-out-directory", lambda t: ["export", "x", "--out", t], "is a directory"),
    ("export-out-proc", lambda t: ["export", "x", "--out", "/proc/version"], "kernel file"),
    (
        "export-out-no-folder",
        lambda t: ["export", "x", "--out", t / "no" / "f.jsonl"],
        "does not exist",
    ),
    # -- grip judges checked before anything (no cache table)
    ("grip-one-judge", lambda t: ["grip", "x", "--judges", "onlyone"], "--judges"),
    ("grip-bad-judge-spec", lambda t: ["grip", "x", "--judges", "openai/@,@@@"], "--judges"),
]


@pytest.mark.parametrize(("argv", "expect"), [pytest.param(c[1], c[2], id=c[0]) for c in CASES])
def test_hostile_input_is_one_line_exit_2_and_the_store_is_untouched(
    tmp_path: Path,
    store_copy: Path,  # noqa: F811
    argv: Callable[[Path], list[object]],
    expect: str,
) -> None:
    args = argv(tmp_path)
    before = _snapshot(store_copy)
    rc, out, err = _cli(store_copy, *args)
    assert rc == 2, (out[-500:], err[-2000:])
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert lines, err
    assert expect in lines[0], lines[0]
    assert len(lines[0]) < 600, "an error is one readable line"
    assert _snapshot(store_copy) == before


def test_grip_with_bad_judges_writes_no_cache_table(store_copy: Path) -> None:  # noqa: F811
    rc, _, _ = _cli(store_copy, "grip", "x", "--judges", "onlyone")
    assert rc == 2
    store = Store.open(store_copy)
    tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
    assert not {t for t in tables if t.startswith("grip")}


def test_a_valid_partial_import_still_succeeds(tmp_path: Path, store_copy: Path) -> None:  # noqa: F811
    good = '{"session_id": "ok", "messages": [{"role": "user", "content": "hi"}]}'
    path = _file(tmp_path, "s.jsonl", good + "\n" + SESSION_SURROGATE + "\n")
    rc, out, err = _cli(store_copy, "import", "sessions", "--from", path, "--partial", "--json")
    assert rc == 0, err
    assert '"imported": 1' in out


# -- personas ------------------------------------------------------------------------------------
def _persona_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "personas"
    folder.mkdir()
    for p in PERSONAS_DIR.glob("*.yaml"):
        shutil.copy(p, folder / p.name)
    return folder


LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}]\n"
    for i in range(9)
)


@pytest.mark.parametrize(
    ("name", "content", "expect"),
    [
        pytest.param("laughs.yaml", LAUGHS.encode(), "aliases", id="billion-laughs"),
        pytest.param("bin.yaml", b"\x00\x01\x02binary\xff", "binary", id="binary"),
        pytest.param("latin.yaml", "name: caf\xe9\n".encode("latin-1"), "not UTF-8", id="bad-utf8"),
        pytest.param(
            "huge.yaml",
            b"name: " + b"x" * (bounds.MAX_SMALL_FILE_BYTES + 1),
            "limit",
            id="over-1MiB",
        ),
        pytest.param("x.yaml", None, "is a directory", id="directory-named-x.yaml"),
    ],
)
def test_hostile_persona_files_are_one_line_errors(
    tmp_path: Path, name: str, content: bytes | None, expect: str
) -> None:
    folder = _persona_dir(tmp_path)
    target = folder / name
    if content is None:
        target.mkdir()
    else:
        target.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load_personas(folder)
    message = str(info.value)
    assert name in message and expect in message, message
    assert "\n" not in message


def test_billion_laughs_is_refused_fast(tmp_path: Path) -> None:
    """Refused at the first alias, long before any expansion (no timing assertion: the
    refusal comes from the parser's events, so no expansion can happen at all)."""
    path = tmp_path / "laughs.yaml"
    path.write_text(LAUGHS, encoding="utf-8")
    with pytest.raises(ConfigError, match="aliases"):
        bounds.load_yaml(path)
    assert yaml.safe_load("a: 1") == {"a": 1}  # plain YAML is unaffected


def test_persona_all_means_every_persona_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.cli import build_parser
    from core.cli.cmd_run import spec_from_args

    folder = _persona_dir(tmp_path)
    text = (PERSONAS_DIR / "rational.yaml").read_text(encoding="utf-8")
    (folder / "zealot.yaml").write_text(
        text.replace("id: rational", "id: zealot"), encoding="utf-8"
    )
    monkeypatch.setattr(personas_mod, "PERSONAS_DIR", folder)
    args = build_parser().parse_args(["run", "--benchmark", "mock", "--method", "B0"])
    spec = spec_from_args(args)
    assert "zealot" in spec.personas
    from core.model.run import PERSONAS

    assert spec.personas[: len(PERSONAS)] == PERSONAS  # bundled order kept: run ids unchanged
    assert set(spec.personas) == {p.stem for p in folder.glob("*.yaml")}


# -- bounds as functions -------------------------------------------------------------------------
def test_loads_refuses_each_hostile_kind() -> None:
    for text, expect in (
        (DEEP, "nested too deeply"),
        ("[" * (bounds.MAX_JSON_DEPTH + 1) + "]" * (bounds.MAX_JSON_DEPTH + 1), "deeper than"),
        (f"[{BIG_INT}]", "4300 digits"),
        ('["\\udfff"]', "lone surrogate"),
        ("[NaN]", "NaN"),
        ('{"a": Infinity}', "Infinity"),
    ):
        with pytest.raises(ValueError, match=expect):
            bounds.loads(text)
    assert bounds.loads('{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}


def test_read_lines_stops_at_the_line_cap(tmp_path: Path) -> None:
    path = _file(tmp_path, "f.jsonl", b"ok\n" + b"x" * 5000 + b"\nnever\n")
    got = []
    with pytest.raises(ConfigError, match="line 2 is longer"):
        for item in bounds.read_lines(path, max_line=1000):
            got.append(item)
    assert got == [(1, "ok\n", None)]


def test_stored_text_cap_for_replies() -> None:
    reply = "y" * (bounds.MAX_STORED_TEXT_CHARS + 1000)
    assert not bounds.fits_stored_cap(reply)
    capped = bounds.cap_stored_text(reply)
    assert len(capped) < len(reply) and capped.endswith("1000 more characters]")
    assert bounds.cap_stored_text("a\ud800b").encode("utf-8") == b"a?b"
    assert bounds.fits_stored_cap("short") and bounds.cap_stored_text("short") == "short"


@pytest.mark.parametrize(
    "spec",
    [
        "openai/gpt-4o-mini",
        "gpt-4o",
        "vertex_ai/claude-3-5-sonnet@20240620",
        "ollama/llama3.1:8b",
        "openai/fake@http://127.0.0.1:8000/v1",
        "openrouter/meta-llama/llama-3-8b-instruct",
    ],
)
def test_real_model_specs_pass_the_check(spec: str) -> None:
    assert bounds.check_model_spec(spec, field="--agent") == spec
