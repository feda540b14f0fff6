"""The GRPO family under their published names: `make(name, config)` returns an Algorithm.

    algo = make("dapo", {"epsilon_high": 0.3, "max_completion_length": 64})
    adv = algo.advantages(rewards, group_ids)                      # [B]
    loss, metrics = algo.loss(logp, old_logp, mask, adv, ref_logp)  # scalar, {name: float}

docs/ALGORITHMS.md states every formula; each module's docstring repeats its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import Algorithm, Metrics
from .config import (
    ALGORITHM_NAMES,
    PAPER_DEFAULTS,
    VALID_KEYS,
    AlgorithmConfig,
    ConfigError,
    load,
    overrides_from_file,
    overrides_from_json,
    paper_defaults,
    resolve,
)
from .dapo import Dapo
from .dgpo import Dgpo
from .drgrpo import DrGrpo
from .groups import GroupIds, group_centred_advantages, group_normalised_advantages
from .grpo import Grpo
from .gspo import Gspo

REGISTRY: dict[str, type[Algorithm]] = {cls.name: cls for cls in (Grpo, DrGrpo, Dapo, Gspo, Dgpo)}
assert tuple(REGISTRY) == ALGORITHM_NAMES


def make(name: str, config: AlgorithmConfig | Mapping[str, object] | None = None) -> Algorithm:
    """The algorithm `name` with `config`: a whole AlgorithmConfig, or a dict of overrides merged over
    the algorithm's paper defaults. Unknown names or keys raise ConfigError (a ValueError) listing the
    valid ones."""
    if name not in REGISTRY:
        raise ConfigError(f"unknown algorithm {name!r}; choose one of: {', '.join(ALGORITHM_NAMES)}")
    return REGISTRY[name](resolve(name, config))


def describe() -> list[dict[str, Any]]:
    """Each algorithm's name, paper, one-line description and paper defaults (for `fim-rlvr algorithms`)."""
    return [
        {
            "name": name,
            "paper": cls.paper,
            "description": cls.summary,
            "defaults": paper_defaults(name).to_dict(),
            "differs_from_grpo": dict(PAPER_DEFAULTS[name]),
        }
        for name, cls in REGISTRY.items()
    ]


__all__ = [
    "ALGORITHM_NAMES",
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
