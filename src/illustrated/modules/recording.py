"""Reading the attention weights of a model whose layers return only their outputs.

Every layer and stack returns one tensor, and calls its attention without weights: the batched
kernel computes none. :func:`recording_attention` asks for them from outside, with hooks on each
:class:`~illustrated.modules.multi_head.MultiHeadAttention`'s kernel (``attend``, which it calls
with ``return_attention`` by name): a forward pre-hook sets it True (the step-by-step kernel,
equal to the batched one to rounding) and a forward hook keeps the weights; the attention
returns what it returns without them.
:class:`Attention` groups a Transformer's weights by layer.
Post "Self-Attention at a High Level" (the weights the post draws); paper §3.2.
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Iterator

import torch
from torch import nn

from .._args import check_instance
from .multi_head import MultiHeadAttention

__all__ = ["recording_attention", "Attention"]


class _Recorder:
    """The two hooks on one attention's kernel (``attend``): ask for the weights, keep them."""

    def __init__(self, calls: list[torch.Tensor]) -> None:
        self.calls = calls

    @staticmethod
    def before(_module, args, kwargs):
        return args, {**kwargs, "return_attention": True}  # the step-by-step kernel

    def after(self, _module, _args, output):
        self.calls.append(output[1])  # the weights (batch, n_heads, seq_q, seq_k)


@contextlib.contextmanager
def recording_attention(model: nn.Module) -> Iterator[dict[str, list[torch.Tensor]]]:
    """Keep the attention weights of every MultiHeadAttention in ``model`` while the block runs.

    Yields a dict: module name (as in ``model.named_modules()``, e.g.
    ``"encoder.layers.0.self_attn"``; ``""`` for ``model`` itself) -> the weights of each call,
    in call order, (batch, n_heads, seq_q, seq_k) each, rows summing to 1 (after dropout in
    train mode). Inside the block the attentions run the step-by-step kernel, whose outputs
    equal the batched kernel's to rounding (1e-6 in float32, tested); every module still
    returns what it returns outside. The hooks are removed when the block ends, also on an error.
    Raises TypeError (also a ValueError) if ``model`` is not an nn.Module; ValueError if it holds
    no MultiHeadAttention. Post "Self-Attention at a High Level"; paper §3.2.
    """
    check_instance("model", model, nn.Module, "a torch.nn.Module")
    attentions = [(name, m) for name, m in model.named_modules()
                  if isinstance(m, MultiHeadAttention)]
    if not attentions:
        raise ValueError(f"model: expected a module holding MultiHeadAttention layers, got a "
                         f"{type(model).__name__} with none")
    record: dict[str, list[torch.Tensor]] = {name: [] for name, _ in attentions}
    handles = []
    try:
        for name, attention in attentions:
            recorder = _Recorder(record[name])
            handles.append(attention.attend.register_forward_pre_hook(recorder.before,
                                                                      with_kwargs=True))
            handles.append(attention.attend.register_forward_hook(recorder.after))
        yield record
    finally:
        for handle in handles:
            handle.remove()


_LAYER = re.compile(r"(?:.*\.)?(encoder|decoder)\.layers\.(\d+)\.(self_attn|cross_attn)")


@dataclass
class Attention:
    """Attention weights of every layer and head of a Transformer, from one forward pass.

    Lists of n_layers tensors, layer 0 first: encoder (batch, n_heads, src_len, src_len),
    decoder_self (batch, n_heads, tgt_len, tgt_len), decoder_cross (batch, n_heads, tgt_len,
    src_len); the decoder's lists are empty after ``encode`` alone.
    """

    encoder: list[torch.Tensor]
    decoder_self: list[torch.Tensor]
    decoder_cross: list[torch.Tensor]

    @classmethod
    def of(cls, record: dict[str, list[torch.Tensor]]) -> "Attention":
        """The weights of each layer's last call in a :func:`recording_attention` record."""
        groups: dict[str, dict[int, torch.Tensor]] = {
            "encoder.self_attn": {}, "decoder.self_attn": {}, "decoder.cross_attn": {}}
        for name, calls in record.items():
            found = _LAYER.fullmatch(name)
            if found and calls:
                stack, layer, kind = found.groups()
                groups[f"{stack}.{kind}"][int(layer)] = calls[-1]
        return cls(*([g[i] for i in sorted(g)] for g in groups.values()))
