"""The final linear layer that turns the decoder's vectors into scores over the vocabulary.

Post "The Final Linear and Softmax Layer"; paper §3.4.
"""
from __future__ import annotations

import torch
from torch import nn

from ._checks import check_sizes

__all__ = ["Generator"]


class Generator(nn.Module):
    """Project each decoder output vector to one score (logit) per word of the target vocabulary.

    The softmax is left to the loss (``F.cross_entropy``) and to decoding (``log_softmax``),
    which are more accurate on logits. x (batch, tgt_len, d_model) -> logits (batch, tgt_len,
    vocab_size), through proj = nn.Linear(d_model, vocab_size).
    Raises TypeError / ValueError for a size that is not a positive int.
    Post "The Final Linear and Softmax Layer"; paper §3.4 ("the usual learned linear
    transformation and softmax function").
    """

    def __init__(self, d_model: int, vocab_size: int) -> None:
        super().__init__()
        check_sizes(d_model=d_model, vocab_size=vocab_size)
        self.proj = nn.Linear(d_model, vocab_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x)  # (batch, tgt_len, vocab_size)
