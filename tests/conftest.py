"""Shared fixtures: float64, seeded, two threads (one for tiny models, and one in each of
pytest-xdist's workers: `make test` runs a worker per core); a training run killed at a given
step; a call with every attention's weights recorded; pairs for the "it" objective."""
import os

import pytest
import torch

import illustrated as il
from illustrated.data.pairs_file import build_vocab
from illustrated.modules import Attention, recording_attention

torch.set_num_threads(1 if os.environ.get("PYTEST_XDIST_WORKER") else 2)


@pytest.fixture
def float64():
    """Run a test in float64 so that parity comparisons can be tight."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    yield
    torch.set_default_dtype(old)


class RunKilled(Exception):
    """Stands for a training run killed mid-way (a crash, kill -9)."""


@pytest.fixture(scope="session")
def kill_at():
    """``kill_at(step)``: a training callback that ends the run at ``step`` by raising
    ``kill_at.error`` (RunKilled), as a crash would, after that step's checkpoint if any."""
    def make(step):
        def callback(done, _history):
            if done == step:
                raise RunKilled
        return callback
    make.error = RunKilled
    return make


@pytest.fixture(scope="module")
def one_thread():
    """The models are tiny: one thread is much faster than several on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def recorded():
    """``recorded(model, call, *args, **kwargs)``: ``call(*args, **kwargs)`` (``model`` itself or
    one of its methods) with every attention of ``model`` recording its weights (the
    step-by-step kernel); returns (the call's output, ``Attention.of`` the record)."""
    def run(model, call, *args, **kwargs):
        with recording_attention(model) as record:
            out = call(*args, **kwargs)
        return out, Attention.of(record)
    return run


@pytest.fixture(scope="session")
def it_pairs():
    """(pairs, src_vocab, tgt_vocab) for the "it" objective (illustrated.training.referent): 12 pairs of
    the coreference corpus, whose "it" is labelled with its noun, then 4 whose "it" is replaced
    by "the cat" (unlabelled: a batch's labelled share differs from its share of tokens)."""
    pairs, _, _ = il.data.load_corpus("coreference")
    pairs = pairs[:12] + [(s.replace(" it ", " the cat "), t) for s, t in pairs[12:16]]
    return pairs, build_vocab([s for s, _ in pairs]), build_vocab([t for _, t in pairs])
