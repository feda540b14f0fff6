"""The vocabulary every layer shares: the wire protocol, the masking rule, the run's config, the errors a user
can fix, atomic files. Imports nothing of fim_rlvr outside core/, and no torch."""
