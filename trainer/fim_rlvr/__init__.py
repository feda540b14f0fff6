"""fim_rlvr: GRPO-family RL on Lean 4 fill-in-the-middle holes, rewarded by Lean through the FIM-RLVR host.

Run by the host as `python -m fim_rlvr --stdio` (JSON-RPC over stdio; core/protocol.py). The package is layered, each
folder importing only the ones before it: core/ (protocol, masking rule, config, errors), tasks/ and algorithms/,
model/ and verifier/, step/ (one RL step), run/ (the Trainer, the server), integrations/ (tests/test_layers.py).
Public API of the objectives: `fim_rlvr.algorithms.make(name, config)`.
"""

__version__ = "0.1.0"
