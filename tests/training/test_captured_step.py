"""The captured training step (illustrated.training.captured_step): buckets, padding that changes no loss
or gradient, the compiled step equal to the eager one over several steps, hooks that force the
eager step.

On the CPU the step is compiled with torch.compile's "aot_eager" backend (dynamo's graph and
AOTAutograd's forward and backward graphs, run by eager kernels: seconds to compile here, where
"inductor" takes minutes); on CUDA the same function is compiled by "inductor" with CUDA graphs.
"""
import warnings
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

import illustrated as il
from illustrated.training.captured_step import (CapturedStep, PaddedPairs, bucket, captured_step,
                                       check_compile, padded_batch)
from illustrated.data import collate, encode_pairs
from illustrated.data.pairs_file import build_vocab

PAIRS = [("a b c d", "w"), ("a b", "w x y z"), ("c", "x y"), ("d a", "z w x"),
         ("b c d a b", "y z"), ("a", "w w x"), ("c c d", "x"), ("d", "z y x w")]


@pytest.fixture(scope="module")
def vocabs():
    return build_vocab([s for s, _ in PAIRS]), build_vocab([t for _, t in PAIRS])


def tiny_model(vocabs, **overrides):
    src, tgt = vocabs
    il.set_seed(0)
    return il.modules.Transformer(replace(il.TINY, src_vocab_size=len(src),
                                          tgt_vocab_size=len(tgt), dropout=0.0, **overrides))


def test_buckets_are_the_ladder_and_hold_their_length():
    assert [bucket(n) for n in (1, 8, 9, 11, 13, 15, 17, 25, 33, 49, 65, 100, 768, 781)] == \
        [8, 8, 10, 12, 14, 16, 20, 28, 40, 56, 80, 112, 768, 896]
    assert all(n <= bucket(n) <= max(8, 1.25 * n) for n in range(1, 5000))
    assert len({bucket(n) for n in range(65, 129)}) == 4  # 80, 96, 112, 128: 4 an octave
    assert bucket(41, cap=42) == 42 and bucket(40, cap=42) == 40  # the ladder, up to max_len
    assert bucket(42, cap=42) == 42 and bucket(5, cap=6) == 6


def test_padded_batch_is_collate_padded_to_its_bucket(vocabs):
    src_vocab, tgt_vocab = vocabs
    encoded = encode_pairs(PAIRS[:5], src_vocab, tgt_vocab)
    plain = collate(encoded, src_vocab, tgt_vocab)
    src, tgt_in, tgt_out = padded_batch(encoded, src_vocab, tgt_vocab)
    assert src.shape == (8, 8) and tgt_in.shape == tgt_out.shape == (8, 8)  # 5 x 5, 5 x 5
    assert torch.equal(src[:5, :5], plain.src) and (src[:5, 5:] == src_vocab.pad_id).all()
    assert torch.equal(tgt_in[:5, :5], plain.tgt_in) and torch.equal(tgt_out[:5, :5], plain.tgt_out)
    assert (tgt_out[5:] == tgt_vocab.pad_id).all()  # padded sentences: every target ignored
    assert torch.equal(src[5:], src[:1].expand(3, -1))  # a source a query can attend to


@pytest.mark.parametrize("rows, max_len", [([0, 1, 2, 3, 4], None), ([7, 4], None),
                                           ([3, 3, 0], None), (list(range(8)), 6),
                                           ([6], None), (list(range(8)) + [1], None)])
def test_a_batch_gathered_from_the_tables_is_collate_padded_to_its_bucket(vocabs, rows, max_len):
    """The run's pairs padded once (PaddedPairs), then any batch of them, a pair twice too,
    gathered: the collate of those pairs, padded to their bucket (at most max_len), filler
    rows copying the first pair with every target ignored."""
    src_vocab, tgt_vocab = vocabs
    encoded = encode_pairs(PAIRS, src_vocab, tgt_vocab)
    pairs = PaddedPairs(encoded, src_vocab, tgt_vocab)
    assert pairs.src.dtype.itemsize == 1  # 8 words and 4 special tokens: int8 tables
    src, tgt_in, tgt_out = pairs.batch(rows, max_len=max_len)
    plain = collate([encoded[i] for i in rows], src_vocab, tgt_vocab)
    n, (_, s), (_, t) = len(rows), plain.src.shape, plain.tgt_in.shape
    assert src.shape == (bucket(n), bucket(s, max_len))
    assert tgt_in.shape == tgt_out.shape == (bucket(n), bucket(t, max_len))
    assert src.dtype == tgt_in.dtype == tgt_out.dtype == torch.int64
    assert torch.equal(src[:n, :s], plain.src) and (src[:n, s:] == src_vocab.pad_id).all()
    assert torch.equal(tgt_in[:n, :t], plain.tgt_in) and torch.equal(tgt_out[:n, :t],
                                                                     plain.tgt_out)
    assert (tgt_in[:n, t:] == tgt_vocab.pad_id).all() and (tgt_out[n:] == tgt_vocab.pad_id).all()
    assert torch.equal(src[n:], src[:1].expand(bucket(n) - n, -1))
    assert torch.equal(tgt_in[n:], tgt_in[:1].expand(bucket(n) - n, -1))


