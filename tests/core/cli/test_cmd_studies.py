"""``driftbench studies create / list / export``: the contract, accounts only, nothing stored on
a bad file, and the export of the person's words with their readings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from core.cli import main
from core.store import Store
from core.studio.auth import hash_password


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from core.studio.bootstrap import load_bundled_samples

    store = Store.open(tmp_path / "s.db")
    load_bundled_samples(store)
    store.close()
    pw = hash_password("pw", iterations=1000)
    creds = tmp_path / "creds.yaml"
    creds.write_text(
        yaml.safe_dump(
            {"users": {n: {"role": "annotator", "password": pw} for n in ("ann", "bob", "cy")}}
        )
    )
    monkeypatch.setenv("DRIFTBENCH_CREDENTIALS", str(creds))  # settings follow the environment
    return tmp_path


def _study(home: Path, **over) -> Path:
    data = {
        "name": "pilot",
        "kind": "play_user",
        "samples": {"benchmark": "webshop", "count": 3, "seed": 7},
        "personas": ["rational"],
        "annotators": ["ann", "bob"],
        "overlap": 2,
    }
    data.update(over)
    path = home / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _cli(home: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(home / "s.db"), *args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_create_list_export(home: Path, capsys) -> None:
    code, out, _ = _cli(home, capsys, "studies", "create", "--from", str(_study(home)), "--json")
    made = json.loads(out)
    assert code == 0 and made["items"] == 3 and made["assignments"] == 6
    assert set(made) >= {"study_id", "items", "assignments"}
    # the same file draws the same samples (seeded), and a second create of the name is refused
    code, _, err = _cli(home, capsys, "studies", "create", "--from", str(_study(home)))
    assert code == 2 and "exists" in err
    code, out, _ = _cli(home, capsys, "studies", "list", "--json")
    [row] = json.loads(out)["studies"]
    assert row["kind"] == "play_user" and row["assignments"] == 6
    assert [(p["annotator"], p["assigned"], p["progress"]) for p in row["progress"]] == [
        ("ann", 3, 0.0),
        ("bob", 3, 0.0),
    ]
    for fmt in ("csv", "jsonl", "parquet"):
        code, out, _ = _cli(
            home,
            capsys,
            "studies",
            "export",
            "pilot",
            "--format",
            fmt,
            "--out",
            str(home / fmt),
            "--json",
        )
        files = json.loads(out)["files"]
        assert code == 0 and [Path(f).name for f in files] == [
            f"{t}.{fmt}" for t in ("labels", "plays", "turns", "surveys", "timings")
        ]
    timings = [json.loads(x) for x in (home / "jsonl" / "timings.jsonl").read_text().splitlines()]
    assert len(timings) == 6 and {t["status"] for t in timings} == {"pending"}


@pytest.mark.parametrize(
    "over,needle",
    [
        ({"annotators": ["ann", "bob_typo"]}, "field 'annotators'"),
        ({"annotators": ["Ann1"]}, "not accounts"),
        ({"kind": "play_agent", "samples": None}, "samples"),
        ({"samples": {"benchmark": "webshop", "count": 10**5}}, "samples.count"),
        ({"samples": {"benchmark": "nope"}}, "unknown benchmark"),
        ({"personas": ["stoic"]}, "field 'personas'"),
        ({"method": "ZZ"}, "field 'method'"),
        ({"overlap": 0}, "overlap"),
    ],
)
def test_a_bad_study_file_is_one_line_and_stores_nothing(home: Path, capsys, over, needle) -> None:
    code, out, err = _cli(home, capsys, "studies", "create", "--from", str(_study(home, **over)))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "pilot.yaml" in lines[0]
    store = Store.open(home / "s.db")
    assert store.conn.execute("SELECT count(*) FROM studies").fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM assignments").fetchone()[0] == 0


def test_export_names_the_action_a_reaction_answers(home: Path, capsys) -> None:
    """A reply to the agent's proposal (a tool call: Buy Now) says which action it answers.

    The ``turns`` row of such a reply used to carry ``agent_message: "env"`` (the action's kind).
    """
    from core.studio.reply_check import send_reply
    from core.studio.roleplay import advance, start_user_play

    # a bundled sample whose symbolic A2 buys a wrong item when every question is declined
    picked = {"benchmark": "webshop", "ids": ["0016d58783be42fa"], "count": 1, "seed": 0}
    _cli(home, capsys, "studies", "create", "--from", str(_study(home, overlap=1, samples=picked)))
    store = Store.open(home / "s.db")
    aid, sample = store.conn.execute(
        "SELECT assignment_id, target_id FROM assignments ORDER BY assignment_id LIMIT 1"
    ).fetchone()
    study = store.conn.execute("SELECT study_id FROM studies").fetchone()[0]
    eid = start_user_play(
        store,
        benchmark="webshop",
        sample_id=sample,
        persona="rational",
        seed=0,
        player="ann",
        strict=True,
        study_id=study,
        assignment_id=aid,
    )
    uv = advance(store, eid)
    reacted = False
    for _ in range(30):
        if uv.ended:
            break
        reacted = reacted or uv.pending_reaction
        text = "No, that's not it." if uv.pending_reaction else "Not sure, you decide."
        uv = send_reply(store, eid, text)
    assert reacted, [e.kind for e in store.events(eid)]
    store.close()
    _cli(home, capsys, "studies", "export", "pilot", "--format", "jsonl", "--out", str(home / "x"))
    turns = [json.loads(x) for x in (home / "x" / "turns.jsonl").read_text().splitlines()]
    reactions = [t for t in turns if t["reply_kind"] == "rejection"]
    assert reactions and all(t["text"] == "No, that's not it." for t in reactions)
    for t in reactions:
        assert t["agent_message"] not in ("", "env")
        assert "buy now" in t["agent_message"].lower(), t["agent_message"]
