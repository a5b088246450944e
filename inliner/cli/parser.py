"""The ``inliner`` command line's flags, built one group at a time.

The groups are added in the order ``inliner --help`` lists the flags (argparse prints
them as they are added), so the help text reads: what to rewrite, what to do with it,
which files, how to run, how to report, where the configuration is. Every flag that
``[tool.inliner]`` can also set defaults to None here, so that ``options`` can tell a
flag not given from one given (the configuration fills only the first).
"""

from __future__ import annotations

import argparse

from inliner import __version__
from inliner.cli import files as discovery
from inliner.cli import formats, report


class _Parser(argparse.ArgumentParser):
    """Usage errors and help go through ``report`` (the one place that prints)."""

    def _print_message(self, message: str, file=None) -> None:
        if message:
            report.emit(message, file)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="inliner",
        description=(
            "Rewrite torch.autograd.Function subclasses into flat forward/backward functions, "
            "in place. Options can also be set in [tool.inliner] of pyproject.toml."
        ),
        epilog=(
            "Exit status: 0 ok, 1 --check found changes (or --fail-on-refusal and a Function was refused), "
            "2 usage error, 123 some file failed."
        ),
    )
    _add_inputs(parser)
    _add_modes(parser)
    _add_file_filters(parser)
    _add_run_options(parser)
    _add_output_formats(parser)
    _add_config(parser)
    return parser


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files and directories to rewrite; '-' reads stdin",
    )


def _add_modes(parser: argparse.ArgumentParser) -> None:
    """Write, check or diff; which candidates; how carefully."""
    parser.add_argument(
        "--check",
        action="store_true",
        default=None,
        help="write nothing; exit 1 if any file would change",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        default=None,
        help="write nothing; print a unified diff on stdout",
    )
    parser.add_argument(
        "--color",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="color the diff (default: when stdout is a terminal and NO_COLOR is not set)",
    )
    parser.add_argument(
        "--select",
        metavar="NAME|PATH:LINE",
        help="only the Function class NAME, or the class / op call at LINE (with PATH, only in that file)",
    )
    safety = parser.add_mutually_exclusive_group()
    safety.add_argument(
        "--fast",
        dest="fast",
        action="store_true",
        default=None,
        help="skip checking that the output compiles and that a second pass changes nothing",
    )
    safety.add_argument(
        "--safe",
        dest="fast",
        action="store_false",
        default=None,
        help="the default; undoes --fast",
    )


def _add_file_filters(parser: argparse.ArgumentParser) -> None:
    """Which files inside the directories given, and the name of the one read from stdin."""
    parser.add_argument(
        "--include",
        metavar="REGEX",
        help=f"files to process inside directories (default: {discovery.DEFAULT_INCLUDE})",
    )
    parser.add_argument(
        "--exclude",
        metavar="REGEX",
        help="paths to skip inside directories, matched against /path/relative/to/root (directories end "
        "in '/'); giving it replaces the default and turns off .gitignore",
    )
    parser.add_argument(
        "--extend-exclude",
        metavar="REGEX",
        help="more paths to skip, on top of --exclude",
    )
    parser.add_argument(
        "--force-exclude",
        metavar="REGEX",
        help="paths to skip even when named on the command line (useful for pre-commit)",
    )
    parser.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="the name of the file read from '-' (messages, config)",
    )


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """Workers, and how much is said while they work."""
    parser.add_argument(
        "-j",
        "--jobs",
        type=_positive_int,
        metavar="N",
        help="worker processes (default: number of CPUs)",
    )
    parser.add_argument(
        "-l",
        "--line-length",
        type=_positive_int,
        metavar="N",
        help="width of the lines inliner writes; the user's lines keep theirs "
        "(default: the project's black or ruff line-length, else 88)",
    )
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument("-q", "--quiet", action="store_true", default=None, help="print errors only")
    verbosity.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=None,
        help="also print info diagnostics, unchanged and skipped files",
    )


def _add_output_formats(parser: argparse.ArgumentParser) -> None:
    """How diagnostics are reported, and whether a refusal fails the run."""
    parser.add_argument(
        "--output-format",
        choices=formats.FORMATS,
        default="text",
        help="how diagnostics are reported: text (on stderr), or on stdout as json (one object per line), "
        "github (workflow annotations) or sarif (SARIF 2.1.0 log) (default: text)",
    )
    parser.add_argument(
        "--statistics",
        action="store_true",
        help="print the number of diagnostics per code on stdout instead of each diagnostic "
        "(with --output-format json, as a JSON array)",
    )
    parser.add_argument(
        "--fail-on-refusal",
        action="store_true",
        help="exit 1 when a Function (or op call) is left untouched with a warning",
    )


def _add_config(parser: argparse.ArgumentParser) -> None:
    """Where ``[tool.inliner]`` is read from, and which inliner reads it."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="read [tool.inliner] from FILE instead of the project's pyproject.toml",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
