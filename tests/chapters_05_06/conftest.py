"""Fixtures of the chapters 05-06 tests: a small untrained model of the "post" corpus."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import illustrated as il  # noqa: E402
from illustrated.presets import make_config  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def post_model():
    """(model, src_vocab, tgt_vocab): TINY sized for the "post" corpus, seeded, untrained."""
    _, src_vocab, tgt_vocab = il.data.load_corpus("post")
    il.set_seed(0)
    model = il.modules.Transformer(make_config("post", src_vocab, tgt_vocab)).eval()
    return model, src_vocab, tgt_vocab
