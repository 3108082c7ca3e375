"""The episode engine: the event log, the one episode driver and the protocol rules.

- :mod:`core.engine.episode`: the public API (start, step, respond, run, arun, abort, fork, views).
- :mod:`core.engine.driver`: the one loop an agent plays in, the step core, the failure ending.
- :mod:`core.engine.rules`: the protocol rule of each agent action.
- :mod:`core.engine.live`: live episodes (folded state + open session), cached by the log.
- :mod:`core.engine.views`: the agent, user and researcher views and the truth probe.
- :mod:`core.engine.fork`: forking an episode at a turn.
- :mod:`core.engine.eventlog`: the append-only event-log protocol and its in-memory version.

See ``docs/ENGINE.md`` for the driver's life cycle and where each rule lives.
"""
