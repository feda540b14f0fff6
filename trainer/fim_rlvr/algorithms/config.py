"""AlgorithmConfig: every option of every algorithm, with each algorithm's paper default.

Option names follow TRL's GRPOConfig where TRL has the concept (`epsilon`, `epsilon_high`, `beta`,
`max_completion_length`, `num_generations`, `mask_truncated_completions`), so a TRL user's
`--algo-config` carries over. `PAPER_DEFAULTS` holds, per algorithm, the values that differ from
the field defaults below (which are GRPO's).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UserError
from ..core.protocol import ALGORITHM_NAMES as ALGORITHM_NAMES  # the wire's AlgorithmName, for the registry and catalog


class ConfigError(UserError, ValueError):
    """A user-supplied algorithm option is unknown, of the wrong type or out of range."""


@dataclass(frozen=True)
class AlgorithmConfig:
    """Options of the GRPO family. Field defaults are GRPO's (DeepSeekMath, arXiv 2402.03300)."""

    epsilon: float = 0.2
    """Lower clip range: the ratio is clipped from below at 1 - epsilon. Paper defaults: grpo, drgrpo,
    dapo, dgpo 0.2; gspo 3e-4 (GSPO clips the sequence ratio, which stays much closer to 1)."""

    epsilon_high: float | None = None
    """Upper clip range: the ratio is clipped from above at 1 + epsilon_high; None means epsilon (the
    symmetric PPO clip). Paper defaults: dapo 0.28 ("clip-higher"); gspo 4e-4; the others None."""

    beta: float = 0.04
    """Coefficient of the k3 KL estimate exp(ref - logp) - (ref - logp) - 1 against the reference
    model. Needs `ref_logp` in `loss`. Paper defaults: grpo and dgpo 0.04; drgrpo, dapo, gspo 0
    (their objectives carry no KL term)."""

    max_completion_length: int | None = None
    """Generation budget in tokens. Dr. GRPO divides the summed token terms by this constant; DAPO's
    overlong shaping uses it as L_max. None: the trainer sets it to its own `max_new_tokens` (a
    paper's budget belongs to that paper's model, e.g. DAPO's 20,480)."""

    num_generations: int | None = None
    """Completions sampled per prompt (the group size G). None: the trainer's `group_size`. The
    papers used 64 (GRPO) and 16 (DAPO) on large models; the objectives do not depend on it."""

    dpo_beta: float = 0.1
    """dgpo only: the DPO temperature applied to the (better - worse) log-ratio margin (0.1 is the
    DPO paper's usual value)."""

    dpo_coef: float = 1.0
    """dgpo only: weight of the DPO pair term added to the GRPO loss (our definition; equal weight)."""

    overlong_shaping: bool = False
    """Add DAPO's soft overlong penalty to the rewards (0 up to L_max - cache, then linear down to -1
    at L_max, -1 beyond). Paper default: dapo True; others False."""

    overlong_cache_len: int | None = None
    """DAPO's soft punishment cache L_cache in tokens. None: one fifth of max_completion_length, the
    paper's ratio (4,096 of 20,480)."""

    mask_truncated_completions: bool = False
    """Drop completions that hit the budget without ending from the loss (DAPO's overlong filtering;
    TRL's option name). False for every algorithm, dapo included (the paper turns it on): running past the
    budget is the model's doing, and nothing the model chooses may escape its penalty (fim_rlvr.core.outcomes).
    The dapo preset penalises truncation through overlong_shaping instead; set True to reproduce the paper."""

    dynamic_sampling: bool = False
    """Over-sample and drop groups whose rewards are all equal (they carry no gradient), refilling
    the batch. Paper default: dapo True; others False."""

    max_sampling_rounds: int = 3
    """With dynamic_sampling: at most this many generation rounds per step; after that the step trains
    on the informative groups it has (the paper samples until full, which never ends on a task set
    the model always passes or always fails)."""

    vllm_importance_sampling_correction: bool = True
    """When rollouts come from vLLM: weight each token's policy term by the truncated importance ratio
    between the trainer's and vLLM's log-probs of the sampled tokens (see importance.py). TRL's option
    and default. Without vLLM (the transformers backend) there is no mismatch and nothing is weighted."""

    vllm_importance_sampling_mode: str = "sequence_mask"
    """How the ratio is formed and bounded, TRL's modes and default: "token_truncate" (per token, clipped
    to [clip_min, clip_max]: the token-level TIS of Yao et al.), "token_mask" (per token, zero outside
    the bounds), "sequence_truncate" and "sequence_mask" (one ratio per sequence from the summed
    log-prob differences)."""

    vllm_importance_sampling_clip_max: float | None = 3.0
    """Upper bound C_max of the importance ratio (TRL's default 3.0); None: no upper bound."""

    vllm_importance_sampling_clip_min: float | None = None
    """Lower bound C_min of the importance ratio (TRL's default None: no lower bound)."""

    def to_dict(self) -> dict[str, Any]:
        """The options as a plain JSON-ready dict (for config.json)."""
        return dataclasses.asdict(self)

    def unset_meanings(self) -> dict[str, str]:
        """What each option left at None does in this run, in words, for report.html's configuration table (which
        never shows a bare null)."""
        meanings = {
            "epsilon_high": f"epsilon ({self.epsilon:g}): the symmetric clip",
            "max_completion_length": "the trainer's max_new_tokens",
            "num_generations": "the trainer's group_size",
            "overlong_cache_len": "a fifth of max_completion_length"
            + (f" ({self.cache_len} tokens)" if self.cache_len is not None else ""),
            "vllm_importance_sampling_clip_min": "none: no lower bound",
        }
        return {key: words for key, words in meanings.items() if getattr(self, key) is None}

    @property
    def clip_high(self) -> float:
        """The effective upper clip range (epsilon_high, or epsilon when unset)."""
        return self.epsilon if self.epsilon_high is None else self.epsilon_high

    @property
    def cache_len(self) -> int | None:
        """The effective overlong cache length, or None while max_completion_length is unset."""
        if self.overlong_cache_len is not None:
            return self.overlong_cache_len
        if self.max_completion_length is None:
            return None
        return max(1, self.max_completion_length // 5)


PAPER_DEFAULTS: dict[str, dict[str, Any]] = {
    "grpo": {},
    "drgrpo": {"beta": 0.0},
    "dapo": {
        "epsilon_high": 0.28,
        "beta": 0.0,
        "overlong_shaping": True,
        "dynamic_sampling": True,
    },
    "gspo": {"epsilon": 3e-4, "epsilon_high": 4e-4, "beta": 0.0},
    "dgpo": {"dpo_beta": 0.1, "dpo_coef": 1.0},
}

VALID_KEYS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(AlgorithmConfig))

