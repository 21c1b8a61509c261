"""Fixtures of the modules' tests."""
import pytest
import torch


@pytest.fixture
def one_thread():
    """One thread for a test of many runs of a tiny model, which a second thread only slows
    down (the threads hand over more than they share); the count is restored after."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
