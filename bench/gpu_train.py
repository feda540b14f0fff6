"""The Python half of `npm run bench:train -- --gpu` (bench/train.ts drives it; not a user command).

    python bench/gpu_train.py model --dataset DS --out DIR [--size 0.5b|tiny]
        A causal LM built from a config, nothing downloaded: the tokenizer is the embedded model's (a BPE learnt
        on the dataset's Lean text), the body Qwen2.5-0.5B's shape (hidden 896, 14 query and 2 key-value heads,
        MLP 4864) with 32 layers, so that with the small vocabulary it still has about 0.5B parameters. Random
        weights: completions run to max_new_tokens, which gives both loops the same work per step.
    python bench/gpu_train.py trl --model DIR --dataset DS --service HOST:PORT [options]
        TRL's GRPOTrainer on the same model and settings, rewarded by our verifier service (the same verifier
        and dataset our loop uses). Prints one JSON line: completion tokens per second between the end of the
        first step and the end of the last (the first step's compilation and warm-up left out, as for our loop).

Both print a JSON line on stdout and their progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "trainer"))

SIZES: dict[str, dict[str, int]] = {
    # Qwen2.5-0.5B's transformer body, 32 layers deep (its 24 layers with its 151,936-token vocabulary make 0.49B).
    "0.5b": {
        "hidden_size": 896,
        "intermediate_size": 4864,
        "num_hidden_layers": 32,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
    },
    # For exercising this script on a CPU (the bench's --cpu-smoke): same code path, seconds per step.
    "tiny": {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
    },
}


def log(message: str) -> None:
    print(f"gpu_train: {message}", file=sys.stderr, flush=True)


def make_model(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from fim_rlvr.tasks.data import lean_texts, load_tasks
    from fim_rlvr.model.tiny_model import train_tokenizer
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = train_tokenizer(lean_texts(args.dataset, load_tasks(args.dataset)))
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        **SIZES[args.size],
    )
    torch.manual_seed(args.seed)
    model = Qwen2ForCausalLM(config)
    parameters = sum(p.numel() for p in model.parameters())
    if args.dtype == "bfloat16":
        model = model.to(torch.bfloat16)
    out = Path(args.out)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    log(f"built a {parameters / 1e6:.2f}M-parameter Qwen2-shaped model ({args.size}) in {out}")
    return {"parameters": parameters, "path": str(out), "vocab": len(tokenizer)}


def run_trl(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from fim_rlvr.integrations.datasets_view import load_view
    from fim_rlvr.integrations.trl import lean_reward
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    cuda = args.device == "cuda"
    bf16 = cuda and torch.cuda.is_bf16_supported()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16 if bf16 else torch.float32)
    train = load_view(args.dataset, split="train", tokenizer=tokenizer, max_prompt_tokens=args.max_prompt_tokens)
    reward = lean_reward(args.service)
    tokens_by_step: dict[int, int] = {}
    step_ends: dict[int, float] = {}

    class Clock(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, _args: Any, state: Any, _control: Any, **_: Any) -> None:
            if cuda:
                torch.cuda.synchronize()
            step_ends[state.global_step] = time.perf_counter()
            log(f"TRL step {state.global_step}/{args.steps}")

    def counting_reward(prompts: Any, completions: Any, completion_ids: Any = None, **columns: Any) -> Any:
        step = trainer.state.global_step + 1
        tokens_by_step[step] = tokens_by_step.get(step, 0) + sum(len(ids) for ids in completion_ids or [])
        return reward(prompts, completions, completion_ids, **columns)

    counting_reward.__name__ = "lean_verifier"
    config = GRPOConfig(
        output_dir=args.output_dir,
        max_steps=args.steps,
        # TRL counts completions per device step; our loop's batch is `prompts` groups of `group` completions.
        per_device_train_batch_size=args.prompts * args.group,
        num_generations=args.group,
        gradient_accumulation_steps=1,
        max_completion_length=args.max_new_tokens,
        temperature=args.temperature,
        learning_rate=args.learning_rate,
        beta=args.beta,
        loss_type="grpo",
        num_iterations=1,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=not cuda,
        bf16=bf16,
        disable_tqdm=True,
        seed=0,
        dataloader_num_workers=0,
        use_vllm=args.vllm,
        **({"vllm_mode": "colocate", "vllm_gpu_memory_utilization": 0.3} if args.vllm else {}),
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=counting_reward,
        args=config,
        train_dataset=train,
        processing_class=tokenizer,
        callbacks=[Clock()],
    )
    trainer.train()
    reward.client.close()
    first, last = min(step_ends), max(step_ends)
    seconds = step_ends[last] - step_ends[first]
    tokens = sum(n for step, n in tokens_by_step.items() if first < step <= last)
    return {
        "engine": "trl+vllm" if args.vllm else "trl",
        "steps": last,
        "timed_steps": last - first,
        "tokens": tokens,
        "seconds": seconds,
        "tokens_per_second": tokens / seconds if seconds > 0 else 0.0,
        "bf16": bf16,
        "trl": __import__("trl").__version__,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    model = sub.add_parser("model")
    model.add_argument("--dataset", required=True)
    model.add_argument("--out", required=True)
    model.add_argument("--size", choices=sorted(SIZES), default="0.5b")
    model.add_argument("--dtype", choices=["bfloat16", "float32"], default="bfloat16")
    model.add_argument("--seed", type=int, default=0)
    trl = sub.add_parser("trl")
    trl.add_argument("--model", required=True)
    trl.add_argument("--dataset", required=True)
    trl.add_argument("--service", required=True)
    trl.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    trl.add_argument("--steps", type=int, default=6)
    trl.add_argument("--group", type=int, default=8)
    trl.add_argument("--prompts", type=int, default=8)
    trl.add_argument("--max-new-tokens", type=int, default=48)
    trl.add_argument("--max-prompt-tokens", type=int, default=256)
    trl.add_argument("--temperature", type=float, default=1.0)
    trl.add_argument("--learning-rate", type=float, default=1e-6)
    trl.add_argument("--beta", type=float, default=0.04)
    trl.add_argument("--vllm", action="store_true")
    trl.add_argument("--output-dir", default=str(REPO / "out" / "bench-trl"))
    args = parser.parse_args()
    result = make_model(args) if args.command == "model" else run_trl(args)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
