"""The argument parser of every ``leash`` command line: a usage error is one line.

argparse prints the whole usage block before the error; in a terminal, a log or a notebook
that buries the one line that matters. :class:`OneLineParser` prints only
``<prog>: error: <message> (see <prog> --help)`` and exits 2, argparse's status for bad usage.
"""

from __future__ import annotations

import argparse

__all__ = ["OneLineParser", "non_negative_int"]


class OneLineParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose usage errors are a single line on stderr."""

    def error(self, message):  # noqa: D102 - argparse's hook
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def non_negative_int(text: str) -> int:
    """argparse ``type`` of an integer >= 0 (e.g. ``--seed``: numpy refuses a negative seed with
    a message that names no option)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {value}")
    return value