def test_padding_to_the_bucket_changes_neither_loss_nor_gradients(vocabs):
    """The same pairs, collated as they are and padded to their bucket: the same loss, token
    accuracy and gradient of every weight, with label smoothing (float64, to 1e-12)."""
    src_vocab, tgt_vocab = vocabs
    encoded = encode_pairs(PAIRS[:5], src_vocab, tgt_vocab)
    model = tiny_model(vocabs).double()
    step = CapturedStep(model, src_vocab, tgt_vocab, device=torch.device("cpu"),
                        label_smoothing=0.1, backend="eager")
    plain = collate(encoded, src_vocab, tgt_vocab)
    results = []
    for batch in (tuple(plain), padded_batch(encoded, src_vocab, tgt_vocab)):
        model.zero_grad()
        _, loss, correct = step.forward_loss(*batch)
        loss.backward()
        results.append((loss.item(), int(correct),
                        {n: p.grad.clone() for n, p in model.named_parameters()}))
    (loss_a, right_a, grads_a), (loss_b, right_b, grads_b) = results
    assert loss_b == pytest.approx(loss_a, rel=1e-12) and right_a == right_b
    for name, grad in grads_a.items():
        torch.testing.assert_close(grads_b[name], grad, rtol=1e-10, atol=1e-12, msg=name)
    # and the eager loss of train's loop: the model's checked forward on the plain batch
    with torch.no_grad():
        logits = model(plain.src, plain.tgt_in)
        expected = F.cross_entropy(logits.flatten(0, 1), plain.tgt_out.flatten(),
                                   ignore_index=tgt_vocab.pad_id, label_smoothing=0.1)
    assert loss_a == pytest.approx(float(expected), rel=1e-12)


def test_compiled_training_gives_the_eager_losses(vocabs):
    """il.train with the step compiled (aot_eager, batches padded to buckets) and eager: the
    same loss, accuracy and weights over 6 steps of batches of 3 pairs of varying lengths, and
    one compiled shape for all of them (every batch falls in the bucket 8 x 8 x 8)."""
    src_vocab, tgt_vocab = vocabs
    runs = {}
    graphs = counters["stats"]["unique_graphs"]
    for compile in (False, "aot_eager"):
        model = tiny_model(vocabs)
        history = il.train(model, PAIRS, src_vocab, tgt_vocab, steps=6, batch_size=3,
                           label_smoothing=0.1, device="cpu", progress=False, compile=compile)
        runs[compile] = (history, model)
    (eager, eager_model), (compiled, compiled_model) = runs[False], runs["aot_eager"]
    assert compiled.loss == pytest.approx(eager.loss, rel=1e-5)
    assert compiled.accuracy == eager.accuracy
    assert counters["stats"]["unique_graphs"] == graphs + 1  # one bucket: one graph compiled
    assert eager.loss[-1] < eager.loss[0]  # it trains
    for (name, a), b in zip(eager_model.state_dict().items(),
                            compiled_model.state_dict().values()):
        # A key's bias adds q . b_k to every score of a query: the softmax drops it, its
        # gradient is 0 up to rounding, and Adam turns that rounding into steps of size lr.
        if not name.endswith("w_k.bias"):
            torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5, msg=name)


def test_the_step_compiles_to_one_graph(vocabs):
    """The forward pass and the loss trace with no graph break: on CUDA one CUDA graph for the
    forward and one for the backward, not a few hundred launches."""
    src_vocab, tgt_vocab = vocabs
    model = tiny_model(vocabs).train()
    step = CapturedStep(model, src_vocab, tgt_vocab, device=torch.device("cpu"), backend="eager")
    batch = padded_batch(encode_pairs(PAIRS, src_vocab, tgt_vocab), src_vocab, tgt_vocab)
    explained = torch._dynamo.explain(step.forward_loss)(*batch)
    assert explained.graph_count == 1 and explained.graph_break_count == 0


