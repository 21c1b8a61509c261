"""The training recipe: every choice of a training run, with its default, limits and allowed
values, declared once (:class:`Recipe`), and the named presets, model sizes with a recipe.

Everything else reads these declarations: ``il.train`` (its keywords are the fields), the saved
state a resumed run must share (:mod:`illustrated.files.training_state`), the command line's training
flags (their types, limits and help), the JSON schema the page trains from (:func:`schema`,
written by :mod:`illustrated.commands.web_export` as ``recipe.json`` and read by
``site/js/engine/recipe.js``) and
chapter 10's widget. No torch here: the command line builds its flags before torch loads.

References: paper §5.1 (batches of about 25,000 source and 25,000 target tokens), §5.3 (Adam,
Eq. 3 warm-up schedule), §5.4 (label smoothing); post "Recap Of Training".
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping

from ._args import MAX_SEED, ArgumentTypeError, check_choice, check_int, check_real, describe
from .config import PAPER_BASE, TINY

__all__ = ["Recipe", "PRECISIONS", "PAGE_MODEL_LIMITS", "PAGE_SETTINGS", "PAGE_LAYOUT",
           "D_FF_PER_D_MODEL", "Preset", "PRESETS", "CORPUS_PRESETS", "COMMAND_PRESETS",
           "recipe_fields", "check_field", "page_fields", "page_name", "schema"]

#: The learning-rate schedules (illustrated.training.schedules computes them).
SCHEDULES = ("constant", "noam", "cosine")

#: Precisions ``il.train`` runs in.
PRECISIONS = ("fp32", "bf16")


def _shown(label: str, said: str = "{}", *, control: str = "number", step: Any = None,
           said_at: Mapping | None = None, options: tuple | None = None) -> dict:
    """How the page shows a setting: the ``label`` beside its ``control`` ("number", "menu" or
    "switch"), a number input's ``step``, how a run's name says it (``said``, "{}" standing for
    the value; ``said_at``, for particular values written as the page writes them: "1", "0")
    and a menu's ``options``, ((value, label), ...), where they are not the field's choices."""
    return {"label": label, "control": control, "step": step, "said": said,
            "said_at": dict(said_at or {}), "options": options}

#: The page's rule for the feed-forward width: d_ff = 2 x d_model (TINY's 64 for 32).
D_FF_PER_D_MODEL = 2


def _spec(default: Any, description: str, *, low: float | None = None,
          high: float | None = None, low_open: bool = False, high_open: bool = False,
          choices: tuple | None = None, what: str | None = None, page: tuple | None = None,
          flag: str | None = "", resumed: bool = True, shown: dict | None = None) -> Any:
    """A Recipe field: its default and, in its metadata, what the checks, the command line and
    the page read. ``what``: the value's name in messages; ``page``: the page's [low, high];
    ``flag``: the command-line option ("" = --the-field-name, None = none); ``resumed``: a
    resumed run must have the same value; ``shown``: how the page's training widget shows it
    (:func:`_shown`; None: not a control there)."""
    return field(default=default, metadata={
        "description": description, "low": low, "high": high, "low_open": low_open,
        "high_open": high_open, "choices": choices, "what": what, "page": page, "flag": flag,
        "resumed": resumed, "shown": shown})


@dataclass(frozen=True)
class Recipe:
    """Every training choice of ``il.train``, checked when made.

    Each field's metadata holds its description, limits (``low``/``high``, open or closed),
    allowed values (``choices``), the page's narrower limits (``page``) and its command-line flag.
    ``Recipe(lr=1e-2)`` or ``replace(recipe, steps=500)`` give a checked copy;
    ``Recipe.from_overrides(recipe, **kw)`` does the same with the keywords of ``il.train``.

    Raises TypeError (also a ValueError) for a field of the wrong type, ValueError for one out
    of range, each message ``"<field>: expected <what>, got <value>"``.
    Paper §5.1 (token batches), §5.3 (Adam β=(0.9, 0.98), ε=1e-9; Eq. 3), §5.4.
    """

    steps: int = _spec(300, "optimiser steps (in all, counting those of a resumed run)",
                       low=1, page=(1, 3000), resumed=False,
                       shown=_shown("steps", "{} steps", step=1, said_at={"1": "1 step"}))
    lr: float = _spec(3e-3, "peak learning rate", low=0.0, low_open=True,
                      what="a learning rate", page=(1e-5, 0.05),
                      shown=_shown("learning rate", "lr {}", step="any"))
    warmup: int = _spec(20, "linear warm-up steps", low=0, what="a number of steps",
                        page=(0, 1000), shown=_shown("warm-up", "warm-up {}", step=1))
    schedule: str = _spec("constant", "learning-rate shape after the warm-up: constant, noam "
                          "(paper Eq. 3) or cosine (down to 0 at the last step)", choices=SCHEDULES,
                          shown=_shown("schedule", control="menu"))
    label_smoothing: float = _spec(0.0, "label smoothing epsilon, paper §5.4", low=0.0, high=1.0,
                                   high_open=True, what="a smoothing epsilon", page=(0.0, 0.5),
                                   shown=_shown("label smoothing", "label smoothing {}",
                                                step=0.05))
    batch_size: int = _spec(64, "pairs per optimiser step (the global batch, over all "
                            "processes)", low=1, page=(1, 128))
    tokens_per_batch: int = _spec(0, "batch by tokens instead (paper §5.1): sentences of "
                                  "similar length together, about this many source and target "
                                  "tokens a step (0 = batch_size pairs)", low=0,
                                  what="a number of tokens (0 = batch by batch_size)")
    clip_grad: float = _spec(1.0, "largest gradient norm (0 = no clipping)", low=0.0,
                             what="a gradient norm (0 = no clipping)")
    seed: int = _spec(0, "seeds the global RNGs for the run and the batch order", low=0,
                      high=MAX_SEED, page=(0, MAX_SEED),
                      shown=_shown("seed", "seed {}", step=1))
    grad_accum_steps: int = _spec(1, "micro-batches per step, whose gradients add up before "
                                  "one update: the same step in less memory", low=1,
                                  what="a number of micro-batches", flag="--grad-accum")
    precision: str = _spec("fp32", "fp32, or bf16: torch.autocast to bfloat16 for the forward "
                           "pass and the loss (weights and Adam stay float32); CUDA or CPU",
                           choices=PRECISIONS)
    referent_weight: float = _spec(0.0, "weight of the auxiliary objective of "
                                   "illustrated.training.referent (0 = off): a read-out of the encoder's "
                                   "output at 'it' must name the noun it refers to, so that an "
                                   "encoder head learns to look from 'it' to its noun", low=0.0,
                                   what="a weight (0 = off)", page=(0.0, 10.0),
                                   shown=_shown("also ask the encoder which noun “it” means",
                                                "“it” objective x{}", control="switch",
                                                said_at={"0": "no “it” objective",
                                                         "1": "“it” objective"}))
    adam_betas: tuple = _spec((0.9, 0.98), "Adam's (beta1, beta2), paper §5.3", low=0.0,
                              high=1.0, high_open=True, what="a decay rate", flag=None,
                              resumed=False)
    adam_eps: float = _spec(1e-9, "Adam's epsilon, paper §5.3", low=0.0, low_open=True,
                            what="an epsilon", flag=None, resumed=False)

    def __post_init__(self) -> None:
        for f in fields(self):  # frozen: normalise NumPy numbers to Python ones
            object.__setattr__(self, f.name, check_field(f.name, getattr(self, f.name)))

    @classmethod
    def from_overrides(cls, recipe: "Recipe | None" = None, **overrides) -> "Recipe":
        """``recipe`` (default ``Recipe()``) with ``overrides``, fields of the Recipe, checked.

        Raises ArgumentTypeError (a TypeError and a ValueError) naming ``recipe`` if it is not a
        Recipe or an override is not one of its fields."""
        if recipe is None:
            recipe = cls()
        elif not isinstance(recipe, Recipe):
            raise ArgumentTypeError(f"recipe: expected an il.Recipe or None, got "
                                    f"{type(recipe).__name__} {describe(recipe)}")
        unknown = sorted(set(overrides) - set(recipe_fields()))
        if unknown:
            raise ArgumentTypeError(f"{unknown[0]}: expected a field of il.Recipe "
                                    f"({', '.join(recipe_fields())}), got {unknown[0]}=...")
        return replace(recipe, **overrides)

    def resumed(self) -> dict:
        """The fields a resumed run must share with the run it continues, as a dict."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata["resumed"]}


