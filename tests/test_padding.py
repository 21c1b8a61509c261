"""Decoding a padded batch equals decoding each sentence alone: the padding is masked everywhere
(encoder self-attention and the decoder's cross attention), so it changes nothing."""
from dataclasses import replace

import pytest
import torch

import illustrated as il
from illustrated.inference.decoding import greedy_decode_batch

BOS, EOS, PAD = 1, 2, 0
CFG = replace(il.TINY, src_vocab_size=12, tgt_vocab_size=10, d_model=16, n_heads=2, d_ff=32,
              n_layers=2, dropout=0.0, max_len=24)
SENTENCES = [[3, 4, 5], [6], [7, 8, 9, 10, 11, 3, 4], [5, 5], [11, 10, 9, 8]]


def tiny_model(seed: int, eos_bias: float = -3.0) -> il.modules.Transformer:
    torch.manual_seed(seed)
    model = il.modules.Transformer(CFG).eval()
    with torch.no_grad():  # -3: long outputs, many steps read the memory; higher: <eos> sooner
        model.generator.proj.bias[EOS] = eos_bias
    return model


def padded(sentences, extra):
    width = max(map(len, sentences)) + extra
    return torch.tensor([s + [PAD] * (width - len(s)) for s in sentences])  # (batch, width)


# The last two: some sentences end with <eos> long before the others (the batch must go on).
@pytest.mark.parametrize("seed, eos_bias, ragged", [(1, -3.0, False), (2, -3.0, False),
                                                    (1, -1.0, True), (2, 1.0, True)])
def test_padded_batch_equals_one_by_one(seed, eos_bias, ragged):
    model = tiny_model(seed, eos_bias)
    alone = [il.greedy_decode(model, s, bos_id=BOS, eos_id=EOS, max_len=12) for s in SENTENCES]
    for extra in (0, 9):
        batch = greedy_decode_batch(model, padded(SENTENCES, extra), bos_id=BOS, eos_id=EOS,
                                    max_len=12)
        assert batch == alone
    assert len({tuple(a) for a in alone}) > 1  # the sources do lead to different outputs
    assert (len({len(a) for a in alone}) > 1) == ragged


def test_padding_would_matter_without_the_mask():
    """The setting above is one where unmasked padding changes the outputs: the test has teeth."""
    model = tiny_model(1)
    src = padded(SENTENCES, 9)
    with torch.no_grad():
        memory = model.encode(src)  # its mask made from the padding
        tgt = torch.full((len(SENTENCES), 1), BOS)
        masked = model.generator(model.decode(tgt, memory, (src != PAD)[:, None, None, :]))
        unmasked = model.generator(model.decode(tgt, memory, None))
    assert not torch.equal(masked.argmax(-1), unmasked.argmax(-1))


def test_masked_key_gets_no_weight_even_below_large_negative_scores():
    """Masked scores are -inf, not a large negative number: a masked key gets no weight even when
    every allowed score is lower still."""
    q = torch.tensor([[[1.0]]])  # (1, seq_q=1, d_k=1)
    k = torch.tensor([[[-2e4], [0.0]]])  # (1, seq_k=2, d_k=1): the allowed key scores -2e4
    v = torch.tensor([[[1.0], [-1.0]]])
    mask = torch.tensor([[[True, False]]])
    z, weights = il.modules.scaled_dot_product_attention(q, k, v, mask)
    assert weights.tolist() == [[[1.0, 0.0]]]
    assert z.tolist() == [[[1.0]]]
