"""The three attention paths agree: the book's explicit one (``return_attention=True``), the batched
key-first one that ``forward`` takes on a CPU, and the fused
``torch.nn.functional.scaled_dot_product_attention`` one it takes on other devices."""
from dataclasses import replace

import pytest
import torch

import illustrated as il
from illustrated.modules import DecoderLayer, EncoderLayer, MultiHeadAttention

CFG = replace(il.TINY, src_vocab_size=11, tgt_vocab_size=13, d_model=16, n_heads=4, d_ff=24,
              n_layers=2, dropout=0.0)
ATOL = {torch.float32: 1e-6, torch.float64: 1e-12}


def random_mask(batch: int, heads: int, seq_q: int, seq_k: int) -> torch.Tensor:
    """A full (batch, heads, seq_q, seq_k) bool mask with every query allowed one key at least."""
    mask = torch.rand(batch, heads, seq_q, seq_k) < 0.5
    mask[..., torch.randint(seq_k, (1,)).item()] = True
    return mask


def masks(batch: int, heads: int, seq_q: int, seq_k: int) -> dict[str, torch.Tensor | None]:
    tokens = torch.randint(1, 9, (batch, seq_k))
    tokens[0, -2:] = 0  # the first sentence ends in two pads
    out = {"none": None, "padding": il.padding_mask(tokens, 0),
           "full": random_mask(batch, heads, seq_q, seq_k)}
    if seq_q == seq_k:
        out["causal"] = il.causal_mask(seq_q)
    return out


FAST_PATHS = ["attend_batched", "attend_fused"]


@pytest.mark.parametrize("path", FAST_PATHS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("inputs", ["self", "cross", "key != value"])
@pytest.mark.parametrize("bias", [True, False])
def test_fast_paths_equal_the_explicit_one_in_eval_mode(path, dtype, inputs, bias):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4, dropout=0.5, bias=bias).to(dtype).eval()  # eval: no dropout
    query = torch.randn(3, 5, 16, dtype=dtype)
    key = query if inputs == "self" else torch.randn(3, 7, 16, dtype=dtype)
    value = torch.randn_like(key) if inputs == "key != value" else key
    for name, mask in masks(3, 4, 5, key.shape[1]).items():
        explicit, weights = mha(query, key, value, mask, return_attention=True)
        fast = getattr(mha, path)(query, key, value, mask)
        assert fast.dtype == dtype and fast.shape == (3, 5, 16)
        assert torch.allclose(fast, explicit, atol=ATOL[dtype], rtol=0), name
        if mask is not None:  # the explicit path did mask: a forbidden key has weight 0
            assert torch.all(weights.masked_select(~mask.expand_as(weights)) == 0)


def test_forward_takes_the_batched_path_on_a_cpu(monkeypatch):
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 5, 16)
    expected = mha.attend_batched(x, x, x, il.causal_mask(5))

    def refuse(*args):
        raise AssertionError("the fused path ran on a CPU")

    monkeypatch.setattr(mha, "attend_fused", refuse)
    assert torch.equal(mha(x, x, x, il.causal_mask(5)), expected)


@pytest.mark.parametrize("path", FAST_PATHS)
def test_fast_paths_equal_the_explicit_one_in_train_mode_without_dropout(float64, path):
    mha = MultiHeadAttention(16, 4, dropout=0.0).train()
    x, memory = torch.randn(2, 5, 16), torch.randn(2, 6, 16)
    for key, mask in ((x, il.causal_mask(5)), (memory, random_mask(2, 4, 5, 6))):
        explicit, _ = mha(x, key, key, mask, return_attention=True)
        fast = getattr(mha, path)(x, key, key, mask)
        assert torch.allclose(fast, explicit, atol=1e-12, rtol=0)


@pytest.mark.parametrize("path", FAST_PATHS)
@pytest.mark.parametrize("inputs", ["self", "cross"])
def test_fast_paths_give_the_explicit_paths_gradients(float64, path, inputs):
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16, requires_grad=True)
    memory = x if inputs == "self" else torch.randn(2, 6, 16, requires_grad=True)
    mask = il.causal_mask(5) if inputs == "self" else masks(2, 4, 5, 6)["padding"]
    grads = []
    for run in (lambda: mha(x, memory, memory, mask, return_attention=True)[0],
                lambda: getattr(mha, path)(x, memory, memory, mask)):
        mha.zero_grad()
        x.grad = memory.grad = None
        (run() * torch.linspace(-1, 1, 16)).sum().backward()
        grads.append([p.grad.clone() for p in mha.parameters()] + [x.grad.clone()]
                     + ([] if memory is x else [memory.grad.clone()]))
    for explicit, fast in zip(*grads):
        assert torch.allclose(fast, explicit, atol=1e-12, rtol=0)


