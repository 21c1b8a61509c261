"""The command line: ``python -m illustrated train ...`` and ``python -m illustrated translate ...``.

Before any work a command checks its files: no output is one of its inputs (``--out`` is not
``--pairs``, nor a corpus file, nor ``--resume`` unless ``--checkpoint-every`` continues that run
in place), and ``--out`` can be written with room for the model. A run that would take more than
a few minutes here says so, with an estimate from one measured step, before it starts. The
arguments are parsed before torch is imported (a second), and Ctrl-C at any moment is one line and
exit code 130 (:mod:`illustrated.commands.interrupt`).
"""
from __future__ import annotations

import argparse
import decimal
import math
import os
import re
import sys
import time
import warnings

from ..recipe import COMMAND_PRESETS, PRESETS as _PRESETS, Recipe, recipe_fields
from .interrupt import INTERRUPTED, end_of_start, torch_start_up

__all__ = ["main", "build_parser"]

#: A run expected to take longer than this many seconds here is announced, with its estimate.
LONG_RUN = 180.0

def _flag(name: str) -> str:
    """The command-line option of the Recipe field ``name``: its declared flag or --the-name."""
    return recipe_fields()[name].metadata["flag"] or "--" + name.replace("_", "-")


#: ``il.train``'s names of the loop options the command line passes, and the options they come
#: from: an error from ``il.train`` about them names the option the user typed. (Older messages,
#: e.g. "device: ...", "lr: the loss became ...", keep the names the README and tests quote.)
OPTION_OF = {"checkpoint_path": "--out", "resume": "--resume", "pairs": "--pairs",
             "timeout": "--timeout", "compile": "--compile", **{name: _flag(name) for name in (
                 "grad_accum_steps", "precision", "batch_size", "tokens_per_batch",
                 "referent_weight")}}

#: ``--timeout``'s default: seconds a process waits for the others under torchrun before it
#: gives up (gloo's and NCCL's own default is 30 minutes).
TIMEOUT = 300


def _number(kind: str, low: float | None = None, high: float | None = None,
            low_open: bool = False, high_open: bool = False):
    """An argparse ``type=``: the option's value as an int or a finite float within a range."""
    def parse(text: str):
        try:
            value = int(text) if kind == "int" else float(text)
        except ValueError:
            what = "an integer" if kind == "int" else "a number"
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if kind == "float" and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if kind == "float" and value == 0 and _nonzero(text):
            raise argparse.ArgumentTypeError(
                f"expected 0 or a number float64 can hold (at least 5e-324 in size), got "
                f"{text!r}, which rounds to 0")
        if (low is not None and (value < low or (low_open and value == low))) or \
                (high is not None and (value > high or (high_open and value == high))):
            low_, high_ = (f"{x:g}" if isinstance(x, float) else x for x in (low, high))
            bounds = (f"{'>' if low_open else '>='} {low_}" if high is None else
                      f"in {'(' if low_open else '['}{low_}, {high_}{')' if high_open else ']'}")
            raise argparse.ArgumentTypeError(f"expected a value {bounds}, got {text!r}")
        return value
    parse.__name__ = kind  # argparse names the type in its messages
    return parse


def _nonzero(text: str) -> bool:
    """Whether the number ``text`` spells is not 0 (its digits, before float64 rounds them)."""
    try:
        return decimal.Decimal(text.strip().replace("_", "")) != 0
    except decimal.InvalidOperation:
        return False


#: A number argparse would take for an option: -inf, -nan, -1e5 (it reads only -5 and -.5 as
#: numbers), so that ``--clip-grad -inf`` reaches the option's own check.
_SIGNED_NUMBER = re.compile(r"-(?:inf(?:inity)?|nan|\d[\d_]*\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)",
                            re.I)


def _values_joined(argv: list[str]) -> list[str]:
    """``argv`` with each ``--option -NUMBER`` written ``--option=-NUMBER``: argparse takes a
    value like ``-inf`` or ``-1e5`` for an option and says only "expected one argument"."""
    joined: list[str] = []
    for arg in argv:
        if joined and _SIGNED_NUMBER.fullmatch(arg) and joined[-1].startswith("--") \
                and "=" not in joined[-1] and joined[-1] != "--":
            joined[-1] = f"{joined[-1]}={arg}"
        else:
            joined.append(arg)
    return joined


