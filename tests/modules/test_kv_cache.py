"""The KV cache: decoding with it gives the tokens, scores and attention weights of decoding
without it (the whole prefix fed at every step), and it computes what it claims to: the
cross-attention's keys and values once per source, the self-attention's one position a step."""
from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import illustrated as il
from illustrated.inference.decoding import greedy_decode_batch
from illustrated.modules import KVCache

BOS, EOS = 1, 2
CFG = replace(il.TINY, src_vocab_size=11, tgt_vocab_size=9, d_model=16, n_heads=4, d_ff=24,
              n_layers=2, dropout=0.0, max_len=24)
SRC = [3, 4, 5, 6, 7, 8]


def build(seed: int = 0, norm_first: bool = False, dtype=torch.float32, eos_scale: float = 1.0):
    """A seeded untrained model; ``eos_scale`` < 1 scales <eos>'s logits down (0: never chosen)."""
    torch.manual_seed(seed)
    model = il.modules.Transformer(replace(CFG, norm_first=norm_first)).to(dtype).eval()
    with torch.no_grad():
        model.generator.proj.weight[EOS].mul_(eos_scale)
        model.generator.proj.bias[EOS] = -1e4 if eos_scale == 0 else model.generator.proj.bias[EOS]
    return model


def tolerance(dtype):
    return 1e-12 if dtype == torch.float64 else 1e-5


def ulps(dtype, n: int = 8) -> float:
    """A relative tolerance of ``n`` units in the last place: the forced <eos> score, about -1e4,
    summed in another order (the cached step's shorter products, another CPU's kernels) moves by
    an ulp of its own size, 1.8e-12 in float64 (seen with ATEN_CPU_CAPABILITY=default)."""
    return n * torch.finfo(dtype).eps


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("max_len", [1, 2, 3, 8, CFG.max_len])
def test_greedy_with_the_cache_equals_greedy_without(dtype, norm_first, max_len):
    model = build(1, norm_first, dtype, eos_scale=0.0)  # <eos> never chosen: max_len tokens
    cached, cached_steps = il.greedy_decode(model, SRC, bos_id=BOS, eos_id=EOS, max_len=max_len,
                                            return_steps=True)
    plain, plain_steps = il.greedy_decode(model, SRC, bos_id=BOS, eos_id=EOS, max_len=max_len,
                                          return_steps=True, use_cache=False)
    assert cached == plain and len(cached) == max_len
    for a, b in zip(cached_steps, plain_steps):
        assert (a.step, a.token) == (b.step, b.token)
        np.testing.assert_allclose(a.log_probs, b.log_probs, atol=tolerance(dtype),
                                   rtol=ulps(dtype))


def test_greedy_batch_with_the_cache_equals_greedy_without():
    model = build(2)
    src = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 9, 10], [5, 0, 0, 0, 0]])
    for max_len in (1, 5, CFG.max_len):
        assert greedy_decode_batch(model, src, bos_id=BOS, eos_id=EOS, max_len=max_len) == \
            greedy_decode_batch(model, src, bos_id=BOS, eos_id=EOS, max_len=max_len,
                                   use_cache=False)


