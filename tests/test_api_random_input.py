"""Random shapes, dtypes and values thrown at the public API (hypothesis).

Every call must either return, with no NaN when every input was finite, or raise a ValueError or
TypeError whose message starts with the name of one of the function's own arguments ("x: ...",
"W_Q: ...", "X, W_Q, W_K, W_V: values too large ..."). Any other exception (IndexError,
RuntimeError from inside torch, ZeroDivisionError, MemoryError...) fails the test.
"""
from __future__ import annotations

import os
import re
from dataclasses import fields, replace

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import illustrated as il
from illustrated import reference as R
from illustrated.modules import MultiHeadAttention, PositionalEncoding, Transformer

# 150 examples a test keeps `make test` quick; ILLUSTRATED_HYPOTHESIS_EXAMPLES=5000 searches longer.
SETTINGS = settings(max_examples=int(os.environ.get("ILLUSTRATED_HYPOTHESIS_EXAMPLES", 150)),
                    deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CFG = replace(il.TINY, src_vocab_size=7, tgt_vocab_size=6, d_model=8, n_heads=2, d_ff=8,
              n_layers=1, max_len=8)
DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_]

# ---------------------------------------------------------------- strategies

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)
small_shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


@st.composite
def arrays(draw, shape=shapes):
    dtype = draw(st.sampled_from(DTYPES))
    if np.issubdtype(dtype, np.floating):
        elements = st.one_of(st.floats(-10, 10, width=32),
                             st.floats(allow_nan=True, allow_infinity=True, width=32)
                             if dtype == np.float32 else st.floats())
    elif dtype == np.bool_:
        elements = st.booleans()
    else:
        info = np.iinfo(dtype)
        elements = st.integers(max(info.min, -3), min(info.max, 9))
    return draw(hnp.arrays(dtype, draw(shape), elements=elements))


scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 12), st.integers(),
                    st.floats(), st.floats(-3, 3), st.text(max_size=4),
                    st.lists(st.integers(-2, 9), max_size=4))
values = st.one_of(arrays(), arrays(small_shapes), scalars)
int_args = st.one_of(st.integers(-2, 9), scalars)


def tensor(value):
    """NumPy arrays become torch tensors (same dtype); everything else stays as it is."""
    return torch.from_numpy(np.ascontiguousarray(value)) if isinstance(value, np.ndarray) \
        else value


# ---------------------------------------------------------------- the rule

NAME = re.compile(r"^((?:[A-Za-z_]\w*(?:\[[^\]]*\])?)(?:, [A-Za-z_]\w*)*): ")


def finite(*inputs) -> bool:
    for x in inputs:
        if isinstance(x, (np.ndarray, torch.Tensor)):
            a = np.asarray(x.detach() if isinstance(x, torch.Tensor) else x)
            if a.dtype.kind in "fc" and not np.isfinite(a).all():
                return False
        elif isinstance(x, float) and not np.isfinite(x):
            return False
        elif isinstance(x, (list, tuple)) and not finite(*x):
            return False
    return True


def outputs(result):
    if isinstance(result, (tuple, list)):
        for item in result:
            yield from outputs(item)
    elif isinstance(result, (np.ndarray, torch.Tensor, float, np.floating)):
        yield result


def check(call, names, *inputs):
    """Run ``call``; only a return or a ValueError/TypeError naming one of ``names`` may come."""
    try:
        with torch.no_grad():
            result = call()
    except (ValueError, TypeError) as error:
        message = str(error)
        match = NAME.match(message)
        assert match, f"{type(error).__name__} without an argument name: {message!r}"
        named = [n.split("[")[0] for n in match.group(1).split(", ")]
        assert set(named) <= set(names), f"names {named}, not among {names}: {message!r}"
        return None
    if finite(*inputs):
        for out in outputs(result):
            a = np.asarray(out.detach().float() if isinstance(out, torch.Tensor) else out)
            assert not np.isnan(a).any(), "NaN out of finite input"
    return result


# ---------------------------------------------------------------- the reference (NumPy)

@SETTINGS
@given(x=values, axis=int_args)
def test_softmax(x, axis):
    check(lambda: R.softmax(x, axis=axis), ["x", "axis"], x)
    check(lambda: R.log_softmax(x, axis=axis), ["x", "axis"], x)


