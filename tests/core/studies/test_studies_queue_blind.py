from __future__ import annotations

import pytest

from core.errors import ConfigError, ProtocolError
from core.studies import (
    StudySpec,
    annotator_queue,
    assign_study,
    create_study,
    item_view,
    label_item,
    list_labels,
    open_next,
    record_play,
    set_assignment_status,
    set_study_status,
    study_progress,
    write_label,
)


def _study(store, make_episode, *, blind: bool, kinds=("persona_id", "realism")):
    eps = [
        make_episode("ep-a", persona_id="dependent", method="A2", agent="openai/secret-model"),
        make_episode("ep-b", persona_id="avoidant", method="B0", agent="anthropic/other-model"),
    ]
    create_study(
        store,
        StudySpec(
            name=f"q-{blind}",
            episodes=tuple(eps),
            episode_pairs=((eps[0], eps[1]),),
            label_kinds=(*kinds, "same_persona", "who_broke"),
            overlap=2,
            blind=blind,
        ),
    )
    assign_study(store, f"q-{blind}", ["ann1", "ann2"])
    return f"q-{blind}", eps


def test_queue_progress_and_completion_by_required_labels(store, make_episode) -> None:
    study, _ = _study(store, make_episode, blind=True)
    q = annotator_queue(store, study, "ann1")
    assert (q.total, q.done, q.progress) == (3, 0, 0.0)
    item = open_next(store, study, "ann1")
    assert item is not None and item.status == "pending"
    if item.target_kind == "episode":
        assert item.labels_required == ("persona_id", "realism")
        label_item(store, item.assignment_id, "persona_id", "dependent", seconds=4.0)
        assert annotator_queue(store, study, "ann1").done == 0  # realism still missing
        label_item(store, item.assignment_id, "who_broke", {"who": "nobody"}, turn=1)
        assert annotator_queue(store, study, "ann1").done == 0  # optional label
        label_item(store, item.assignment_id, "realism", 4, seconds=2.5)
    else:
        label_item(store, item.assignment_id, "same_persona", "DIFFERENT")
    q = annotator_queue(store, study, "ann1")
    assert q.done == 1 and q.next_item is not None
    assert q.next_item.assignment_id != item.assignment_id
    set_assignment_status(store, q.next_item.assignment_id, "skipped")
    prog = {r["annotator"]: r for r in study_progress(store, study)}
    assert prog["ann1"]["done"] == 1 and prog["ann1"]["skipped"] == 1
    assert prog["ann1"]["pending"] == 1 and prog["ann2"]["labels"] == 0


def test_blind_view_hides_identity_method_persona_and_other_labels(store, make_episode) -> None:
    study, eps = _study(store, make_episode, blind=True)
    q2 = annotator_queue(store, study, "ann2")
    for it in q2.items:
        if it.target_kind == "episode":
            label_item(store, it.assignment_id, "persona_id", "rational")
    q1 = annotator_queue(store, study, "ann1")
    assert all(i.target_id is None and i.ref.startswith("#") for i in q1.items)
    ep_item = next(i for i in q1.items if i.target_kind == "episode")
    view = item_view(store, ep_item.assignment_id)
    text = view.model_dump_json(exclude={"choices"})
    for secret in ("secret-model", "other-model", "A2", "B0", "template", "ep-a", "ep-b"):
        assert secret not in text, secret
    # the persona is the question; ann2's answer ("rational") is another annotator's label
    for persona in ("dependent", "avoidant", "rational"):
        assert persona not in text, persona
    assert view.other_labels is None and view.my_labels == ()
    card = view.episodes[0]
    assert card.ref == "A" and card.episode_id is None and card.method is None
    assert [ln.role for ln in card.transcript] == ["user", "agent", "environment"]
    assert card.transcript[1].text.startswith("[tool] search")
    assert card.transcript[1].tool == "search" and card.transcript[1].args  # readable call
    assert set(view.label_kinds) == {"persona_id", "realism", "who_broke"}
    assert len(view.choices["persona_id"]) == 5 and view.choices["realism"] == [1, 2, 3, 4, 5]
    pair_item = next(i for i in q1.items if i.target_kind == "episode_pair")
    pv = item_view(store, pair_item.assignment_id)
    assert [c.ref for c in pv.episodes] == ["A", "B"]
    assert "ep-a" not in pv.model_dump_json()


