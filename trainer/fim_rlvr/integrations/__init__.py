"""Our verifier inside other RL stacks, through the verifier service (`fim-rlvr serve`).

- `fim_rlvr.integrations.trl`: reward functions for TRL's GRPOTrainer (sync and async).
- `fim_rlvr.integrations.verl`: `compute_score` for verl's custom reward function.

Both take their rows from `fim_rlvr.integrations.datasets_view` and their verdicts from `fim_rlvr.verifier.client`.
"""
