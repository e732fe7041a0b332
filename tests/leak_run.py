"""Long runs whose memory must stay flat (issue 21, item 1), measured from inside: prints one
JSON line with the resident size and torchnative's live tensor bytes
(torch._C._tn_storage_stats) sampled along a 1,000-token decode and along 1,000 training
steps. Run by tests/test_leaks.py in a fresh process on our core.
    python tests/leak_run.py decode|train_mlp|train_cnn [--leak BYTES]
--leak keeps BYTES more per step alive (the test's proof that the check can fail)."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def live_bytes():
    return torch._C._tn_storage_stats(False)["live"]


def decode(leak, kept):
    """1,000 greedy tokens of a small Llama through generate(); a sample at every step."""
    from transformers import LlamaConfig, LlamaForCausalLM, LogitsProcessor, LogitsProcessorList
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg).eval()
    samples = []

    class Sample(LogitsProcessor):
        def __call__(self, input_ids, scores):
            if leak:
                kept.append(torch.ones(leak // 4))
            samples.append((input_ids.shape[1], rss_bytes(), live_bytes()))
            return scores

    ids = torch.tensor([[1, 17, 42, 99, 7]])
    with torch.no_grad():
        model.generate(ids, max_new_tokens=1000, min_new_tokens=1000, do_sample=False,
                       logits_processor=LogitsProcessorList([Sample()]), pad_token_id=0)
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    kv_per_token = cfg.num_hidden_layers * 2 * cfg.num_key_value_heads * head_dim * 4
    return samples, kv_per_token


def train(model_name, leak, kept):
    """1,000 Adam steps on digits batches of 64; a sample after every step."""
    import training_run as tr
    torch.manual_seed(0)
    xtr, ytr, _, _ = tr.data()
    model = tr.mlp() if model_name == "mlp" else tr.CNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    samples = []
    for step in range(1000):
        b = (step * 64) % (len(xtr) - 64)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xtr[b:b + 64]), ytr[b:b + 64])
        loss.backward()
        opt.step()
        if leak:
            kept.append(torch.ones(leak // 4))
        samples.append((step + 1, rss_bytes(), live_bytes()))
    return samples, 0


def main():
    what = sys.argv[1]
    leak = int(sys.argv[sys.argv.index("--leak") + 1]) if "--leak" in sys.argv else 0
    torch.set_num_threads(2)
    kept = []
    if what == "decode":
        samples, per_token = decode(leak, kept)
    else:
        samples, per_token = train(what.split("_")[1], leak, kept)
    print(json.dumps({"samples": samples, "kv_per_token": per_token}))


if __name__ == "__main__":
    main()
