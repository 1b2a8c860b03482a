"""``python -m pytest_confgate.cli``: the ``confgate`` command without its console script
(the Action's ranking step runs it with the interpreter it was installed into)."""

from pytest_confgate.cli import console_main

console_main()
