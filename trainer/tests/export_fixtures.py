"""Run folders with one checkpoint of each kind the export reads, written by checkpoint.save like a real run.

- full: model/ is the whole (embedded tiny Llama) model with its tokenizer.
- lora: model/ is a peft adapter (non-zero LoRA weights, so merging changes the logits) with the tokenizer, and the
  base model is base_model/ inside the checkpoint, or (`base_in="config"`) only named by adapter_config.json.

Run as a script (the Node test of `fim-rlvr export-model` does), it writes a run folder and reference.json: the
prompt's token ids, the checkpoint policy's logits at every position, and its greedy continuation.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any, Literal

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fim_rlvr import checkpoint, tiny_model

TEXTS = [
    "theorem add_zero (n : Nat) : n + 0 = n := by simp",
    "theorem zero_add (n : Nat) : 0 + n = n := by omega",
    "lemma le_refl (a : Nat) : a ≤ a := Nat.le_refl a",
    "example : 2 + 2 = 4 := by decide",
] * 8
PROMPT = "theorem add_zero (n : Nat) : n + 0 = n := by"
GREEDY_TOKENS = 6

Kind = Literal["full", "lora"]


def make_run(
    run_dir: Path, kind: Kind, *, step: int = 3, base_in: Literal["checkpoint", "config"] = "checkpoint"
) -> Any:
    """Writes RUN_DIR/checkpoints/step-<step>/ and returns the policy as the trainer holds it (eval mode)."""
    tokenizer = tiny_model.train_tokenizer(TEXTS, vocab_size=320)
    model = tiny_model.build_model(tokenizer, seed=7)
    with torch.no_grad():
        # Wider than the default init (std 0.02), so greedy decoding picks a different token at each step and a
        # broken KV cache in an export would change the continuation.
        for name, parameter in model.named_parameters():
            if "norm" not in name:
                parameter.normal_(0.0, 0.1)
    policy: Any = model
    base_dir = run_dir / "base-model"
    if kind == "lora":
        from peft import LoraConfig, get_peft_model

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
        policy.peft_config["default"].base_model_name_or_path = str(base_dir)
    folder = checkpoint.save(run_dir, step, model=policy, tokenizer=tokenizer, optimizer=None, state={"sampler": 0})
    if kind == "lora" and base_in == "checkpoint":
        shutil.copytree(base_dir, folder / "base_model")
        shutil.rmtree(base_dir)
        config_path = folder / "model" / "adapter_config.json"
        adapter_config = json.loads(config_path.read_text(encoding="utf-8"))
        adapter_config["base_model_name_or_path"] = "hub-org/not-downloadable"  # Only base_model/ can be used.
        config_path.write_text(json.dumps(adapter_config), encoding="utf-8")
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
    args = parser.parse_args()
    torch.set_num_threads(1)
    policy, tokenizer = make_run(args.run_dir, args.kind)
    (args.run_dir / "reference.json").write_text(json.dumps(reference(policy, tokenizer)), encoding="utf-8")


if __name__ == "__main__":
    main()
