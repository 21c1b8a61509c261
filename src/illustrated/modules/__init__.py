"""PyTorch modules: the trainable twins of :mod:`illustrated.reference` (same file names)."""
from .decoder import Decoder, DecoderLayer
from .dropout import Dropout
from .embeddings import Embeddings
from .encoder import Encoder, EncoderLayer
from .feed_forward import FeedForward
from .kv_cache import AttentionCache, KVCache
from .multi_head import MultiHeadAttention
from .output import Generator
from .positional import PositionalEncoding, sinusoid_table
from .recording import Attention, recording_attention
from .residual import add_and_norm, sublayer_input
from .self_attention import scaled_dot_product_attention
from .transformer import Transformer

__all__ = ["Attention", "AttentionCache", "Decoder", "DecoderLayer", "Dropout", "Embeddings",
           "Encoder", "EncoderLayer", "FeedForward", "Generator", "KVCache", "MultiHeadAttention",
           "PositionalEncoding", "Transformer", "add_and_norm", "recording_attention",
           "scaled_dot_product_attention", "sinusoid_table", "sublayer_input"]