def recipe_fields() -> dict:
    """``{name: dataclasses.Field}`` of :class:`Recipe`, read when called (tests may doctor them)."""
    return {f.name: f for f in fields(Recipe)}


def check_field(name: str, value: Any) -> Any:
    """``value`` checked against the declaration of the Recipe field ``name`` (its type from the
    default's, its limits, its choices); raises as :class:`Recipe`."""
    f = recipe_fields()[name]
    m, default = f.metadata, f.default
    if m["choices"] is not None:
        return check_choice(name, value, m["choices"])
    limits = {"low": m["low"], "high": m["high"]}
    if isinstance(default, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(default):
            raise ArgumentTypeError(f"{name}: expected {len(default)} numbers, got "
                                    f"{type(value).__name__} {describe(value)}")
        return tuple(check_real(name, v, **limits, low_open=m["low_open"],
                                high_open=m["high_open"], what=m["what"]) for v in value)
    if isinstance(default, int):
        return check_int(name, value, **limits, what=m["what"] or "an integer")
    return check_real(name, value, **limits, low_open=m["low_open"], high_open=m["high_open"],
                      what=m["what"] or "a number")


#: The page's settings that are not Recipe fields, shown as the Recipe's are (:func:`_shown`):
#: the corpus and the model's sizes, with the page's limits [low, high]. The page trains smaller
#: models than PyTorch may; it writes ``norm_first`` as "post" or "pre".
PAGE_SETTINGS = {
    "corpus": {"limits": None, "shown": _shown("corpus", control="menu")},
    "d_model": {"limits": (8, 128), "shown": _shown("d_model", "d_model {}", step=8)},
    "n_heads": {"limits": (1, 8), "shown": _shown("n_heads", "{} heads", step=1,
                                                  said_at={"1": "1 head"})},
    "n_layers": {"limits": (1, 4), "shown": _shown("n_layers", "{} layers", step=1,
                                                   said_at={"1": "1 layer"})},
    "norm_first": {"limits": None, "shown": _shown("norm", "{}-LN", control="menu", options=(
        ("post", "post-LN"), ("pre", "pre-LN")))},
}

#: The page's limits on the model's sizes, [low, high] (the Recipe's own are each field's ``page``).
PAGE_MODEL_LIMITS = {k: v["limits"] for k, v in PAGE_SETTINGS.items() if v["limits"]}

#: The training widget's controls in the order it shows them and a run's name says them.
PAGE_LAYOUT = ("corpus", "steps", "lr", "warmup", "label_smoothing", "d_model", "n_heads",
               "n_layers", "seed", "schedule", "norm_first", "referent_weight")


def page_name(name: str) -> str:
    """A field's name in the page (and in its links): ``label_smoothing`` -> ``labelSmoothing``."""
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def page_fields() -> list[dict]:
    """The training widget's controls in :data:`PAGE_LAYOUT`'s order, each ``{"field", "name"
    (:func:`page_name`), "label", "control", "step", "said", "said_at", "options"}``; a Recipe
    field's menu offers its choices."""
    recipe = recipe_fields()
    out = []
    for field_name in PAGE_LAYOUT:
        if field_name in recipe:
            shown, choices = recipe[field_name].metadata["shown"], recipe[field_name].metadata["choices"]
        else:
            shown, choices = PAGE_SETTINGS[field_name]["shown"], None
        options = shown["options"] or (tuple((c, c) for c in choices) if choices else None)
        out.append({"field": field_name, "name": page_name(field_name), **shown,
                    "options": [list(o) for o in options] if options else None})
    return out


def _json_type(default: Any) -> str:
    return {tuple: "array", str: "string", int: "integer", float: "number"}[type(default)]


def schema() -> dict:
    """The Recipe as a JSON Schema (draft 2020-12) the page reads: per field its type, default,
    limits (``minimum``/``exclusiveMinimum``...), ``enum``, description, ``x-page-name``
    (:func:`page_name`) and ``x-page``, the page's narrower [low, high];
    ``x-page-model``: :data:`PAGE_MODEL_LIMITS`;
    ``x-d-ff-per-d-model``: :data:`D_FF_PER_D_MODEL`; ``x-page-fields``: :func:`page_fields`."""
    properties = {}
    for name, f in recipe_fields().items():
        m = {k: v for k, v in f.metadata.items() if k != "shown"}
        p = {"type": _json_type(f.default), "default": list(f.default)
             if isinstance(f.default, tuple) else f.default, "description": m["description"],
             "x-page-name": page_name(name)}
        bounds = {"low": ("exclusiveMinimum" if m["low_open"] else "minimum"),
                  "high": ("exclusiveMaximum" if m["high_open"] else "maximum")}
        limits = {bounds[k]: m[k] for k in ("low", "high") if m[k] is not None}
        p.update({"items": {"type": "number", **limits}} if p["type"] == "array" else limits)
        if m["choices"] is not None:
            p["enum"] = list(m["choices"])
        if m["page"] is not None:
            p["x-page"] = list(m["page"])
        properties[name] = p
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Recipe",
            "description": "il.train's training choices (src/illustrated/recipe.py)",
            "type": "object", "properties": properties, "additionalProperties": False,
            "x-page-model": {k: list(v) for k, v in PAGE_MODEL_LIMITS.items()},
            "x-d-ff-per-d-model": D_FF_PER_D_MODEL, "x-page-fields": page_fields()}


