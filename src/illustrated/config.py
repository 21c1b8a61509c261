"""The model's hyper-parameters, with the paper's names and defaults (paper §3, Table 3)."""
from __future__ import annotations

from dataclasses import dataclass

from ._args import check_bool, check_choice, check_int, check_real

__all__ = ["TransformerConfig", "PAPER_BASE", "TINY"]


@dataclass(frozen=True)
class TransformerConfig:
    """Every size of an encoder-decoder Transformer, as the post and the paper name them.

    The defaults are the paper's base model (Table 3). Vocabulary sizes count the special tokens.
    n_heads divides d_model; n_layers: of each stack; max_len: the longest sequence, in tokens.
    norm_first: False = post-LN ``LayerNorm(x + Sublayer(x))`` (paper, post); True = pre-LN
    ``x + Sublayer(LayerNorm(x))``, a deliberate deviation (chapter 06).
    pad_id builds the source mask when none is given; tgt_pad_id is ignored by the loss and
    never generated. pe_layout: "interleaved" (paper §3.5) or "concatenated" (the post's).
    Raises TypeError (also a ValueError) for a field of the wrong type (``dropout='0.1'``,
    ``d_model=32.0``); ValueError if a size is not positive, ``d_model % n_heads != 0``, dropout
    is not in [0, 1), a pad id lies outside its vocabulary, or ``pe_layout`` is unknown; every
    message starts with the field's name.
    Post "A High-Level Look"; paper §3.1-§3.5, Table 3.
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    d_ff: int = 2048
    n_layers: int = 6
    dropout: float = 0.1
    max_len: int = 256
    norm_first: bool = False
    pad_id: int = 0
    tgt_pad_id: int = 0
    pe_layout: str = "interleaved"

    def __post_init__(self) -> None:
        fix = object.__setattr__  # frozen: normalise NumPy numbers to Python ones
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff",
                     "n_layers", "max_len"):
            fix(self, name, check_int(name, getattr(self, name), low=1))
        if self.d_model % self.n_heads != 0:
            raise ValueError(
                f"d_model: expected a multiple of n_heads={self.n_heads}, got d_model={self.d_model} "
                f"(each head gets d_k = d_model / n_heads dimensions)")
        fix(self, "dropout", check_real("dropout", self.dropout, low=0.0, high=1.0,
                                        high_open=True, what="a rate"))
        fix(self, "norm_first", check_bool("norm_first", self.norm_first))
        fix(self, "pad_id", check_int("pad_id", self.pad_id, low=0, high=self.src_vocab_size - 1,
                                      what=f"an id of the source vocabulary (src_vocab_size="
                                           f"{self.src_vocab_size})"))
        fix(self, "tgt_pad_id", check_int(
            "tgt_pad_id", self.tgt_pad_id, low=0, high=self.tgt_vocab_size - 1,
            what=f"an id of the target vocabulary (tgt_vocab_size={self.tgt_vocab_size})"))
        check_choice("pe_layout", self.pe_layout, ("interleaved", "concatenated"))

    @property
    def d_k(self) -> int:
        """Width of one head's queries, keys and values: ``d_model // n_heads`` (paper §3.2.2)."""
        return self.d_model // self.n_heads

    @property
    def d_v(self) -> int:
        """Width of one head's values; equal to ``d_k`` as in the paper."""
        return self.d_k


# The paper's base model (Table 3); vocabulary sizes are filled in with dataclasses.replace.
PAPER_BASE = TransformerConfig(src_vocab_size=1, tgt_vocab_size=1)

# Small enough that a chapter prints whole matrices, big enough to learn the toy corpora.
TINY = TransformerConfig(src_vocab_size=1, tgt_vocab_size=1, d_model=32, n_heads=4, d_ff=64,
                         n_layers=2, dropout=0.0, max_len=64)
