"""The ONNX graphs the browser runs (illustrated.commands.onnx_export) against the PyTorch models they come
from, with onnxruntime, for every shipped corpus: the same memory, attention weights of every
layer and head (within 1e-5), next-token logits (within 1e-5, or 5e-6 of the largest logit where
that is larger: two float32 computations of a logit near 10 differ by 1e-5, torch's own is 1e-5
from the float64 result, and with ATEN_CPU_CAPABILITY=default torch's scalar kernels put the
reverse model's logits 3.0e-5 from onnxruntime's at a largest logit of about 13) and
log-probabilities (twice the logits' tolerance)."""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.modules import Attention, recording_attention
from illustrated.files.file_set import LOCK
from illustrated.commands.onnx_export import FORMAT, main, read_export
from illustrated.commands.shipped import SHIPPED

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is pinned in requirements.txt")

TOL = 1e-5
#: Relative part of the logits' tolerance (of the largest |logit|): about 40 float32 steps.
LOGIT_RTOL = 5e-6


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """Every shipped corpus exported once, through the command line."""
    out = tmp_path_factory.mktemp("onnx")
    assert main(["--out", str(out)]) == 0
    return out


def _session(path):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


@pytest.fixture(scope="session")
def sessions(exported):
    files = {corpus: entry["files"] for corpus, entry in read_export(exported)["models"].items()}
    return {corpus: (_session(exported / files[corpus]["encoder"]),
                     _session(exported / files[corpus]["decoder"])) for corpus in SHIPPED}


def _close(name: str, got: np.ndarray, want: torch.Tensor, tol: float = TOL) -> None:
    want = want.detach().numpy()
    assert got.shape == want.shape, f"{name}: shape {got.shape}, torch {want.shape}"
    diff = float(np.abs(got - want).max())
    assert diff <= tol, f"{name}: max abs difference {diff:.2e} > {tol}"


def _sources(corpus: str, src_vocab, count: int = 5) -> list[list[int]]:
    pairs, _, _ = il.data.load_corpus(corpus, "test")
    return [src_vocab.encode(source) for source, _ in pairs[:count]]


def test_index_and_vocabularies(exported):
    index = read_export(exported)  # every file checked against its size and sha256
    assert index == json.loads((exported / "index.json").read_text(encoding="utf-8"))
    assert index["format"] == FORMAT and index["corpora"] == list(SHIPPED)
    # the export's files, and no other: one set, named by its index
    named = {name for entry in index["models"].values() for name in entry["files"].values()}
    assert {p.name for p in exported.iterdir()} == named | {"index.json", LOCK}
    for corpus in SHIPPED:
        entry = index["models"][corpus]
        for kind, name in entry["files"].items():
            assert (exported / name).stat().st_size == entry["bytes"][kind]
            assert name.startswith(f"{corpus}.") and entry["sha256"][kind][:16] in name
        model, src_vocab, tgt_vocab = il.pretrained(corpus)
        vocab = json.loads((exported / entry["files"]["vocab"]).read_text(encoding="utf-8"))
        assert vocab["src_tokens"] == src_vocab.tokens and vocab["tgt_tokens"] == tgt_vocab.tokens
        assert (vocab["bos_id"], vocab["eos_id"], vocab["tgt_pad_id"], vocab["src_pad_id"],
                vocab["src_unk_id"]) == (tgt_vocab.bos_id, tgt_vocab.eos_id, model.cfg.tgt_pad_id,
                                         model.cfg.pad_id, src_vocab.unk_id)
        assert (vocab["max_len"], vocab["n_layers"], vocab["n_heads"], vocab["d_model"]) == (
            model.cfg.max_len, model.cfg.n_layers, model.cfg.n_heads, model.cfg.d_model)


def test_graphs_carry_no_debugging_records(exported):
    """The exporter's per-node Python stacks and FX names are dropped: half of every file."""
    onnx = pytest.importorskip("onnx")
    for path in sorted(exported.glob("*.onnx")):
        graph = onnx.load(str(path)).graph
        assert all(not node.metadata_props and not node.doc_string for node in graph.node), path
        assert all(not value.metadata_props for value in [*graph.input, *graph.output,
                                                          *graph.value_info,
                                                          *graph.initializer]), path


