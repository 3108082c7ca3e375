"""``driftbench reproduce`` on the symbolic ladder at small size (issue 31, "Must show").

Every experiment runs as a named run, every table and figure file is written, a second call
resumes (nothing replays), and ``index.html`` opens in Debian's chromium without console errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.runner.reproduce import EXPERIMENTS
from core.store import Store
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS

TABLES = (
    "table2_main",
    "fig3_backbones",
    "table9_personas",
    "table8_shifts",
    "fig10_complexity",
    "fig9_earned_inferred",
)
FIGURES = (
    "fig3_backbones",
    "fig6_personas",
    "fig9_earned_inferred",
    "fig9_aim_recovery",
    "fig10_complexity",
    "fig11_shifts",
    "fig12_heatmap",
)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    root = tmp_path_factory.mktemp("repro")
    db, out = root / "s.db", root / "report"
    argv = ["--store", str(db), "reproduce", "--seeds", "2", "--limit", "1"]
    argv += ["--out", str(out), "--name", "ci", "--json"]
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return db, out, json.loads(buf.getvalue().strip().splitlines()[-1])


def test_every_experiment_runs_as_a_named_run(report: tuple[Path, Path, dict]) -> None:
    db, _, payload = report
    assert {"runs", "tables", "figures", "estimate"} <= set(payload)
    names = {r["run"] for r in payload["runs"]}
    # main (= k1 = the symbolic backbone), personas (= shifts on), shifts off, k2, k4
    assert names == {
        "ci-main-symbolic",
        "ci-personas-symbolic",
        "ci-shifts-off-symbolic",
        "ci-k2-symbolic",
        "ci-k4-symbolic",
    }
    assert all(r["completed"] == r["episodes"] > 0 and r["errors"] == 0 for r in payload["runs"])
    store = Store.open(db)
    from core.grip.report import run_conditions

    ids = {r["run"]: r["run_id"] for r in payload["runs"]}
    cond = run_conditions(store, list(ids.values()))
    assert cond[ids["ci-shifts-off-symbolic"]] == {"shifts": "off", "faults": "single"}
    assert cond[ids["ci-k4-symbolic"]] == {"shifts": "on", "faults": "k4"}
    assert len(EXPERIMENTS) == 7


def test_every_table_and_figure_file_is_written(report: tuple[Path, Path, dict]) -> None:
    _, out, payload = report
    for t in TABLES:
        for ext in ("md", "tex", "csv"):
            f = out / "tables" / f"{t}.{ext}"
            assert f.is_file() and f.stat().st_size > 0, f
    for name in FIGURES:
        assert (out / "figures" / f"{name}.html").is_file()
        if Path(CHROMIUM).exists():
            png = out / "figures" / f"{name}.png"
            assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
    assert (out / "figures" / "plotly.min.js").is_file()  # offline: no CDN
    main_md = (out / "tables" / "table2_main.md").read_text(encoding="utf-8")
    assert main_md.index("| B0 |") < main_md.index("| A0 |") < main_md.index("| A3 |")
    assert "webshop Success" in main_md.splitlines()[2]


def test_a_second_call_resumes_and_plays_nothing(report: tuple[Path, Path, dict]) -> None:
    db, out, first = report
    import contextlib
    import io

    buf = io.StringIO()
    argv = ["--store", str(db), "reproduce", "--seeds", "2", "--limit", "1"]
    with contextlib.redirect_stdout(buf):
        assert main([*argv, "--out", str(out), "--name", "ci", "--json"]) == 0
    again = json.loads(buf.getvalue().strip().splitlines()[-1])
    assert [r["run_id"] for r in again["runs"]] == [r["run_id"] for r in first["runs"]]
    store = Store.open(db)
    for r in again["runs"]:
        rows = store.episode_rows(run_id=r["run_id"])
        assert len(rows) == r["episodes"]  # no episode played twice


def test_index_opens_in_chromium_without_console_errors(
    report: tuple[Path, Path, dict],
) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium absent")
    from playwright.sync_api import sync_playwright

    _, out, _ = report
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((out / "index.html").resolve().as_uri())
        page.wait_for_load_state("load")
        text = page.inner_text("body")
        imgs = page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
        fig = browser.new_page()
        fig.on("pageerror", lambda e: errors.append(str(e)))
        fig.goto((out / "figures" / "fig10_complexity.html").resolve().as_uri())
        fig.wait_for_selector(".plot-container", timeout=20000)
        browser.close()
    assert errors == []
    assert "Main grid" in text and "Table 2" in text and "seeds" in text
    assert imgs and all(w > 0 for w in imgs)
