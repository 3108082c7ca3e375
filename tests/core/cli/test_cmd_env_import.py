import io
import json

import pytest

from core.cli import main
from core.store import Store
from tests.conftest import require_hostdata

RETAIL_T0 = "a109be174767fde0ebb50fe3be37cdb2f1ce017fefd7bd29ea3e4d38bd3ac25a"
RETAIL_INIT = "b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c"


@pytest.mark.parametrize("benchmark", ["tau2_retail", "tau2_airline"])
def test_env_golden_bundled_tau2(benchmark, capsys) -> None:
    assert main(["env", "golden", "--benchmark", benchmark, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"benchmark", "initial_state_hash", "tasks"}
    assert out["tasks"] and all(
        set(t) == {"task_id", "final_state_hash", "tool_errors", "ms"} for t in out["tasks"]
    )


def test_env_golden_webshop_all_rewards_one(capsys) -> None:
    assert main(["env", "golden", "--benchmark", "webshop", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["all_one"] is True and len(out["tasks"]) >= 500


def test_env_golden_shared_retail_task0(capsys) -> None:
    retail = require_hostdata("tau2_retail")
    code = main(
        [
            "env",
            "golden",
            "--benchmark",
            "tau2_retail",
            "--data",
            str(retail),
            "--task",
            "0",
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["initial_state_hash"] == RETAIL_INIT
    assert out["tasks"] == [out["tasks"][0]] and out["tasks"][0]["final_state_hash"] == RETAIL_T0


def test_import_tau2_shared_then_store_has_world(store_path, capsys) -> None:
    retail = require_hostdata("tau2_retail")
    assert (
        main(
            [
                "--store",
                str(store_path),
                "import",
                "tau2",
                "--domain",
                "retail",
                "--from",
                str(retail),
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out == {"domain": "retail", "tasks": 114, "initial_state_hash": RETAIL_INIT}
    worlds = Store.open(store_path).list_worlds("tau2_retail")
    assert len(worlds) == 1 and worlds[0]["source"] == str(retail)


def test_env_golden_unknown_task_is_exit_2(capsys) -> None:
    assert main(["env", "golden", "--benchmark", "tau2_airline", "--task", "no-such-task"]) == 2
    assert "task" in capsys.readouterr().err


def test_env_play_tau2_terminal(monkeypatch, capsys) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("tools\nlist_all_airports {}\nnope {}\nquit\n"))
    assert main(["env", "play", "--benchmark", "tau2_airline"]) == 0
    out = capsys.readouterr().out
    assert "list_all_airports" in out and "unknown tool 'nope'" in out


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_import_tau2_check_passes_on_the_bundled_domain(domain, store_path, capsys) -> None:
    from core.envs.tau2.world import bundled_dir

    args = ["--store", str(store_path), "import", "tau2", "--domain", domain]
    assert main([*args, "--from", str(bundled_dir(domain)), "--check", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["check"] == {"passed": True, "problems": []}


def test_import_check_names_each_problem_and_exits_1(store_path, capsys, monkeypatch) -> None:
    from core.envs.check import Problem
    from core.envs.tau2.world import bundled_dir

    broken = [Problem(code="golden-rejected", hook="judge", detail="t0: reason")]
    monkeypatch.setattr("core.envs.check.check_world", lambda world: broken)
    args = ["--store", str(store_path), "import", "tau2", "--domain", "retail"]
    assert main([*args, "--from", str(bundled_dir("retail")), "--check"]) == 1
    text = capsys.readouterr().out
    assert "world check: 1 problem(s)" in text and "golden-rejected [judge]: t0: reason" in text
