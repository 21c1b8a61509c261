"""Small models for the tests of chapters 09 and 10: untrained, seeded, fast."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import illustrated as il  # noqa: E402


@pytest.fixture(scope="session")
def fr_en_untrained():
    """An untrained fr-en model (TINY sizes) and its vocabularies: outputs are arbitrary but fixed."""
    pairs, src_vocab, tgt_vocab = il.data.load_corpus("fr-en", "test")
    cfg = il.presets.make_config("fr-en", src_vocab, tgt_vocab, d_model=32, d_ff=64, n_layers=1)
    il.set_seed(0)
    model = il.modules.Transformer(cfg).eval()
    return model, src_vocab, tgt_vocab, pairs


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")
