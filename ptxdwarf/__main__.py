"""``python -m ptxdwarf``."""

from .cli import run

run()