def beams_alike(a, b, atol):
    """Two beam_search(..., return_steps=True) results: the same hypotheses, scores to atol."""
    (results_a, steps_a), (results_b, steps_b) = a, b
    assert [h for h, _ in results_a] == [h for h, _ in results_b]
    np.testing.assert_allclose([s for _, s in results_a], [s for _, s in results_b], atol=atol)
    assert len(steps_a) == len(steps_b)
    for x, y in zip(steps_a, steps_b):
        assert ([h for h, _ in x.candidates], x.kept, x.finished) == \
            ([h for h, _ in y.candidates], y.kept, y.finished)
        np.testing.assert_allclose([s for _, s in x.candidates], [s for _, s in y.candidates],
                                   atol=atol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("beam_size, top_beams", [(1, 1), (2, 2), (3, 1), (4, 4), (8, 3)])
@pytest.mark.parametrize("max_len, alpha", [(1, 0.0), (4, 0.6), (CFG.max_len, 0.6)])
def test_beam_search_with_the_cache_equals_beam_search_without(dtype, beam_size, top_beams,
                                                                max_len, alpha):
    model = build(3, dtype=dtype, eos_scale=0.5)  # <eos> rarer: beams of many lengths
    kwargs = dict(bos_id=BOS, eos_id=EOS, beam_size=beam_size, top_beams=top_beams,
                  max_len=max_len, alpha=alpha, return_steps=True)
    beams_alike(il.beam_search(model, SRC, **kwargs),
                il.beam_search(model, SRC, **kwargs, use_cache=False), tolerance(dtype))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_a_cached_step_returns_the_last_rows_of_the_uncached_decode(norm_first, float64,
                                                                     recorded):
    """Outputs and every layer's self- and cross-attention weights, step by step; two positions
    fed at once (the causal mask then covers the cached keys) give the same rows too."""
    model = build(4, norm_first, torch.float64)
    src, tgt = torch.tensor([SRC]), torch.tensor([[BOS, 4, 5, 6, 7, 8, 3]])
    with torch.no_grad():
        memory = model.encode(src)
        out, whole = recorded(model, model.decode, tgt, memory)
        self_w, cross_w = whole.decoder_self, whole.decoder_cross
        cache = KVCache(CFG.n_layers)
        for start, stop in [(0, 1), (1, 2), (2, 4), (4, 5), (5, 7)]:
            o, step = recorded(model, model.decode, tgt[:, start:stop], memory, cache=cache)
            s, c = step.decoder_self, step.decoder_cross
            assert cache.length == stop
            torch.testing.assert_close(o, out[:, start:stop], atol=1e-12, rtol=0)
            for layer in range(CFG.n_layers):
                torch.testing.assert_close(s[layer], self_w[layer][:, :, start:stop, :stop],
                                           atol=1e-12, rtol=0)
                torch.testing.assert_close(c[layer], cross_w[layer][:, :, start:stop],
                                           atol=1e-12, rtol=0)


def count_rows(model, names):
    """A forward hook on each named module that records the positions (rows) each call gets."""
    rows = {name: [] for name in names}
    handles = [model.get_submodule(name).register_forward_hook(
        lambda module, args, out, name=name: rows[name].append(args[0].shape[:2]))
        for name in names]
    return rows, handles


def test_the_cache_computes_the_source_keys_once_and_one_new_position_a_step():
    model = build(5, eos_scale=0.0)
    names = ["decoder.layers.1.self_attn.w_k", "decoder.layers.1.cross_attn.w_k",
             "decoder.layers.1.cross_attn.w_q"]
    for use_cache in (True, False):
        rows, handles = count_rows(model, names)
        il.greedy_decode(model, SRC, bos_id=BOS, eos_id=EOS, max_len=6, use_cache=use_cache)
        for handle in handles:
            handle.remove()
        if use_cache:  # one position a step; the source's keys once
            assert rows[names[0]] == [(1, 1)] * 6
            assert rows[names[1]] == [(1, len(SRC))]
            assert rows[names[2]] == [(1, 1)] * 6
        else:  # the whole prefix at every step; the source's keys at every step
            assert rows[names[0]] == [(1, t) for t in range(1, 7)]
            assert rows[names[1]] == [(1, len(SRC))] * 6
    rows, handles = count_rows(model, names[1:2])
    il.beam_search(model, SRC, bos_id=BOS, eos_id=EOS, beam_size=4, max_len=6)
    assert rows[names[1]] == [(1, len(SRC))]  # once for the whole beam


def test_beam_search_reorders_the_cache_with_the_hypotheses():
    """Beams that swap places: a cache that kept its rows in place would give other scores."""
    model = build(6, eos_scale=0.0)
    kwargs = dict(bos_id=BOS, eos_id=EOS, beam_size=3, top_beams=3, max_len=10,
                  return_steps=True)
    _, steps = il.beam_search(model, SRC, **kwargs)
    reordered = any(step.kept[j][:-1] != prev.kept[j] for prev, step in zip(steps, steps[1:])
                    for j in range(len(step.kept)))
    assert reordered  # this model's beams do swap rows
    beams_alike(il.beam_search(model, SRC, **kwargs),
                il.beam_search(model, SRC, **kwargs, use_cache=False), 1e-5)


def test_reorder_picks_rows():
    cache = KVCache(1)
    self_cache, _ = cache.layers[0]
    self_cache.append(torch.arange(3.0)[:, None, None, None].expand(3, 2, 4, 5),
                      -torch.arange(3.0)[:, None, None, None].expand(3, 2, 4, 5))
    cache.reorder(torch.tensor([2, 2, 0, 1]))
    assert (cache.batch, cache.length) == (4, 4)
    assert self_cache.k[:, 0, 0, 0].tolist() == [2, 2, 0, 1]
    assert self_cache.v[:, 0, 0, 0].tolist() == [-2, -2, 0, -1]


@pytest.mark.parametrize("make, match", [
    (lambda model: "cache", "cache: expected a KVCache"),
    (lambda model: KVCache(1), "cache: expected a KVCache of n_layers=2 layers, got 1"),
    (lambda model: filled(model, batch=2), "cache: expected the batch of tgt_in \\(1\\), got a "
                                           "cache of 2 rows"),
    (lambda model: filled(model, batch=1, length=CFG.max_len),
     "tgt_in: expected at most max_len=24 positions with the 24 in the cache, got 1 more"),
])
def test_a_bad_cache_is_refused_at_the_models_boundary(make, match):
    model = build(7)
    memory = model.encode(torch.tensor([SRC]))
    with pytest.raises(ValueError, match=match):
        model.decode(torch.tensor([[BOS]]), memory, cache=make(model))


def filled(model, batch, length=1):
    cache = KVCache(CFG.n_layers)
    with torch.no_grad():
        memory = model.encode(torch.tensor([SRC] * batch))
        model.decode(torch.full((batch, length), 3), memory, cache=cache)
    return cache


def test_use_cache_must_be_a_bool():
    model = build(8)
    for call in (il.greedy_decode, il.beam_search):
        with pytest.raises(TypeError, match="use_cache: expected"):
            call(model, SRC, bos_id=BOS, eos_id=EOS, max_len=4, use_cache="yes")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 50), src=st.lists(st.integers(3, 10), min_size=1, max_size=8),
       beam_size=st.integers(1, 4), max_len=st.integers(1, 8), alpha=st.floats(0, 2),
       norm_first=st.booleans())
