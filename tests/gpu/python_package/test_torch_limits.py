# PyTorch tests for the pytest plugin on a GPU (run_python_package.sh): one exceeds its limit_vram
# and must fail naming its line, one stays under and must pass, one keeps a tensor and must fail
# no_vram_leak naming its line. Sizes are multiples of 2 MiB, so PyTorch's caching allocator
# reserves exactly them (a segment each; the plugin empties the cache after each test).
import pytest
import torch

MiB = 1 << 20
kept = []


@pytest.mark.limit_vram("256 MiB")
def test_over_limit():
    x = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda")  # @over
    x.fill_(1)
    del x


@pytest.mark.limit_vram("256 MiB")
def test_under_limit():
    x = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda")  # @under
    x.fill_(1)
    del x


@pytest.mark.no_vram_leak
def test_keeps_a_tensor():
    kept.append(torch.empty(32 * MiB, dtype=torch.uint8, device="cuda"))  # @leak
