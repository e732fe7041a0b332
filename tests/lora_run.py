"""peft LoRA fine-tuning of the bundled SmolLM2-135M-Instruct (GGUF loaded as float32)
with the genuine transformers + peft + torch.optim.AdamW; prints per-step losses, the
LoRA parameters' checksums and (optionally) saves the adapter. Run under upstream torch
and under torchnative by tests/test_lora.py; bench/ times it.
    python tests/lora_run.py STEPS SEQ BATCH [--checkpointing] [--save DIR] [--load DIR] [--threads N]
The batches are windows of a fixed English passage through the model's own tokenizer
(deterministic on both sides). The model comes from tests/bundled.py (the GGUF dequantised
once per machine), as from_pretrained(gguf_file=) gives it."""
import argparse
import json
import os

import torch

import bundled

PASSAGE = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of "
    "foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of Light, "
    "it was the season of Darkness, it was the spring of hope, it was the winter of despair, we had everything "
    "before us, we had nothing before us, we were all going direct to Heaven, we were all going direct the "
    "other way. There were a king with a large jaw and a queen with a plain face, on the throne of England; "
    "there were a king with a large jaw and a queen with a fair face, on the throne of France. In both "
    "countries it was clearer than crystal to the lords of the State preserves of loaves and fishes, that "
    "things in general were settled for ever. ") * 8


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", type=int)
    ap.add_argument("seq", type=int)
    ap.add_argument("batch", type=int)
    ap.add_argument("--checkpointing", action="store_true")
    ap.add_argument("--save")
    ap.add_argument("--load")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--eval", action="store_true", help="no training: the loss of the first batch")
    ap.add_argument("--threads", type=int, default=2, help="intra-op threads (tests/test_lora.py runs the two "
                    "sides at once with 1 each: 2 threads each on 2 cores spun in both sides' pools)")
    a = ap.parse_args()
    import time

    from peft import LoraConfig, PeftModel, get_peft_model

    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    tok, model = bundled.load(torch.float32)  # the GGUF dequantised once per machine (tests/bundled.py)
    if a.load:
        model = PeftModel.from_pretrained(model, a.load, is_trainable=True)
    else:
        cfg = LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], lora_dropout=0.0, bias="none",
                         task_type="CAUSAL_LM")
        model = get_peft_model(model, cfg)
    if a.checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    model.train()
    ids = tok(PASSAGE, return_tensors="pt").input_ids[0]
    if a.eval:
        model.eval()
        with torch.no_grad():
            x = torch.stack([ids[b * 7 % (len(ids) - a.seq):][:a.seq] for b in range(a.batch)])
            print(json.dumps({"loss": model(input_ids=x, labels=x).loss.item()}))
        return
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    losses, times = [], []
    for step in range(a.steps):
        rows = [ids[(step * a.batch + b) * 7 % (len(ids) - a.seq):][:a.seq] for b in range(a.batch)]
        x = torch.stack(rows)
        t0 = time.perf_counter()
        out = model(input_ids=x, labels=x)
        out.loss.backward()
        opt.step()
        opt.zero_grad()
        times.append(time.perf_counter() - t0)
        losses.append(out.loss.item())
    lora = {n: [float(p.detach().double().sum()), float(p.detach().double().abs().sum())]
            for n, p in model.named_parameters() if "lora_" in n}
    if a.save:
        model.save_pretrained(a.save)
    res = {"losses": losses, "lora": lora}
    if a.time:
        res["step_seconds"] = times
    print(json.dumps(res))


if __name__ == "__main__":
    main()
