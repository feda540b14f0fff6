"""fim_rlvr: GRPO-family RL on Lean 4 fill-in-the-middle holes, rewarded by Lean through the FIM-RLVR host.

Run by the host as `python -m fim_rlvr --stdio` (JSON-RPC over stdio; see protocol.py). Public API of the
objectives: `fim_rlvr.algorithms.make(name, config)`.
"""

__version__ = "0.1.0"