def test_a_hook_is_traced_into_the_compiled_step(vocabs):
    """A forward pre-hook on one linear layer (halving its input) acts in the compiled step as
    in the eager one: the same losses, the hook's effect at every step."""
    src_vocab, tgt_vocab = vocabs
    losses = {}
    for compile in (False, "aot_eager", None):
        model = tiny_model(vocabs)
        layer = model.encoder.layers[0].self_attn.w_k
        handle = layer.register_forward_pre_hook(lambda m, args: (args[0] * 0.5,)) \
            if compile is not None else None
        losses[compile] = il.train(model, PAIRS, src_vocab, tgt_vocab, steps=3, batch_size=4,
                                   device="cpu", progress=False,
                                   compile=compile or False).loss
        if handle is not None:
            handle.remove()
    torch.testing.assert_close(losses["aot_eager"], losses[False], rtol=1e-5, atol=1e-6)
    assert losses[False] != losses[None]  # the hook did act


def test_when_the_step_is_captured(vocabs):
    src_vocab, tgt_vocab = vocabs
    model = tiny_model(vocabs)
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert captured_step(model, "auto", src_vocab, tgt_vocab, device=cpu) is None
    assert captured_step(model, False, src_vocab, tgt_vocab, device=cuda) is None
    on_cuda = captured_step(model, "auto", src_vocab, tgt_vocab, device=cuda)
    assert on_cuda.backend == "inductor"  # no CUDA-graph mode: graphed_step captures
    on_cpu = captured_step(model, True, src_vocab, tgt_vocab, device=cpu)
    assert on_cpu.backend == "inductor"
    for kwargs in ({"processes": 2}, {"grad_accum_steps": 2}):
        with pytest.warns(UserWarning, match="eager step"):
            assert captured_step(model, True, src_vocab, tgt_vocab, device=cuda, **kwargs) is None

    class Unchecked(torch.nn.Module):  # the decoding contract, without the unchecked twins
        cfg = model.cfg

        def encode(self, src, src_mask=None):
            return model.encode(src, src_mask)

        def decode(self, tgt_in, memory, src_mask=None):
            return model.decode(tgt_in, memory, src_mask)

        def generator(self, x):
            return model.generator(x)

    assert captured_step(model, "auto", src_vocab, tgt_vocab, device=cuda) is not None
    with pytest.raises(TypeError, match=r"^model: expected an illustrated Transformer \(or an "
                                        r"nn.Module with its cfg, encode, decode, generator, "
                                        r"encode_unchecked"):
        il.train(Unchecked(), PAIRS, src_vocab, tgt_vocab, steps=1, device="cpu", progress=False)


@pytest.mark.parametrize("value, error", [("yes", "compile: expected 'auto', True, False or a "
                                                  "torch.compile backend"),
                                          (1, "compile: expected 'auto', True, False or a "
                                              "torch.compile backend's name, got int 1"),
                                          (None, "got NoneType None")])
def test_bad_compile_is_one_line_naming_it(vocabs, value, error):
    with pytest.raises(ValueError, match=error.replace("(", r"\(")):
        check_compile(value)
    src_vocab, tgt_vocab = vocabs
    with pytest.raises(ValueError, match="compile: expected"):
        il.train(tiny_model(vocabs), PAIRS, src_vocab, tgt_vocab, steps=1, device="cpu",
                 progress=False, compile=value)
    assert check_compile("aot_eager") == "aot_eager" and check_compile(True) is True


