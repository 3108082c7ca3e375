"""Golden run over every bundled goal, and terminal play."""

from __future__ import annotations

import io

import pytest

from core.envs.webshop import golden_report, play_terminal
from core.envs.webshop.world import WebShopWorld
from core.errors import ConfigError


def test_golden_all_bundled_goals_score_one(bundled_world: WebShopWorld) -> None:
    report = golden_report(bundled_world)
    assert report["benchmark"] == "webshop"
    assert report["goals"] == len(bundled_world.goals) == len(report["tasks"])
    assert report["all_one"] is True
    assert {t["reward"] for t in report["tasks"]} == {1.0}
    assert all(t["tool_errors"] == 0 and t["ms"] >= 0 for t in report["tasks"])
    assert [t["task_id"] for t in report["tasks"]] == [g.goal_id for g in bundled_world.goals]


def test_golden_single_goal(bundled_world: WebShopWorld) -> None:
    report = golden_report(bundled_world, "g0007")
    assert report["goals"] == 1 and report["tasks"][0]["task_id"] == "g0007"
    with pytest.raises(ConfigError):
        golden_report(bundled_world, "g9999")


def test_golden_detects_a_broken_target(tiny_world: WebShopWorld) -> None:
    payload = tiny_world.payload.model_copy(deep=True)
    goal = payload.goals[0].model_copy(update={"goal_options": ["purple"]})
    world = WebShopWorld(payload.model_copy(update={"goals": [goal]}))
    report = golden_report(world)
    assert report["all_one"] is False and report["tasks"][0]["reward"] == pytest.approx(2 / 3)


def test_play_terminal_purchase(tiny_world: WebShopWorld) -> None:
    script = "\n".join(
        [
            "0",
            "help",
            "trail running shoes arch support",  # plain text searches on the search page
            "3",  # third clickable on the results page: the first product
            "click[black]",
            "bogus",
            "10",  # plain text clicks an option value
            "buy now",
        ]
    )
    out = io.StringIO()
    assert play_terminal(tiny_world, io.StringIO(script + "\n"), out) == 0
    text = out.getvalue()
    assert "Goal g0" in text and "Commands:" in text
    assert "Invalid action: 'bogus' is not clickable" in text
    assert "Reward 1.000" in text and "attributes 1/1; options 2/2; price ok" in text


def test_play_terminal_quit_and_eof(tiny_world: WebShopWorld) -> None:
    assert play_terminal(tiny_world, io.StringIO("g1\nquit\n"), io.StringIO()) == 0
    out = io.StringIO()
    assert play_terminal(tiny_world, io.StringIO(""), out) == 0
    assert "Goal g0" in out.getvalue()