_NON_NEGATIVE_FLOATS = (
    "epsilon",
    "epsilon_high",
    "beta",
    "dpo_beta",
    "dpo_coef",
    "vllm_importance_sampling_clip_max",
    "vllm_importance_sampling_clip_min",
)
_POSITIVE_INTS = ("max_completion_length", "num_generations", "overlong_cache_len", "max_sampling_rounds")
_BOOLS = ("overlong_shaping", "mask_truncated_completions", "dynamic_sampling", "vllm_importance_sampling_correction")
_OPTIONAL = (
    "epsilon_high",
    "max_completion_length",
    "num_generations",
    "overlong_cache_len",
    "vllm_importance_sampling_clip_max",
    "vllm_importance_sampling_clip_min",
)
TIS_MODES = ("token_truncate", "token_mask", "sequence_truncate", "sequence_mask")
"""vllm_importance_sampling_mode's values (TRL's); importance.py imports them from here."""


def _check_name(name: str) -> None:
    if name not in PAPER_DEFAULTS:
        raise ConfigError(f"unknown algorithm {name!r}; choose one of: {', '.join(ALGORITHM_NAMES)}")


def _check_value(key: str, value: object) -> None:
    """Raise ConfigError unless `value` fits option `key` (type and range)."""
    if value is None and key in _OPTIONAL:
        return
    if key == "vllm_importance_sampling_mode":
        if value not in TIS_MODES:
            raise ConfigError(f"algorithm option {key} must be one of {', '.join(TIS_MODES)}, got {value!r}")
        return
    if key in _BOOLS:
        if not isinstance(value, bool):
            raise ConfigError(f"algorithm option {key} must be true or false, got {value!r}")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"algorithm option {key} must be a number, got {value!r}")
    if key in _POSITIVE_INTS:
        if not isinstance(value, int) or value < 1:
            raise ConfigError(f"algorithm option {key} must be a whole number >= 1, got {value!r}")
        return
    if key in _NON_NEGATIVE_FLOATS and (not math.isfinite(value) or value < 0):
        raise ConfigError(f"algorithm option {key} must be a finite number >= 0, got {value!r}")
    if key == "epsilon" and value >= 1:
        raise ConfigError(
            f"algorithm option epsilon must be below 1 (the ratio is clipped at 1 - epsilon), got {value!r}"
        )


