"""A generic terminal loop for operating any tool-based host world by hand (``env play``)."""

from __future__ import annotations

import json
from typing import TextIO

from core.envs.base import HostWorld
from core.model.world import EnvAction

HELP = (
    "Type a tool call as: TOOL {json arguments}   e.g.  find_user_id_by_email "
    '{"email": "a@b.c"}\n'
    "Commands: 'tools' lists tools, 'help' shows this, 'quit' leaves."
)


def play_tools(world: HostWorld, stdin: TextIO, stdout: TextIO) -> int:
    """Read tool calls from ``stdin`` and print observations until EOF or ``quit``.

    Args:
        world: Any host world.
        stdin: Input stream (one call per line).
        stdout: Output stream.

    Returns:
        Exit code 0.
    """
    session = world.open_session()
    tools = {t.name: t for t in world.tools()}
    print(f"{world.benchmark} — {len(tools)} tools. {HELP}", file=stdout)
    for raw in stdin:
        line = raw.strip()
        if not line:
            continue
        if line in {"quit", "exit"}:
            break
        if line == "help":
            print(HELP, file=stdout)
            continue
        if line == "tools":
            for t in tools.values():
                params = ", ".join(t.parameters.get("properties", {}))
                print(f"  [{t.kind}] {t.name}({params})", file=stdout)
            continue
        name, _, rest = line.partition(" ")
        if name not in tools:
            print(f"unknown tool '{name}' (type 'tools')", file=stdout)
            continue
        try:
            args = json.loads(rest) if rest.strip() else {}
        except json.JSONDecodeError as exc:
            print(f"arguments are not valid JSON: {exc.msg}", file=stdout)
            continue
        if not isinstance(args, dict):
            print("arguments must be a JSON object", file=stdout)
            continue
        obs = session.act(EnvAction(tool=name, args=args))
        print(("" if obs.ok else "ERROR: ") + obs.text, file=stdout)
    return 0
