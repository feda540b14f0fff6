"""The one name of each environment setting that points a process at a verifier service.

`FIM_RLVR_VERIFIER_SERVICE` (`HOST:PORT`, several comma-separated to balance) and `FIM_RLVR_VERIFIER_TOKEN` are the
names; `FIM_RLVR_SERVICE` and `FIM_RLVR_TOKEN`, which the verl adapter's documentation used, are still read when the
new name is not set, with a warning that says which name to set instead.
"""

from __future__ import annotations

import os
import warnings

SERVICE_ENV = "FIM_RLVR_VERIFIER_SERVICE"
"""HOST:PORT of the verifier service(s) a process checks its candidates with; several, comma-separated, are balanced."""
TOKEN_ENV = "FIM_RLVR_VERIFIER_TOKEN"
"""The token of the service(s) named by FIM_RLVR_VERIFIER_SERVICE, if they have one."""

OLD_NAMES = {SERVICE_ENV: "FIM_RLVR_SERVICE", TOKEN_ENV: "FIM_RLVR_TOKEN"}
"""The names each setting had before, read (with a warning) when the name is not set."""


def setting(name: str) -> str | None:
    """The value of SERVICE_ENV or TOKEN_ENV, or of its old name (warning once per call that it is old)."""
    value = os.environ.get(name)
    if value is not None:
        return value
    old = OLD_NAMES.get(name)
    if old is not None and old in os.environ:
        warnings.warn(f"{old} is an old name: set {name} instead (read {old} this time)", FutureWarning, stacklevel=2)
        return os.environ[old]
    return None
