"""Shared fixtures: float64, seeded, two threads."""
import pytest
import torch

torch.set_num_threads(2)


@pytest.fixture
def float64():
    """Run a test in float64 so that parity comparisons can be tight."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    yield
    torch.set_default_dtype(old)
