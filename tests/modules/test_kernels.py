"""The attention kernels agree: the book's step-by-step one (``return_attention=True``, or the
weights recorded by ``recording_attention``), the
key-first batched one that ``MultiHeadAttention`` picks on a CPU, and
``torch.nn.functional.scaled_dot_product_attention``, which it picks on CUDA and MPS.

The fused kernel runs on a CPU too, so every test here drives the whole attention, layer or
model through each batched kernel (``Attend.kernel`` set, as on another device): the branch
a GPU takes is never untested for want of one."""
from dataclasses import replace

import pytest
import torch
from torch.nn import functional as F

import illustrated as il
from illustrated.modules import DecoderLayer, EncoderLayer, MultiHeadAttention
from illustrated.modules import batched_attention
from illustrated.modules.attend import Attend, kernel_for
from illustrated.modules.batched_attention import attend_keys_first, fused_attention

CFG = replace(il.TINY, src_vocab_size=11, tgt_vocab_size=13, d_model=16, n_heads=4, d_ff=24,
              n_layers=2, dropout=0.0)
ATOL = {torch.float32: 1e-6, torch.float64: 1e-12}
KERNELS = {"keys-first (CPU)": attend_keys_first,
           "F.scaled_dot_product_attention (CUDA, MPS)": fused_attention}


@pytest.fixture(params=list(KERNELS))
def kernel(request, monkeypatch):
    """Make every ``MultiHeadAttention`` take this batched kernel, as it would on that device."""
    monkeypatch.setattr(Attend, "kernel", staticmethod(KERNELS[request.param]))
    return KERNELS[request.param]


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


def test_the_kernel_is_keys_first_on_a_cpu_and_torchs_fused_one_elsewhere(monkeypatch):
    assert kernel_for(torch.device("cpu")) is attend_keys_first
    for device in ("cuda", "mps"):
        assert kernel_for(torch.device(device)) is fused_attention
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 5, 16)
    expected = mha(x, x, x, il.causal_mask(5))

    def refuse(*args, **kwargs):
        raise AssertionError("the fused kernel ran on a CPU")

    monkeypatch.setattr(batched_attention.F, "scaled_dot_product_attention", refuse)
    assert torch.equal(mha(x, x, x, il.causal_mask(5)), expected)


@pytest.mark.parametrize("masked", ["padding", "causal"])
def test_the_kernel_another_device_takes_masks_the_keys(float64, masked):
    """The path a GPU takes, on the CPU: the attention's kernel set to the one ``kernel_for``
    gives a CUDA device. A masked key gets no weight: the output is the step-by-step one, and
    changing a masked key's value (a pad, a later position) changes no output."""
    mha = MultiHeadAttention(16, 4).eval()
    mha.attend.kernel = kernel_for(torch.device("cuda"))
    x = torch.randn(2, 5, 16)
    if masked == "padding":
        tokens = torch.tensor([[3, 4, 5, 0, 0], [3, 4, 5, 6, 7]])
        mask, changed = il.padding_mask(tokens, 0), x.clone()
        changed[0, 3:] += 100.0  # the first sentence's pads
        rows = (slice(None), slice(None))  # every query
    else:
        mask, changed = il.causal_mask(5), x.clone()
        changed[:, 3:] += 100.0  # positions 3 and 4
        rows = (slice(None), slice(0, 3))  # the queries before them
    out = mha(x, x, x, mask)
    step_by_step, weights = mha(x, x, x, mask, return_attention=True)
    assert torch.allclose(out, step_by_step, atol=1e-12, rtol=0)
    assert torch.all(weights.masked_select(~mask.expand_as(weights)) == 0)
    again = mha(x, changed, changed, mask)  # the same queries, the masked keys changed
    assert torch.allclose(again[rows], out[rows], atol=1e-12, rtol=0)
    assert not torch.allclose(mha(x, changed, changed), mha(x, x, x))  # unmasked, it would


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("inputs", ["self", "cross", "key != value"])
@pytest.mark.parametrize("bias", [True, False])
def test_batched_kernels_equal_the_step_by_step_one_in_eval_mode(kernel, dtype, inputs, bias):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4, dropout=0.5, bias=bias).to(dtype).eval()  # eval: no dropout
    query = torch.randn(3, 5, 16, dtype=dtype)
    key = query if inputs == "self" else torch.randn(3, 7, 16, dtype=dtype)
    value = torch.randn_like(key) if inputs == "key != value" else key
    for name, mask in masks(3, 4, 5, key.shape[1]).items():
        step_by_step, weights = mha(query, key, value, mask, return_attention=True)
        batched = mha(query, key, value, mask)
        assert batched.dtype == dtype and batched.shape == (3, 5, 16)
        assert torch.allclose(batched, step_by_step, atol=ATOL[dtype], rtol=0), name
        if mask is not None:  # the step-by-step path did mask: a forbidden key has weight 0
            assert torch.all(weights.masked_select(~mask.expand_as(weights)) == 0)


