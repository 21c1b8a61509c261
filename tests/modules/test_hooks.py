"""A hook always sees its module's call: on every path the model takes (forward in eval and in
train mode, greedy decoding, beam search), a forward pre-hook that changes the input of any
sub-module (every nn.Linear, nn.LayerNorm, nn.Embedding and nn.Dropout, every attention,
feed-forward network, layer and stack) changes what the model returns; and
``torch.nn.utils.prune``, which works through such a hook, takes effect on ``w_k``.

One module is called on one path only: the attention's ``dropout``, which drops the weights
that only the step-by-step path makes; the batched kernels take its rate, ``dropout.p``, as
``F.scaled_dot_product_attention`` does (tested below)."""
from dataclasses import replace

import pytest
import torch
import torch.nn.utils.prune as prune
from torch import nn

import illustrated as il

CFG = replace(il.TINY, src_vocab_size=11, tgt_vocab_size=13, d_model=16, n_heads=4, d_ff=24,
              n_layers=2, dropout=0.0)
BOS, EOS = 1, 2
SRC = torch.tensor([[3, 4, 5, 6, 7, 0], [5, 6, 7, 8, 9, 10]])  # one sentence padded
TGT_IN = torch.tensor([[BOS, 4, 5, 6], [BOS, 7, 8, 9]])


def build(norm_first: bool) -> il.modules.Transformer:
    torch.manual_seed(0)
    return il.modules.Transformer(replace(CFG, norm_first=norm_first))


def forward_eval(model):
    model.eval()
    with torch.no_grad():
        return model(SRC, TGT_IN)


def forward_train(model):
    """Train mode (dropout 0, so the run is deterministic): the training step's path."""
    model.train()
    try:
        return model(SRC, TGT_IN).detach()
    finally:
        model.eval()


def greedy(model):
    """The log-probabilities of every greedy step (they move even where the words stay)."""
    _, steps = il.greedy_decode(model, SRC[0], bos_id=BOS, eos_id=EOS, max_len=3,
                                return_steps=True)
    return [(step.token, torch.tensor(step.log_probs)) for step in steps]


def beam(model):
    """Every candidate beam search scored, step by step."""
    _, steps = il.beam_search(model, SRC[1], bos_id=BOS, eos_id=EOS, beam_size=2, top_beams=2,
                              max_len=3, return_steps=True)
    return [candidate for step in steps for candidate in step.candidates]


PATHS = {"forward (eval)": forward_eval, "forward (train)": forward_train,
         "greedy decoding": greedy, "beam search": beam}


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def change_input(module: nn.Module, args: tuple):
    """Replace the first input: float inputs by seeded noise of their shape (a constant or a
    scale would vanish after a LayerNorm), token ids by their neighbours."""
    first = args[0]
    if first.is_floating_point():
        noise = torch.randn(first.shape, generator=torch.Generator().manual_seed(1),
                            dtype=first.dtype)
        return (3 * noise, *args[1:])
    vocab = module.num_embeddings if isinstance(module, nn.Embedding) \
        else module.lut.num_embeddings
    return ((first + 1) % vocab, *args[1:])


def hookable(model: nn.Module) -> list[str]:
    """Every sub-module that the model calls: all but the ModuleLists that hold the layers and
    the attentions' dropout (see the module's docstring)."""
    return [name for name, module in model.named_modules()
            if name and not isinstance(module, nn.ModuleList)
            and not name.endswith("attn.dropout")]


def test_the_probe_covers_every_kind_of_module():
    models = [build(False), build(True)]
    kinds = {type(model.get_submodule(name)).__name__ for model in models for name in hookable(model)}
    assert {"Linear", "LayerNorm", "Embedding", "Dropout", "MultiHeadAttention", "FeedForward",
            "EncoderLayer", "DecoderLayer", "Encoder", "Decoder", "Embeddings",
            "PositionalEncoding", "Generator", "Identity"} <= kinds
    assert sum(name.endswith(("w_q", "w_k", "w_v", "w_o")) for name in hookable(build(False))) \
        == 4 * 6  # four projections in each of the six attentions


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_a_pre_hook_that_changes_the_input_changes_every_paths_output(norm_first, one_thread):
    model = build(norm_first)
    plain = {path: run(model) for path, run in PATHS.items()}
    missed = []
    for name in hookable(model):
        handle = model.get_submodule(name).register_forward_pre_hook(change_input)
        try:
            missed += [(name, path) for path, run in PATHS.items() if same(run(model), plain[path])]
        finally:
            handle.remove()
    assert not missed, f"hooks that did not change the output: {missed}"
    assert all(same(run(model), plain[path]) for path, run in PATHS.items())  # all removed


@pytest.mark.parametrize("name", ["encoder.layers.0.self_attn.w_k",
                                  "decoder.layers.1.cross_attn.w_k"])
def test_pruning_w_k_takes_effect_on_every_path(name, one_thread):
    """``prune`` sets ``weight`` from ``weight_orig`` and a mask in a forward pre-hook: the
    pruned weights must be what every path multiplies by."""
    model = build(False)
    w_k = model.get_submodule(name)
    plain = {path: run(model) for path, run in PATHS.items()}
    prune.l1_unstructured(w_k, "weight", amount=0.5)
    pruned = {path: run(model) for path, run in PATHS.items()}
    assert not any(same(pruned[path], plain[path]) for path in PATHS)
    with torch.no_grad():
        w_k.weight_orig.mul_(-1)  # the hook recomputes weight at every call
    assert not any(same(run(model), pruned[path]) for path, run in PATHS.items())
    # and the result is that of a model whose W_K holds the pruned weights
    expected = build(False)
    expected.load_state_dict({key.replace("weight_orig", "weight"): value for key, value in
                              model.state_dict().items() if not key.endswith("weight_mask")})
    with torch.no_grad():
        expected.get_submodule(name).weight.mul_(w_k.weight_mask)
    assert torch.allclose(forward_eval(expected), forward_eval(model), atol=1e-6, rtol=0)


def test_the_batched_kernels_drop_attention_weights_at_the_modules_rate():
    """The attention's dropout module is not called by the batched kernels, but its rate is
    what they use: set to 1 - 1e-9, nearly every weight is dropped and the heads' output is
    W_O's bias alone."""
    model = build(False)
    mha = model.encoder.layers[0].self_attn
    x = torch.randn(2, 5, 16)
    mha.train()
    assert torch.equal(mha(x, x, x), mha(x, x, x))  # rate 0: nothing drawn
    mha.dropout.p = 1 - 1e-9
    out = mha(x, x, x)
    assert torch.allclose(out, mha.w_o.bias.expand_as(out), atol=1e-6)
