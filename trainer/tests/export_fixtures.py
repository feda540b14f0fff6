"""Run folders with one checkpoint of each kind the export reads, written by checkpoint.save like a real run.

- full: model/ is the whole (embedded tiny Llama) model with its tokenizer.
- lora: model/ is a peft adapter (non-zero LoRA weights, so merging changes the logits) with the tokenizer, and the
  base model is base_model/ inside the checkpoint (written by the trainer's own save_base_model), or
  (`base_in="config"`) a folder outside it that adapter_config.json names.

Run as a script (the Node test of `fim-rlvr export-model` does), it writes a run folder and reference.json: the
prompt's token ids, the checkpoint policy's logits at every position, and its greedy continuation.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Literal

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fim_rlvr.model import checkpoint, tiny_model

TEXTS = [
    "theorem add_zero (n : Nat) : n + 0 = n := by simp",
    "theorem zero_add (n : Nat) : 0 + n = n := by omega",
    "lemma le_refl (a : Nat) : a ≤ a := Nat.le_refl a",
    "example : 2 + 2 = 4 := by decide",
] * 8
PROMPT = "theorem add_zero (n : Nat) : n + 0 = n := by"
GREEDY_TOKENS = 6

Kind = Literal["full", "lora"]
Arch = Literal["llama", "qwen2"]


def build_model(tokenizer: Any, arch: Arch) -> Any:
    """The embedded tiny Llama, or a tiny Qwen2 with grouped-query attention (2 key/value heads for 4 query heads),
    the architecture of the Qwen2.5 models people fine-tune."""
    if arch == "llama":
        return tiny_model.build_model(tokenizer, seed=7)
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=352,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(7)
    return Qwen2ForCausalLM(config)


def make_run(
    run_dir: Path,
    kind: Kind,
    *,
    arch: Arch = "llama",
    step: int = 3,
    base_in: Literal["checkpoint", "config"] = "checkpoint",
) -> Any:
    """Writes RUN_DIR/checkpoints/step-<step>/ and returns the policy as the trainer holds it (eval mode)."""
    tokenizer = tiny_model.train_tokenizer(TEXTS, vocab_size=320)
    model = build_model(tokenizer, arch)
    with torch.no_grad():
        # Wider than the default init (std 0.02), so greedy decoding picks a different token at each step and a
        # broken KV cache in an export would change the continuation.
        for name, parameter in model.named_parameters():
            if "norm" not in name:
                parameter.normal_(0.0, 0.1)
    policy: Any = model
    base_dir = run_dir / "base-model"
    in_checkpoint = kind == "lora" and base_in == "checkpoint"
    if kind == "lora":
        from peft import LoraConfig, get_peft_model

        if not in_checkpoint:  # A LoRA run on a model path: adapter_config.json names the folder.
            model.save_pretrained(base_dir)
            tokenizer.save_pretrained(base_dir)
        config = LoraConfig(
            r=4,
            lora_alpha=8,
            target_modules=["q_proj", "v_proj", "down_proj"],
            init_lora_weights=False,  # random B as well as A: the adapter changes the logits.
            task_type="CAUSAL_LM",
        )
        torch.manual_seed(11)
        policy = get_peft_model(model, config)
        # The embedded model exists nowhere on disk: the trainer writes it to base_model/ (save_base_model) and the
        # name in adapter_config.json leads nowhere, so only base_model/ can serve.
        policy.peft_config["default"].base_model_name_or_path = (
            "hub-org/not-downloadable" if in_checkpoint else str(base_dir)
        )
    checkpoint.save(
        run_dir,
        step,
        model=policy,
        tokenizer=tokenizer,
        optimizer=None,
        state={"sampler": 0},
        save_base_model=in_checkpoint,
    )
    policy.eval()
    return policy, tokenizer


def reference(policy: Any, tokenizer: Any) -> dict[str, Any]:
    ids = tokenizer(PROMPT, return_tensors="pt").input_ids
    with torch.no_grad():
        logits = policy(input_ids=ids).logits[0]
        generated = policy.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=GREEDY_TOKENS,
            min_new_tokens=GREEDY_TOKENS,
            do_sample=False,
        )[0, ids.shape[1] :]
    return {
        "prompt": PROMPT,
        "input_ids": ids[0].tolist(),
        "logits": logits.tolist(),
        "greedy": generated.tolist(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--kind", choices=["full", "lora"], default="lora")
    parser.add_argument("--arch", choices=["llama", "qwen2"], default="llama")
    args = parser.parse_args()
    torch.set_num_threads(1)
    policy, tokenizer = make_run(args.run_dir, args.kind, arch=args.arch)
    (args.run_dir / "reference.json").write_text(json.dumps(reference(policy, tokenizer)), encoding="utf-8")


if __name__ == "__main__":
    main()
