"""Training in files that say what they hold (issue 27, point 4): the loop in training.py reads as
the recipe, the loss and the accuracy are computed in one place, the saved state of a run is
written and checked in training_state.py only, inference lives in inference.py; the il.* names
of the contract still resolve."""
import ast
import inspect
from pathlib import Path

import illustrated as il
from illustrated import inference, schedules, training
from illustrated.files import training_state

SRC = Path(il.__file__).parent


def _code_lines(function) -> int:
    """Lines of a function's body without its docstring."""
    node = ast.parse(inspect.getsource(function).lstrip()).body[0]
    body = node.body[1:] if isinstance(node.body[0], ast.Expr) else node.body
    return body[-1].end_lineno - body[0].lineno + 1


def test_train_reads_as_the_recipe_in_at_most_60_lines():
    assert _code_lines(training.train) <= 60


def test_the_loss_and_the_accuracy_are_computed_in_one_place():
    text = (SRC / "training.py").read_text(encoding="utf-8")
    assert text.count("F.cross_entropy(") == 1 and text.count(".argmax(") == 1


def test_the_saved_state_is_written_and_checked_in_one_file():
    """The "training" field of a checkpoint, its digests and their checks: training_state.py."""
    for name in ("training.py", "files/checkpoint.py", "inference.py", "schedules.py"):
        text = (SRC / name).read_text(encoding="utf-8")
        assert "digest" not in text and "TRAINING_KEYS" not in text, name
    assert hasattr(training_state, "save_training_state")
    assert hasattr(training_state, "load_training_state")


def test_each_file_holds_what_its_name_says():
    assert il.translate is inference.translate and il.exact_match is inference.exact_match
    assert il.train is training.train and il.set_seed is training.set_seed
    assert il.pick_device is training.pick_device and il.History is training.History
    assert schedules.learning_rate(1, 1.0, 0) == 1.0
    # the helper that collided with the il.reference package has a name of its own
    assert not hasattr(training, "reference") and not hasattr(inference, "reference")
    assert inference.expected_translation("Je  SUIS.") == "je suis."
