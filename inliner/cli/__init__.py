"""The ``inliner`` command: argument parsing and orchestration.

``main(argv) -> exit code``. Exit codes (black's): 0 success or nothing to do,
1 ``--check`` found files that would change, 2 usage error, 123 at least one file
failed (could not be parsed, verified or written, or an internal error).

The work is split by job: ``config`` (pyproject.toml), ``files`` (which files),
``process`` (one file through the engine, safely), ``io`` (bytes on disk),
``report`` (everything printed). This module only wires them together.
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Iterator, Sequence

from inliner import __version__
from inliner.cli import files as discovery
from inliner.cli import formats, process, report
from inliner.cli.config import OPTION_TYPES, Config, ConfigError, find_config, find_project_root, load_config
from inliner.engine.analysis.compile_overrides import module_name
from inliner.engine import Selection

EXIT_OK, EXIT_CHANGED, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 123


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def _print_message(self, message: str, file=None) -> None:  # noqa: ANN001
        if message:
            report.emit(message, file)


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
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
    p.add_argument("paths", nargs="*", metavar="PATH", help="files and directories to rewrite; '-' reads stdin")
    p.add_argument("--check", action="store_true", default=None, help="write nothing; exit 1 if any file would change")
    p.add_argument("--diff", action="store_true", default=None, help="write nothing; print a unified diff on stdout")
    p.add_argument(
        "--color",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="color the diff (default: when stdout is a terminal and NO_COLOR is not set)",
    )
    p.add_argument(
        "--select",
        metavar="NAME|PATH:LINE",
        help="only the Function class NAME, or the class / op call at LINE (with PATH, only in that file)",
    )
    safety = p.add_mutually_exclusive_group()
    safety.add_argument(
        "--fast",
        dest="fast",
        action="store_true",
        default=None,
        help="skip checking that the output compiles and that a second pass changes nothing",
    )
    safety.add_argument("--safe", dest="fast", action="store_false", default=None, help="the default; undoes --fast")
    p.add_argument(
        "--include",
        metavar="REGEX",
        help=f"files to process inside directories (default: {discovery.DEFAULT_INCLUDE})",
    )
    p.add_argument(
        "--exclude",
        metavar="REGEX",
        help="paths to skip inside directories, matched against /path/relative/to/root (directories end "
        "in '/'); giving it replaces the default and turns off .gitignore",
    )
    p.add_argument("--extend-exclude", metavar="REGEX", help="more paths to skip, on top of --exclude")
    p.add_argument(
        "--force-exclude",
        metavar="REGEX",
        help="paths to skip even when named on the command line (useful for pre-commit)",
    )
    p.add_argument("--stdin-filename", metavar="PATH", help="the name of the file read from '-' (messages, config)")
    p.add_argument("-j", "--jobs", type=_jobs, metavar="N", help="worker processes (default: number of CPUs)")
    verbosity = p.add_mutually_exclusive_group()
    verbosity.add_argument("-q", "--quiet", action="store_true", default=None, help="print errors only")
    verbosity.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=None,
        help="also print info diagnostics, unchanged and skipped files",
    )
    p.add_argument(
        "--output-format",
        choices=formats.FORMATS,
        default="text",
        help="how diagnostics are reported: text (on stderr), or on stdout as json (one object per line), "
        "github (workflow annotations) or sarif (SARIF 2.1.0 log) (default: text)",
    )
    p.add_argument(
        "--statistics",
        action="store_true",
        help="print the number of diagnostics per code on stdout instead of each diagnostic "
        "(with --output-format json, as a JSON array)",
    )
    p.add_argument(
        "--fail-on-refusal",
        action="store_true",
        help="exit 1 when a Function (or op call) is left untouched with a warning",
    )
    p.add_argument(
        "--config", metavar="FILE", help="read [tool.inliner] from FILE instead of the project's pyproject.toml"
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


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
        status = _main(args, reporter)
        reporter.finish()
        return status
    except UsageError as exc:
        reporter.usage_error(parser.format_usage(), parser.prog, str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        reporter.progress_end()
        reporter.error("aborted")
        return 130


def _select(text: str | None) -> tuple[Selection | None, str | None]:
    if text is None:
        return None, None
    if not text.strip():
        raise UsageError("--select needs a class name, PATH:LINE or LINE")
    head, sep, tail = text.rpartition(":")
    path = head if sep and tail.isdigit() and head else None
    return Selection.parse(text), path


def _merge(args: argparse.Namespace, config: Config) -> None:
    """Fill the options not given on the command line from the config, then defaults."""
    values = dict(config.values)
    if args.quiet is not None or args.verbose is not None:
        values.pop("quiet", None)
        values.pop("verbose", None)
    for dest in OPTION_TYPES:
        if getattr(args, dest) is None and dest in values:
            setattr(args, dest, values[dest])
    if args.quiet and args.verbose:
        raise UsageError("quiet and verbose cannot both be set")
    args.use_gitignore = args.exclude is None
    defaults = {
        "check": False,
        "diff": False,
        "fast": False,
        "include": discovery.DEFAULT_INCLUDE,
        "exclude": discovery.DEFAULT_EXCLUDE,
        "jobs": os.cpu_count() or 1,
        "quiet": False,
        "verbose": False,
    }
    for dest, value in defaults.items():
        if getattr(args, dest) is None:
            setattr(args, dest, value)


def _output(args: argparse.Namespace, paths: list[str], reporter: report.Reporter) -> None:
    """A machine format or --statistics owns stdout, so nothing else may print there."""
    if args.statistics and args.output_format not in ("text", "json"):
        raise UsageError(f"--statistics prints text or json, not {args.output_format}")
    report_flag = f"--output-format {args.output_format}" if args.output_format != "text" else "--statistics"
    if args.output_format != "text" or args.statistics:
        if args.diff:
            raise UsageError(f"{report_flag} prints on stdout, where --diff would print too: use --check")
        if "-" in paths and not args.check:
            raise UsageError(f"{report_flag} prints on stdout, where '-' writes the rewritten text: add --check")
    reporter.output_format = args.output_format
    reporter.statistics = args.statistics


def _filters(args: argparse.Namespace) -> discovery.Filters:
    try:
        return discovery.Filters(
            include=discovery.compile_regex(args.include, "--include"),
            exclude=discovery.compile_regex(args.exclude, "--exclude"),
            extend_exclude=(
                discovery.compile_regex(args.extend_exclude, "--extend-exclude") if args.extend_exclude else None
            ),
            force_exclude=(
                discovery.compile_regex(args.force_exclude, "--force-exclude") if args.force_exclude else None
            ),
            use_gitignore=args.use_gitignore,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _main(args: argparse.Namespace, reporter: report.Reporter) -> int:
    select, select_path = _select(args.select)
    paths: list[str] = list(args.paths)
    if not paths and select_path is not None:
        paths = [select_path]
    if not paths:
        reporter.info("No path given. Nothing to do.")
        return EXIT_OK
    if paths.count("-") > 1:
        raise UsageError("'-' (stdin) can be given only once")

    root, why = find_project_root(paths, args.stdin_filename)
    try:
        config = load_config(Path(args.config)) if args.config else find_config(root)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    _merge(args, config)
    reporter.verbosity = report.QUIET if args.quiet else report.VERBOSE if args.verbose else report.NORMAL
    reporter.check = bool(args.check or args.diff)
    reporter.color = report.use_color(args.color)
    _output(args, paths, reporter)
    reporter.verbose(f"Identified {root} as project root ({why}).")
    if config.path is not None:
        reporter.verbose(f"Using configuration from {config.path}.")
    for warning in config.warnings:
        reporter.warning(warning)
    filters = _filters(args)

    write = not (args.check or args.diff)
    tasks: list[process.Task] = []
    stdin_task: process.Task | None = None
    stdin_passthrough: bytes | None = None
    if "-" in paths:
        data = _read_stdin()
        display = args.stdin_filename or "-"
        target = args.stdin_filename
        reason = None
        if target and filters.force_exclude is not None:
            if filters.force_exclude.search(discovery.match_string(os.path.abspath(target), str(root), False)):
                reason = "matches --force-exclude"
        if (
            reason is None
            and select_path is not None
            and (target is None or os.path.realpath(target) != os.path.realpath(select_path))
        ):
            reason = f"not the file named by --select {args.select}"
        if reason is not None:
            reporter.skipped(display, reason)
            stdin_passthrough = data
        else:
            stdin_task = process.Task(
                display,
                None,
                stdin=data,
                write=False,
                diff=args.diff,
                safe=not args.fast,
                select=select,
                module=module_name(target) if target else None,
                compile_overrides=config.compile,
            )
    try:
        found = discovery.discover([p for p in paths if p != "-"], root, filters)
    except discovery.PathError as exc:
        raise UsageError(str(exc)) from None
    for skipped in found.skipped:
        reporter.skipped(skipped.display, skipped.reason)
    sources = found.files
    if select_path is not None:
        wanted = os.path.realpath(select_path)
        sources = [s for s in sources if s.real == wanted]
        if not sources and stdin_task is None and stdin_passthrough is None:
            raise UsageError(f"--select {args.select}: {select_path} is not among the files to process")
    for src in sources:
        tasks.append(
            process.Task(
                src.display,
                src.real,
                write=write,
                diff=args.diff,
                safe=not args.fast,
                select=select,
                module=module_name(src.real),
                compile_overrides=config.compile,
            )
        )

    if stdin_passthrough is not None and not args.check and not args.diff:
        reporter.stdout_bytes(stdin_passthrough, "utf-8")
    if not tasks and stdin_task is None:
        if stdin_passthrough is None:
            reporter.info("No Python files are present to be processed. Nothing to do.")
        return EXIT_OK

    engine = process.flatten  # looked up now, so tests can patch inliner.cli.process.flatten
    counts = report.Counts()
    if stdin_task is not None:
        _handle(process.run(stdin_task, engine), reporter, counts, args)
    reporter.progress_start(len(tasks))
    try:
        for outcome in _outcomes(tasks, engine, args.jobs):
            reporter.progress_advance()
            _handle(outcome, reporter, counts, args)
    finally:
        reporter.progress_end()
    reporter.summary(counts)
    if counts.failed:
        return EXIT_FAILED
    if args.check and counts.changed:
        return EXIT_CHANGED
    if args.fail_on_refusal and counts.refused:
        return EXIT_CHANGED
    return EXIT_OK


def _read_stdin() -> bytes:
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return buffer.read()
    return sys.stdin.read().encode("utf-8")


def _handle(
    outcome: process.Outcome, reporter: report.Reporter, counts: report.Counts, args: argparse.Namespace
) -> None:
    reporter.diagnostics(outcome.diagnostics)
    if outcome.status == process.FAILED:
        counts.failed += 1
        reporter.failed(outcome.display, outcome.reason or "unknown error")
    elif outcome.status == process.CHANGED:
        counts.changed += 1
        counts.flattened += len(outcome.flattened)
        counts.refused += len(outcome.refused)
        reporter.rewritten(outcome.display)
        if outcome.diff is not None:
            reporter.diff(outcome.diff)
    else:
        counts.unchanged += 1
        counts.refused += len(outcome.refused)
        reporter.unchanged(outcome.display)
    if outcome.output is not None and not args.check and not args.diff:
        reporter.stdout_bytes(outcome.output, outcome.encoding)


def _outcomes(tasks: list[process.Task], engine: process.Engine, jobs: int) -> Iterator[process.Outcome]:
    """Run the tasks, yielding outcomes in task order whatever the number of workers."""
    executor = None
    if jobs > 1 and len(tasks) > 1:
        try:
            executor = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)))
        except (ImportError, NotImplementedError, OSError):
            executor = None  # no multiprocessing here (e.g. no /dev/shm): run serially
    if executor is None:
        for task in tasks:
            yield process.run(task, engine)
        return
    try:
        futures = [executor.submit(process.run, task, engine) for task in tasks]
        for task, future in zip(tasks, futures):
            try:
                yield future.result()
            except Exception as exc:  # the worker died or the task could not be pickled
                yield process.Outcome(
                    task.display, process.FAILED, f"internal error: worker failed: {type(exc).__name__}: {exc}"
                )
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