def test_unblinded_view_shows_identity_and_others_but_not_the_answer(store, make_episode) -> None:
    study, eps = _study(store, make_episode, blind=False)
    q2 = annotator_queue(store, study, "ann2")
    target = next(i for i in q2.items if i.target_kind == "episode")
    label_item(store, target.assignment_id, "realism", 2)
    q1 = annotator_queue(store, study, "ann1")
    mine = next(i for i in q1.items if i.target_id == target.target_id)
    view = item_view(store, mine.assignment_id)
    card = view.episodes[0]
    assert card.episode_id == target.target_id and card.agent and card.method
    assert card.persona_id is None  # still hidden: the study asks for persona_id
    assert view.other_labels is not None
    assert [(r.annotator, r.value) for r in view.other_labels] == [("ann2", 2)]


def test_label_validation_and_guards(store, make_episode) -> None:
    study, eps = _study(store, make_episode, blind=True)
    item = next(
        i for i in annotator_queue(store, study, "ann1").items if i.target_kind == "episode"
    )
    aid = item.assignment_id
    with pytest.raises(ConfigError, match="persona_id"):
        label_item(store, aid, "persona_id", "grumpy")
    with pytest.raises(ConfigError, match="1-5"):
        label_item(store, aid, "realism", 6)
    with pytest.raises(ConfigError, match="per-turn"):
        label_item(store, aid, "who_broke", {"who": "agent", "severity": "major"})
    with pytest.raises(ConfigError, match="severity"):
        label_item(store, aid, "who_broke", {"who": "agent"}, turn=2)
    with pytest.raises(ConfigError, match="does not ask"):
        label_item(store, aid, "fault_type", "vagueness_subjectivity")
    with pytest.raises(ConfigError, match="same_persona"):
        label_item(store, aid, "same_persona", "SAME")  # wrong target kind
    label_item(store, aid, "persona_id", " Dependent ")
    label_item(store, aid, "comment", "user reply at turn 1 contradicts the bio", turn=1)
    assert [r.value for r in list_labels(store, annotator="ann1")] == [
        "dependent",
        "user reply at turn 1 contradicts the bio",
    ]
    set_study_status(store, study, "closed")
    with pytest.raises(ProtocolError):
        label_item(store, aid, "realism", 3)


def test_relabel_keeps_history_and_latest_wins(store, make_episode) -> None:
    study, eps = _study(store, make_episode, blind=True)
    item = next(
        i for i in annotator_queue(store, study, "ann1").items if i.target_kind == "episode"
    )
    label_item(store, item.assignment_id, "realism", 2)
    label_item(store, item.assignment_id, "realism", 5)
    assert [r.value for r in list_labels(store, label_kind="realism")] == [2, 5]
    assert [r.value for r in list_labels(store, label_kind="realism", latest_only=True)] == [5]


def test_self_played_labels_are_marked(store, make_episode) -> None:
    make_episode("mine", user_voice="human")
    record_play(store, annotator="zoe", episode_id="mine", sample_id="sample-1")
    write_label(
        store,
        annotator="zoe",
        target_kind="episode",
        target_id="mine",
        label_kind="realism",
        value=5,
    )
    write_label(
        store,
        annotator="yan",
        target_kind="episode",
        target_id="mine",
        label_kind="realism",
        value=3,
    )
    got = {r.annotator: r.self_played for r in list_labels(store, target_id="mine")}
    assert got == {"zoe": True, "yan": False}


def test_a_reopened_item_is_confirmed_unchanged_without_new_labels(store, make_episode) -> None:
    """Issue 30: reopening an item and confirming its labels makes it done, writing nothing."""
    from core.studies import confirm_item, missing_labels

    study, _ = _study(store, make_episode, blind=True)
    item = open_next(store, study, "ann1")
    assert item is not None
    aid = item.assignment_id
    assert missing_labels(store, aid) == item.labels_required
    with pytest.raises(ProtocolError, match="still needs a label"):
        confirm_item(store, aid)  # nothing labelled yet: nothing to confirm
    for kind in item.labels_required:
        value = {"persona_id": "dependent", "realism": 4, "same_persona": "SAME"}[kind]
        label_item(store, aid, kind, value)
    assert annotator_queue(store, study, "ann1").done == 1
    set_assignment_status(store, aid, "pending")  # reopened
    assert annotator_queue(store, study, "ann1").done == 0
    before = len(list_labels(store, annotator="ann1"))
    assert confirm_item(store, aid) is True
    assert not confirm_item(store, aid)  # already done: idempotent
    q = annotator_queue(store, study, "ann1")
    assert q.done == 1 and next(i for i in q.items if i.assignment_id == aid).status == "done"
    assert len(list_labels(store, annotator="ann1")) == before
    set_study_status(store, study, "closed")
    set_assignment_status(store, aid, "pending")
    with pytest.raises(ProtocolError, match="closed"):
        confirm_item(store, aid)
