"""LLM policies for the whole ladder (B0, A0, A1, A2, A3, L0, RS, LIT).

One class, parameterised by the method table: the system prompt is the shared base plus the
method's guidance file; the conversation is append-only (:func:`~core.agents.prompts.history`:
the opening request, then one assistant message per action and one user message per reply),
and only the latest user message carries the budget note and, for memory methods, the
``MEMORY`` block. Each request therefore extends the previous one, which provider prompt
caches reuse; past a configured size the window slides by whole turns (recorded as a
``repair`` event, ``context_window: …``).

Three action formats: the paper's text format (default), native tool calling
(``action_format="tools"``: the environment's tools plus ``clarify`` and ``final_answer``
functions) and JSON (``action_format="json"``: the action's JSON schema is sent as
``response_format``, so a server with structured output only lets the model write a valid
action). ``<think>`` blocks are stripped before parsing.

The history fits the model: with the spec's ``context_tokens`` the window is sized so that
the system prompt, the history and the completion cap fit the context; a server that still
answers "context length exceeded" makes the window slide further and the turn is asked again
(both recorded as ``repair`` events). A reply cut at the completion cap is recorded as a
``repair`` event (``truncated: …``). A malformed reply gets one
re-prompt quoting the parser's complaint; repairs and re-prompts are named in
:attr:`LLMAgent.repairs` and handed to the orchestrator (:meth:`LLMAgent.pop_repairs`), which
records each as a ``repair`` event (target ``action_format``) of the turn. Rendering is a pure
function of the view, so requests are identical across re-runs and the response cache makes a
re-run free. With a sampling temperature the episode's seed is sent (and keys the cache).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from core.agents.base import AgentBase, EpisodeBinding
from core.agents.lessons import LessonBook
from core.agents.methods import MethodSpec, method_spec
from core.agents.prompts import (
    DEFAULT_WINDOW_CHARS,
    cap_entry,
    history,
    status_block,
    system_prompt,
    window,
)
from core.agents.wire import (
    ActionRepair,
    ParseResult,
    from_native_calls,
    from_tool_calls,
    parse_reply,
    render_action,
    strip_reasoning,
    tool_definitions,
)
from core.agents.wire_json import (
    action_schema,
    parse_json_reply,
    render_json_action,
    response_format,
)
from core.errors import LLMError
from core.llm.messages import chars_for_tokens, estimate_tokens
from core.llm.retry import ContextOverflow
from core.llm.types import ChatModel, LLMResponse
from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.episode import AgentView

ActionT = EnvOp | Ask | Propose | Malformed
IntentFeed = Callable[[], str]
"""Returns the skyline's rendering of the user's current intent (RS only)."""

STATE_LABEL = "MEMORY"

ACTION_FORMATS = ("text", "tools", "json")
"""The agent's action interfaces (part of a run's identity)."""

MAX_OVERFLOW_RETRIES = 3
"""How often one turn is asked again with a smaller window after a context overflow."""

CONTEXT_MARGIN_TOKENS = 64
"""Tokens kept free besides the completion cap when fitting the window to the context."""

_Turn = Generator[list[dict[str, Any]], LLMResponse, ActionT]
"""One turn in progress: yields model requests, receives responses, returns the action."""


class LLMAgent(AgentBase):
    """A language-model policy for one method.

    Args:
        method: Method id (B0 … LIT).
        client: Any :class:`~core.llm.types.ChatModel` (LLMClient, ScriptedLLM).
        benchmark: Benchmark id (selects the domain prompt).
        lessons: A3's lesson book for this run unit (shared across its episodes).
        intent_feed: RS's privileged view of the current intent.
        namespace: Cache namespace.
        action_format: ``text`` (default), ``tools`` (native tool calling) or ``json``
            (JSON-schema constrained replies).
        window_chars: History size at which the window slides.
    """

    def __init__(
        self,
        method: str,
        client: ChatModel,
        benchmark: str,
        *,
        lessons: LessonBook | None = None,
        intent_feed: IntentFeed | None = None,
        namespace: str = "agent",
        action_format: str = "text",
        window_chars: int = DEFAULT_WINDOW_CHARS,
    ) -> None:
        self.method: MethodSpec = method_spec(method)
        self.client = client
        self.benchmark = benchmark
        self.lessons = lessons
        self.intent_feed = intent_feed
        self.namespace = namespace
        self.spec = client.spec.label
        self.memory: dict[str, Any] | None = {} if self.method.memory else None
        self.repairs: list[str] = []
        self._pending: list[ActionRepair] = []
        self.last: ParseResult | None = None
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost_usd = 0.0
        self.questions_before_proposal = 0
        self.proposed = False
        self.action_format = action_format
        self.base_prompt: str | None = None  # None = strategy-free; "premise" (a run option)
        # the client is any ChatModel (a litellm client, a scripted or recorded one): only a
        # configured model's client carries a spec (context window, completion cap)
        spec = getattr(client, "spec", None)
        spec_limit = getattr(spec, "context_chars", None)  # None: no spec (see above)
        self.window_chars = spec_limit if isinstance(spec_limit, int) else window_chars
        context = getattr(spec, "context_tokens", None)  # None: no spec (see above)
        self.context_tokens: int | None = context if isinstance(context, int) else None
        cap = getattr(spec, "max_tokens", None)  # None: no spec (see above)
        self.completion_cap: int = cap if isinstance(cap, int) else 1024
        self.overflows = 0
        self.dropped_turns = 0
        self.seed: int | None = None
        self._statuses: dict[int, str] = {}

    def bind(self, ctx: EpisodeBinding) -> None:
        """Take the episode's seed (sent when the model samples); the event log stays closed."""
        self.seed = ctx.seed

    def _params(self, view: AgentView) -> dict[str, Any]:
        """Per-call parameters of this turn.

        The seed when the model samples (temperature not 0); in the JSON format, the action's
        JSON schema as ``response_format``.
        """
        out: dict[str, Any] = {}
        spec = getattr(self.client, "spec", None)  # a ChatModel need not carry a model spec
        if self.seed is not None and getattr(spec, "temperature", 0.0) != 0.0:
            out["seed"] = self.seed
        if self.action_format == "json":
            # the forced final answer: the schema allows the answer shape only; once the method
            # has no question left before its first answer, no clarify shape either (a
            # constrained model would keep writing the question the method refuses)
            tools = () if view.forced_final else view.tools
            can_ask = self._can_ask(view) and not self._questions_used_up()
            schema = action_schema(tools, can_ask=can_ask, memory=self.method.memory)
            out["response_format"] = response_format(schema)
        return out

    def _tools(self, view: AgentView) -> list[dict[str, Any]] | None:
        if self.action_format != "tools":
            return None
        return tool_definitions(view.tools, can_ask=self._can_ask(view))

    def _can_ask(self, view: AgentView) -> bool:
        return self.method.can_ask and not view.forced_final

    # -- prompt --------------------------------------------------------------------------------
    def messages(self, view: AgentView) -> list[dict[str, Any]]:
        """Return the chat messages for ``view``: system, then the append-only conversation."""
        lessons = ""
        if self.method.self_evolving and self.lessons is not None:
            lessons = self.lessons.render()
        intent = self.intent_feed() if (self.method.informed and self.intent_feed) else ""
        system = system_prompt(
            self.method,
            view.benchmark or self.benchmark,
            view.tools,
            lessons=lessons,
            intent=intent,
            action_format=self.action_format,
            base_prompt=self.base_prompt,
        )
        status = status_block(view, view.benchmark or self.benchmark, self.memory)
        self._statuses.setdefault(view.turn, status)
        render = render_json_action if self.action_format == "json" else None
        limit = self._window_limit(system, status)
        turns, dropped = window(history(view, self._statuses, render), self.dropped_turns, limit)
        if dropped != self.dropped_turns:
            self._pending.append(
                ActionRepair(
                    f"context_window: {dropped - self.dropped_turns} earlier turns dropped "
                    f"({dropped} in all; limit {limit} characters)"
                )
            )
            self.dropped_turns = dropped
        last = turns[-1]
        if last["role"] == "user":
            turns[-1] = {"role": "user", "content": last["content"] + "\n\n" + status}
        else:
            turns.append({"role": "user", "content": status})
        return [{"role": "system", "content": system}, *turns]

    def _window_limit(self, system: str, status: str) -> int:
        """History characters allowed: the configured limit, fitted to the model's context."""
        limit = self.window_chars
        if self.context_tokens is not None:
            fixed = estimate_tokens(
                [{"role": "system", "content": system}, {"role": "user", "content": status}]
            )
            room = self.context_tokens - self.completion_cap - fixed - CONTEXT_MARGIN_TOKENS
            limit = min(limit, max(chars_for_tokens(room), 500))
        return limit

    def _account(self, resp: LLMResponse) -> None:
        if resp.finish_reason == "length" and not getattr(resp, "cached", False):
            self._pending.append(
                ActionRepair(
                    f"truncated: the reply stopped at the completion cap "
                    f"({resp.usage.completion_tokens} tokens)",
                    resp.text[:500],
                )
            )
        self.calls += 1
        self.prompt_tokens += resp.usage.prompt_tokens
        self.completion_tokens += resp.usage.completion_tokens
        self.cost_usd += resp.cost_usd

    def _parse(self, resp: LLMResponse, view: AgentView) -> ParseResult:
        if self.action_format == "json" and not resp.tool_calls:
            return parse_json_reply(
                resp.text, view.tools, can_ask=self._can_ask(view), memory=self.method.memory
            )
        text = strip_reasoning(resp.text)
        if resp.tool_calls and (self.action_format == "tools" or not text):
            calls = [(c.name, c.arguments) for c in resp.tool_calls]
            if self.action_format == "tools":
                return from_native_calls(calls, view.tools, can_ask=self._can_ask(view), raw=text)
            return from_tool_calls(calls, view.tools, raw=text)
        result = parse_reply(
            text,
            view.tools,
            can_ask=self._can_ask(view),
            state_labels=(STATE_LABEL,) if self.method.memory else (),
        )
        if text != resp.text.strip() and resp.text.strip():
            result = ParseResult(
                result.action,
                ("reasoning_block_stripped", *result.repairs),
                result.state,
                result.state_label,
                result.problems,
            )
        return result

    def _questions_used_up(self) -> bool:
        """Whether the method's questions before its first final answer are all asked."""
        cap = self.method.max_questions_before_first_proposal
        return cap is not None and not self.proposed and self.questions_before_proposal >= cap

    def _rule_problem(self, result: ParseResult) -> str | None:
        cap = self.method.max_questions_before_first_proposal
        if isinstance(result.action, Ask) and self._questions_used_up():
            return f"your method allows at most {cap} question(s) before your first final answer"
        return None

    @staticmethod
    def _reprompt(messages: list[dict[str, Any]], reply: str, problem: str) -> list[dict[str, Any]]:
        return [
            *messages,
            {"role": "assistant", "content": cap_entry(reply)},
            {
                "role": "user",
                "content": f"Your reply could not be used: {problem}. Reply again with exactly "
                "one action in the required format.",
            },
        ]

    def _finish(self, result: ParseResult, view: AgentView) -> ActionT:
        self.last = result
        self.repairs.extend(result.repairs)
        if result.repairs:
            raw = result.action.raw
            fixed = "" if not result.ok else render_action(result.action, view.tools)
            self._pending.extend(ActionRepair(name, raw, fixed) for name in result.repairs)
        if result.state is not None and self.memory is not None:
            self.memory = result.state
        action = result.action
        if isinstance(action, Ask):
            if not self.proposed:
                self.questions_before_proposal += 1
        elif isinstance(action, Propose) or (
            isinstance(action, EnvOp)
            and action.action.tool == "click"
            and str(action.action.args.get("target", "")).strip().lower() == "buy now"
        ):
            self.proposed = True
        return action

    def _problem(self, result: ParseResult) -> str | None:
        if not result.ok:
            return "; ".join(result.problems) or "malformed"
        return self._rule_problem(result)

    def _after_retry(self, result: ParseResult) -> ParseResult:
        rule = self._rule_problem(result)
        if rule is not None:
            bad = Malformed(raw=result.action.raw, problems=(rule,))
            return ParseResult(bad, result.repairs, result.state, result.state_label, (rule,))
        return result

    # -- acting --------------------------------------------------------------------------------
    def _turn(self, view: AgentView) -> _Turn:
        """One turn, free of I/O: yields each request, receives its response, returns the action.

        One call, plus one re-prompt when the reply is unusable; :meth:`act` and :meth:`aact`
        only carry the requests to the client (the same prompts and cache keys either way).
        """
        msgs = self.messages(view)
        resp = yield msgs
        self._account(resp)
        result = self._parse(resp, view)
        problem = self._problem(result)
        if problem is not None:
            first = resp.text
            self.repairs.append("reprompt")
            resp = yield self._reprompt(msgs, resp.text, problem)
            self._account(resp)
            self._pending.append(ActionRepair(f"reprompt: {problem}", first, resp.text))
            result = self._after_retry(self._parse(resp, view))
        return self._finish(result, view)

    @staticmethod
    def _resume(turn: _Turn, reply: LLMResponse) -> list[dict[str, Any]] | ActionT:
        """Hand ``reply`` to the turn: its next request, or its action once it is done."""
        try:
            return turn.send(reply)
        except StopIteration as done:
            action: ActionT = done.value
            return action

    def _overflowed(self, exc: LLMError, tries: int) -> None:
        """Halve the window after a context overflow (or give up after a few tries)."""
        if tries >= MAX_OVERFLOW_RETRIES:
            raise exc
        self.overflows += 1
        self.window_chars = max(500, self.window_chars // 2)
        self._pending.append(
            ActionRepair(
                f"context_window: the model's context was exceeded; window now "
                f"{self.window_chars} characters",
                str(exc)[:300],
            )
        )

    def act(self, view: AgentView) -> ActionT:
        """Return the next action (blocking model calls)."""
        tools, params = self._tools(view), self._params(view)
        for tries in range(MAX_OVERFLOW_RETRIES + 1):
            turn = self._turn(view)
            step: list[dict[str, Any]] | ActionT = next(turn)
            try:
                while isinstance(step, list):
                    reply = self.client.complete(
                        step, tools=tools, namespace=self.namespace, **params
                    )
                    step = self._resume(turn, reply)
                return step
            except ContextOverflow as exc:
                self._overflowed(exc, tries)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aact(self, view: AgentView) -> ActionT:
        """Async :meth:`act` (same prompts, same cache keys)."""
        tools, params = self._tools(view), self._params(view)
        for tries in range(MAX_OVERFLOW_RETRIES + 1):
            turn = self._turn(view)
            step: list[dict[str, Any]] | ActionT = next(turn)
            try:
                while isinstance(step, list):
                    reply = await self.client.acomplete(
                        step, tools=tools, namespace=self.namespace, **params
                    )
                    step = self._resume(turn, reply)
                return step
            except ContextOverflow as exc:
                self._overflowed(exc, tries)
        raise AssertionError("unreachable")  # pragma: no cover

    def pop_repairs(self) -> list[ActionRepair]:
        """Return the repairs behind the action(s) since the last call (then forget them).

        :attr:`repairs` keeps every repair name of the episode; this hands each repair to the
        orchestrator once, with the reply it fixed and what that became.
        """
        out, self._pending = self._pending, []
        return out

    def usage(self) -> dict[str, float]:
        """Token and cost totals of this agent."""
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
        }
