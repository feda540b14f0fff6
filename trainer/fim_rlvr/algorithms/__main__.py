"""`python -m fim_rlvr.algorithms [--json]`: the algorithms, a line each, and their paper defaults."""

from __future__ import annotations

import argparse
import json
import sys

from . import describe


def _value(value: object) -> str:
    return "null" if value is None else json.dumps(value)


def render_table() -> str:
    """A plain-text table: one block per algorithm with its description and its non-GRPO defaults."""
    entries = describe()
    width = max(len(entry["name"]) for entry in entries)
    lines: list[str] = []
    for entry in entries:
        lines.append(f"{entry['name']:<{width}}  {entry['description']}")
        lines.append(f"{'':<{width}}  paper: {entry['paper']}")
        defaults = entry["defaults"]
        shown = ", ".join(f"{key}={_value(defaults[key])}" for key in ("epsilon", "epsilon_high", "beta"))
        extra = ", ".join(
            f"{key}={_value(value)}"
            for key, value in entry["differs_from_grpo"].items()
            if key not in ("epsilon", "epsilon_high", "beta")
        )
        lines.append(f"{'':<{width}}  defaults: {shown}{', ' + extra if extra else ''}")
        if entry["embedded_model"]:
            runs = ", ".join(f"{key}={_value(value)}" for key, value in entry["embedded_model"].items())
            lines.append(f"{'':<{width}}  on the embedded model (the quick start): {runs}, set in")
            lines.append(f"{'':<{width}}    {entry['embedded_model_source']}; a --model run uses the paper's")
    lines.append("")
    lines.append("Every option (--algo-config JSON, or algo_config in --config FILE): see docs/ALGORITHMS.md;")
    lines.append("--json prints each algorithm's full defaults.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fim_rlvr.algorithms", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the list as JSON")
    args = parser.parse_args(argv)
    if args.json:
        json.dump(describe(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(render_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
