"""The realism report of a play study: people and the simulator on the same samples and personas.

A ``play_user`` study gives, per assigned sample and persona, episodes in which a person played
the customer. :func:`simulator_twins` plays the *same* sample with the *same* persona, seed,
method and agent with the simulated user (template voice) — once; later calls reuse them (they
are found by the episode ids derived from the human episode) — and :func:`play_study_realism`
puts both players side by side (:func:`core.studies.realism.realism_report`: behaviour per
persona — disclosures per reply, volunteering, declining, patience left — and, when the study's
labels hold persona identifications, identification and consistency).
"""

from __future__ import annotations

import pandas as pd

from core.errors import ConfigError
from core.store import Store
from core.studies.realism import (
    episode_facts,
    human_consistency,
    human_identifications,
    realism_report,
)
from core.studies.studies import get_study, plays


def _human_episodes(store: Store, study: str) -> list[str]:
    out = []
    for p in plays(store, study=study):
        if p["role"] != "play_user" or not store.episode_exists(p["episode_id"]):
            continue
        status = store.episode_status(p["episode_id"])
        if status is not None and status[0] == "ended":
            out.append(str(p["episode_id"]))
    return out


def simulator_twins(store: Store, study: str) -> dict[str, str]:
    """Per human episode of a play-as-user study, the simulator's episode on the same setup.

    Returns:
        human episode id → simulator episode id (created the first time, then reused).
    """
    from core.agents.factory import build_agent
    from core.engine import episode
    from core.runner.plan import SampleSource, literal_intent

    st = get_study(store, study)
    if "play_user" not in st.spec.roles:
        raise ConfigError(f"study {st.spec.name!r} is not a play-as-user study", field="study")
    source = SampleSource(store)
    out: dict[str, str] = {}
    for eid in _human_episodes(store, st.study_id):
        twin = f"{eid}-sim"
        if not store.episode_exists(twin):
            h = store.header(eid)
            sample = source.sample(h.benchmark, h.sample_id)
            graph = source.graph(h.benchmark, sample.graph_id)
            loader = source.world_loader(sample)
            episode.start(
                store,
                sample,
                h.persona_id,
                h.seed,
                "symbolic" if h.agent == "symbolic" else h.agent,
                graph=graph,
                method=h.method,
                user_voice="template",
                episode_id=twin,
                world_loader=loader,
            )
            agent = build_agent(
                h.method,
                world=loader(h.benchmark),
                literal=literal_intent(sample, graph),
                costs=h.config.costs(),
            )
            episode.run(store, twin, agent, world_loader=loader)
        out[eid] = twin
    return out


def play_study_realism(store: Store, study: str) -> dict[str, pd.DataFrame]:
    """The realism report of a play-as-user study (people vs the simulator, same setups)."""
    twins = simulator_twins(store, study)
    episodes = [episode_facts(store, e) for pair in twins.items() for e in pair]
    sid = get_study(store, study).study_id
    return realism_report(
        episodes, human_identifications(store, sid), human_consistency(store, sid)
    )
