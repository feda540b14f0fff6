"""Our dataset as 🤗 `datasets` rows with the columns TRL and verl expect.

TRL (GRPOTrainer): `prompt` plus the task fields the reward function needs, which TRL passes to it as keyword
columns: `task_id` (the service's item key), `indent` (to re-indent a completion), `fim` and `stops` (how the
prompt was written, so a completion is cleaned as our own trainer cleans it), and `kind`, `split`, `file` for
logging. verl: `data_source`, `prompt` (chat messages), `ability`, `reward_model` (`ground_truth` is the task id)
and `extra_info` (the same fields), as verl's RL datasets are laid out.

    from fim_rlvr.integrations.datasets_view import load_view
    train = load_view("out/dataset", split="train", tokenizer=tokenizer)   # a datasets.Dataset

Without a tokenizer, prompts use the Qwen FIM tokens and are not cut to a token budget. `prompt_format="messages"`
gives chat-message prompts instead (`[{"role": "user", "content": …}]`, TRL's conversational format, which
`AsyncGRPOTrainer` needs): the instruction of the chat prompt, the chat template left to the trainer, and the
reward told to read the answer's ```lean block (`fim` False).

    chat = load_view("out/dataset", split="train", tokenizer=tokenizer, prompt_format="messages")
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..tasks.data import Task, load_tasks
from ..tasks.prompts import FIM_CONVENTIONS, PromptStyle, build_messages, build_prompt, detect_style

DATA_SOURCE = "fim-rlvr-lean"
"""verl's `data_source` for our rows; `fim_rlvr.integrations.verl.compute_score` scores only these."""

TRL_COLUMNS = ("prompt", "task_id", "kind", "split", "file", "indent", "fim", "stops")
PROMPT_FORMATS = ("text", "messages")
"""A row's prompt: the text our trainer feeds the model, or chat messages for a trainer that applies the template."""


class _WholeText:
    """Stands in for a tokenizer when none is given: every character is a token, so nothing is cut."""

    def __call__(self, text: str, **_: Any) -> dict[str, Any]:
        return {"input_ids": list(range(len(text))), "offset_mapping": [(k, k + 1) for k in range(len(text))]}


def _style(tokenizer: Any | None) -> PromptStyle:
    if tokenizer is not None:
        return detect_style(tokenizer)
    qwen = FIM_CONVENTIONS[0]
    return PromptStyle("fim", qwen, False, qwen.stops)


def iter_trl_rows(
    dataset_dir: str | Path,
    *,
    split: str | None = "train",
    kinds: Sequence[str] | None = None,
    tokenizer: Any | None = None,
    max_prompt_tokens: int = 1024,
    show_goal: bool = True,
    prompt_format: str = "text",
) -> Iterator[dict[str, Any]]:
    """One row per task of the split (all splits for None) and kinds, columns TRL_COLUMNS, one at a time (the
    dataset is indexed, so a million tasks stream through without their text in memory)."""
    if prompt_format not in PROMPT_FORMATS:
        raise ValueError(f"prompt_format must be text or messages (got {prompt_format!r})")
    messages = prompt_format == "messages"
    style = _style(tokenizer)
    budget = max_prompt_tokens if tokenizer is not None else 10**9
    fitter = tokenizer if tokenizer is not None else _WholeText()
    for task in _selected(load_tasks(dataset_dir), split, kinds):
        yield (
            {
                "prompt": (build_messages if messages else build_prompt)(
                    task, style, fitter, show_goal=show_goal, budget=budget
                ),
                "task_id": task.id,
                "kind": task.kind,
                "split": task.split,
                "file": task.file,
                "indent": task.indent,
                "fim": style.mode == "fim" and not messages,
                "stops": list(style.stop_strings),
            }
        )


def trl_rows(dataset_dir: str | Path, **options: Any) -> list[dict[str, Any]]:
    """`iter_trl_rows` as a list."""
    return list(iter_trl_rows(dataset_dir, **options))


def iter_verl_rows(dataset_dir: str | Path, **options: Any) -> Iterator[dict[str, Any]]:
    """The same tasks laid out as verl's RL datasets are (prompt as chat messages, the task id as ground truth)."""
    for index, row in enumerate(iter_trl_rows(dataset_dir, **options)):
        info: dict[str, Any] = {k: row[k] for k in ("task_id", "kind", "split", "file", "indent", "fim", "stops")}
        yield (
            {
                "data_source": DATA_SOURCE,
                "prompt": [{"role": "user", "content": row["prompt"]}],
                "ability": "lean4-proof",
                "reward_model": {"style": "rule", "ground_truth": row["task_id"]},
                "extra_info": info | {"index": index},
            }
        )


def verl_rows(dataset_dir: str | Path, **options: Any) -> list[dict[str, Any]]:
    """`iter_verl_rows` as a list."""
    return list(iter_verl_rows(dataset_dir, **options))


def load_view(dataset_dir: str | Path, *, layout: str = "trl", **options: Any) -> Any:
    """A `datasets.Dataset` of trl_rows (layout "trl") or verl_rows (layout "verl")."""
    from datasets import Dataset

    rows = verl_rows(dataset_dir, **options) if layout == "verl" else trl_rows(dataset_dir, **options)
    return Dataset.from_list(rows)


def write_view(dataset_dir: str | Path, out_dir: str | Path, *, layout: str = "trl", **options: Any) -> list[Path]:
    """One file per split under out_dir: `{split}.jsonl` (trl; `load_dataset("json", ...)`) or `{split}.parquet`
    (verl's `data.train_files`). Returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for split in ("train", "validation", "test"):
        rows = (iter_verl_rows if layout == "verl" else iter_trl_rows)(dataset_dir, split=split, **options)
        first = next(rows, None)
        if first is None:
            continue
        # Written beside the target and renamed over it: a reader never sees half a file. Rows stream through.
        if layout == "verl":
            from datasets import Dataset

            path = out / f"{split}.parquet"
            tmp = path.with_suffix(".parquet.tmp")
            # Parquet is written from a table: one split's rows are held for it (jsonl streams).
            Dataset.from_list(list(_chain(first, rows))).to_parquet(str(tmp))
        else:
            path = out / f"{split}.jsonl"
            tmp = path.with_suffix(".jsonl.tmp")
            with tmp.open("w", encoding="utf-8") as f:
                for row in _chain(first, rows):
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
        tmp.replace(path)
        written.append(path)
    return written


def _chain(first: dict[str, Any], rest: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield first
    yield from rest


def _selected(tasks: list[Task], split: str | None, kinds: Sequence[str] | None) -> list[Task]:
    wanted = set(kinds) if kinds else None
    return [t for t in tasks if (split is None or t.split == split) and (wanted is None or t.kind in wanted)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fim_rlvr.integrations.datasets_view",
        description="Write a dataset exported by `fim-rlvr export` as TRL (jsonl) or verl (parquet) files per split.",
    )
    parser.add_argument("dataset", help="folder written by `fim-rlvr export` (holds tasks.jsonl)")
    parser.add_argument("--out", required=True, help="folder for train/validation/test files")
    parser.add_argument("--layout", choices=("trl", "verl"), default="trl")
    parser.add_argument("--tokenizer", help="a Hugging Face tokenizer folder: its FIM tokens and a prompt budget")
    parser.add_argument("--max-prompt-tokens", type=int, default=1024)
    args = parser.parse_args(argv)
    tokenizer = None
    if args.tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    paths = write_view(
        args.dataset, args.out, layout=args.layout, tokenizer=tokenizer, max_prompt_tokens=args.max_prompt_tokens
    )
    for path in paths:
        print(path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