@pytest.mark.parametrize("corpus", SHIPPED)
def test_encoder_graph_matches_encode(corpus, sessions):
    model, src_vocab, _ = il.pretrained(corpus)
    encoder, _ = sessions[corpus]
    for ids in _sources(corpus, src_vocab):
        src = torch.tensor([ids])  # (1, src_len)
        memory, attention = encoder.run(None, {"src": src.numpy()})
        with torch.no_grad(), recording_attention(model) as record:
            want_memory = model.encode(src)
        _close(f"{corpus} memory", memory, want_memory)
        _close(f"{corpus} encoder attention", attention,
               torch.stack(Attention.of(record).encoder)[:, 0])  # (n_layers, n_heads, src_len, src_len)


def _check_steps(corpus, sessions, ids, hypotheses, tol):
    """Run the decoder graph on every prefix of ``hypotheses`` (token lists), one batch per
    length from <bos> alone, and compare each output with ``model.decode`` within ``tol``."""
    model, _, tgt_vocab = il.pretrained(corpus)
    encoder, decoder = sessions[corpus]
    src = torch.tensor([ids])  # (1, src_len)
    memory, _ = encoder.run(None, {"src": src.numpy()})
    n = len(hypotheses)
    for length in range(1, min(len(tokens) for tokens in hypotheses) + 1):
        tgt_in = torch.tensor([[tgt_vocab.bos_id, *tokens[:length - 1]]
                               for tokens in hypotheses])  # (n, length)
        logits, log_probs, cross, self_attention = decoder.run(
            None, {"tgt_in": tgt_in.numpy(), "memory": memory})
        with torch.no_grad(), recording_attention(model) as record:
            want_memory = model.encode(src)  # (1, src_len, d_model)
            out = model.decode(tgt_in, want_memory.expand(n, -1, -1))
            want_logits = model.generator(out[:, -1])  # (n, tgt_vocab_size)
        want = Attention.of(record)
        want_self, want_cross = want.decoder_self, want.decoder_cross
        logit_tol = max(tol, LOGIT_RTOL * float(want_logits.abs().max()))
        _close(f"{corpus} logits", logits, want_logits, logit_tol)
        # log_softmax(z)_i = z_i - logsumexp(z): logits within t put it within 2 t.
        _close(f"{corpus} log_probs", log_probs, want_logits.log_softmax(dim=-1), 2 * logit_tol)
        _close(f"{corpus} cross attention", cross, torch.stack(want_cross), tol)
        _close(f"{corpus} decoder self-attention", self_attention, torch.stack(want_self), tol)


@pytest.mark.parametrize("corpus", SHIPPED)
def test_decoder_step_matches_decode_on_the_greedy_path(corpus, sessions):
    """Every step of the greedy translation of 20 test sentences."""
    model, src_vocab, tgt_vocab = il.pretrained(corpus)
    for ids in _sources(corpus, src_vocab, count=20):
        tokens = il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
        _check_steps(corpus, sessions, ids, [tokens], TOL)


@pytest.mark.parametrize("corpus", SHIPPED)
def test_decoder_step_matches_decode_for_a_beam(corpus, sessions):
    """Batches of the 4 best beam hypotheses' prefixes. These reach words the model thinks
    unlikely, where the graph and torch differ most (up to 1.6e-5 in a logit of 5, measured):
    within 3 times the tolerances."""
    model, src_vocab, tgt_vocab = il.pretrained(corpus)
    for ids in _sources(corpus, src_vocab, count=5):
        beams = il.beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                               beam_size=4, top_beams=4)
        _check_steps(corpus, sessions, ids, [tokens for tokens, _ in beams], 3 * TOL)


def test_graphs_take_the_longest_sentence(sessions):
    """A source and a target of the model's max_len (positions are sliced from a table)."""
    model, _, tgt_vocab = il.pretrained("copy")
    encoder, decoder = sessions["copy"]
    size = model.cfg.max_len
    src = torch.full((1, size), 4)
    memory, attention = encoder.run(None, {"src": src.numpy()})
    assert memory.shape == (1, size, model.cfg.d_model)
    tgt_in = torch.full((1, size), 4)
    tgt_in[0, 0] = tgt_vocab.bos_id
    logits, *_ = decoder.run(None, {"tgt_in": tgt_in.numpy(), "memory": memory})
    with torch.no_grad():
        want = model(src, tgt_in)[:, -1]  # (1, tgt_vocab_size)
    _close("copy logits at max_len", logits, want)


# ---- error paths of `python -m illustrated.commands.onnx_export`: one line, exit 2 (130 for Ctrl-C),
# the earlier export whole (tests/files/test_file_set.py injects faults at every write point)

from illustrated.commands import onnx_export  # noqa: E402
from illustrated.files import atomic as _atomic  # noqa: E402


