"""Name -> Algorithm class (importing this imports torch)."""

from __future__ import annotations

from .base import Algorithm
from .config import ALGORITHM_NAMES
from .dapo import Dapo
from .dgpo import Dgpo
from .drgrpo import DrGrpo
from .grpo import Grpo
from .gspo import Gspo

REGISTRY: dict[str, type[Algorithm]] = {cls.name: cls for cls in (Grpo, DrGrpo, Dapo, Gspo, Dgpo)}
assert tuple(REGISTRY) == ALGORITHM_NAMES
