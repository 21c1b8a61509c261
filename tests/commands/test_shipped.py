"""The book's shipped models (il.pretrained): files that match their manifest, the targets they
meet on the unseen test split, loading without training, retraining on request, and the weights
reaching an installed (non-editable) wheel, as Colab installs the package."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import illustrated as il
from illustrated.files import file_set as _file_set
from illustrated.commands import shipped
import numpy as np
from illustrated import pretrained_models

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = shipped.manifest()


def test_manifest_lists_every_shipped_corpus_with_its_current_settings():
    assert MANIFEST["format"] == shipped.FORMAT
    assert list(MANIFEST["models"]) == list(shipped.SHIPPED)
    assert set(shipped.SHIPPED) == set(il.data.CORPORA)
    for corpus, entry in MANIFEST["models"].items():
        # Changing a corpus's settings without `make models` leaves stale weights: caught here.
        assert entry["settings"] == json.loads(json.dumps(il.SETTINGS[corpus])), corpus
        assert entry["seed"] == 0 and entry["threads"] == 1
        assert entry["torch"] and entry["cpu_capability"]


@pytest.mark.parametrize("corpus", shipped.SHIPPED)
def test_manifest_matches_the_file(corpus):
    entry = MANIFEST["models"][corpus]
    path = shipped.weights_path(corpus)
    assert path.name == entry["file"]
    assert path.stat().st_size == entry["bytes"]
    assert shipped.sha256(path) == entry["sha256"]


def test_all_weights_together_stay_well_under_5_mb():
    total = sum(shipped.weights_path(c).stat().st_size for c in shipped.SHIPPED)
    assert total < 5_000_000, total


@pytest.mark.parametrize("corpus", shipped.SHIPPED)
def test_shipped_model_meets_its_target_on_the_test_split(corpus):
    model, src_vocab, tgt_vocab = il.pretrained(corpus)
    metrics = il.evaluate(model, corpus, src_vocab, tgt_vocab)
    metric, target = shipped.TARGETS[corpus]
    assert metrics[metric] >= target, metrics
    # and the manifest reports what the weights really do
    recorded = MANIFEST["models"][corpus]["metrics"]
    assert {k: round(v, 4) for k, v in metrics.items()} == recorded


def test_pretrained_loads_without_training(monkeypatch):
    def no_training(*args, **kwargs):
        raise AssertionError("il.pretrained trained a model instead of loading the shipped one")

    monkeypatch.setattr(il.pretrained_models, "train_corpus", no_training)
    monkeypatch.setattr(il.training.loop, "train", no_training)
    for corpus in shipped.SHIPPED:
        model, src_vocab, tgt_vocab = il.pretrained(corpus)
        assert not model.training
        assert model.cfg.src_vocab_size == len(src_vocab)
        assert model.cfg.tgt_vocab_size == len(tgt_vocab)
        assert all(p.device.type == "cpu" for p in model.parameters())


def test_pretrained_gives_the_same_weights_every_call():
    a, _, _ = il.pretrained("copy")
    b, _, _ = il.pretrained("copy")
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y), name


def test_retrain_trains_the_recipe_afresh():
    shipped_model, _, _ = il.pretrained("post")
    model, src_vocab, tgt_vocab = il.pretrained("post", retrain=True, seed=1)
    assert not model.training
    assert il.evaluate(model, "post", src_vocab, tgt_vocab)["exact_match"] == 1.0
    # another seed: other weights, same quality
    key = "generator.proj.weight"
    assert not torch.equal(model.state_dict()[key], shipped_model.state_dict()[key])


def test_unknown_corpus_is_a_clear_error():
    with pytest.raises(ValueError, match="corpus: expected one of"):
        il.pretrained("de-en")


@pytest.fixture
def weights_copy(tmp_path, monkeypatch):
    """A copy of the shipped weights folder, which il.pretrained reads instead."""
    folder = tmp_path / "weights"
    shutil.copytree(shipped.weights_path("post").parent, folder)
    monkeypatch.setattr(il.pretrained_models, "_weights_dir", lambda: folder)
    return folder


@pytest.mark.parametrize("damage", ["a byte", "cut short", "another model's file"])
def test_weights_that_do_not_match_the_manifest_are_refused(weights_copy, damage):
    """A new weights file beside the old manifest (a `make models` that stopped half-way, before
    the set was one transaction) is refused in one line."""
    broken = weights_copy / MANIFEST["models"]["copy"]["file"]
    data = bytearray(broken.read_bytes())
    if damage == "a byte":
        data[-100] ^= 0xFF
    elif damage == "cut short":
        data = data[:-100]
    else:
        data = bytearray((weights_copy / MANIFEST["models"]["reverse"]["file"]).read_bytes())
    broken.write_bytes(bytes(data))
    with pytest.raises(ValueError) as info:
        il.pretrained("copy")
    assert str(info.value) == (f"corpus: the shipped weights '{broken}' does not match the "
                               f"manifest (another size or sha256: not the set it names) (run "
                               f"`make models` again)")
    il.pretrained("post")  # the others still load


def test_a_manifest_nested_100000_deep_or_a_link_to_dev_zero_is_one_line(weights_copy):
    path = weights_copy / "manifest.json"
    path.write_text("[" * 100_000 + "]" * 100_000)  # before: RecursionError
    with pytest.raises(ValueError) as info:
        il.pretrained("post")
    assert str(info.value) == (f"manifest: '{path}' is nested more than 32 levels deep, "
                               f"expected a manifest of shipped models; reinstall the package "
                               f"or run `make models`")
    path.unlink()
    path.symlink_to("/dev/zero")  # before: read until the machine ran out of memory
    with pytest.raises(ValueError) as info:
        il.pretrained("post")
    assert str(info.value) == (f"manifest: '{path}' is a character device, expected a manifest "
                               f"of shipped models; reinstall the package or run `make models`")


def test_a_manifest_over_its_size_limit_is_refused_before_reading(weights_copy):
    path = weights_copy / "manifest.json"
    path.write_text(json.dumps({"padding": "x" * il.pretrained_models.MAX_MANIFEST_BYTES}))
    with pytest.raises(ValueError, match=r"^manifest: '.*manifest.json' is 1.0 MB, more than "
                                         r"the 1.0 MB such a file may have; reinstall"):
        il.pretrained("post")


def test_a_manifest_entry_must_be_a_plain_file_name_in_the_folder(weights_copy):
    path = weights_copy / "manifest.json"
    data = json.loads(path.read_text())
    data["models"]["post"]["file"] = "../../etc/passwd"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"^corpus: the manifest's entry of the shipped weights "
                                         r"is malformed"):
        il.pretrained("post")


@pytest.mark.parametrize("kwargs, error, message", [
    ({"corpus": ["post"]}, TypeError,
     "corpus: expected one of post, fr-en, copy, reverse, coreference (a str), got list "
     "['post']"),
    ({"corpus": "post", "retrain": "no"}, TypeError, "retrain: expected True or False, got str "
                                                     "'no'"),
    ({"corpus": "post", "retrain": 0}, TypeError, "retrain: expected True or False, got int 0"),
    ({"corpus": "post", "seed": -1}, ValueError, "seed: expected an integer in [0, 4294967295], "
                                                 "got -1"),
    ({"corpus": "post", "seed": 1.5}, TypeError, "seed: expected an integer in [0, 4294967295], "
                                                 "got float 1.5"),
    ({"corpus": "post", "seed": 2**32, "retrain": True}, ValueError,
     "seed: expected an integer in [0, 4294967295], got 4294967296"),
])
def test_pretrained_refuses_bad_arguments_by_name_before_any_work(kwargs, error, message,
                                                                  monkeypatch):
    """A bad seed is refused also when it would not be used (retrain=False): before, it was
    ignored; retrain='no' retrained; a list for the corpus was `TypeError: unhashable type`."""
    monkeypatch.setattr(il.pretrained_models, "train_corpus", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(error) as info:
        il.pretrained(**kwargs)
    assert str(info.value) == message and isinstance(info.value, ValueError)


@pytest.mark.parametrize("content, reason", [
    ("{not json", "cannot read '{path}' (Expecting property name enclosed in double quotes: "
                  "line 1 column 2 (char 1))"),
    ("", "cannot read '{path}' (Expecting value: line 1 column 1 (char 0))"),
    ("[]", "'{path}' is damaged (expected format 'illustrated-shipped-models/1' with a dict of "
           "models)"),
    ('{"format": "illustrated-shipped-models/1"}', "'{path}' is damaged (expected format"),
    ('{"format": "illustrated-shipped-models/1", "models": {"post": {"file": "post.pt"}}}',
     "'{path}' is damaged (the entry of 'post' has no file name, sha256 and size)"),
    ('{"format": "illustrated-shipped-models/1", "models": {"post": {"file": "post.pt", '
     '"bytes": 3, "sha256": "00"}}}',
     "'{path}' is damaged (the entry of 'post' has no file name, sha256 and size)"),
    (b"\xff\xfe", "cannot read '{path}' ('utf-8' codec can't decode byte 0xff"),
])
def test_a_damaged_manifest_is_one_value_error_naming_the_file(tmp_path, monkeypatch, content,
                                                               reason):
    weights = tmp_path / "weights"
    weights.mkdir()
    path = weights / "manifest.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    monkeypatch.setattr(il.pretrained_models, "_weights_dir", lambda: weights)
    with pytest.raises(ValueError) as info:
        il.pretrained("post")
    assert str(info.value).startswith("manifest: " + reason.format(path=path))
    assert str(info.value).endswith("reinstall the package or run `make models`")
    assert "\n" not in str(info.value)


def test_presets_and_shipped_import_each_other_in_one_direction_only():
    """shipped (making the models) imports presets (settings, training, loading the shipped
    weights); presets imports nothing of shipped, not even inside a function."""
    import ast
    tree = ast.parse(Path(il.pretrained_models.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "shipped" not in imported and not any("shipped" in (m or "") for m in imported)
    assert shipped.load_shipped is il.pretrained_models.load_shipped


def test_python_m_illustrated_shipped_on_a_full_disk_is_one_line(tmp_path, monkeypatch, capsys):
    out = tmp_path / "weights"
    out.mkdir()
    (out / "post.pt").write_bytes(b"the earlier weights")
    from illustrated.files import atomic as _atomic

    def no_space(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_atomic.os, "fsync", no_space)
    assert shipped.main(["--corpora", "post", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(rf"error: path: could not write '{out}/post\.[0-9a-f]{{16}}\.pt' \(No "
                        rf"space left on device\); any previous file there is unchanged\n", err)
    assert (out / "post.pt").read_bytes() == b"the earlier weights"
    assert sorted(p.name for p in out.iterdir()) == [_file_set.LOCK, "post.pt"]


def test_make_models_writes_where_pretrained_reads(monkeypatch):
    """Without --out, the command writes the folder il.pretrained loads from (it once wrote a
    commands/weights folder that nothing reads)."""
    written = []
    monkeypatch.setattr(shipped, "make_models", lambda out, corpora, **_: written.append(out))
    assert shipped.main(["--corpora", "post"]) == 0
    assert written == [il.shipped.weights_path("post").parent.resolve()]
    assert (written[0] / "manifest.json").is_file()


def test_shipped_refuses_a_manifest_that_is_one_of_its_inputs(tmp_path, monkeypatch, capsys):
    """--out whose manifest.json is a link to a corpus file training reads: refused before any
    work, naming both flags (the corpus would have become the manifest)."""
    from illustrated.files.clash import corpus_files
    out = tmp_path / "weights"
    out.mkdir()
    corpus = corpus_files(["post"])[0][1]
    (out / "manifest.json").symlink_to(corpus)
    before = corpus.read_bytes()
    monkeypatch.setattr(il.pretrained_models, "train", lambda *a, **k: pytest.fail("trained"))
    assert shipped.main(["--corpora", "post", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: --out: expected a file other than --corpora '{corpus}', got "
        f"'{out / 'manifest.json'}', the same file (it would be replaced)\n")
    assert corpus.read_bytes() == before


def test_python_m_illustrated_shipped_refuses_a_disk_without_room_before_training(
        tmp_path, monkeypatch, capsys):
    from illustrated.files import atomic as _atomic
    monkeypatch.setattr(_atomic.shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(
        10**9, 10**9, 0))
    monkeypatch.setattr(il.pretrained_models, "train", lambda *a, **k: pytest.fail("trained"))
    assert shipped.main(["--corpora", "post", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: path: expected 236.4 kB free for '{tmp_path / 'post.pt'}', but "
        f"'{tmp_path}' has 0 bytes free\n")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here")
def test_shipped_model_loads_onto_cuda():
    model, src_vocab, tgt_vocab = il.pretrained("fr-en", device="cuda")
    assert all(p.device.type == "cuda" for p in model.parameters())
    assert il.translate(model, ["je suis étudiant"], src_vocab, tgt_vocab) == ["i am a student"]


def test_an_installed_wheel_carries_the_weights(tmp_path):
    """Build the wheel, install it (not editable) into a fresh virtual environment that borrows
    this environment's torch and NumPy, and load every shipped model from there."""
    source = tmp_path / "source"  # a copy, so that the build leaves nothing in the checkout
    shutil.copytree(ROOT / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    wheel_dir = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(wheel_dir), str(source)], check=True,
                   env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))
    (wheel,) = wheel_dir.glob("illustrated-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"], check=True,
                               capture_output=True, text=True).stdout.strip())
    # The wheel's files go into the fresh environment's site-packages, as pip would put them.
    shutil.unpack_archive(str(wheel), str(site), format="zip")
    # torch, NumPy, ... come from this environment (a plain path: its editable finder of the
    # package is a .pth of its own site-packages, which a path entry does not run).
    deps = [p for p in sys.path if p.endswith("site-packages")]
    (site / "borrowed-dependencies.pth").write_text("\n".join(deps) + "\n")
    script = textwrap.dedent("""
        import json
        import illustrated as il
        loaded = {c: il.pretrained(c) for c in il.shipped.SHIPPED}
        model, src_vocab, tgt_vocab = loaded["fr-en"]
        print(json.dumps({"file": il.__file__, "corpora": list(loaded),
                          "translation": il.translate(model, ["je suis étudiant"], src_vocab,
                                                      tgt_vocab)}))
    """)
    run = subprocess.run([str(python), "-I", "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["file"].startswith(str(site)), result["file"]  # the wheel, not the checkout
    assert result["corpora"] == list(shipped.SHIPPED)
    assert result["translation"] == ["i am a student"]


def test_a_numpy_seed_reaches_retraining_as_an_int(monkeypatch):
    seen = {}

    def train_corpus(corpus, *, seed, **kwargs):
        seen["seed"] = seed
        return il.pretrained(corpus) + (None,)
    monkeypatch.setattr(pretrained_models, "train_corpus", train_corpus)
    il.pretrained("post", retrain=True, seed=np.int64(1))
    assert type(seen["seed"]) is int and seen["seed"] == 1
