"""The model: the policy and its adapters, precision, rollout backends (transformers, vLLM), log-probs, checkpoints on
disk, exports and the model process of the host's `hf:PATH` backend. Over core/, tasks/ and algorithms/."""
