"""``python -m illustrated train ...`` and ``... translate ...``: the command line of
:mod:`illustrated.commands.cli`."""
from .commands.cli import main
from .commands.interrupt import exit_with

if __name__ == "__main__":
    exit_with(main())
