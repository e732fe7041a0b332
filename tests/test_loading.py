"""Loading maps weights instead of copying them where the dtype matches (issue 4, item 5):
safetensors tensors and a from_pretrained model's parameters live in file-backed mappings
of the checkpoint, as with upstream."""
import os

import torch


def _mapped_bytes(tensors, needle):
    regions = []
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            regions.append((lo, hi, line))
    mapped = total = 0
    for t in tensors:
        ptr, nbytes = t.data_ptr(), t.numel() * t.element_size()
        total += nbytes
        if any(lo <= ptr < hi and needle in line for lo, hi, line in regions):
            mapped += nbytes
    return mapped, total


def test_safetensors_tensors_are_mapped(tmp_path):
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    path = str(tmp_path / "w.safetensors")
    save_file({"a": torch.randn(512, 256), "b": torch.arange(1000, dtype=torch.int64)}, path)
    with safe_open(path, framework="pt") as f:
        got = [f.get_tensor(k) for k in f.keys()]
        mapped, total = _mapped_bytes(got, "w.safetensors")
        assert mapped == total > 0
    loaded = load_file(path)
    assert _mapped_bytes(loaded.values(), "w.safetensors")[0] == total
    assert torch.equal(loaded["b"], torch.arange(1000))


def test_from_pretrained_parameters_are_mapped(tmp_path):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=1000, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2)
    d = str(tmp_path / "tiny")
    src = LlamaForCausalLM(cfg)
    src.save_pretrained(d)
    m = LlamaForCausalLM.from_pretrained(d, dtype=torch.float32)
    mapped, total = _mapped_bytes(m.state_dict().values(), ".safetensors")
    assert mapped == total > 0, f"only {mapped} of {total} bytes mapped"
    for (n, a), (_, b) in zip(src.state_dict().items(), m.state_dict().items()):
        assert torch.equal(a, b), n
    # another dtype has to be converted: those parameters are ordinary memory
    m16 = LlamaForCausalLM.from_pretrained(d, dtype=torch.bfloat16)
    assert _mapped_bytes(m16.state_dict().values(), ".safetensors")[0] == 0
