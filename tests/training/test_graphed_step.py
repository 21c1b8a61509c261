"""The whole-step CUDA graph's control (illustrated.training.graphed_step) on the CPU, with a stand-in for
torch.cuda's graphs: what is recorded when, which inputs a replay reads, what Adam is given during
a capture and after it, and what a failed capture leaves. The stand-in records the step during
"capture" without running it, and runs it on the graph's own input and output tensors at each
replay, Adam reading its rate from the graph's own rate tensor, as a CUDA graph does; the real
graphs are tested on a GPU (tests/training/test_captured_step.py)."""
import contextlib
import warnings
from dataclasses import replace

import pytest
import torch

import illustrated as il
from illustrated.training import graphed_step
from illustrated.data.pairs_file import build_vocab

PAIRS = [("a b c d", "w"), ("a b", "w x y z"), ("c", "x y"), ("d a", "z w x"),
         ("b c d a b", "y z"), ("a", "w w x"), ("c c d", "x"), ("d", "z y x w")]


class FakeGraph:
    """Records the step during capture; each replay runs it and writes the graph's outputs."""

    capturing = None  # the graph being captured
    made: list = []

    def __init__(self):
        self.step, self.replays, self.seen, self.rates = None, 0, [], []
        FakeGraph.made.append(self)

    def pool(self):
        return id(self)

    def replay(self):
        self.replays += 1
        self.step()


@pytest.fixture()
def fake_cuda(monkeypatch):
    """torch.cuda's streams and graphs stood in for, and GraphedStep told it may capture."""
    FakeGraph.made = []
    seen = {}

    @contextlib.contextmanager
    def graph(g, pool=None, stream=None):
        groups = captured.optimizer.param_groups
        seen.setdefault("during", []).append([(type(x["lr"]), x["capturable"]) for x in groups])
        FakeGraph.capturing = g
        try:
            yield
        finally:
            FakeGraph.capturing = None

    real_body = graphed_step.GraphedStep._body

    def body(self, batch):
        g = FakeGraph.capturing
        if g is None:
            return real_body(self, batch)
        outputs = (torch.zeros(()), torch.zeros(()), torch.zeros((), dtype=torch.long))

        def step():  # what the graph does: the step on its inputs, into its outputs, Adam
            # reading the rate tensor the capture handed it (not the float the loop sets)
            g.seen.append([t.clone() for t in batch])
            g.rates.append(self.lr.item())
            groups = self.optimizer.param_groups
            rates = [x["lr"] for x in groups]
            for x in groups:
                x["lr"] = self.lr
            try:
                for out, got in zip(outputs, real_body(self, batch)):
                    out.copy_(got.detach())
            finally:
                for x, rate in zip(groups, rates):
                    x["lr"] = rate
        g.step = step
        return outputs

    stream = type("Stream", (), {"__init__": lambda self, *a: None,
                                 "wait_stream": lambda self, other: None})
    monkeypatch.setattr(torch.cuda, "Stream", stream)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: stream())
    monkeypatch.setattr(torch.cuda, "stream", lambda s: contextlib.nullcontext())
    monkeypatch.setattr(torch.cuda, "CUDAGraph", FakeGraph)
    monkeypatch.setattr(torch.cuda, "graph", graph)
    monkeypatch.setattr(graphed_step.GraphedStep, "_body", body)
    real_init = graphed_step.GraphedStep.__init__
    captured = None

    def init(self, *args, **kwargs):
        nonlocal captured
        real_init(self, *args, **kwargs)
        # a float64 rate tensor: Adam's update is then the float rate's, bit for bit
        self.capture, self.stream = seen.get("capture", True), stream()
        self.lr = torch.zeros((), dtype=torch.float64)
        captured = self

    monkeypatch.setattr(graphed_step.GraphedStep, "__init__", init)
    return seen


@pytest.fixture(scope="module")
def vocabs():
    return build_vocab([s for s, _ in PAIRS]), build_vocab([t for _, t in PAIRS])


def model(vocabs):
    src, tgt = vocabs
    il.set_seed(0)
    return il.modules.Transformer(replace(il.TINY, src_vocab_size=len(src),
                                          tgt_vocab_size=len(tgt), dropout=0.0))


