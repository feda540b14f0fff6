"""Where a dataset's tasks.jsonl bytes go: `python3 bench/task_bytes.py DATASET_DIR WORKSPACE`.

Prints the workspace's Lean source size, tasks.jsonl's size and their ratio (the issue-14 target: at most 10×),
then, per field of the rows, the bytes it takes (its key, value and comma, as the exporter writes them), per row
and as a share of the file, and how much the longest middles take. Standard library only.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def lean_bytes(workspace: Path) -> int:
    """Bytes of the .lean files the exporter reads (build folders aside)."""
    return sum(
        p.stat().st_size
        for p in workspace.rglob("*.lean")
        if not any(part in (".lake", ".git") for part in p.relative_to(workspace).parts)
    )


def main(dataset: Path, workspace: Path) -> None:
    tasks_path = dataset / "tasks.jsonl"
    source = lean_bytes(workspace)
    total = tasks_path.stat().st_size
    fields: Counter[str] = Counter()
    middles: list[int] = []
    rows = 0
    with tasks_path.open("rb") as f:
        for line in f:
            row = json.loads(line)
            rows += 1
            for key, value in row.items():
                # `"key":value,` as the row holds it (non-ASCII as UTF-8, as the exporter writes it).
                fields[key] += len(json.dumps({key: value}, ensure_ascii=False, separators=(",", ":")).encode()) - 1
            middles.append(len(row["middle"]))
    print(f"workspace  {source:>12,} bytes of Lean in {workspace}")
    ratio = total / source
    print(f"tasks.jsonl {total:>11,} bytes = {ratio:.2f}x the workspace; {rows:,} rows, {total / rows:.0f} bytes each")
    print(f"{'field':<20} {'bytes':>12} {'per row':>8} {'share':>6}")
    for key, n in fields.most_common():
        print(f"{key:<20} {n:>12,} {n / rows:>8.1f} {n / total:>6.1%}")
    middles.sort(reverse=True)
    for limit in (2048, 4096, 8192):
        longer = [m for m in middles if m > limit]
        print(f"middles over {limit:>5} characters: {len(longer):,} rows ({len(longer) / rows:.2%})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python3 bench/task_bytes.py DATASET_DIR WORKSPACE")
    main(Path(sys.argv[1]), Path(sys.argv[2]))
