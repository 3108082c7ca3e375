"""The episode engine: the event log and the one episode driver.

- :mod:`core.engine.eventlog`: the append-only event-log protocol and its in-memory version.
- :mod:`core.engine.episode`: start, step, run, respond, fork and the three views of an episode.
"""
