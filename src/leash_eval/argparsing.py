"""The argument parser of every ``leash`` command line: a usage error is one line.

argparse prints the whole usage block before the error, which buries the one line that
matters; :class:`OneLineParser` prints ``<prog>: error: <message> (see <prog> --help)`` and
exits 2. Its ``--help`` keeps the examples' lines and shows every option's default.
"""

from __future__ import annotations

import argparse

from leash.limits import INT64_MAX

__all__ = ["HelpFormatter", "OneLineParser", "non_empty", "non_negative_int"]


class HelpFormatter(argparse.HelpFormatter):
    """Help with examples kept as written and every option's default.

    Lines of a description or an epilog that start with a space (examples) are kept; the
    others are filled paragraph by paragraph. Unlike argparse's
    :class:`~argparse.ArgumentDefaultsHelpFormatter`, "(default: VALUE)" is appended only to an
    option that has a value by default and whose help does not already speak of its default
    (no "(default: None)"); tests/test_cli_help.py checks that every option says its default.
    """

    def add_argument(self, action):
        """Add an option's help, measuring subcommands at the indent they are shown."""
        super().add_argument(action)
        # argparse measures the commands of a subparsers action one indent short of where it
        # prints them, so a long command name ("score-traces") pushed its summary to a new line
        for sub in getattr(action, "_choices_actions", ()):
            self._action_max_length = max(self._action_max_length, len(
                self._format_action_invocation(sub)) + self._current_indent + 4)

    def _fill_text(self, text, width, indent):
        out, prose = [], []

        def flush():
            if prose:
                out.append(super(HelpFormatter, self)._fill_text(" ".join(prose), width,
                                                                 indent))
                prose.clear()

        for line in text.splitlines():
            if not line.strip():
                flush()
                out.append("")
            elif line.startswith(" "):
                flush()
                out.append(indent + line)
            else:
                prose.append(line.strip())
        flush()
        return "\n".join(out)

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if ("default" in text.lower() or not action.option_strings or default is None
                or default is False or default is argparse.SUPPRESS
                or (isinstance(default, list) and not default)):
            return text
        return f"{text} (default: %(default)s)" if text else "default: %(default)s"


class OneLineParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose usage errors are a single line on stderr.

    Its help uses :class:`HelpFormatter` unless ``formatter_class`` is given.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        """Exit with status 2 and one line: the program, the error, where to read more."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def int_at_least(minimum: int):
    """An argparse ``type``: an integer >= ``minimum`` within the 64-bit range (what the
    readers and numpy hold), refused in one line naming the bound (e.g. ``--seed``: numpy refuses
    a negative seed with a message that names no option; ``--step 99999999999999999999`` would
    end in a DuckDB conversion error).
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
        if value > INT64_MAX:
            raise argparse.ArgumentTypeError(
                f"must be an integer <= {INT64_MAX} (the 64-bit range), got {text.strip()}")
        return value

    parse.__name__ = f"integer >= {minimum}"  # argparse names the type in some messages
    return parse


def non_empty(text: str) -> str:
    """An argparse ``type``: a text with something besides white space (a label, a path)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must not be empty, got {text!r}")
    return text


non_negative_int = int_at_least(0)
positive_int = int_at_least(1)
