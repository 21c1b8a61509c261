"""The Transformer's math exactly as the post tells it: NumPy, float64, pure functions.

One module per concept of the post (the PyTorch twins in :mod:`illustrated.modules` use the same
file names). Every weight matrix is (in_features, out_features), applied as ``x @ W + b``; so a
torch ``nn.Linear``'s weight enters as ``linear.weight.T``. Masks are bool, True = may attend.
"""
from __future__ import annotations

from .decoder import (DECODER_PARAM_KEYS, DecoderLayerResult, causal_mask, decoder_layer,
                      init_decoder_params)
from .embeddings import embed
from .encoder import ENCODER_PARAM_KEYS, EncoderLayerResult, encoder_layer, init_encoder_params
from .examples import (THINKING_MACHINES_SCALE, THINKING_MACHINES_WORDS, WorkedExample,
                       thinking_machines_example)
from .feed_forward import feed_forward, relu
from .loss import (cross_entropy, cross_entropy_from_logits, kl_divergence, one_hot,
                   smooth_labels)
from .multi_head import merge_heads, multi_head_attention, split_heads
from .output import OutputResult, final_linear_softmax
from .positional import (LAYOUTS, positional_encoding, positional_frequencies,
                         relative_position_matrix)
from .residual import LayerNormSteps, add_and_norm, layer_norm, layer_norm_steps
from .self_attention import AttentionResult, scaled_dot_product_attention, self_attention
from .softmax import log_softmax, softmax

__all__ = [
    # softmax
    "softmax", "log_softmax",
    # embeddings
    "embed",
    # self-attention
    "AttentionResult", "self_attention", "scaled_dot_product_attention",
    "WorkedExample", "thinking_machines_example", "THINKING_MACHINES_SCALE",
    "THINKING_MACHINES_WORDS",
    # multi-head attention
    "multi_head_attention", "split_heads", "merge_heads",
    # positional encoding
    "LAYOUTS", "positional_encoding", "positional_frequencies", "relative_position_matrix",
    # residuals
    "LayerNormSteps", "layer_norm", "layer_norm_steps", "add_and_norm",
    # feed-forward
    "relu", "feed_forward",
    # encoder and decoder
    "ENCODER_PARAM_KEYS", "EncoderLayerResult", "encoder_layer", "init_encoder_params",
    "DECODER_PARAM_KEYS", "DecoderLayerResult", "decoder_layer", "init_decoder_params",
    "causal_mask",
    # output and loss
    "OutputResult", "final_linear_softmax",
    "one_hot", "cross_entropy", "kl_divergence", "smooth_labels", "cross_entropy_from_logits",
]
