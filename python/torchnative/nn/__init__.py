"""torchnative.nn: training-side packages built on the public torch API (federated
learning). Nothing here imports torch._C directly, so it runs on upstream torch too."""
