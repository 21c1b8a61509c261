"""Fixtures of the chapters 07-08 tests: small models of the "post" and "fr-en" corpora."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import illustrated as il  # noqa: E402
from illustrated.presets import make_config  # noqa: E402


@pytest.fixture(scope="package", autouse=True)
def _one_thread():
    """The models are tiny: one thread is faster than two on a busy 2-core machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="package")
def post_trained():
    """(model, src_vocab, tgt_vocab): the post corpus's default model, trained (about a second)."""
    model, src_vocab, tgt_vocab, _ = il.train_corpus("post", device="cpu", progress=False)
    return model, src_vocab, tgt_vocab


@pytest.fixture(scope="package")
def fr_en_untrained():
    """(model, src_vocab, tgt_vocab): the fr-en corpus's default model, seeded, untrained."""
    _, src_vocab, tgt_vocab = il.data.load_corpus("fr-en")
    il.set_seed(1)
    model = il.modules.Transformer(make_config("fr-en", src_vocab, tgt_vocab)).eval()
    return model, src_vocab, tgt_vocab
