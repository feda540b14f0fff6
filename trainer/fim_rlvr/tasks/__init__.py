"""Tasks as text: the dataset, prompts from holes, completions cleaned into candidates, repair prompts, the
curriculum. Pure Python over core/ (no torch); lean-bridge/models/ ports the prompts and the cleaning."""
