"""τ²-bench Retail and Airline host worlds, in process.

Public API:

* :func:`load_tau2_world` / :func:`load_tau2_world_from_payload` → :class:`Tau2World`
  (a :class:`core.envs.base.HostWorld`);
* :func:`golden_report` — replay every task's golden actions (``driftbench env golden``);
* :func:`read_domain_dir` / :func:`import_domain` — ``driftbench import tau2``;
* :func:`generate_bundled` — the seeded generator of the bundled worlds under ``data/``.

Modules: ``schema`` (τ²'s typing), ``db`` (copy-on-write engine and state hash), ``toolkit``
(dispatch and generic tools), ``retail`` / ``airline`` (tool tables; their docstrings list the
upstream quirks reproduced), ``tasks`` (task models), ``loader`` (validation and caching),
``world`` (world and sessions), ``grading`` (replay-and-hash, communicate check),
``adapter`` (intents), ``importer`` and ``generate``.
"""

from pathlib import Path

from core.envs.tau2.grading import golden_report
from core.envs.tau2.importer import import_domain
from core.envs.tau2.loader import read_domain_dir
from core.envs.tau2.world import (
    Tau2Session,
    Tau2World,
    load_tau2_world,
    load_tau2_world_from_payload,
)


def generate_bundled(domain: str, seed: int, out_dir: Path) -> None:
    """Generate a bundled world; see :func:`core.envs.tau2.generate.generate_bundled`."""
    from core.envs.tau2.generate import generate_bundled as _generate

    _generate(domain, seed, out_dir)


__all__ = [
    "Tau2Session",
    "Tau2World",
    "generate_bundled",
    "golden_report",
    "import_domain",
    "load_tau2_world",
    "load_tau2_world_from_payload",
    "read_domain_dir",
]
