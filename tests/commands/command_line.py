"""Running ``python -m illustrated`` in the test's process, for the tests in this folder."""
from illustrated.commands import cli


def run(capsys, *args):
    """(exit code, standard output, standard error) of ``cli.main(args)``, argparse's usage
    errors included."""
    try:
        code = cli.main(list(args))
    except SystemExit as exit_:  # argparse's usage errors
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err