@SETTINGS
@given(x=values, gamma=st.one_of(st.none(), values), beta=st.one_of(st.none(), values),
       eps=st.one_of(st.just(1e-5), st.just(0.0), scalars))
def test_layer_norm(x, gamma, beta, eps):
    check(lambda: R.layer_norm(x, gamma, beta, eps=eps), ["x", "gamma", "beta", "eps"],
          x, gamma, beta)
    check(lambda: R.add_and_norm(x, x, gamma, beta, eps=eps),
          ["x", "sublayer_out", "gamma", "beta", "eps"], x, gamma, beta)


@SETTINGS
@given(data=st.data(), seq=st.integers(0, 3), d=st.integers(0, 3), d_k=st.integers(0, 3))
def test_self_attention(data, seq, d, d_k):
    fitting = st.builds(lambda s: np.random.default_rng(0).normal(size=s) * 2,
                        st.sampled_from([(seq, d), (d, d_k), (d, d_k), (d, d_k)]))
    X, W_Q, W_K, W_V = (data.draw(st.one_of(fitting, values)) for _ in range(4))
    mask = data.draw(st.one_of(st.none(), arrays(), st.just(np.tril(np.ones((seq, seq), bool)))))
    check(lambda: R.self_attention(X, W_Q, W_K, W_V, mask),
          ["X", "W_Q", "W_K", "W_V", "mask"], X, W_Q, W_K, W_V)
    check(lambda: R.scaled_dot_product_attention(X, W_Q, W_K, mask), ["Q", "K", "V", "mask"],
          X, W_Q, W_K)


@SETTINGS
@given(x=values, n_heads=int_args, W=values, b=st.one_of(st.none(), values))
def test_heads_and_layers(x, n_heads, W, b):
    check(lambda: R.split_heads(x, n_heads), ["x", "n_heads"], x)
    check(lambda: R.merge_heads(x), ["x"], x)
    check(lambda: R.final_linear_softmax(x, W, b), ["x", "W", "b"], x, W, b)
    check(lambda: R.feed_forward(x, W, b, W, b), ["x", "W_1", "b_1", "W_2", "b_2"], x, W, b)
    check(lambda: R.multi_head_attention(x, x, x, W, W, W, W, n_heads),
          ["query", "key", "value", "W_Q", "W_K", "W_V", "W_O", "n_heads", "mask", "b_Q"],
          x, W)
    check(lambda: R.relu(x), ["x"], x)


@SETTINGS
@given(n=int_args, d=int_args, layout=st.one_of(st.sampled_from(["interleaved",
                                                                 "concatenated"]), scalars))
def test_positions_and_masks(n, d, layout):
    check(lambda: R.positional_encoding(n, d, layout), ["n_positions", "d_model", "layout"])
    check(lambda: R.relative_position_matrix(n, d, layout), ["k", "d_model", "layout"])
    check(lambda: R.causal_mask(n), ["size"])
    check(lambda: il.causal_mask(n), ["size"])
    check(lambda: il.modules.sinusoid_table(n, d, layout), ["n_positions", "d_model", "layout"])


@SETTINGS
@given(ids=values, size=int_args, eps=st.one_of(st.floats(0, 1), scalars), logits=values)
def test_loss(ids, size, eps, logits):
    check(lambda: R.one_hot(ids, size), ["index", "size"])
    check(lambda: R.smooth_labels(ids, size, eps), ["target_ids", "vocab_size", "epsilon"])
    check(lambda: R.cross_entropy(logits, logits), ["target", "predicted"], logits)
    check(lambda: R.kl_divergence(logits, logits), ["target", "predicted"], logits)
    check(lambda: R.cross_entropy_from_logits(logits, ids, eps),
          ["logits", "target_ids", "label_smoothing", "epsilon", "vocab_size"], logits)
    check(lambda: R.embed(ids, logits), ["token_ids", "embedding_matrix"], logits)


# ---------------------------------------------------------------- the modules (torch)

@SETTINGS
@given(d_model=int_args, n_heads=int_args, q=arrays(), k=arrays(), mask=st.one_of(
    st.none(), arrays()), shape=st.tuples(st.integers(1, 3), st.integers(1, 3)))
