"""What importing the package costs: the NumPy reference and the corpora need no torch
(docs/ARCHITECTURE.md: "NumPy reference: float64, pure functions, no torch import"), and every
public name still resolves from ``import illustrated as il``."""
import subprocess
import sys

import pytest

import illustrated as il


@pytest.mark.parametrize("statement", [
    "import illustrated.reference",
    "import illustrated as il; il.reference.softmax([1.0, 2.0]); il.data.load_corpus('post')",
    "from illustrated.reference import self_attention, positional_encoding",
])
def test_the_numpy_parts_import_no_torch(statement):
    probe = f"{statement}\nimport sys\nprint('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out[-1] == "False", f"{statement!r} imported torch"


def test_every_public_name_resolves():
    for name in il.__all__:
        assert getattr(il, name) is not None, name
    assert il.pretrained_models.make_config is not None and il.training.loop.preload_optimizer is not None


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'pretrianed'"):
        il.pretrianed  # noqa: B018


def test_all_lists_exactly_the_eager_and_lazy_names():
    lazy = set(il._LAZY_NAMES) | {"modules", "shipped"}
    eager = {"PAPER_BASE", "Recipe", "TINY", "TransformerConfig", "data", "display", "reference"}
    assert set(il.__all__) == lazy | eager

def test_the_command_line_imports_no_torch_before_main_runs():
    """`python -m illustrated --help` needs no torch; the torch import happens inside main,
    where Ctrl-C is caught."""
    probe = ("import sys, illustrated.commands.cli, illustrated.commands.interrupt, "
             "illustrated.files.clash; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out[-1] == "False"


def test_each_file_holds_what_its_name_says():
    assert il.translate is il.inference.translate.translate
    assert il.exact_match is il.inference.translate.exact_match
    assert il.train is il.training.loop.train and il.set_seed is il.training.loop.set_seed
    assert il.pick_device is il.training.loop.pick_device and il.History is il.training.loop.History
    assert il.training.schedules.learning_rate(1, 1.0, 0) == 1.0
    # the helper that collided with the il.reference package has a name of its own
    assert not hasattr(il.training, "reference") and not hasattr(il.inference, "reference")
    assert il.inference.translate.expected_translation("Je  SUIS.") == "je suis."