def test_any_model_and_source_decode_alike_with_and_without_the_cache(
        seed, src, beam_size, max_len, alpha, norm_first):
    model = build(seed, norm_first, torch.float64)
    greedy = [il.greedy_decode(model, src, bos_id=BOS, eos_id=EOS, max_len=max_len,
                               use_cache=use) for use in (True, False)]
    assert greedy[0] == greedy[1]
    kwargs = dict(bos_id=BOS, eos_id=EOS, beam_size=beam_size, top_beams=beam_size,
                  max_len=max_len, alpha=alpha, return_steps=True)
    beams_alike(il.beam_search(model, src, **kwargs),
                il.beam_search(model, src, **kwargs, use_cache=False), 1e-12)


def test_a_model_that_overrides_decode_decodes_without_the_cache():
    """Chapter 07's decoder without its causal mask: a later position changes the earlier ones,
    so no cache holds; decoding it gives what feeding the whole prefix gives."""
    from illustrated.book.ch07 import without_mask
    model = without_mask(build(9, eos_scale=0.0))
    for call in (il.greedy_decode, il.beam_search):
        assert call(model, SRC, bos_id=BOS, eos_id=EOS, max_len=6) == \
            call(model, SRC, bos_id=BOS, eos_id=EOS, max_len=6, use_cache=False)


def reference_append(held, new):
    """What a cache must hold after an append: the earlier positions, then the new ones."""
    return new if held is None else torch.cat([held, new], dim=2)


def test_a_preallocated_cache_writes_in_place_up_to_its_capacity_then_grows():
    """Within its capacity the buffer is written in place (its storage never moves, the views
    returned hold every position appended); past it the buffer doubles and keeps them all."""
    torch.manual_seed(0)
    cache = KVCache(1, capacity=5)
    self_cache, _ = cache.layers[0]
    keys = values = None
    pointers = set()
    for step, new in enumerate([2, 1, 1, 1, 3], start=1):
        k, v = torch.randn(2, 3, new, 4), torch.randn(2, 3, new, 4)
        keys, values = reference_append(keys, k), reference_append(values, v)
        got_k, got_v = self_cache.append(k, v)
        assert torch.equal(got_k, keys) and torch.equal(got_v, values)
        assert torch.equal(self_cache.k, keys) and cache.length == keys.shape[2]
        pointers.add(self_cache.k.data_ptr())
        if step == 4:  # 5 positions: the capacity, filled
            assert len(pointers) == 1  # one buffer, written in place
    assert len(pointers) == 2 and cache.length == 8  # grown once, to room for 16
    assert self_cache._k.shape[2] == 16


def test_reorder_after_growth_then_appending_again_keeps_each_rows_history():
    torch.manual_seed(1)
    cache = KVCache(2, capacity=2)
    expected = [None, None]
    for step in range(5):  # grows past the capacity at step 2, then reorders every step
        batch = 1 if step == 0 else 3
        for i, (self_cache, _) in enumerate(cache.layers):
            k = torch.randn(batch, 2, 1, 4)
            expected[i] = reference_append(expected[i], k)
            self_cache.append(k, -k)
        index = torch.tensor([0, 0, 0] if step == 0 else [2, 0, 1])
        cache.reorder(index)
        expected = [e.index_select(0, index) for e in expected]
        for (self_cache, _), e in zip(cache.layers, expected):
            assert torch.equal(self_cache.k, e) and torch.equal(self_cache.v, -e)
    assert (cache.batch, cache.length) == (3, 5)


