"""Trace.probs is the softmax of the traced logits computed as a stable softmax: large logits
(a confident model, or weights scaled up) give probabilities, never NaN from exp overflowing."""
import numpy as np
import torch

import illustrated as il


def test_probs_of_large_logits_are_finite_and_sum_to_one():
    model, src_vocab, tgt_vocab = il.pretrained("fr-en")
    with torch.no_grad():
        model.generator.proj.weight.mul_(200.0)  # logits of several hundreds to thousands
    t = il.trace(model, "je suis étudiant", "i am a student", src_vocab=src_vocab,
                 tgt_vocab=tgt_vocab)
    assert np.abs(t.logits).max() > 800  # exp() of this overflows float64
    probs = t.probs
    assert np.isfinite(probs).all()
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(probs, torch.softmax(torch.from_numpy(t.logits), -1).numpy(),
                               atol=1e-12)
