"""The ``inliner`` command: ``main(argv) -> exit code``.

Exit codes (black's): 0 success or nothing to do, 1 ``--check`` found files that would
change, 2 usage error, 123 at least one file failed (could not be parsed, verified or
written, or an internal error).

The work is split by job: ``parser`` (the flags), ``options`` (the flags filled from
``config``, pyproject.toml), ``run`` (the phases of one run), ``files`` (which files),
``process`` (one file through the engine, safely), ``io`` (bytes on disk), ``report``
(everything printed). This module only parses the command line and answers the exit code.
"""

from __future__ import annotations

from collections.abc import Sequence

from inliner.cli import report
from inliner.cli.options import UsageError
from inliner.cli.parser import build_parser
from inliner.cli.run import EXIT_CHANGED, EXIT_FAILED, EXIT_OK, EXIT_USAGE, execute

__all__ = [
    "EXIT_CHANGED",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "build_parser",
    "main",
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_USAGE)
    reporter = report.Reporter(
        verbosity=report.QUIET if args.quiet else report.VERBOSE if args.verbose else report.NORMAL
    )
    try:
        status = execute(args, reporter)
        reporter.finish()
        return status
    except UsageError as exc:
        reporter.usage_error(parser.format_usage(), parser.prog, str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        reporter.progress_end()
        reporter.error("aborted")
        return 130