def test_the_kernels_themselves_agree_on_any_leading_shape(float64):
    """Called directly as the attention calls them: (batch, n_heads, seq, d_k) and a mask that
    broadcasts, key-first equals torch's fused kernel and the book's function."""
    q, k, v = torch.randn(3, 2, 5, 4), torch.randn(3, 2, 6, 4), torch.randn(3, 2, 6, 4)
    for mask in (None, random_mask(3, 2, 5, 6), random_mask(3, 1, 1, 6), random_mask(1, 1, 5, 6)[0, 0]):
        expected, _ = il.modules.scaled_dot_product_attention(q, k, v, mask)
        for kernel in KERNELS.values():
            assert torch.allclose(kernel(q, k, v, mask, 0.0), expected, atol=1e-12, rtol=0)


def test_batched_kernels_equal_the_step_by_step_one_in_train_mode_without_dropout(float64, kernel):
    mha = MultiHeadAttention(16, 4, dropout=0.0).train()
    x, memory = torch.randn(2, 5, 16), torch.randn(2, 6, 16)
    for key, mask in ((x, il.causal_mask(5)), (memory, random_mask(2, 4, 5, 6))):
        step_by_step, _ = mha(x, key, key, mask, return_attention=True)
        assert torch.allclose(mha(x, key, key, mask), step_by_step, atol=1e-12, rtol=0)


@pytest.mark.parametrize("inputs", ["self", "cross"])
def test_batched_kernels_give_the_step_by_step_gradients(float64, kernel, inputs):
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16, requires_grad=True)
    memory = x if inputs == "self" else torch.randn(2, 6, 16, requires_grad=True)
    mask = il.causal_mask(5) if inputs == "self" else masks(2, 4, 5, 6)["padding"]
    grads = []
    for return_attention in (True, False):
        mha.zero_grad()
        x.grad = memory.grad = None
        out = mha(x, memory, memory, mask, return_attention=return_attention)
        out = out[0] if return_attention else out
        (out * torch.linspace(-1, 1, 16)).sum().backward()
        grads.append([p.grad.clone() for p in mha.parameters()] + [x.grad.clone()]
                     + ([] if memory is x else [memory.grad.clone()]))
    for step_by_step, batched in zip(*grads):
        assert torch.allclose(batched, step_by_step, atol=1e-12, rtol=0)


def draws(mha: MultiHeadAttention, x: torch.Tensor, n: int, return_attention: bool):
    """``n`` independent train-mode outputs of ``mha`` on ``x`` (batch, seq, d_model), from one
    call on ``n`` copies of the batch (every copy draws its own dropout):
    (n, batch, seq, d_model)."""
    copies = x.repeat(n, 1, 1)  # (n * batch, seq, d_model)
    out = mha(copies, copies, copies, return_attention=return_attention)
    out = out[0] if return_attention else out  # (n * batch, seq, d_model)
    return out.view(n, *x.shape)  # (n, batch, seq, d_model)


def test_batched_dropout_is_unbiased_with_the_step_by_step_spread(float64, kernel):
    """Dropout on the attention weights at rate p keeps each weight with probability 1 - p and
    scales it by 1/(1 - p): over many draws the mean output is the eval output, and the spread
    is that of the step-by-step path, which drops the same weights at the same rate."""
    mha = MultiHeadAttention(16, 4, dropout=0.3)
    x = torch.randn(2, 5, 16)
    expected = mha.eval()(x, x, x)
    mha.train()
    n = 4000
    torch.manual_seed(1)
    batched = draws(mha, x, n, return_attention=False)
    step_by_step = draws(mha, x, n, return_attention=True)
    assert not torch.allclose(batched[0], expected, atol=1e-3)  # dropout did act
    torch.manual_seed(1)
    assert torch.equal(draws(mha, x, n, return_attention=False), batched)  # same seed, same draws
    error = (batched.mean(0) - expected).abs()
    assert torch.all(error <= 5 * batched.std(0) / n ** 0.5)  # unbiased, to 5 standard errors
    spread = batched.var(0).sum() / step_by_step.var(0).sum()
    assert 0.9 < spread.item() < 1.1  # the same rate (p=0.5 would give 2.3 times the spread)


def test_a_query_row_with_no_key_is_refused_at_every_call(float64):
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    mask = il.causal_mask(5)
    mha(x, x, x, mask)  # fine
    mask[2, :] = False  # changed in place: no check is remembered, so it is caught
    with pytest.raises(ValueError, match="mask: some query position may attend to no key"):
        mha(x, x, x, mask)
    model = il.modules.Transformer(CFG)  # a layer trusts its input: the model checks at its door
    with pytest.raises(ValueError, match="src_mask: some query position may attend to no key"):
        model.encode(torch.tensor([[3, 4, 5]]), torch.zeros(1, 1, 1, 3, dtype=torch.bool))


