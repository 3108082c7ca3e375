from core.store import Store
from core.studio.bootstrap import load_bundled_samples
from core.studio.home import my_work
from core.studio.roleplay import start_agent_play, start_user_play


def test_resume_links_for_unfinished_plays(store: Store) -> None:
    load_bundled_samples(store)
    eid = start_agent_play(
        store, benchmark="tau2_airline", sample_id=None, persona="rational", seed=0, player="ann"
    )
    uid = start_user_play(
        store, benchmark="webshop", sample_id=None, persona="dependent", seed=1, player="ann"
    )
    start_agent_play(store, benchmark="tau2_airline", sample_id=None, persona="rational", seed=2)
    work = my_work(store, "ann")
    links = {r["episode_id"]: r["link"] for r in work["resume"]}
    assert links[eid] == f"/play_agent?episode={eid}"
    assert links[uid] == f"/play_user?episode={uid}"
    assert len(links) == 2
    assert work["studies"] == []
    assert my_work(store, "bob")["resume"] == []
