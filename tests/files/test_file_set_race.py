"""Two writers, one folder (issue 35, item 1): two real processes run a command that writes a
set into the same folder at the same moment, 10 rounds each (half of them with ``--wait``), for
``shipped``/``shipped``, ``web_export``/``web_export`` and ``web_export``/``onnx_export``. Each
run either completes a set that loads or is refused in one line, and after every round the
folder loads, every member checked against its index. Each process runs the real command's
``main`` in a loop; only the slow parts stand in (training, the ONNX exporter), so that the
race is on the set-writing part. Every process started is ended."""
import json
import subprocess
import sys
import textwrap

import pytest

import illustrated as il
from illustrated import pretrained_models
from illustrated.commands import onnx_export
from illustrated.commands import web_export

ROUNDS = 10

WORKER = textwrap.dedent('''
    import contextlib, io, json, sys, time
    import torch
    import illustrated as il
    from illustrated.commands import onnx_export
    from illustrated.commands import shipped
    from illustrated.commands import web_export
    command, writer = sys.argv[1], sys.argv[2]

    def train_corpus(corpus, **kwargs):  # the shipped model, shifted by this writer's number
        model, src_vocab, tgt_vocab = il.pretrained(corpus)
        with torch.no_grad():
            model.generator.proj.bias.add_(STATE["generation"])
        time.sleep(0.05)
        return model, src_vocab, tgt_vocab, None

    STATE = {"generation": 0}
    shipped.train_corpus = train_corpus
    shipped.evaluate = lambda *a, **k: {"exact_match": 1.0, "pronoun_accuracy": 1.0}
    web_export.SETTINGS = {c: web_export.SETTINGS[c] for c in ("post", "copy")}
    vocab_json = web_export._vocab_json
    web_export._vocab_json = lambda *a: {**vocab_json(*a), "writer": writer}
    onnx_export._onnx = lambda: None
    onnx_export._export = lambda graph, args, name, *rest: (
        time.sleep(0.05) or f"graph {name} of writer {writer}".encode())
    mains = {"shipped": shipped.main, "web": web_export.main, "onnx": onnx_export.main}
    print("ready", flush=True)
    for line in sys.stdin:
        generation, argv = json.loads(line)
        STATE["generation"] = generation
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = mains[command](argv)
        print(json.dumps([code, err.getvalue()]), flush=True)
''')


class Writers:
    """Two worker processes, each running one command's ``main`` once per round."""

    def __init__(self, commands, tmp_path):
        self.procs = [subprocess.Popen([sys.executable, "-c", WORKER, command, str(n)],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                       env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
                      for n, command in enumerate(commands)]
        for proc in self.procs:
            assert proc.stdout.readline() == "ready\n"

    def round(self, argvs, generations=(1, 2)):
        """Both commands at once; [(exit code, stderr)] of each."""
        for proc, argv, generation in zip(self.procs, argvs, generations):
            proc.stdin.write(json.dumps([generation, argv]) + "\n")
            proc.stdin.flush()
        return [json.loads(proc.stdout.readline()) for proc in self.procs]

    def close(self):
        for proc in self.procs:
            proc.stdin.close()
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def writers(tmp_path):
    started = []

    def start(*commands):
        started.append(Writers(commands, tmp_path))
        return started[-1]
    yield start
    for each in started:
        each.close()


BUSY = "another writer is changing the set in"


def check_round(results, wait, kinds=("",)):
    """Every run completed (0) or was refused in one line; with --wait, a writer waits."""
    outcomes = []
    for code, err in results:
        if code == 0:
            assert err == "", err
            outcomes.append("done")
        else:
            assert code == 2 and err.count("\n") == 1, (code, err)
            assert BUSY in err or any(kind in err for kind in kinds if kind), err
            outcomes.append("busy" if BUSY in err else "kind")
    if wait:
        assert "busy" not in outcomes, results
    return outcomes


def shipped_models(folder):
    """Every model the manifest in ``folder`` names, loaded by il.pretrained (each file checked
    against the manifest): {corpus: generation}."""
    base = {c: il.pretrained(c)[0].generator.proj.bias[0].item() for c in ("post", "copy")}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pretrained_models, "_weights_dir", lambda: folder)
        return {c: round(il.pretrained(c)[0].generator.proj.bias[0].item() - base[c])
                for c in pretrained_models.manifest()["models"]}


def test_two_shipped_runs_into_one_folder(writers, tmp_path):
    out = str(tmp_path / "weights")
    pair, tally = writers("shipped", "shipped"), []
    for n in range(ROUNDS):
        wait = ["--wait", "60"] if n % 2 else []
        results = pair.round([["--corpora", "post", "--out", out, *wait],
                              ["--corpora", "copy", "--out", out, *wait]], (n + 1, n + 101))
        outcomes = check_round(results, wait)
        tally += outcomes
        models = shipped_models(tmp_path / "weights")
        for corpus, outcome, generation in zip(("post", "copy"), outcomes, (n + 1, n + 101)):
            if outcome == "done":  # its model is in the manifest, as it wrote it
                assert models[corpus] == generation
        if wait:  # serialised: the second started from the first one's manifest
            assert models == {"post": n + 1, "copy": n + 101}
    print("shipped/shipped:", {k: tally.count(k) for k in set(tally)})


def test_two_web_exports_into_one_folder(writers, tmp_path):
    out = tmp_path / "models"
    pair, tally = writers("web", "web"), []
    for n in range(ROUNDS):
        wait = ["--wait", "60"] if n % 2 else []
        outcomes = check_round(pair.round([["--out", str(out), *wait]] * 2), wait)
        tally += outcomes
        index = web_export.read_site(out)  # every member checked against the index
        vocabs = {json.loads((out / m["files"]["vocab"]).read_text())["writer"]
                  for m in index["models"].values()}
        assert len(vocabs) == 1 and sorted(index["models"]) == ["copy", "post"]
        for entry in index["models"].values():
            il.load_checkpoint(out / entry["files"]["model"])
    print("web/web:", {k: tally.count(k) for k in set(tally)})


def test_a_web_export_and_an_onnx_export_into_one_folder(writers, tmp_path):
    out = tmp_path / "models"
    pair, tally = writers("web", "onnx"), []
    kinds = ("whose index.json is of",)
    for n in range(ROUNDS):
        wait = ["--wait", "60"] if n % 2 else []
        outcomes = check_round(pair.round([["--out", str(out), *wait],
                                           ["--out", str(out), "--corpus", "post", *wait]]),
                               wait, kinds)
        tally += outcomes
        assert "done" in outcomes or n > 0
        kind = json.loads((out / "index.json").read_text())["format"]
        if kind == web_export.FORMAT:
            web_export.read_site(out)
            assert outcomes[1] != "done"
        else:
            onnx_export.read_export(out)
            assert outcomes[0] != "done"
    print("web/onnx:", {k: tally.count(k) for k in set(tally)})