def test_multi_head_attention(d_model, n_heads, q, k, mask, shape):
    attention = check(lambda: MultiHeadAttention(d_model, n_heads), ["d_model", "n_heads"])
    if attention is None:
        return
    good = torch.randn(*shape, d_model)
    for query, key in ((tensor(q), tensor(k)), (good, tensor(k)), (good, good)):
        check(lambda: attention(query, key, key, mask=tensor(mask)),  # noqa: B023 (called at once)
              ["query", "key", "value", "mask"], query, key)


@SETTINGS
@given(d_model=int_args, max_len=int_args, layout=st.one_of(st.just("interleaved"), scalars))
def test_positional_encoding_module(d_model, max_len, layout):
    """Its sizes are checked; its input is the Transformer's, checked at the model's door."""
    check(lambda: PositionalEncoding(d_model, max_len, layout),
          ["d_model", "max_len", "layout", "dropout"])


@pytest.fixture(scope="module")
def model():
    il.set_seed(0)
    return Transformer(CFG).eval()


@SETTINGS
@given(src=st.one_of(arrays(), hnp.arrays(np.int64, small_shapes, elements=st.integers(-1, 7))),
       tgt=st.one_of(arrays(), hnp.arrays(np.int64, small_shapes, elements=st.integers(0, 6))),
       mask=st.one_of(st.none(), arrays()))
def test_transformer(model, src, tgt, mask):
    src, tgt, mask = tensor(src), tensor(tgt), tensor(mask)
    check(lambda: model(src, tgt, mask), ["src", "tgt_in", "src_mask"])
    check(lambda: model.encode(src, mask), ["src", "src_mask"])
    check(lambda: il.padding_mask(src, 0), ["tokens", "pad_id"])


@SETTINGS
@given(src_ids=st.one_of(st.lists(st.integers(-1, 8), max_size=9), values),
       bos_id=st.one_of(st.just(1), int_args), eos_id=st.one_of(st.just(2), int_args),
       max_len=st.one_of(st.integers(1, 8), int_args), beam_size=st.one_of(st.integers(1, 3),
                                                                          int_args),
       top_beams=st.one_of(st.just(1), int_args),
       alpha=st.one_of(st.floats(0, 2), scalars))
def test_decoding(model, src_ids, bos_id, eos_id, max_len, beam_size, top_beams, alpha):
    src_ids = tensor(src_ids)
    result = check(lambda: il.greedy_decode(model, src_ids, bos_id=bos_id, eos_id=eos_id,
                                            max_len=max_len),
                   ["src_ids", "bos_id", "eos_id", "max_len", "model"])
    if result is not None:
        assert 1 <= len(result) <= max_len and bos_id not in result
    results = check(lambda: il.beam_search(model, src_ids, bos_id=bos_id, eos_id=eos_id,
                                           max_len=max_len, beam_size=beam_size,
                                           top_beams=top_beams, alpha=alpha),
                    ["src_ids", "bos_id", "eos_id", "max_len", "beam_size", "top_beams",
                     "alpha", "model"])
    if results is not None:
        assert len(results) == top_beams
        assert all(np.isfinite(score) for _, score in results)


@SETTINGS
@given(data=st.data())
def test_config(data):
    changes = {f.name: data.draw(st.one_of(st.just(getattr(CFG, f.name)), scalars,
                                           st.sampled_from(["interleaved", "concatenated"])))
               for f in fields(CFG) if data.draw(st.booleans())}
    cfg = check(lambda: replace(CFG, **changes), [f.name for f in fields(CFG)])
    if cfg is not None:
        assert cfg == replace(cfg)  # a valid config stays valid


@SETTINGS
@given(tokens=st.one_of(st.lists(st.text(max_size=3), max_size=6), scalars),
       sentence=st.one_of(st.text(max_size=8), scalars))
def test_vocabulary_and_tokenizer(tokens, sentence):
    specials = ["<pad>", "<bos>", "<eos>", "<unk>"]
    vocab = check(lambda: il.data.Vocab(specials + tokens if isinstance(tokens, list)
                                        else tokens), ["tokens"])
    check(lambda: il.data.tokenize(sentence), ["sentence"])
    if vocab is not None:
        ids = check(lambda: vocab.encode(sentence), ["sentence"])
        if ids is not None:
            assert all(0 <= i < len(vocab) for i in ids)
            check(lambda: vocab.decode(ids), ["ids"])
        check(lambda: vocab.decode(sentence), ["ids"])
