"""Who can be enrolled in a study: the studio's accounts.

With a credentials file (``DRIFTBENCH_CREDENTIALS``: password, header and OIDC modes) the
accounts are its users; without one (single-user mode) they are the local user and the people
already registered in the store's annotators table. A study refuses any other id, so a typo
("bob_typo") is an error, never a silently enrolled nobody.
"""

from __future__ import annotations

import os

from core.store import Store
from core.studio.auth import load_credentials
from core.studio.env import settings


def local_user() -> str:
    """The name of the single local user (auth mode ``none``)."""
    return os.environ.get("USER", "local")


def known_accounts(store: Store) -> list[str]:
    """The account names a study may enrol (sorted)."""
    path = settings().credentials
    if path is not None:
        return sorted(load_credentials(path).users)
    from core.studies import list_annotators

    return sorted({local_user(), *(a.annotator_id for a in list_annotators(store))})