def draws(mha: MultiHeadAttention, x: torch.Tensor, n: int, path: str):
    """``n`` independent train-mode outputs of ``mha``'s ``path`` on ``x`` (batch, seq, d_model),
    from one call on ``n`` copies of the batch (every copy draws its own dropout):
    (n, batch, seq, d_model)."""
    copies = x.repeat(n, 1, 1)  # (n * batch, seq, d_model)
    out = getattr(mha, path)(copies, copies, copies)
    out = out[0] if path == "attend_step_by_step" else out  # (n * batch, seq, d_model)
    return out.view(n, *x.shape)  # (n, batch, seq, d_model)


@pytest.mark.parametrize("path", FAST_PATHS)
def test_fast_path_dropout_is_unbiased_with_the_explicit_paths_spread(float64, path):
    """Dropout on the attention weights at rate p keeps each weight with probability 1 - p and
    scales it by 1/(1 - p): over many draws the mean output is the eval output, and the spread
    is that of the explicit path, which drops the same weights at the same rate."""
    mha = MultiHeadAttention(16, 4, dropout=0.3)
    x = torch.randn(2, 5, 16)
    expected = mha.eval()(x, x, x)
    mha.train()
    n = 4000
    torch.manual_seed(1)
    fast = draws(mha, x, n, path)
    explicit = draws(mha, x, n, "attend_step_by_step")
    assert not torch.allclose(fast[0], expected, atol=1e-3)  # dropout did act
    torch.manual_seed(1)
    assert torch.equal(draws(mha, x, n, path), fast)  # the same seed, the same draws
    error = (fast.mean(0) - expected).abs()
    assert torch.all(error <= 5 * fast.std(0) / n ** 0.5)  # unbiased, to 5 standard errors
    spread = fast.var(0).sum() / explicit.var(0).sum()
    assert 0.9 < spread.item() < 1.1  # the same rate (p=0.5 would give 2.3 times the spread)


def test_fast_path_rejects_a_query_row_with_no_key(float64):
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    mask = il.causal_mask(5)
    mha(x, x, x, mask)  # fine, and remembered as checked
    mask[2, :] = False  # changed in place: checked again
    with pytest.raises(ValueError, match="mask: some query position may attend to no key"):
        mha(x, x, x, mask)
    layer = EncoderLayer(CFG)
    with pytest.raises(ValueError, match="mask: some query position may attend to no key"):
        layer(x, torch.zeros(2, 1, 1, 5, dtype=torch.bool))


