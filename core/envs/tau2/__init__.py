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

Faithfulness: the state hash is τ²-bench's ``sha256(json.dumps(model_dump(), sort_keys=True,
default=str))`` over τ²'s typing (optional fields as null, gift-card/certificate amounts and
retail prices as floats, unknown nested keys dropped). Upstream quirks reproduced on purpose
(the golden states depend on them):

* retail ``modify_pending_order_items`` gives every modified item the last new variant's price
  and options, and records the unrounded ``abs(diff)`` as payment (τ²-bench #317/#318);
* retail cancellation and item changes need status exactly ``pending``; address and payment
  changes accept any status containing ``pending``;
* retail exchanges/returns store sorted id lists; exchanges record the price difference
  (rounded) but no payment; gift-card balances are rounded to 2 after each change;
* airline ``cancel_reservation`` and ``update_reservation_flights`` leave seat inventory
  unchanged; no policy rule is enforced by any tool;
* airline ``search_onestop_flight`` builds the next day without zero padding and compares
  ``leave_after`` as strings;
* airline baggage updates store raw counts (``2.0`` stays a float); certificates used in a
  booking are removed whatever their value; gift cards are debited without rounding;
* fixed clock ``2024-05-15T15:00:00``; reservation ids HATHAT/HATHAU/HATHAV; certificate ids
  certificate_3221322..4;
* a tool that raises half-way keeps the mutations made so far (no rollback); every exception
  becomes ``Error: <message>``; arguments are passed through without coercion.

Deliberate deviations: ``calculate`` evaluates the allowed characters with an AST walker
instead of ``eval`` and refuses exponents above 10,000; ``think`` (commented out upstream) is
offered as a generic no-op tool; initial states with a message history are rejected at load.
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