def train(vocabs, compile, **kw):
    m = model(vocabs)
    history = il.train(m, PAIRS, *vocabs, steps=6, batch_size=3, warmup=3, device="cpu",
                       progress=False, compile=compile, **kw)
    return history, m


def test_the_second_batch_of_a_shape_records_and_every_later_one_replays(vocabs, fake_cuda):
    """Six steps of one bucket: the first runs as it is, the second records one graph and
    replays it, and so does every later step; each replay reads that step's own batch (the ids
    copied into the graph's inputs). The run is the uncaptured step's bit for bit (the same
    compiled forward, backward, clipping and Adam), and its losses are the eager run's."""
    eager, _ = train(vocabs, False)
    fake_cuda["capture"] = False
    uncaptured, uncaptured_model = train(vocabs, "aot_eager")
    fake_cuda["capture"] = True
    graphed, graphed_model = train(vocabs, "aot_eager")
    (graph,) = FakeGraph.made
    assert graph.replays == 5
    batches = [str([t.tolist() for t in seen]) for seen in graph.seen]
    assert len(set(batches)) > 1  # not the batch of the capture again and again
    assert graphed.loss == uncaptured.loss and graphed.lr == uncaptured.lr == eager.lr
    assert graphed.accuracy == uncaptured.accuracy == eager.accuracy
    assert graphed.loss == pytest.approx(eager.loss, rel=1e-5)
    for (name, a), b in zip(uncaptured_model.state_dict().items(),
                            graphed_model.state_dict().values()):
        assert torch.equal(a, b), name
    # during the capture Adam reads its rate from a tensor and may be captured
    assert fake_cuda["during"] == [[(torch.Tensor, True)]]
    assert all(p.grad is None for p in graphed_model.parameters())  # released with the graphs


def test_each_replay_reads_its_steps_learning_rate_from_the_graphs_rate(vocabs, fake_cuda):
    """Warm-up then a cosine decay: the rate changes at every step, and a replayed graph's Adam reads
    it from the graph's own rate tensor, which must be written before each replay."""
    uncaptured = None
    for capture in (False, True):
        fake_cuda["capture"] = capture
        history, trained = train(vocabs, "aot_eager", lr=1e-2, schedule="cosine")
        uncaptured = uncaptured or (history, trained)
    (graph,) = FakeGraph.made
    assert len(set(history.lr)) == len(history.lr) == 6  # a new rate every step
    assert graph.rates == pytest.approx(history.lr[1:], rel=1e-6)  # steps 2-6 replayed
    for (name, a), b in zip(uncaptured[1].state_dict().items(), trained.state_dict().values()):
        assert torch.equal(a, b), name  # every update took its step's rate


def test_a_capture_that_fails_warns_once_and_the_run_goes_on_uncaptured(vocabs, fake_cuda,
                                                                        monkeypatch):
    @contextlib.contextmanager
    def broken(g, pool=None, stream=None):
        raise RuntimeError("operation not permitted when stream is capturing")
        yield

    monkeypatch.setattr(torch.cuda, "graph", broken)
    eager, _ = train(vocabs, False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graphed, _ = train(vocabs, "aot_eager")
    said = [str(w.message) for w in caught if "capturing the training step" in str(w.message)]
    assert len(said) == 1 and "operation not permitted" in said[0]
    assert graphed.loss == pytest.approx(eager.loss, rel=1e-5)


def test_a_checkpoint_written_mid_run_holds_adams_plain_settings(vocabs, fake_cuda, tmp_path):
    """The capture lends Adam a tensor rate and capturable=True; a checkpoint written between
    replays has a float rate and capturable=False, so that the run resumes (the resume check
    refuses any other Adam settings)."""
    path = tmp_path / "run.pt"
    train(vocabs, "aot_eager", checkpoint_every=3, checkpoint_path=path)
    m = model(vocabs)
    resumed = il.train(m, PAIRS, *vocabs, steps=8, batch_size=3, warmup=3, device="cpu",
                       progress=False, compile=False, resume=path)
    assert resumed.steps == 8
