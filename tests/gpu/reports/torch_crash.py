#!/usr/bin/env python3
"""Holds 64 MiB through PyTorch, prints memory_reserved() on stdout, then dies of SIGSEGV (a NULL
read through ctypes). The exit status must be the same traced and untraced (-SIGSEGV)."""
import ctypes
import sys

import torch

x = torch.ones(16 << 20, device="cuda")  # 64 MiB of float32
torch.cuda.synchronize()
print(torch.cuda.memory_reserved(), flush=True)
ctypes.string_at(0)
sys.exit(3)  # not reached
