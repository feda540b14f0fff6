"""The road to Lean: the verifier service's client and waiting on a check while the verifier makes progress. Over
core/ only."""
