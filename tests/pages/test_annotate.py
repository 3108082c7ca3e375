"""Annotate page: empty store, one item at a time, blind, labels stored as made, timing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.store import Store
from core.studies import annotator_queue, list_labels
from core.studio.auth import hash_password
from tests.pages.study_fixtures import copy_store, make_study, queue_order

PAGE = str(PROJECT_ROOT / "pages" / "annotate.py")


@pytest.fixture
def study_store(demo_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    return copy_store(demo_home, tmp_path)


def _submit(at: AppTest) -> AppTest:
    next(b for b in at.button if b.label.startswith("Save labels")).click()
    return at.run()


def _page_text(at: AppTest) -> str:
    parts = [e.value for kind in ("text", "markdown", "caption", "subheader") for e in at.get(kind)]
    return "\n".join(str(p) for p in parts)


def test_annotate_empty_store(empty_home: Path) -> None:
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert any("No annotators yet" in i.value for i in at.info)


def test_annotate_one_item_at_a_time_blind_and_stored(study_store: Store) -> None:
    episodes = make_study(study_store, n=3)
    order = queue_order(study_store, "persona-study", "ann1")
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.selectbox(key="ann-as").set_value("ann1").run()
    assert not at.exception
    assert at.get("progress")[0].proto.text == "0 of 3 done"
    assert at.subheader[0].value == "Item 1 of 3"
    # blind: no episode id, method or persona anywhere on the page
    text = _page_text(at)
    assert not any(e in text for e in episodes)
    assert "persona:" not in text and "method:" not in text
    first = annotator_queue(study_store, "persona-study", "ann1").items[0].assignment_id
    radio = at.radio(key=f"ann-{first}-persona_id")
    assert radio.value is None  # no pre-selected answer
    radio.set_value("avoidant")
    _submit(at)
    assert not at.exception
    labels = list_labels(study_store, annotator="ann1")
    assert [(lb.target_id, lb.value) for lb in labels] == [(order[0], "avoidant")]
    assert labels[0].seconds is not None and labels[0].seconds >= 0
    assert at.get("progress")[0].proto.text == "1 of 3 done"
    assert at.subheader[0].value == "Item 2 of 3"
    assert any("Saved 1 label" in s.value for s in at.success)


def test_annotate_skip_reopen_and_finish(study_store: Store) -> None:
    make_study(study_store, n=2)
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.selectbox(key="ann-as").set_value("ann2").run()
    at.button(key="ann-skip").click().run()
    assert at.get("progress")[0].proto.text == "1 of 2 done (1 skipped)"
    items = annotator_queue(study_store, "persona-study", "ann2").items
    assert items[0].status == "skipped"
    at.radio(key=f"ann-{items[1].assignment_id}-persona_id").set_value("rational")
    _submit(at)
    assert any("All 2 items done" in s.value for s in at.success)
    at.button(key=f"ann-reopen-{items[0].assignment_id}").click().run()
    assert at.subheader[0].value == "Item 1 of 2"
    assert not at.exception


def test_a_reopened_item_is_confirmed_unchanged(study_store: Store) -> None:
    """Issue 30: a reopened item is done again when saved with its labels as they were."""
    make_study(study_store, n=2)
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.selectbox(key="ann-as").set_value("ann1").run()
    items = annotator_queue(study_store, "persona-study", "ann1").items
    for it in items:
        at.radio(key=f"ann-{it.assignment_id}-persona_id").set_value("rational")
        _submit(at)
    assert any("All 2 items done" in s.value for s in at.success)
    at.button(key=f"ann-reopen-{items[0].assignment_id}").click().run()
    assert at.subheader[0].value == "Item 1 of 2"
    assert "1 to do" in at.selectbox(key="ann-study").options[0]
    assert at.radio(key=f"ann-{items[0].assignment_id}-persona_id").value == "rational"
    _submit(at)  # nothing changed: the labels are confirmed, not written twice
    assert not at.exception
    assert any("unchanged" in s.value for s in at.success)
    assert any("All 2 items done" in s.value for s in at.success)
    assert annotator_queue(study_store, "persona-study", "ann1").items[0].status == "done"
    assert len(list_labels(study_store, annotator="ann1")) == 2


def test_annotate_partial_labels_keep_item_open(study_store: Store) -> None:
    make_study(study_store, n=2, label_kinds=("persona_id", "realism", "who_broke"))
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.selectbox(key="ann-as").set_value("ann1").run()
    aid = annotator_queue(study_store, "persona-study", "ann1").items[0].assignment_id
    at.radio(key=f"ann-{aid}-realism").set_value(4)
    at.number_input(key=f"ann-{aid}-who_broke-turn").set_value(2)
    at.selectbox(key=f"ann-{aid}-who_broke-who").set_value("agent")
    at.selectbox(key=f"ann-{aid}-who_broke-severity").set_value("major")
    at.text_input(key=f"ann-{aid}-comment").input("agent ignored the size")
    _submit(at)
    assert not at.exception
    kinds = sorted(lb.label_kind for lb in list_labels(study_store, annotator="ann1"))
    assert kinds == ["comment", "realism", "who_broke"]
    # persona_id is still missing: the same item stays, with the stored labels prefilled
    assert at.subheader[0].value == "Item 1 of 2"
    assert at.radio(key=f"ann-{aid}-realism").value == 4
    assert any("Still needed" in c.value and "persona_id" in c.value for c in at.caption)
    at.radio(key=f"ann-{aid}-persona_id").set_value("dependent")
    _submit(at)
    assert at.subheader[0].value == "Item 2 of 2"
    # the unchanged prefilled realism label was not stored twice
    assert len(list_labels(study_store, annotator="ann1", label_kind="realism")) == 1


def test_annotate_not_blind_shows_other_labels(study_store: Store) -> None:
    make_study(study_store, n=1, label_kinds=("realism",), blind=False)
    from core.studies import label_item

    aid2 = annotator_queue(study_store, "persona-study", "ann2").items[0].assignment_id
    label_item(study_store, aid2, "realism", 2)
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.selectbox(key="ann-as").set_value("ann1").run()
    assert any("Other annotators" in m.value for m in at.markdown)
    assert any("method:" in c.value for c in at.caption)


def test_annotate_password_mode_uses_signed_in_name(
    study_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_study(study_store, n=2)
    creds = tmp_path / "users.json"
    hashed = hash_password("pw")
    creds.write_text(json.dumps({"users": {"ann2": {"role": "annotator", "password": hashed}}}))
    monkeypatch.setenv("DRIFTBENCH_AUTH", "password")
    monkeypatch.setenv("DRIFTBENCH_CREDENTIALS", str(creds))
    monkeypatch.setenv("DRIFTBENCH_SESSION_SECRET", "s" * 40)
    from core.studio.session_token import account_binding, issue

    # a signed-in session holds its token: every page run checks it against the credentials
    token, _ = issue("ann2", account_binding(hashed, "annotator"), b"s" * 40)
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.session_state["auth_user"] = {"name": "ann2", "role": "annotator"}
    at.session_state["auth_token"] = token
    at.run()
    assert not at.exception
    assert not [s for s in at.selectbox if s.key == "ann-as"]
    assert any("Signed in as ann2" in c.value for c in at.caption)
    assert at.subheader[0].value == "Item 1 of 2"


def test_study_setup_on_data_page_then_annotate(
    study_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    from core.studio.auth import hash_password

    pw = hash_password("pw", iterations=1000)
    creds = tmp_path / "creds.yaml"
    users = {n: {"role": "annotator", "password": pw} for n in ("ann1", "ann2", "ann3")}
    creds.write_text(yaml.safe_dump({"users": users}))
    monkeypatch.setenv("DRIFTBENCH_CREDENTIALS", str(creds))
    data = AppTest.from_file(str(PROJECT_ROOT / "pages" / "data.py"), default_timeout=30).run()
    assert not data.exception
    assert any("No studies yet" in c.value for c in data.caption)
    data.text_input(key="stu-name").input("from-the-form")
    data.number_input(key="stu-first-n").set_value(2)
    # annotators are picked from the accounts: a typo cannot be enrolled
    assert data.multiselect(key="stu-annotators").options == ["ann1", "ann2", "ann3"]
    data.multiselect(key="stu-annotators").set_value(["ann1", "ann2"])
    next(b for b in data.button if b.label == "Create study").click()
    data.run()
    assert not data.exception
    assert any("Created study 'from-the-form'" in s.value for s in data.success)
    assert any("ann1: 2" in s.value and "ann2: 2" in s.value for s in data.success)
    # enrol one more annotator on the existing study, then close it
    data.multiselect(key="stu-add-annotators").set_value(["ann3"])
    next(b for b in data.button if b.label == "Add and assign").click()
    data.run()
    assert any("ann3: " in s.value for s in data.success)

    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.selectbox(key="ann-as").set_value("ann1").run()
    assert at.subheader[0].value == "Item 1 of 2"

    data.button(key="stu-status-go").click().run()
    at.run()
    assert any("closed" in w.value for w in at.warning)


def test_annotate_episode_pair_side_by_side(study_store: Store) -> None:
    from core.studies import add_annotator, assign_study, create_study

    eps = [r["episode_id"] for r in study_store.episode_rows(status="ended")[:2]]
    create_study(
        study_store,
        {"name": "pairs", "episode_pairs": [eps], "label_kinds": ["same_persona"], "overlap": 1},
    )
    add_annotator(study_store, "ann1")
    assign_study(study_store, "pairs", ["ann1"], overlap=1)
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.selectbox(key="ann-as").set_value("ann1").run()
    assert [m.value for m in at.markdown if m.value.startswith("**Episode")] == [
        "**Episode A**",
        "**Episode B**",
    ]
    aid = annotator_queue(study_store, "pairs", "ann1").items[0].assignment_id
    assert at.radio(key=f"ann-{aid}-same_persona").options == ["SAME", "DIFFERENT"]
    at.radio(key=f"ann-{aid}-same_persona").set_value("DIFFERENT")
    _submit(at)
    assert any("All 1 items done" in s.value for s in at.success)
    (label,) = list_labels(study_store, annotator="ann1")
    assert (label.target_kind, label.target_id, label.value) == (
        "episode_pair",
        f"{eps[0]}|{eps[1]}",
        "DIFFERENT",
    )
