"""The interaction protocol: patience, shifts, the simulated user and its voices.

Rules are functions over an explicit :class:`~core.protocol.state.EpisodeState`; they decide
by reading the state and record every decision as a typed event, and the state changes only by
folding events (:func:`~core.protocol.state.evolve`). Every random draw comes from
:func:`~core.protocol.rng.draw` keyed by (episode key, stream name, counter).
"""