def test_a_source_of_padding_only_is_refused():
    model = il.modules.Transformer(CFG)
    src = torch.tensor([[3, 4, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match=r"src: sentence 1 is only padding \(pad_id=0\)"):
        model(src, torch.tensor([[1, 2], [1, 2]]))


@pytest.mark.parametrize("norm_first", [False, True])
def test_layers_and_whole_model_equal_with_and_without_weights(float64, kernel, norm_first,
                                                               recorded):
    cfg = replace(CFG, norm_first=norm_first)
    x, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    src_mask = masks(2, 4, 5, 7)["padding"]
    encoder_layer, decoder_layer = EncoderLayer(cfg).eval(), DecoderLayer(cfg).eval()
    pad5 = masks(2, 4, 5, 5)["padding"]
    assert torch.allclose(encoder_layer(x, pad5), recorded(encoder_layer, encoder_layer, x, pad5)[0],
                          atol=1e-12, rtol=0)
    causal = il.causal_mask(5)
    step_by_step, _ = recorded(decoder_layer, decoder_layer, x, memory, src_mask, causal)
    assert torch.allclose(decoder_layer(x, memory, src_mask, causal), step_by_step, atol=1e-12,
                          rtol=0)
    model = il.modules.Transformer(cfg).eval()
    src = torch.tensor([[3, 4, 5, 6, 7, 8, 9], [5, 6, 7, 0, 0, 0, 0]])
    tgt_in = torch.tensor([[1, 4, 5, 6], [1, 7, 8, 9]])
    logits, attention = recorded(model, model, src, tgt_in)
    assert torch.allclose(model(src, tgt_in), logits, atol=1e-10, rtol=0)
    assert torch.all(attention.decoder_cross[0][1, :, :, 3:] == 0)  # the second source's pads


def test_whole_model_float32_kernels_agree(kernel, recorded):
    torch.manual_seed(0)
    model = il.modules.Transformer(CFG).eval()
    src = torch.tensor([[3, 4, 5, 6, 7], [5, 6, 7, 0, 0]])
    tgt_in = torch.tensor([[1, 4, 5], [1, 7, 8]])
    logits, _ = recorded(model, model, src, tgt_in)
    assert torch.allclose(model(src, tgt_in), logits, atol=1e-5, rtol=0)
    # a greedy step reads the same word with either kernel
    assert torch.equal(model(src, tgt_in).argmax(-1), logits.argmax(-1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm_first", [False, True])
def test_whole_model_batched_kernels_give_the_step_by_step_gradients(kernel, dtype, norm_first,
                                                                     recorded):
    """The training step (a batched kernel) and the step-by-step path give every parameter
    the same gradient."""
    torch.manual_seed(0)
    model = il.modules.Transformer(replace(CFG, norm_first=norm_first)).to(dtype).train()
    src = torch.tensor([[3, 4, 5, 6, 7, 8, 9], [5, 6, 7, 0, 0, 0, 0]])
    tgt_in = torch.tensor([[1, 4, 5, 6], [1, 7, 8, 9]])
    grads = []
    for step_by_step in (True, False):
        model.zero_grad()
        logits = recorded(model, model, src, tgt_in)[0] if step_by_step else model(src, tgt_in)
        F.cross_entropy(logits.flatten(0, 1), tgt_in.flatten()).backward()
        grads.append({name: p.grad.clone() for name, p in model.named_parameters()})
    assert grads[0].keys() == grads[1].keys()
    for name in grads[0]:
        assert torch.allclose(grads[1][name], grads[0][name], atol=ATOL[dtype], rtol=0), name


@pytest.mark.parametrize("layer", ["encoder", "decoder"])
def test_batched_gradients_with_dropout_pass_gradcheck(float64, kernel, layer, one_thread):
    """With dropout acting (train mode, its draws fixed by a seed) the batched kernel gives the
    exact gradient (against finite differences)."""
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


def test_a_float32_stream_under_bfloat16_autocast(kernel, recorded):
    """Under autocast a matrix product gives bfloat16; the residual stream must stay float32
    (``x + z`` promotes), with or without the weights, and both give memory of the same values."""
    torch.manual_seed(0)
    model = il.modules.Transformer(CFG).eval()
    src = torch.tensor([[3, 4, 5, 6, 7], [5, 6, 7, 0, 0]])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        batched = model.encode(src)
        step_by_step, _ = recorded(model, model.encode, src)
        logits = model(src, torch.tensor([[1, 4, 5], [1, 7, 8]]))  # the decoder takes the memory
    assert batched.dtype == step_by_step.dtype == torch.float32
    assert torch.allclose(batched, step_by_step, atol=0.05, rtol=0)
    assert torch.isfinite(logits).all()
