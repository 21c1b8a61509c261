"""Writes what tests/site/engine.test.mjs compares the page's engine (site/js/engine/engine.js) with.

``python tests/site/js_fixture.py DIR`` writes into DIR:

* ``training.json``: for post-LN and pre-LN, label smoothing 0 and 0.1: a small config
  (dropout 0), its initial weights (seeded), 20 fixed batches (collated as the package does),
  and PyTorch's loss at every step, the gradients at step 0 and the weights after 20 steps,
  trained as ``il.train`` trains (Adam's betas and eps and the gradient norm's clip as
  ``il.Recipe()`` has them, a warm-up then cosine learning rate);
* ``inference.json``: per shipped model, its config, test sentences as ids, the logits of the
  model on its greedy translation, and the greedy and beam (beam_size 4, top_beams 2, alpha 0.6)
  tokens (the models themselves are the page's files, written by ``illustrated.commands.web_export``);
* ``layouts.json``: per positional layout ("interleaved", "concatenated"), a seeded small model
  written as a page model file, source sentences, the logits on the greedy translation and the
  greedy and beam tokens.
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict, replace
from pathlib import Path

import torch
from torch.nn import functional as F

import illustrated as il
from illustrated.commands import web_export
from illustrated.data import Vocab, collate, load_corpus
from illustrated.modules import Transformer
from illustrated.training.schedules import learning_rate

STEPS, LR, WARMUP = 20, 1e-2, 5
CONFIG = replace(il.TINY, src_vocab_size=11, tgt_vocab_size=13, d_model=16, n_heads=2, d_ff=24,
                 n_layers=2, max_len=16, pad_id=0, tgt_pad_id=0)
BEAM = {"beam_size": 4, "top_beams": 2, "alpha": 0.6}


def _flat(state: dict) -> dict:
    return {k: v.detach().flatten().tolist() for k, v in state.items()}


def _batches(generator: torch.Generator) -> list[dict]:
    batches = []
    for _ in range(STEPS):
        pairs = []
        for _ in range(4):  # sentences of 1 to 6 words: padding in every batch
            n_src, n_tgt = (int(torch.randint(1, 7, (1,), generator=generator)) for _ in "st")
            pairs.append((torch.randint(4, CONFIG.src_vocab_size, (n_src,),
                                        generator=generator).tolist(),
                          torch.randint(4, CONFIG.tgt_vocab_size, (n_tgt,),
                                        generator=generator).tolist()))
        batches.append(pairs)
    return batches


def _vocab(size: int) -> Vocab:
    return Vocab(["<pad>", "<bos>", "<eos>", "<unk>", *(f"w{i}" for i in range(4, size))])


def training_case(norm_first: bool, label_smoothing: float, batches: list) -> dict:
    cfg = replace(CONFIG, norm_first=norm_first)
    torch.manual_seed(0)
    model = Transformer(cfg).train()
    initial = _flat(model.state_dict())
    recipe = il.Recipe()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR, betas=recipe.adam_betas,
                                 eps=recipe.adam_eps)
    losses, grads, collated = [], None, []
    vocabs = _vocab(cfg.src_vocab_size), _vocab(cfg.tgt_vocab_size)
    for step, pairs in enumerate(batches, start=1):
        batch = collate(pairs, *vocabs)
        collated.append({k: getattr(batch, k).tolist() for k in ("src", "tgt_in", "tgt_out")})
        optimizer.zero_grad()
        logits = model(batch.src, batch.tgt_in)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=0,
                               label_smoothing=label_smoothing)
        loss.backward()
        if grads is None:
            grads = {k: p.grad.flatten().tolist() for k, p in model.named_parameters()}
        torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.clip_grad)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, LR, WARMUP, "cosine", STEPS)
        optimizer.step()
        losses.append(loss.item())
    return {"config": asdict(cfg), "label_smoothing": label_smoothing, "lr": LR,
            "warmup": WARMUP, "schedule": "cosine", "steps": STEPS, "initial": initial,
            "batches": collated, "losses": losses, "grads0": grads, "adam": {
                "betas": list(recipe.adam_betas), "eps": recipe.adam_eps, "clip": recipe.clip_grad},
            "final": _flat(model.state_dict())}


def inference_case(corpus: str) -> dict:
    model, src_vocab, tgt_vocab = il.pretrained(corpus)
    test, _, _ = load_corpus(corpus, "test")
    sentences = []
    with torch.no_grad():
        for source, _ in test:
            ids = src_vocab.encode(source)
            greedy = il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id,
                                      eos_id=tgt_vocab.eos_id)
            beams = il.beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                                   **BEAM)
            tgt_in = torch.tensor([[tgt_vocab.bos_id, *greedy[:-1]]])
            logits = model(torch.tensor([ids]), tgt_in)[0]  # (len(greedy), tgt_vocab_size)
            sentences.append({"src": ids, "greedy": greedy, "logits": logits.flatten().tolist(),
                              "beams": [[list(h), s] for h, s in beams]})
    return {"corpus": corpus, "beam": BEAM,
            "bos_id": tgt_vocab.bos_id, "eos_id": tgt_vocab.eos_id, "sentences": sentences}


def layout_case(layout: str, out_dir: Path) -> dict:
    """A seeded model of the small config with ``pe_layout=layout``, as a page model file."""
    cfg = replace(CONFIG, pe_layout=layout, dropout=0.0)
    torch.manual_seed(2)
    model = Transformer(cfg).eval()
    with torch.no_grad():  # sharper than Glorot's: translations of several lengths
        model.generator.proj.weight.mul_(3.0)
    name = f"layout.{layout}.safetensors"
    web_export.save_model(out_dir / name, model, (_vocab(cfg.src_vocab_size),
                                                   _vocab(cfg.tgt_vocab_size)))
    sentences = []
    with torch.no_grad():
        for ids in ([4, 5, 6], [7, 8, 9, 10, 4, 5], [6]):
            greedy = il.greedy_decode(model, ids, bos_id=1, eos_id=2, max_len=12)
            beams = il.beam_search(model, ids, bos_id=1, eos_id=2, max_len=12, **BEAM)
            logits = model(torch.tensor([ids]), torch.tensor([[1, *greedy[:-1]]]))[0]
            sentences.append({"src": ids, "greedy": greedy, "logits": logits.flatten().tolist(),
                              "beams": [[list(h), s] for h, s in beams]})
    return {"corpus": f"layout {layout}", "model": name, "beam": BEAM, "max_len": 12,
            "bos_id": 1, "eos_id": 2, "sentences": sentences}


def main(out: str) -> None:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    batches = _batches(torch.Generator().manual_seed(1))
    cases = [training_case(nf, ls, batches) for nf in (False, True) for ls in (0.0, 0.1)]
    (out_dir / "training.json").write_text(json.dumps(cases))
    files = web_export.export_site(out_dir)["models"]  # the shipped models as the page reads them
    cases = [{**inference_case(c), "model": files[c]["files"]["model"]} for c in il.SETTINGS]
    (out_dir / "inference.json").write_text(json.dumps(cases))
    layouts = [layout_case(layout, out_dir) for layout in ("interleaved", "concatenated")]
    (out_dir / "layouts.json").write_text(json.dumps(layouts))


if __name__ == "__main__":
    main(sys.argv[1])
