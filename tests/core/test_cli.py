import json
import os

import pytest

from core.cli import main


def test_help_lists_commands(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for cmd in ("init", "doctor", "import", "env", "app"):
        assert cmd in out


def test_no_command_is_usage_error(capsys) -> None:
    assert main([]) == 2


def test_doctor_json(store_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value")
    assert main(["--store", str(store_path), "doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) >= {"versions", "store", "providers", "offline"}
    from core.store import STORE_SCHEMA_VERSION

    assert report["store"]["schema_version"] == STORE_SCHEMA_VERSION
    assert "openai" in report["providers"]
    assert "sk-test-secret-value" not in json.dumps(report)
    assert report["offline"]["LITELLM_OFFLINE_MODE"] is True
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


def test_init_json_shape(store_path, capsys) -> None:
    assert main(["--store", str(store_path), "init", "--no-demo", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= {"store", "worlds", "samples", "runs"}
    assert result["store"] == str(store_path)


def test_bad_directory_is_exit_2(tmp_path, capsys) -> None:
    code = main(["import", "tau2", "--domain", "retail", "--from", str(tmp_path / "missing")])
    assert code == 2
    assert "no such directory" in capsys.readouterr().err


def test_unknown_benchmark_is_exit_2(capsys) -> None:
    assert main(["env", "golden", "--benchmark", "nope"]) == 2


@pytest.mark.parametrize(
    "argv", [["init", "--help"], ["doctor", "--help"], ["env", "golden", "--help"]]
)
def test_every_command_has_help(argv, capsys) -> None:
    assert main(argv) == 0
