"""Train with TRL's GRPOTrainer on a FIM-RLVR dataset, rewarded by our verifier service.

    npm run build && node dist/cli.js export lean-env --out out/dataset
    node dist/cli.js serve --project lean-env --dataset out/dataset --simulator     # prints 127.0.0.1:8470
    PYTHONPATH=trainer trainer/.venv/bin/python examples/trl_grpo.py --dataset out/dataset --service 127.0.0.1:8470

`--start-service` starts the service itself (with the simulator) for a dry run. `--model DIR` trains a Hugging Face
causal LM; without it, the trainer's embedded tiny model is built locally (nothing is downloaded). Verdicts from the
simulator are a dry run, not Lean: drop --simulator from `serve` (with `lake` on PATH) for real rewards.

`--async-trainer --vllm-server URL` trains with TRL's `AsyncGRPOTrainer` instead: generation runs on a vLLM server
serving the same model (started as TRL's AsyncGRPO documentation says), the reward is pickled into the trainer's
rollout worker process and builds its client there, and the prompts are chat messages. That trainer needs CUDA (its
loss runs FlashAttention-3 from the Hub's `kernels`, its weight sync NCCL); the test suite runs this same script on
CPU with those parts replaced (trainer/tests/async_grpo_cpu.py says exactly which).
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from fim_rlvr.integrations.datasets_view import load_view
from fim_rlvr.integrations.trl import lean_reward
from fim_rlvr.tasks.data import lean_texts, load_tasks

REPO = Path(__file__).resolve().parents[1]


def start_service(dataset: str) -> tuple[subprocess.Popen[str], str]:
    """`fim-rlvr serve --simulator` on a free loopback port; returns the process and its HOST:PORT."""
    node = shutil.which("node")
    cli = REPO / "dist" / "cli.js"
    if node is None or not cli.exists():
        sys.exit("--start-service needs node and dist/cli.js: run `npm ci && npm run build` first")
    args = [
        node,
        str(cli),
        "serve",
        "--project",
        str(REPO / "lean-env"),
        "--dataset",
        dataset,
        "--simulator",
    ]
    process = subprocess.Popen([*args, "--port", "0"], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        found = re.search(r"listening on (\S+)", line)
        if found:
            print(line.strip(), file=sys.stderr)
            return process, found.group(1)
    sys.exit("the verifier service did not start (see its messages above)")


def shared_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings both trainers' configs take from the command line."""
    import torch

    return {
        "output_dir": args.output_dir,
        "max_steps": args.max_steps,
        "per_device_train_batch_size": args.batch_size,
        "num_generations": args.num_generations,
        "max_completion_length": args.max_completion_length,
        "learning_rate": args.learning_rate,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "use_cpu": not torch.cuda.is_available(),
    }


def with_chat_template(tokenizer: Any) -> None:
    """Qwen2.5's chat template (shipped with TRL, which parses replies of the templates it knows) and its two
    special tokens, for the embedded tokenizer, which has no template; the end of a turn ends a completion."""
    from trl.chat_template_utils import qwen2_5_chat_template

    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tokenizer.eos_token = "<|im_end|>"
    tokenizer.chat_template = qwen2_5_chat_template


def async_trainer(args: argparse.Namespace, model: Any, tokenizer: Any, train: Any, reward: Any) -> Any:
    """TRL's AsyncGRPOTrainer, which loads the model from a folder (the vLLM server serves the same one) and applies
    the tokenizer's chat template to the prompts: the embedded tiny model is saved first."""
    from trl.experimental.async_grpo import AsyncGRPOConfig, AsyncGRPOTrainer

    model_dir = args.model
    if model_dir is None:
        model_dir = str(Path(args.output_dir) / "model")
        model.save_pretrained(model_dir)
        tokenizer.save_pretrained(model_dir)
    config = AsyncGRPOConfig(**shared_settings(args), vllm_server_base_url=args.vllm_server)
    return AsyncGRPOTrainer(
        model=model_dir,
        reward_funcs=reward,
        args=config,
        train_dataset=train,
        processing_class=tokenizer,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True, help="a folder written by `fim-rlvr export`")
    parser.add_argument(
        "--service",
        action="append",
        help="HOST:PORT of a verifier service (repeat to balance)",
    )
    parser.add_argument("--token", help="the service's token (printed by `fim-rlvr serve`)")
    parser.add_argument(
        "--start-service",
        action="store_true",
        help="start a local simulator service (dry run)",
    )
    parser.add_argument(
        "--model",
        help="a Hugging Face causal LM folder (default: the embedded tiny model)",
    )
    parser.add_argument("--kinds", default="tactic", help="hole kinds to train on, comma-separated")
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=8, help="completions per device step")
    parser.add_argument(
        "--num-generations",
        type=int,
        default=4,
        help="completions per prompt (a GRPO group)",
    )
    parser.add_argument("--max-completion-length", type=int, default=32)
    parser.add_argument(
        "--max-prompt-tokens",
        type=int,
        default=256,
        help="prompts are fitted to this many tokens",
    )
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--output-dir", default="out/trl-grpo")
    parser.add_argument(
        "--async-trainer",
        action="store_true",
        help="TRL's AsyncGRPOTrainer (needs --vllm-server)",
    )
    parser.add_argument(
        "--vllm-server",
        help="base URL of the vLLM server the async trainer generates with",
    )
    args = parser.parse_args()
    if args.async_trainer and not args.vllm_server:
        sys.exit("--async-trainer generates on a vLLM server: give --vllm-server URL (e.g. http://localhost:8000)")

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    process = None
    services = args.service or []
    if args.start_service:
        process, address = start_service(args.dataset)
        services.append(address)
    if not services:
        sys.exit("give --service HOST:PORT (start one with `fim-rlvr serve`), or --start-service for a dry run")
    try:
        if args.model:
            tokenizer = AutoTokenizer.from_pretrained(args.model)
            model = AutoModelForCausalLM.from_pretrained(args.model)
        else:
            from fim_rlvr.model.tiny_model import build_model, train_tokenizer

            tokenizer = train_tokenizer(lean_texts(args.dataset, load_tasks(args.dataset)))
            if args.async_trainer:
                with_chat_template(tokenizer)
            model = build_model(tokenizer, seed=0)
        train = load_view(
            args.dataset,
            split="train",
            kinds=args.kinds.split(","),
            tokenizer=tokenizer,
            max_prompt_tokens=args.max_prompt_tokens,
            prompt_format="messages" if args.async_trainer else "text",
        )
        # The async trainer awaits an async reward on its rollout worker's event loop, beside its generation requests.
        reward = lean_reward(services, token=args.token, asynchronous=args.async_trainer)
        if args.async_trainer:
            trainer = async_trainer(args, model, tokenizer, train, reward)
        else:
            bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
            config = GRPOConfig(**shared_settings(args), bf16=bf16)
            trainer = GRPOTrainer(
                model=model,
                reward_funcs=reward,
                args=config,
                train_dataset=train,
                processing_class=tokenizer,
            )
        trainer.train()
        last = [e for e in trainer.state.log_history if "reward" in e]
        if last:
            print(f"last step: reward {last[-1]['reward']:.3f}", file=sys.stderr)
        reward.close()
    finally:
        if process is not None:
            process.send_signal(signal.SIGINT)
            process.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