def files_of(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def quick_export(monkeypatch):
    """The exporter replaced by made-up graph bytes: these tests are about the files."""
    monkeypatch.setattr(onnx_export, "_export", lambda graph, args, name, *rest: b"graph " +
                        name.encode())


@pytest.fixture
def earlier(tmp_path, quick_export):
    """A folder holding an earlier export of 'post'."""
    out = tmp_path / "models"
    assert main(["--out", str(out), "--corpus", "post"]) == 0
    return out


def test_a_full_disk_leaves_the_earlier_export_whole(earlier, monkeypatch, capsys):
    before = files_of(earlier)
    capsys.readouterr()
    monkeypatch.setattr(onnx_export, "_export", lambda graph, args, name, *rest: b"new graph")

    def no_space(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_atomic.os, "fsync", no_space)
    assert main(["--out", str(earlier), "--corpus", "post"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --out: could not write '{earlier}/post.encoder.")
    assert err.endswith("(No space left on device); any previous file there is unchanged\n")
    assert files_of(earlier) == before  # no new graph beside the old index, no temporary file
    read_export(earlier)


@pytest.mark.parametrize("where", ["export", "write"])
def test_ctrl_c_exits_130_with_one_line_and_the_earlier_export_whole(earlier, monkeypatch, capsys,
                                                                     where):
    before = files_of(earlier)
    capsys.readouterr()

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(*((onnx_export, "_export") if where == "export" else
                          (_atomic.os, "fsync")), interrupt)
    assert main(["--out", str(earlier), "--corpus", "post"]) == 130
    assert capsys.readouterr().err == (f"interrupted: nothing changed; {earlier} holds the "
                                       f"earlier export, whole\n")
    assert files_of(earlier) == before


def test_the_written_files_are_the_exported_bytes(tmp_path, quick_export, capsys):
    assert main(["--out", str(tmp_path), "--corpus", "post"]) == 0
    index = read_export(tmp_path)
    files = files_of(tmp_path)
    encoder = index["models"]["post"]["files"]["encoder"]
    assert files[encoder] == b"graph post.encoder.onnx"
    assert index["models"]["post"]["bytes"]["encoder"] == len(b"graph post.encoder.onnx")
    assert "onnx_export: 1 corpora" in capsys.readouterr().out


@pytest.mark.parametrize("out, message", [
    ("", "error: --out: expected a directory path, got ''"),
    ("{file}", "error: --out: expected a directory, got '{file}', which is a file"),
    ("{file}/sub", "error: --out: cannot create the directory '{file}/sub' (Not a directory)"),
    ("{dir}", "error: --out: expected a file path, got the directory '{dir}/index.json'"),
])
def test_bad_out_is_one_line_and_exit_code_2(tmp_path, quick_export, capsys, out, message):
    afile = tmp_path / "afile"
    afile.write_text("x")
    target = tmp_path / "models"
    (target / "index.json").mkdir(parents=True)  # a folder where the index goes
    out = out.format(file=afile, dir=target)
    assert main(["--out", out, "--corpus", "post"]) == 2
    assert capsys.readouterr().err == message.format(file=afile, dir=target) + "\n"
    assert afile.read_text() == "x" and sorted(p.name for p in target.iterdir()) == ["index.json"]


def test_a_directory_that_refuses_files_is_one_line(tmp_path, quick_export, monkeypatch, capsys):
    """As a read-only directory does (chmod does not stop root, so the refusal is simulated)."""
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_atomic.tempfile, "mkstemp", refuse)
    assert main(["--out", str(tmp_path), "--corpus", "post"]) == 2
    assert capsys.readouterr().err == (f"error: --out: cannot write in '{tmp_path}' (Permission "
                                       f"denied), got '{tmp_path / 'index.json'}'\n")


def test_an_index_that_is_one_of_the_shipped_files_is_refused(tmp_path, quick_export, capsys):
    """--out whose index.json is a link to the shipped manifest: the export would replace it."""
    manifest = il.shipped.weights_path("post").parent / "manifest.json"
    before = manifest.read_bytes()
    out = tmp_path / "models"
    out.mkdir()
    (out / "index.json").symlink_to(manifest)
    assert main(["--out", str(out), "--corpus", "post"]) == 2
    assert capsys.readouterr().err == (
        f"error: --out: expected a file other than the shipped weights '{manifest}', got "
        f"'{out / 'index.json'}', the same file (it would be replaced)\n")
    assert manifest.read_bytes() == before


def test_without_onnx_the_message_says_what_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "onnx", None)
    assert main(["--out", str(tmp_path), "--corpus", "post"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the ONNX export needs onnx and onnxscript (")
    assert err.endswith("): pip install 'illustrated[onnx]'\n") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
