"""Our verifier inside other RL stacks, through the verifier service (`fim-rlvr serve`).

- `fim_rlvr.integrations.trl`: reward functions for TRL's GRPOTrainer (sync and async).
- `fim_rlvr.integrations.verl`: an async `compute_score` for verl 0.9's reward loop (custom reward function).
- `fim_rlvr.integrations.ray`: a Ray-native verifier pool, one actor per node, each owning its `fim-rlvr serve`.

Both take their rows from `fim_rlvr.integrations.datasets_view` and their verdicts from `fim_rlvr.verifier.client`.
"""