POSITIVE = _number("int", 1)


#: ``--preset`` for ``--pairs``: (model sizes over TINY, Recipe fields), from the one table of
#: presets (:data:`illustrated.recipe.PRESETS`); base is the paper's base model and recipe.
PRESETS = {name: (dict(_PRESETS[name].model), dict(_PRESETS[name].train))
           for name in COMMAND_PRESETS}


def _add_recipe_flags(parser: argparse.ArgumentParser) -> None:
    """One option per Recipe field that has a flag: its type, limits, choices and help as the
    Recipe declares them; left out (None), the corpus's or the preset's own value is used."""
    for name, f in recipe_fields().items():
        m = f.metadata
        if m["flag"] is None:
            continue
        kind = {"choices": m["choices"]} if m["choices"] else {"type": _number(
            "int" if isinstance(f.default, int) else "float", m["low"], m["high"],
            m["low_open"], m["high_open"])}
        parser.add_argument(_flag(name), dest=name, **kind,
                            help=f"{m['description']} (default: the corpus's or the preset's "
                                 f"own, else {f.default})")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of both sub-commands, with help for every option."""
    from ..data import CORPORA
    parser = argparse.ArgumentParser(
        prog="python -m illustrated",
        description="Train the book's tiny Transformer on a toy corpus, and translate with it.")
    sub = parser.add_subparsers(dest="command", required=True)
    tr = sub.add_parser("train", help="train a model on a toy corpus and save it",
                        description="Train the corpus's default tiny Transformer, print the "
                                    "test accuracy and a few translations, save a checkpoint.")
    source = tr.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", choices=CORPORA,
                        help="toy corpus: the post's two sentences, French->English, copy, "
                             "reverse, or the post's 'it' coreference sentences")
    source.add_argument("--pairs", metavar="FILE.tsv",
                        help="your own corpus: one 'source<TAB>target' pair per line, UTF-8")
    tr.add_argument("--min-count", type=POSITIVE,
                    help="with --pairs: words seen fewer times become <unk> (default 1)")
    tr.add_argument("--test-fraction", type=_number("float", 0, 1, True, True),
                    help="with --pairs: share of pairs held out for testing, split with --seed "
                         "(default 0.1)")
    tr.add_argument("--preset", choices=tuple(PRESETS),
                    help="with --pairs: model size and recipe; tiny (default; the book's model), "
                         "small, or base (the paper's: d_model 512, 8 heads, 6+6 layers, "
                         "dropout 0.1, label smoothing 0.1, warm-up 4000 steps, batches of "
                         "25,000 tokens)")
    _add_recipe_flags(tr)
    tr.add_argument("--d-model", type=POSITIVE, help="model width d_model")
    tr.add_argument("--n-heads", type=POSITIVE, help="attention heads (must divide d_model)")
    tr.add_argument("--n-layers", type=POSITIVE, help="encoder layers, and decoder layers")
    tr.add_argument("--device", default="auto",
                    help="auto (CUDA, then MPS, then CPU; see il.pick_device for when the CPU is "
                         "faster), cpu, cuda or mps (default auto)")
    tr.add_argument("--out", default="model.pt", help="checkpoint file to write (default model.pt)")
    tr.add_argument("--compile", choices=("auto", "on", "off"), default="auto",
                    help="capture each training step (torch.compile; CUDA graphs over batches "
                         "padded to a few shapes): auto (default) on CUDA only, on, off")
    tr.add_argument("--checkpoint-every", type=POSITIVE, metavar="N",
                    help="rewrite --out (atomically) every N steps and at the end, with the "
                         "optimizer, step, batch order and RNG states, so --resume can go on")
    tr.add_argument("--resume", metavar="PATH",
                    help="continue the run saved in PATH by --checkpoint-every up to --steps "
                         "(same data, model and recipe: checked, by their sha256)")
    tr.add_argument("--timeout", type=_number("float", 0, low_open=True), default=TIMEOUT,
                    metavar="SECONDS",
                    help=f"under torchrun: how long a process waits for the others before "
                         f"training stops with an error (default {TIMEOUT})")
    tl = sub.add_parser("translate", help="translate sentences with a saved model",
                        description="Translate each sentence with a checkpoint from 'train'.")
    tl.add_argument("--model", required=True, help="checkpoint written by 'train'")
    tl.add_argument("sentences", nargs="+", help="source sentences, each one quoted")
    tl.add_argument("--beam-size", type=POSITIVE, default=1,
                    help="hypotheses kept at each step (1 = greedy decoding; default 1)")
    tl.add_argument("--top-beams", type=POSITIVE, default=1,
                    help="translations printed per sentence, best first (<= beam size; default 1)")
    tl.add_argument("--alpha", type=_number("float", 0), default=0.0,
                    help="GNMT length penalty exponent (0 = none; the paper used 0.6)")
    return parser


def _train_pairs(args: argparse.Namespace) -> None:
    """``train --pairs``: read the file, build vocabularies, split, train, test, save."""
    from dataclasses import replace

    from ..config import TINY
    from ..data import tokenize
    from ..data.pairs_file import build_vocab, read_pairs, split_pairs
    _refuse_clashes(args, [("--pairs", args.pairs)])
    args.min_count = 1 if args.min_count is None else args.min_count
    args.test_fraction = 0.1 if args.test_fraction is None else args.test_fraction
    pairs = read_pairs(args.pairs)
    train_pairs, test_pairs = split_pairs(pairs, test_fraction=args.test_fraction,
                                          seed=args.seed)
    src_vocab = build_vocab([s for s, _ in train_pairs], min_count=args.min_count)
    tgt_vocab = build_vocab([t for _, t in train_pairs], min_count=args.min_count)
    sizes, recipe = PRESETS[args.preset or "tiny"]
    sizes = {**sizes, **{k: v for k, v in (("d_model", args.d_model), ("n_heads", args.n_heads),
                                           ("n_layers", args.n_layers)) if v is not None}}
    longest = max(max(len(tokenize(s)), len(tokenize(t)) + 1) for s, t in pairs)
    max_len = max(sizes.get("max_len", TINY.max_len), longest + 1)
    cfg = replace(TINY, **{**sizes, "max_len": max_len}, src_vocab_size=len(src_vocab),
                  tgt_vocab_size=len(tgt_vocab), pad_id=src_vocab.pad_id,
                  tgt_pad_id=tgt_vocab.pad_id)
    recipe = {**recipe, **_loop_options(args)}
    from ..training import distributed
    several = distributed.launched_by_torchrun()  # torchrun --nproc_per_node=N -m illustrated
    try:
        device = distributed.init(args.device, timeout=args.timeout) if several else args.device
        _train_pairs_run(args, pairs, train_pairs, test_pairs, src_vocab, tgt_vocab, cfg, recipe,
                         device, several)
    except RuntimeError as error:  # torch.distributed's errors are RuntimeErrors
        message = distributed.lost_peer(error, args.timeout) if several else None
        if message is None:
            raise
        raise ValueError(message) from None
    finally:
        if several:
            distributed.leave()


def _loop_options(args: argparse.Namespace) -> dict:
    """Keywords of ``il.train`` from the Recipe's flags given, --compile, --checkpoint-every,
    --resume."""
    options = {name: getattr(args, name) for name in recipe_fields()
               if getattr(args, name, None) is not None}
    options["compile"] = {"auto": "auto", "on": True, "off": False}[args.compile]
    if args.checkpoint_every is not None:
        options.update(checkpoint_every=args.checkpoint_every, checkpoint_path=args.out)
    if args.resume is not None:
        options["resume"] = args.resume
    return options


def _refuse_clashes(args: argparse.Namespace, inputs: list) -> None:
    """No output is an input: --out is not one of ``inputs`` (--pairs, the corpus files), nor
    --resume, unless --checkpoint-every continues that run in the same file."""
    from ..files.clash import refuse_clashes, same_file
    if args.resume is not None and args.checkpoint_every is None \
            and same_file(args.resume, args.out):
        raise ValueError(f"--out: expected a file other than --resume {args.resume!r}, got "
                         f"{args.out!r}, the same file (the finished model would replace the "
                         f"state to resume from; add --checkpoint-every N to go on in place)")
    refuse_clashes(inputs, [("--out", args.out)])


def _check_out(args: argparse.Namespace, cfg, steps: int, pairs: int) -> None:
    """--out writable, with room for the checkpoint, before any training."""
    from ..files.atomic import check_writable
    from ..files.checkpoint import estimate_bytes
    check_writable(args.out, "--out", need_bytes=estimate_bytes(
        cfg, training=args.checkpoint_every is not None, steps=steps, pairs=pairs))


def _announce_long_run(cfg, pairs, src_vocab, tgt_vocab, recipe: dict, steps: int,
                       device) -> None:
    """A line on stderr before a run that would take more than LONG_RUN seconds here, with the
    estimate from one measured step after a warm-up step (of a model of its own: nothing of the
    run is changed)."""
    from ..training.loop import seconds_per_step
    r = Recipe(**{k: v for k, v in recipe.items() if k in recipe_fields()})
    step = seconds_per_step(cfg, pairs, src_vocab, tgt_vocab, batch_size=r.batch_size,
                            device=device, grad_accum_steps=r.grad_accum_steps,
                            precision=r.precision, tokens_per_batch=r.tokens_per_batch)
    total = step * steps
    if total > LONG_RUN:
        print(f"warning: this run would take about {_duration(total)} here ({steps} steps of "
              f"{step:.2f} s, measured after a warm-up step); Ctrl-C stops it, fewer --steps or a smaller "
              f"model take less", file=sys.stderr, flush=True)


def _duration(seconds: float) -> str:
    """'4 min', '2.5 h', '3.1 days'."""
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h" if seconds < 2 * 86400 else f"{seconds / 86400:.1f} days"


def _bleu(predictions: list[str], references: list[str]) -> str:
    """'BLEU 12.34' (up to 4-grams), 'BLEU 100.00 (up to 3-grams: ...)' when no reference has
    4 words, or why it is missing: sacrebleu is optional (``illustrated[bleu]``)."""
    from ..data.pairs_file import bleu, bleu_order
    try:
        order = bleu_order(references)
        score = bleu(predictions, references, max_order=order)
    except ImportError as error:
        return f"BLEU not computed ({error}: pip install sacrebleu)"
    if order == 4:
        return f"BLEU {score:.2f}"
    return (f"BLEU {score:.2f} (up to {order}-grams: the longest test sentence has {order} "
            f"word{'s' if order > 1 else ''}, so standard 4-gram BLEU is 0 by construction)")


def _train_pairs_run(args, pairs, train_pairs, test_pairs, src_vocab, tgt_vocab, cfg, recipe,
                     device, several) -> None:
    """Train, save, then test; under torchrun every rank trains and only rank 0 prints and saves."""
    from ..files.checkpoint import save_checkpoint
    from ..training.distributed import is_main
    from ..inference.translate import exact_match, expected_translation, translate
    from ..modules.transformer import Transformer
    from ..training.loop import preload_optimizer, set_seed, train
    main = is_main()
    if main:
        _check_out(args, cfg, recipe.get("steps", Recipe.steps), len(train_pairs))
        with torch_start_up():
            import_seconds = preload_optimizer()
        print(f"{args.pairs}: {len(pairs)} pairs, {len(train_pairs)} to train on, "
              f"{len(test_pairs)} held out; vocabularies {len(src_vocab)} source and "
              f"{len(tgt_vocab)} target tokens (min count {args.min_count}); model d_model="
              f"{cfg.d_model}, {cfg.n_layers}+{cfg.n_layers} layers", flush=True)
        if not several:
            _announce_long_run(cfg, train_pairs, src_vocab, tgt_vocab, recipe,
                               recipe.get("steps", Recipe.steps), device)
    set_seed(args.seed)
    model = Transformer(cfg)
    start = time.perf_counter()
    # one loop for one process and several: train() wraps the model in DDP under torchrun
    history = train(model, train_pairs, src_vocab, tgt_vocab, device=device,
                    progress=main and sys.stderr.isatty(), **recipe)
    if not main:
        return
    seconds = time.perf_counter() - start
    model.cpu()
    print(f"trained {history.steps} steps on {history.device} in {seconds:.1f} s (+ "
          f"{import_seconds:.1f} s torch.optim's one-time import); final loss "
          f"{history.loss[-1]:.4f}")
    # saved before anything evaluates it: an error in testing never loses the trained model
    if args.checkpoint_every is None:  # otherwise train() wrote it, with the state to resume
        save_checkpoint(args.out, model, (src_vocab, tgt_vocab), cfg)
    args.saved = True
    print(f"saved {args.out}", flush=True)
    predictions = translate(model, [s for s, _ in test_pairs], src_vocab, tgt_vocab)
    references = [expected_translation(t) for _, t in test_pairs]  # every word, even unknown ones
    match = exact_match(model, test_pairs, src_vocab, tgt_vocab)
    print(f"test ({len(test_pairs)} pairs): exact match {100 * match:.1f} %, "
          f"{_bleu(predictions, references)}")
    for (source, _), prediction, target in list(zip(test_pairs, predictions, references))[:5]:
        print(f"{'ok ' if prediction == target else 'XX '} {source}  ->  {prediction}")


def _train(args: argparse.Namespace) -> None:
    args.seed = Recipe.seed if args.seed is None else args.seed  # also splits --pairs
    if args.pairs is not None:
        return _train_pairs(args)
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise ValueError(f"--corpus: expected --pairs under torchrun (data-parallel training is "
                         f"for your own corpus), got {args.corpus!r}")
    if args.preset is not None:
        raise ValueError(f"--preset: expected only with --pairs, got {args.preset!r} with "
                         f"--corpus (a corpus has its own model)")
    for flag, value in (("--min-count", args.min_count), ("--test-fraction", args.test_fraction)):
        if value is not None:
            raise ValueError(f"{flag}: expected only with --pairs, got {value!r} with --corpus "
                             f"(a corpus has its own vocabularies and test split)")
    from ..files.clash import corpus_files
    from ..files.checkpoint import save_checkpoint
    from ..data import load_corpus
    from ..inference.translate import translate
    from ..pretrained_models import SETTINGS, evaluate, make_config, train_corpus
    from ..training.loop import preload_optimizer
    _refuse_clashes(args, corpus_files([args.corpus], "--corpus"))
    model_overrides = {k: v for k, v in (("d_model", args.d_model), ("n_heads", args.n_heads),
                                         ("n_layers", args.n_layers)) if v is not None}
    train_overrides = _loop_options(args)
    train_overrides.pop("seed")  # train_corpus's own keyword
    train_pairs, src_vocab, tgt_vocab = load_corpus(args.corpus, "train")
    steps = train_overrides.get("steps", SETTINGS[args.corpus]["train"]["steps"])
    # before training, not after: nothing trained is lost for want of a file or of disk space
    cfg = make_config(args.corpus, src_vocab, tgt_vocab, **model_overrides)
    _check_out(args, cfg, steps, len(train_pairs))
    with torch_start_up():  # nothing is written yet
        import_seconds = preload_optimizer()
        _announce_long_run(cfg, train_pairs, src_vocab, tgt_vocab,
                           {**SETTINGS[args.corpus]["train"], **train_overrides}, steps,
                           args.device)
    print(f"training {args.corpus}; the checkpoint goes to {args.out} (Ctrl-C stops without "
          f"touching it)", flush=True)
    start = time.perf_counter()
    # The progress bar only on a terminal: redirected output gets no carriage-return frames.
    model, src_vocab, tgt_vocab, history = train_corpus(
        args.corpus, model_overrides=model_overrides, seed=args.seed, device=args.device,
        progress=sys.stderr.isatty(), **train_overrides)
    seconds = time.perf_counter() - start
    print(f"trained {args.corpus} for {history.steps} steps on {history.device} in {seconds:.1f} s"
          f" (+ {import_seconds:.1f} s torch.optim's one-time import); final loss"
          f" {history.loss[-1]:.4f}")
    # saved before anything evaluates it: an error in testing never loses the trained model
    if args.checkpoint_every is None:  # otherwise train() wrote it, with the state to resume
        save_checkpoint(args.out, model, (src_vocab, tgt_vocab), model.cfg)
    args.saved = True
    print(f"saved {args.out}", flush=True)
    metrics = evaluate(model, args.corpus, src_vocab, tgt_vocab)
    print("test: " + ", ".join(f"{k} {100 * v:.1f} %" for k, v in metrics.items()))
    pairs, _, _ = load_corpus(args.corpus, "test")
    for (source, target), prediction in zip(pairs[:5], translate(
            model, [s for s, _ in pairs[:5]], src_vocab, tgt_vocab)):
        mark = "ok " if prediction == target else "XX "
        print(f"{mark} {source}  ->  {prediction}")


def _translate(args: argparse.Namespace) -> None:
    from ..files.checkpoint import load_checkpoint
    from ..inference.decoding import beam_search
    model, (src_vocab, tgt_vocab), _ = load_checkpoint(args.model)
    if args.top_beams > args.beam_size:
        raise ValueError(f"--top-beams: expected at most --beam-size={args.beam_size}, "
                         f"got {args.top_beams}")
    encoded = [src_vocab.encode(sentence) for sentence in args.sentences]
    for sentence, ids in zip(args.sentences, encoded):
        if len(ids) > model.cfg.max_len:
            raise ValueError(f"sentences: {sentence!r:.60} has {len(ids)} tokens, more than the "
                             f"model's max_len={model.cfg.max_len}")
    for sentence, ids in zip(args.sentences, encoded):
        results = beam_search(model, ids, bos_id=tgt_vocab.bos_id,
                              eos_id=tgt_vocab.eos_id, beam_size=args.beam_size,
                              top_beams=args.top_beams, alpha=args.alpha,
                              max_len=model.cfg.max_len - 1)
        for ids, score in results:
            print(f"{sentence}  ->  {tgt_vocab.decode(ids)}  (score {score:.4f})")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    0 on success (also when the output pipe is closed early, e.g. by ``head``); 2 with a
    one-line message on bad input (argparse's own usage errors included), among them an output
    that is one of the inputs; 1 with a one-line message when the system refuses (e.g. a file
    that cannot be read); 130 with one line after Ctrl-C at any moment, saying what is on disk:
    an existing ``--out`` left as it was (saving is atomic), or the new model, when Ctrl-C came
    once it was in place. Warnings are one line each (``warning: ...``).
    """
    try:
        args = build_parser().parse_args(_values_joined(sys.argv[1:] if argv is None
                                                        else list(argv)))
        with torch_start_up():  # nothing is read or written yet
            import torch  # noqa: F401 - its import runs Python code called from C++
        end_of_start()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        return _run(args)


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def _interrupted(args: argparse.Namespace) -> int:
    """Ctrl-C during a command: one line saying what is on disk; the exit code 130."""
    what = ("translation stopped" if args.command != "train" else
            f"testing stopped; the trained model was saved to {args.out}"
            if getattr(args, "saved", False) else
            f"training stopped; {args.out} holds the latest checkpoint of every "
            f"{args.checkpoint_every} steps, if one was written (go on with --resume)"
            if args.checkpoint_every else
            f"training stopped; {args.out} was not written (any previous file is unchanged)")
    print(f"interrupted: {what}", file=sys.stderr)
    return INTERRUPTED


def _run(args: argparse.Namespace) -> int:
    """:func:`main` once the arguments are parsed."""
    from ..files.atomic import InterruptedAfterWrite
    try:
        _train(args) if args.command == "train" else _translate(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
    except InterruptedAfterWrite as interrupt:
        what = (f"the trained model was saved to {args.out}" if not args.checkpoint_every else
                f"training stopped; {args.out} holds the checkpoint just written (go on with "
                f"--resume)") if args.command == "train" else f"{interrupt.path} was written"
        print(f"interrupted: {what}", file=sys.stderr)
        return INTERRUPTED
    except KeyboardInterrupt:
        return _interrupted(args)
    except RuntimeError as error:  # Python wraps a Ctrl-C that lands in some import machinery
        if not isinstance(error.__cause__ or error.__context__, KeyboardInterrupt):
            raise
        return _interrupted(args)
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's own advice
        return 0
    except ValueError as error:  # includes TrainingDiverged and the argument TypeErrors
        name, colon, rest = str(error).partition(":")
        message = f"{OPTION_OF[name]}:{rest}" if colon and name in OPTION_OF else str(error)
        print(f"error: {message}", file=sys.stderr)
        return 2
    except (TypeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0

