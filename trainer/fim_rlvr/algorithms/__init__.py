"""The GRPO family under their published names: `make(name, config)` returns an Algorithm.

    algo = make("dapo", {"epsilon_high": 0.3, "max_completion_length": 64})
    adv = algo.advantages(rewards, group_ids)                      # [B]
    loss, metrics = algo.loss(logp, old_logp, mask, adv, ref_logp)  # scalar, {name: float}

docs/ALGORITHMS.md states every formula; each module's docstring repeats its own. The tensor parts
(Algorithm, the classes, the advantage functions) load on first use, so listing the algorithms
(`describe`, `python -m fim_rlvr.algorithms`) and checking a config need no torch.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .catalog import CATALOG, describe
from .config import (
    ALGORITHM_NAMES,
    PAPER_DEFAULTS,
    VALID_KEYS,
    AlgorithmConfig,
    ConfigError,
    check_overrides,
    load,
    overrides_from_file,
    overrides_from_json,
    paper_defaults,
    resolve,
)

if TYPE_CHECKING:
    from .base import Algorithm, Metrics
    from .dapo import Dapo
    from .dgpo import Dgpo
    from .drgrpo import DrGrpo
    from .groups import GroupIds, group_centred_advantages, group_normalised_advantages
    from .grpo import Grpo
    from .gspo import Gspo

_LAZY = {
    "Algorithm": ".base",
    "Metrics": ".base",
    "GroupIds": ".groups",
    "group_centred_advantages": ".groups",
    "group_normalised_advantages": ".groups",
    "Grpo": ".grpo",
    "DrGrpo": ".drgrpo",
    "Dapo": ".dapo",
    "Gspo": ".gspo",
    "Dgpo": ".dgpo",
    "REGISTRY": ".registry",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make(name: str, config: AlgorithmConfig | Mapping[str, object] | None = None) -> Algorithm:
    """The algorithm `name` with `config`: a whole AlgorithmConfig, or a dict of overrides merged over
    the algorithm's paper defaults. Unknown names or keys raise ConfigError (a ValueError) listing the
    valid ones."""
    resolved = resolve(name, config)  # checks the name and the keys before torch loads
    from .registry import REGISTRY

    return REGISTRY[name](resolved)


__all__ = [
    "ALGORITHM_NAMES",
    "CATALOG",
    "PAPER_DEFAULTS",
    "VALID_KEYS",
    "Algorithm",
    "AlgorithmConfig",
    "ConfigError",
    "Dapo",
    "Dgpo",
    "DrGrpo",
    "GroupIds",
    "Grpo",
    "Gspo",
    "Metrics",
    "check_overrides",
    "describe",
    "group_centred_advantages",
    "group_normalised_advantages",
    "load",
    "make",
    "overrides_from_file",
    "overrides_from_json",
    "paper_defaults",
    "resolve",
]