def check_overrides(overrides: Mapping[str, object]) -> None:
    """Raise ConfigError naming the valid keys if any key is unknown, or naming the bad value."""
    unknown = sorted(k for k in overrides if k not in VALID_KEYS)
    if unknown:
        raise ConfigError(
            f"unknown algorithm option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"valid options: {', '.join(VALID_KEYS)}"
        )
    for key, value in overrides.items():
        _check_value(key, value)


def paper_defaults(name: str) -> AlgorithmConfig:
    """The configuration published with algorithm `name`."""
    _check_name(name)
    return AlgorithmConfig(**PAPER_DEFAULTS[name])


def resolve(name: str, *layers: AlgorithmConfig | Mapping[str, object] | None) -> AlgorithmConfig:
    """`name`'s paper defaults with each layer merged over them in order (later layers win).

    A layer is a dict of overrides (checked: unknown keys and bad values raise ConfigError) or a
    whole AlgorithmConfig (taken as is, replacing everything before it).
    """
    config = paper_defaults(name)
    for layer in layers:
        if layer is None:
            continue
        if isinstance(layer, AlgorithmConfig):
            config = layer
            continue
        check_overrides(layer)
        checked: dict[str, Any] = dict(layer)  # types were just checked per key
        config = dataclasses.replace(config, **checked)
    low, high = config.vllm_importance_sampling_clip_min, config.vllm_importance_sampling_clip_max
    if low is not None and high is not None and low > high:
        raise ConfigError(
            f"vllm_importance_sampling_clip_min ({low}) must not exceed vllm_importance_sampling_clip_max ({high})"
        )
    cache, budget = config.overlong_cache_len, config.max_completion_length
    if cache is not None and budget is not None and cache > budget:
        raise ConfigError(
            f"overlong_cache_len ({cache}) must not exceed max_completion_length ({budget}): the soft penalty "
            "covers the last overlong_cache_len tokens of the budget"
        )
    return config


def overrides_from_json(text: str) -> dict[str, object]:
    """Parse `--algo-config JSON` into a dict of overrides (not yet checked against the keys)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"--algo-config is not valid JSON ({error.msg} at character {error.pos}); "
            """write an object such as '{"epsilon": 0.2, "beta": 0.0}'"""
        ) from None
    if not isinstance(value, dict):
        raise ConfigError(f"--algo-config must be a JSON object of options, got {type(value).__name__}")
    return value


def overrides_from_file(path: str | Path) -> dict[str, object]:
    """Read algorithm options from a YAML or JSON file (JSON is YAML, so one parser reads both).

    The file is either a mapping of algorithm options, or a trainer config file (it has an
    `algorithm` or `algo_config` key: the file `--config FILE` names) whose `algo_config` mapping
    holds them; the trainer's other keys are ignored here.
    """
    import yaml  # here, not at the top: listing the algorithms needs neither YAML nor torch

    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read config file {file}: {error.strerror}; check the path") from None
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"config file {file} is not valid YAML or JSON: {error}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"config file {file} must hold a mapping of options, got {type(value).__name__}")
    if "algo_config" in value or "algorithm" in value:
        nested = value.get("algo_config")
        if nested is None:
            return {}
        if not isinstance(nested, dict):
            raise ConfigError(f"algo_config in {file} must be a mapping of options, got {type(nested).__name__}")
        return nested
    return value


def load(name: str, algo_config: str | None = None, config_file: str | Path | None = None) -> AlgorithmConfig:
    """The CLI's resolution: paper defaults < `--config FILE` < `--algo-config JSON`."""
    from_file = overrides_from_file(config_file) if config_file is not None else None
    from_json = overrides_from_json(algo_config) if algo_config is not None else None
    return resolve(name, from_file, from_json)