def test_fast_path_rejects_a_source_of_padding_only():
    model = il.modules.Transformer(CFG)
    src = torch.tensor([[3, 4, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match=r"src: sentence 1 is only padding \(pad_id=0\)"):
        model(src, torch.tensor([[1, 2], [1, 2]]))


@pytest.mark.parametrize("norm_first", [False, True])
def test_layers_and_whole_model_equal_on_both_paths(float64, norm_first):
    cfg = replace(CFG, norm_first=norm_first)
    x, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    src_mask = masks(2, 4, 5, 7)["padding"]
    encoder_layer, decoder_layer = EncoderLayer(cfg).eval(), DecoderLayer(cfg).eval()
    pad5 = masks(2, 4, 5, 5)["padding"]
    assert torch.allclose(encoder_layer(x, pad5), encoder_layer(x, pad5, return_attention=True)[0],
                          atol=1e-12, rtol=0)
    causal = il.causal_mask(5)
    explicit, _ = decoder_layer(x, memory, src_mask, causal, return_attention=True)
    assert torch.allclose(decoder_layer(x, memory, src_mask, causal), explicit, atol=1e-12, rtol=0)
    model = il.modules.Transformer(cfg).eval()
    src = torch.tensor([[3, 4, 5, 6, 7, 8, 9], [5, 6, 7, 0, 0, 0, 0]])
    tgt_in = torch.tensor([[1, 4, 5, 6], [1, 7, 8, 9]])
    logits, attention = model(src, tgt_in, return_attention=True)
    assert torch.allclose(model(src, tgt_in), logits, atol=1e-10, rtol=0)
    assert torch.all(attention.decoder_cross[0][1, :, :, 3:] == 0)  # the second source's pads


def test_whole_model_float32_paths_agree():
    torch.manual_seed(0)
    model = il.modules.Transformer(CFG).eval()
    src = torch.tensor([[3, 4, 5, 6, 7], [5, 6, 7, 0, 0]])
    tgt_in = torch.tensor([[1, 4, 5], [1, 7, 8]])
    logits, _ = model(src, tgt_in, return_attention=True)
    assert torch.allclose(model(src, tgt_in), logits, atol=1e-5, rtol=0)
    # a greedy step reads the same word on both paths
    assert torch.equal(model(src, tgt_in).argmax(-1), logits.argmax(-1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm_first", [False, True])
def test_whole_model_fast_path_gives_the_explicit_paths_gradients(dtype, norm_first):
    """The training step's path (token rows, the ReLU and residual sums in place) and the
    explicit one give every parameter the same gradient."""
    torch.manual_seed(0)
    model = il.modules.Transformer(replace(CFG, norm_first=norm_first)).to(dtype).train()
    src = torch.tensor([[3, 4, 5, 6, 7, 8, 9], [5, 6, 7, 0, 0, 0, 0]])
    tgt_in = torch.tensor([[1, 4, 5, 6], [1, 7, 8, 9]])
    grads = []
    for explicit in (True, False):
        model.zero_grad()
        logits = model(src, tgt_in, return_attention=explicit)
        logits = logits[0] if explicit else logits
        torch.nn.functional.cross_entropy(logits.flatten(0, 1), tgt_in.flatten()).backward()
        grads.append({name: p.grad.clone() for name, p in model.named_parameters()})
    assert grads[0].keys() == grads[1].keys()
    for name in grads[0]:
        assert torch.allclose(grads[1][name], grads[0][name], atol=ATOL[dtype], rtol=0), name


@pytest.mark.parametrize("layer", ["encoder", "decoder"])
def test_fast_path_gradients_with_dropout_pass_gradcheck(float64, layer):
    """With dropout acting (train mode, its draws fixed by a seed) the in-place sums and ReLU
    of the fast path still give the exact gradient (against finite differences)."""
    cfg = replace(CFG, d_model=8, n_heads=2, d_ff=6, dropout=0.3)
    module = (EncoderLayer if layer == "encoder" else DecoderLayer)(cfg).train()
    x, memory = torch.randn(2, 3, 8), torch.randn(2, 4, 8)
    x.requires_grad_(True)
    memory.requires_grad_(True)
    mask = torch.tensor([[True, True, True, False], [True, True, True, True]])[:, None, None]

    def run(x, memory):
        torch.manual_seed(0)  # the same dropout draws in every call
        if layer == "encoder":
            return module(x, mask[..., :3])
        return module(x, memory, mask, il.causal_mask(3))

    assert not torch.equal(run(x, memory), module.eval()(x, memory, mask, il.causal_mask(3))
                           if layer == "decoder" else module.eval()(x, mask[..., :3]))
    module.train()
    assert torch.autograd.gradcheck(run, (x, memory))


def test_forward_hooks_fire_on_the_fast_path_too(float64):
    """A forward hook on a layer or a feed-forward network sees every call: with one registered,
    ``forward`` leaves the token-rows path (which calls the sub-layers' own functions) for the
    modules' ``forward``, so the hooked model's output changes and both paths agree."""
    model = il.modules.Transformer(CFG).eval()
    src = torch.tensor([[3, 4, 5, 6, 7], [5, 6, 7, 0, 0]])
    tgt_in = torch.tensor([[1, 4, 5], [1, 7, 8]])
    plain = model(src, tgt_in)
    calls = []
    model.encoder.layers[1].register_forward_pre_hook(lambda module, args: calls.append(1))
    model.decoder.layers[0].feed_forward.register_forward_hook(lambda module, args, out: 2 * out)
    hooked = model(src, tgt_in)
    assert len(calls) == 1  # the encoder's second layer, called once by forward
    assert not torch.allclose(hooked, plain, atol=1e-3)  # the doubled feed-forward output
    assert torch.allclose(hooked, model(src, tgt_in, return_attention=True)[0], atol=1e-12, rtol=0)


def test_fast_path_keeps_a_float32_stream_under_bfloat16_autocast():
    """Under autocast a matrix product gives bfloat16; the fast path's in-place residual sum
    must not turn the float32 residual stream into bfloat16 (the explicit path's ``x + z``
    stays float32), so both paths give float32 memory of the same values."""
    torch.manual_seed(0)
    model = il.modules.Transformer(CFG).eval()
    src = torch.tensor([[3, 4, 5, 6, 7], [5, 6, 7, 0, 0]])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        fast = model.encode(src)
        explicit, _ = model.encode(src, return_attention=True)
        logits = model(src, torch.tensor([[1, 4, 5], [1, 7, 8]]))  # the decoder takes the memory
    assert fast.dtype == explicit.dtype == torch.float32
    assert torch.allclose(fast, explicit, atol=0.05, rtol=0)
    assert torch.isfinite(logits).all()