@dataclass(frozen=True)
class Preset:
    """A named training set-up: ``model``, TransformerConfig fields that differ from TINY, and
    ``train``, the Recipe fields it sets (as written: the shipped models' manifest keeps them)."""

    model: Mapping
    train: Mapping

    @property
    def recipe(self) -> Recipe:
        """The Recipe: its defaults with this preset's fields."""
        return Recipe(**self.train)


def _paper_base() -> Preset:
    """The paper's base model (PAPER_BASE, Table 3) and recipe (§5.1-5.4): lr the peak of Eq. 3,
    d_model^-0.5 * warmup^-0.5; batches of 25,000 tokens."""
    sizes = {f: getattr(PAPER_BASE, f) for f in asdict(PAPER_BASE) if f not in (
        "src_vocab_size", "tgt_vocab_size", "pad_id", "tgt_pad_id")
        and getattr(PAPER_BASE, f) != getattr(TINY, f)}
    warmup = 4000
    return Preset(sizes, {"lr": sizes["d_model"] ** -0.5 * warmup ** -0.5, "warmup": warmup,
                          "schedule": "noam", "label_smoothing": 0.1, "tokens_per_batch": 25_000})


#: Every preset, one table: the toy corpora's own (the book's shipped models, ``il.SETTINGS``;
#: changing one needs ``make models``) and the command line's ``--preset`` for ``--pairs``.
PRESETS: dict[str, Preset] = {
    # The post's two sentences: TINY as it is.
    "post": Preset({}, {"steps": 100, "lr": 3e-3, "warmup": 10, "batch_size": 2}),
    # Copy and reverse need only one layer a side; the cosine decay settles the last few
    # percent. The steps are the fewest that reach 100 % exact match on the test split for
    # seeds 0-2 on every CPU kernel (benchmarks/retrain.py, benchmarks/results/retrain*.json).
    "copy": Preset({"n_heads": 2, "n_layers": 1},
                   {"steps": 400, "lr": 1e-2, "warmup": 40, "schedule": "cosine"}),
    "reverse": Preset({"n_heads": 2, "n_layers": 1},
                      {"steps": 500, "lr": 1e-2, "warmup": 50, "schedule": "cosine"}),
    # Real grammar: agreement, word order and pronoun choice want a wider model.
    "fr-en": Preset({"d_model": 64, "d_ff": 128},
                    {"steps": 400, "lr": 3e-3, "warmup": 20, "schedule": "cosine"}),
    # referent_weight: the encoder's output at "it" must also name its noun (training.referent),
    # so that an encoder head looks from "it" to "the animal" / "the street" as the post's figure
    # does; translation alone grows no such head (benchmarks/results/coreference_heads.json).
    "coreference": Preset({"d_model": 64, "d_ff": 128},
                          {"steps": 300, "lr": 3e-3, "warmup": 20, "schedule": "cosine",
                           "referent_weight": 1.0}),
    # --preset for your own pairs: the book's model, a middle size, the paper's base model.
    "tiny": Preset({}, {}),
    "small": Preset({"d_model": 128, "n_heads": 4, "d_ff": 512, "n_layers": 3, "dropout": 0.1,
                     "max_len": 128}, {"lr": 1e-3, "warmup": 200, "schedule": "noam",
                                       "label_smoothing": 0.1}),
    "base": _paper_base(),
}

#: The presets of the toy corpora (il.data.CORPORA) and those of ``--preset``.
CORPUS_PRESETS = ("post", "copy", "reverse", "fr-en", "coreference")
COMMAND_PRESETS = ("tiny", "small", "base")