def test_the_cross_attention_cache_is_filled_once_and_reordered_in_place():
    cache = KVCache(1, capacity=4)
    _, cross = cache.layers[0]
    k = torch.arange(2.0)[:, None, None, None].expand(2, 2, 6, 4)
    assert not cross.ready
    cross.append(k, k + 10)
    assert cross.ready and cross.k.shape == (2, 2, 6, 4)
    cache.reorder(torch.tensor([1, 1, 0]))
    assert cross.k[:, 0, 0, 0].tolist() == [1, 1, 0] and cross.v[:, 0, 0, 0].tolist() == [11, 11, 10]


def test_appending_while_autograd_records_concatenates_and_backward_runs():
    """A buffer rewritten in place would break backward through the views handed out earlier."""
    cache = KVCache(1, capacity=8)
    self_cache, _ = cache.layers[0]
    leaves = [torch.randn(1, 2, 1, 4, requires_grad=True) for _ in range(3)]
    # squares: their backward reads the keys handed out, which must not change afterwards
    outs = [(self_cache.append(k, 2 * k)[0] ** 2).sum() for k in leaves]
    sum(outs).backward()  # each position is in its own append's sum and every later one's
    for i, leaf in enumerate(leaves):
        torch.testing.assert_close(leaf.grad, 2 * leaf.detach() * (len(leaves) - i))


@pytest.mark.parametrize("args, error, match", [
    ((0,), ValueError, "n_layers: expected an integer >= 1, got 0"),
    (("2",), TypeError, "n_layers: expected an integer"),
    ((2, -1), ValueError, r"capacity: expected a number of positions in \[0, 16777216\], got -1"),
    ((1, 10**12), ValueError, r"^capacity: expected a number of positions in \[0, 16777216\], "
                              r"got 1000000000000$"),
    ((2, 1.5), TypeError, "capacity: expected a number of positions"),
])
def test_a_cache_of_bad_sizes_is_refused(args, error, match):
    with pytest.raises(error, match=match):
        KVCache(*args)


@pytest.mark.parametrize("index, match", [
    (torch.tensor([0, 2]), r"^index: expected rows in \[0, 2\) \(the rows the cache holds\), got 2$"),
    (torch.tensor([-1]), r"^index: expected rows in \[0, 2\) .*got -1$"),
    (torch.tensor([0.0]), r"^index: expected an int64 tensor \(n,\) of rows, n >= 1, got dtype "
                          r"torch.float32"),
    ([0, 1], r"^index: expected an int64 tensor \(n,\) of rows, n >= 1, got list$"),
])
def test_reorder_refuses_an_index_out_of_the_rows_held(index, match):
    cache = KVCache(1)
    k = torch.randn(2, 1, 3, 4)
    cache.layers[0][0].append(k, k)
    with pytest.raises(ValueError, match=match):
        cache.reorder(index)
    assert torch.equal(cache.layers[0][0].k, k)  # nothing moved


def test_decoding_fills_its_cache_to_max_len_without_growing(monkeypatch):
    """The decoding functions size the cache at max_len: <eos> never chosen, the buffer is
    never moved while every step writes one position in place."""
    model = build(10, eos_scale=0.0)
    reserved = []
    original = il.modules.AttentionCache._reserve
    monkeypatch.setattr(il.modules.AttentionCache, "_reserve",
                        lambda self, room: reserved.append(room) or original(self, room))
    out = il.greedy_decode(model, SRC, bos_id=BOS, eos_id=EOS, max_len=CFG.max_len)
    assert len(out) == CFG.max_len
    assert reserved == [CFG.max_len] * CFG.n_layers  # one buffer a layer, at the first step


def test_a_source_without_padding_decodes_as_the_full_forward_with_its_padding_mask(float64):
    """Decoding drops the source mask when no key is hidden; every step's scores equal the
    log_softmax of the model's forward (which builds the mask) on the prefix, and a padded
    batch, which keeps its mask, gives each row what the row alone gives."""
    model = build(11, dtype=torch.float64, eos_scale=0.0)
    out, steps = il.greedy_decode(model, SRC, bos_id=BOS, eos_id=EOS, max_len=6,
                                  return_steps=True)
    with torch.no_grad():
        logits = model(torch.tensor([SRC]), torch.tensor([[BOS, *out[:-1]]]))  # (1, 6, vocab)
    expected = logits.log_softmax(-1)[0].numpy()
    expected[:, [BOS, CFG.tgt_pad_id]] = -np.inf
    np.testing.assert_allclose(np.stack([s.log_probs for s in steps]), expected, atol=1e-12,
                               rtol=ulps(torch.float64))
    batch = torch.tensor([SRC, [5, 6, 0, 0, 0, 0]])
    assert greedy_decode_batch(model, batch, bos_id=BOS, eos_id=EOS, max_len=6) == \
        [out, il.greedy_decode(model, [5, 6], bos_id=BOS, eos_id=EOS, max_len=6)]