def test_a_failing_compiler_falls_back_to_the_eager_step(vocabs):
    """A backend that fails (no C compiler, no Triton) stops nothing: one warning, then the
    eager step, the eager losses bit for bit."""
    from torch._dynamo import register_backend

    @register_backend
    def failing_for_the_test(gm, example_inputs):
        raise RuntimeError("no compiler here")

    src_vocab, tgt_vocab = vocabs
    losses = {}
    for compile in (False, "failing_for_the_test"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            losses[compile] = il.train(tiny_model(vocabs), PAIRS, src_vocab, tgt_vocab, steps=3,
                                       batch_size=4, device="cpu", progress=False,
                                       compile=compile).loss
        said = [str(w.message) for w in caught if "failed on the first batch" in str(w.message)]
        assert len(said) == (compile != False)  # noqa: E712
    assert "no compiler here" in said[0]
    assert losses["failing_for_the_test"] == losses[False]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("precision, rel", [("fp32", 1e-4), ("bf16", 2e-2)])
def test_on_cuda_the_whole_step_is_one_cuda_graph_with_the_eager_losses(vocabs, precision, rel,
                                                                         monkeypatch):
    """On a GPU: compile="auto" takes the first step of the run's one bucket uncaptured, then
    records the whole step (forward to Adam) and replays it for the 7 others, with no warning,
    and trains to the eager losses (fp32 to 1e-4; bf16 to its own rounding, 2e-2), the accuracy
    too in fp32; the schedule's rate reaches the graph's Adam (warm-up 4 of 8 steps)."""
    src_vocab, tgt_vocab = vocabs
    replays = []
    replay = torch.cuda.CUDAGraph.replay
    monkeypatch.setattr(torch.cuda.CUDAGraph, "replay",
                        lambda self: replays.append(1) or replay(self))
    runs = {}
    for compile in (False, "auto"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = tiny_model(vocabs)
            runs[compile] = (il.train(model, PAIRS, src_vocab, tgt_vocab, steps=8, batch_size=4,
                                      warmup=4, device="cuda", precision=precision,
                                      progress=False, compile=compile), model)
        assert not [str(w.message) for w in caught if "compile:" in str(w.message)]
    assert len(replays) == 7
    (eager, eager_model), (graphed, graphed_model) = runs[False], runs["auto"]
    assert graphed.loss == pytest.approx(eager.loss, rel=rel)
    assert graphed.lr == eager.lr
    assert precision == "bf16" or graphed.accuracy == eager.accuracy
    if precision == "fp32":
        for (name, a), b in zip(eager_model.state_dict().items(),
                                graphed_model.state_dict().values()):
            if not name.endswith("w_k.bias"):  # see test_compiled_training_gives_the_eager_losses
                torch.testing.assert_close(b, a, rtol=1e-3, atol=1e-4, msg=name)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_cuda_a_diverging_graphed_run_comes_back_to_its_weights(vocabs):
    """lr=1e30: the loss stops being finite at a replayed step, and the model comes back with
    exactly the weights it had before the step that broke it (as tests/training/test_training.py's
    eager run)."""
    src_vocab, tgt_vocab = vocabs
    model = tiny_model(vocabs)
    snapshots = {0: {k: v.clone() for k, v in model.state_dict().items()}}

    def keep(step, history):
        snapshots[step] = {k: v.clone() for k, v in model.state_dict().items()}

    with pytest.raises(il.TrainingDiverged) as info:
        il.train(model, PAIRS, src_vocab, tgt_vocab, steps=50, batch_size=4, lr=1e30, warmup=0,
                 device="cuda", progress=False, compile="auto", callback=keep)
    done = info.value.history.steps
    assert done >= 1
    for name, weight in model.state_dict().items():
        assert torch.equal(weight, snapshots[done - 1][name]), name


def test_the_command_line_passes_compile_to_train(capsys):
    from illustrated.commands.cli import _loop_options, build_parser
    parser = build_parser()
    for flag, value in (("auto", "auto"), ("on", True), ("off", False)):
        args = parser.parse_args(["train", "--corpus", "post", "--compile", flag])
        passed = _loop_options(args)["compile"]
        assert passed == value and type(passed) is type(value)
    assert parser.parse_args(["train", "--corpus", "post"]).compile == "auto"
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "--corpus", "post", "--compile", "maybe"])
    assert "--compile: invalid choice: 'maybe'" in capsys.readouterr().err


def test_a_captured_step_waits_for_the_device_once(vocabs, monkeypatch):
    """The loop reads the loss, the gradients' norm and the accuracy in one transfer, after the
    update is queued: on a GPU one wait a step (four reads a step kept the GPU idle between
    them). Every read of a float or bool tensor's value into Python is counted, from step 2
    (the compiling step done); the shuffled order of an epoch, an int64 CPU tensor, is not."""
    src_vocab, tgt_vocab = vocabs
    reads, marks = [], []
    names = ("item", "tolist", "__bool__", "__float__", "__int__", "__index__")

    def counted(name, original):
        def read(self, *args, **kwargs):
            if self.is_floating_point() or self.dtype == torch.bool:
                reads.append(name)
            return original(self, *args, **kwargs)
        return read

    def callback(step, history):
        if step == 1:
            for name in names:
                monkeypatch.setattr(torch.Tensor, name, counted(name, getattr(torch.Tensor, name)))
        marks.append(len(reads))

    il.train(tiny_model(vocabs), PAIRS, src_vocab, tgt_vocab, steps=5, batch_size=4,
             device="cpu", progress=False, compile="aot_eager", callback=callback)
    assert [b - a for a, b in zip(marks, marks[1:])] == [1, 1, 1, 1]
    assert set(reads) == {"tolist"}
