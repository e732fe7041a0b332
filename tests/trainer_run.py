"""A short transformers Trainer run (tiny Llama from a config, AdamW, linear schedule,
gradient clipping, as Trainer does by default) printing the logged losses as JSON; run on
both sides by tests/test_trainer.py.
    python tests/trainer_run.py OUTPUT_DIR"""
import json
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    """32 fixed sequences of 16 token ids (seeded per item, identical on both sides)."""

    def __len__(self):
        return 32

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.randint(0, 64, (16,), generator=g)
        return {"input_ids": x, "labels": x}


def main(out_dir):
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2)
    model = LlamaForCausalLM(cfg)
    args = TrainingArguments(output_dir=out_dir, per_device_train_batch_size=4, max_steps=8, learning_rate=1e-3,
                             logging_steps=1, report_to=[], save_strategy="no", use_cpu=True, seed=0,
                             dataloader_num_workers=0, disable_tqdm=True)
    trainer = Trainer(model=model, args=args, train_dataset=Tokens())
    out = trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    print(json.dumps({"loss": out.training_loss, "losses": [h["loss"] for h in logs],
                      "grad_norms": [h.get("grad_norm") for h in logs]}))


if __name__ == "__main__":
    main(sys.argv[1])
