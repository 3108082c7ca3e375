"""Shared tool machinery: the tool decorator, dispatch, result rendering and generic tools.

A domain's tools are methods of a toolkit class (``RetailTools``, ``AirlineTools``) bound to a
:class:`~core.envs.tau2.db.DBState`. As in τ²-bench, arguments are passed straight through as
keyword arguments with no coercion, so a missing or unexpected argument gives Python's own
``TypeError`` text (``RetailTools.cancel_pending_order() missing 1 required positional argument:
'reason'``), and every exception a tool raises becomes the agent-visible text ``Error: <msg>``.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from core.envs.tau2.db import DBState
from core.model.world import ToolKind, ToolSpec

F = TypeVar("F", bound=Callable[..., Any])

_ALLOWED_CHARS = frozenset("0123456789+-*/(). ")
_MAX_POW = 10_000


def tool(kind: ToolKind, description: str, **params: dict[str, Any]) -> Callable[[F], F]:
    """Mark a toolkit method as an agent tool.

    Args:
        kind: ``read``, ``write`` (replayed at grading) or ``generic``.
        description: Description shown to agents.
        **params: JSON schema of each argument, in signature order (all required).

    Returns:
        The decorator.
    """

    def deco(fn: F) -> F:
        fn.__tau2_tool__ = (kind, description, params)  # type: ignore[attr-defined]
        return fn

    return deco


def s_str(desc: str) -> dict[str, Any]:
    """JSON schema of a string argument."""
    return {"type": "string", "description": desc}


def s_int(desc: str) -> dict[str, Any]:
    """JSON schema of an integer argument."""
    return {"type": "integer", "description": desc}


def s_arr(desc: str, items: dict[str, Any] | None = None) -> dict[str, Any]:
    """JSON schema of an array argument (of strings by default)."""
    return {"type": "array", "items": items or {"type": "string"}, "description": desc}


def s_obj(desc: str, props: dict[str, str], types: dict[str, str] | None = None) -> dict[str, Any]:
    """JSON schema of an object with required string (or typed) properties."""
    types = types or {}
    return {
        "type": "object",
        "description": desc,
        "properties": {
            k: {"type": types.get(k, "string"), "description": v} for k, v in props.items()
        },
        "required": list(props),
    }


class Toolkit:
    """Base class of a domain's tool table."""

    domain: ClassVar[str] = ""
    _specs: ClassVar[dict[str, ToolSpec]] = {}

    def __init__(self, state: DBState):
        self.db = state

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        specs: dict[str, ToolSpec] = {}
        for name in sorted(dir(cls)):
            fn = getattr(cls, name, None)
            meta = getattr(fn, "__tau2_tool__", None)
            if meta is None:
                continue
            kind, description, params = meta
            specs[name] = ToolSpec(
                name=name,
                description=description,
                parameters={
                    "type": "object",
                    "properties": dict(params),
                    "required": list(params),
                },
                kind=kind,
            )
        cls._specs = specs

    @classmethod
    def specs(cls) -> dict[str, ToolSpec]:
        """Return the tool specs by name (sorted by name)."""
        return dict(cls._specs)

    @classmethod
    def kind_of(cls, name: str) -> ToolKind | None:
        """Return the kind of tool ``name`` or None when unknown."""
        spec = cls._specs.get(name)
        return spec.kind if spec else None

    def invoke(self, name: str, args: dict[str, Any]) -> Any:
        """Call tool ``name`` with ``args`` as keyword arguments; exceptions propagate."""
        if name not in self._specs:
            raise ValueError(f"Tool '{name}' not found.")
        if not isinstance(args, dict):
            raise TypeError(f"arguments must be an object, got {type(args).__name__}")
        return getattr(self, name)(**args)

    # ---- generic tools shared by both domains ------------------------------------------

    @tool(
        "generic",
        "Evaluate an arithmetic expression made of numbers, + - * /, parentheses and spaces; "
        "the result is rounded to 2 decimals.",
        expression=s_str("The expression, such as '2 + 2'."),
    )
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression (τ²: same characters, same rounding)."""
        if not all(ch in _ALLOWED_CHARS for ch in expression):
            raise ValueError("Invalid characters in expression")
        return str(round(float(safe_eval(expression)), 2))

    @tool(
        "generic",
        "Transfer the customer to a human agent with a summary of the issue. Only when the "
        "customer asks for a human or the request cannot be handled with the available tools.",
        summary=s_str("A summary of the customer's issue."),
    )
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand off to a human (no state change)."""
        return "Transfer successful"

    @tool(
        "generic",
        "Think about something without obtaining information or changing anything.",
        thought=s_str("The thought."),
    )
    def think(self, thought: str) -> str:
        """Record a thought (no state change)."""
        return ""


_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}


def safe_eval(expression: str) -> Any:
    """Evaluate what τ²'s ``eval`` would on the allowed characters, without ``eval``.

    The allowed characters only admit numbers, ``+ - * / ** //``, parentheses, tuples and
    attribute access on literals; the last is rejected. Huge powers are refused instead of
    hanging the process (the one deliberate deviation from τ²).
    """
    tree = ast.parse(expression.strip(), filename="<string>", mode="eval")

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            v = ev(node.operand)
            return +v if isinstance(node.op, ast.UAdd) else -v
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            left, right = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > _MAX_POW:
                raise ValueError("Exponent too large")
            return _BINOPS[type(node.op)](left, right)
        if isinstance(node, ast.Tuple):
            return tuple(ev(e) for e in node.elts)
        raise ValueError("Unsupported expression")

    return ev(tree)


def render(result: Any) -> str:
    """Render a tool result as τ²'s ``to_json_str``: strings as is, models as JSON."""
    if isinstance(result, str):
        return result
    return json.dumps(result, default=str)


__all__ = [
    "Toolkit",
    "render",
    "s_arr",
    "s_int",
    "s_obj",
    "s_str",
    "safe_eval",
    "tool",
]
