"""Shop by hand in a terminal (``driftbench env play --benchmark webshop``)."""

from __future__ import annotations

from typing import TextIO

from core.envs.webshop.models import Goal
from core.envs.webshop.session import ShopSession, render_text
from core.envs.webshop.world import WebShopWorld

HELP = """Commands:
  search[keywords]   search (on the search page; plain text also searches there)
  click[target]      click a button, product id or option value (plain text also clicks)
  N                  click the N-th clickable listed under the page (unless N is itself
                     a clickable value, such as a shoe size)
  help               show this help
  quit               stop
"""


def _pick_goal(world: WebShopWorld, answer: str) -> Goal:
    answer = answer.strip()
    if not answer:
        return world.goals[0]
    if answer.isdigit() and int(answer) < len(world.goals):
        return world.goals[int(answer)]
    for g in world.goals:
        if g.goal_id == answer:
            return g
    return world.goals[0]


def _show(session: ShopSession, text: str, out: TextIO) -> None:
    out.write(text + "\n")
    clickables = session.clickables()
    if clickables:
        listed = "  ".join(f"{i}) {c}" for i, c in enumerate(clickables, 1))
        out.write(f"-- clickables: {listed}\n")


def play_terminal(world: WebShopWorld, stdin: TextIO, stdout: TextIO) -> int:
    """Run an interactive shopping session on ``world`` until purchase, ``quit`` or EOF.

    Args:
        world: The shop world.
        stdin: Where commands are read from (one per line).
        stdout: Where pages are written.

    Returns:
        Exit code 0.
    """
    if not world.goals:
        stdout.write("This shop has no goals to play.\n")
        return 0
    stdout.write(
        f"WebShop: {len(world.products)} products, {len(world.goals)} goals.\n"
        f"Goal number (0-{len(world.goals) - 1}) or id [0]: "
    )
    stdout.flush()
    goal = _pick_goal(world, stdin.readline())
    session = world.open_session(instruction=goal.instruction_text, goal=goal)
    stdout.write(f"\nGoal {goal.goal_id}. Type 'help' for commands.\n\n")
    _show(session, render_text(session.page()), stdout)
    while True:
        stdout.write("> ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            stdout.write("\n")
            return 0
        command = line.strip()
        if not command:
            continue
        if command.lower() in ("quit", "exit", "q"):
            return 0
        if command.lower() == "help":
            stdout.write(HELP)
            continue
        if command.lower().startswith(("search[", "click[")):
            obs = session.act_text(command)
        elif session.page().can_search:
            obs = session.act_text(f"search[{command}]")
        elif command.lower() in session.clickables():
            obs = session.act_text(f"click[{command}]")
        elif command.isdigit() and 1 <= int(command) <= len(session.clickables()):
            obs = session.act_text(f"click[{session.clickables()[int(command) - 1]}]")
        else:
            obs = session.act_text(f"click[{command}]")
        _show(session, obs.text, stdout)
        proposal = session.proposal()
        if proposal is not None:
            r = world.reward(goal, proposal["asin"], proposal["options"])
            stdout.write(
                f"\nReward {r.reward:.3f}: type {r.r_type:g} (query match {r.query_match}, "
                f"category match {r.category_match}, title score {r.title_score:.2f}); "
                f"attributes {r.num_attr_matches}/{len(r.attribute_matches)}; "
                f"options {r.num_option_matches}/{len(r.option_matches)}; "
                f"price {'ok' if r.r_price else 'over the cap'} "
                f"(${r.price:.2f} vs ${r.price_upper:.2f}).\n"
            )
            return 0
