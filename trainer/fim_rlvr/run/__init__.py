"""The run: the Trainer (eval, SFT, RL, eval), its record files and reports, measurements, the stdio server and the
ranks of a distributed run. May import every layer below."""
