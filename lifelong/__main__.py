"""``python -m lifelong`` is the ``lifelong`` command."""

from lifelong.cli import main

main()
