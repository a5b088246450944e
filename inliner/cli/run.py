"""One run of the ``inliner`` command, phase by phase.

Settle the options (``options``), collect the work (stdin, then the files found under
the paths), flatten it (in worker processes, which also write the files: ``process``),
report each outcome as it comes, in the order of the files, and answer an exit code.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from inliner.cli import files as discovery
from inliner.cli import options, process, report
from inliner.cli.options import Options, UsageError
from inliner.engine.analysis.compile_overrides import module_name
from inliner.style import find_line_length
from inliner.subclassed import for_module, subclassed_in_tree

EXIT_OK, EXIT_CHANGED, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 123


@dataclass(frozen=True)
class _Work:
    """The files' tasks, and stdin's: a task, or its bytes passed through as they are."""

    tasks: list[process.Task]
    stdin: process.Task | None = None
    passthrough: bytes | None = None


def execute(args: argparse.Namespace, reporter: report.Reporter) -> int:
    """Run the command the parsed ``args`` ask for; the exit code."""
    select, select_path = options.parse_select(args.select)
    paths = _paths(args, select_path)
    if not paths:
        reporter.info("No path given. Nothing to do.")
        return EXIT_OK
    settled = options.settle(args, paths, reporter, select=select, select_path=select_path)
    work = _collect(settled, paths, reporter)
    if work.passthrough is not None and not args.check and not args.diff:
        reporter.stdout_bytes(work.passthrough, "utf-8")
    if not work.tasks and work.stdin is None:
        if work.passthrough is None:
            reporter.info("No Python files are present to be processed. Nothing to do.")
        return EXIT_OK
    counts = _flatten_all(work, args, reporter)
    reporter.summary(counts)
    return _exit_status(counts, args)


def _paths(args: argparse.Namespace, select_path: str | None) -> list[str]:
    """The paths given; without any, the file ``--select PATH:LINE`` names."""
    paths: list[str] = list(args.paths)
    if not paths and select_path is not None:
        paths = [select_path]
    if paths.count("-") > 1:
        raise UsageError("'-' (stdin) can be given only once")
    return paths


def _exit_status(counts: report.Counts, args: argparse.Namespace) -> int:
    if counts.failed:
        return EXIT_FAILED
    if args.check and counts.changed:
        return EXIT_CHANGED
    if args.fail_on_refusal and counts.refused:
        return EXIT_CHANGED
    return EXIT_OK


# -- collect -------------------------------------------------------------------------


def _collect(settled: Options, paths: list[str], reporter: report.Reporter) -> _Work:
    """Stdin first (read now, whole), then the files found under the other paths."""
    reads_stdin = "-" in paths
    stdin, passthrough = _stdin_work(settled, reporter) if reads_stdin else (None, None)
    tasks = _file_tasks(settled, [p for p in paths if p != "-"], reporter, reads_stdin=reads_stdin)
    return _Work(tasks, stdin, passthrough)


def _stdin_work(settled: Options, reporter: report.Reporter) -> tuple[process.Task | None, bytes | None]:
    """Stdin's task; or, when its file is excluded or not the one selected, its bytes."""
    args = settled.args
    data = _read_stdin()
    display = args.stdin_filename or "-"
    target = args.stdin_filename
    reason = _stdin_skip_reason(settled, target)
    if reason is not None:
        reporter.skipped(display, reason)
        return None, data
    task = process.Task(
        display,
        None,
        stdin=data,
        write=False,
        diff=args.diff,
        safe=not args.fast,
        select=settled.select,
        module=module_name(target) if target else None,
        compile_overrides=settled.config.compile,
        line_length=args.line_length or find_line_length(os.path.abspath(target or "-")),
    )
    return task, None


def _stdin_skip_reason(settled: Options, target: str | None) -> str | None:
    force_exclude = settled.filters.force_exclude
    if target and force_exclude is not None and force_exclude.search(_match_string(settled, target)):
        return "matches --force-exclude"
    select_path = settled.select_path
    if select_path is not None and (target is None or os.path.realpath(target) != os.path.realpath(select_path)):
        return f"not the file named by --select {settled.args.select}"
    return None


def _match_string(settled: Options, target: str) -> str:
    return discovery.match_string(os.path.abspath(target), str(settled.root), False)


def _file_tasks(
    settled: Options, names: list[str], reporter: report.Reporter, *, reads_stdin: bool
) -> list[process.Task]:
    """A task per file found under ``names`` (only the selected file's, with ``--select PATH:LINE``)."""
    args = settled.args
    try:
        found = discovery.discover(names, settled.root, settled.filters)
    except discovery.PathError as exc:
        raise UsageError(str(exc)) from None
    for skipped in found.skipped:
        reporter.skipped(skipped.display, skipped.reason)
    sources = found.files
    if settled.select_path is not None:
        wanted = os.path.realpath(settled.select_path)
        sources = [s for s in sources if s.real == wanted]
        if not sources and not reads_stdin:
            raise UsageError(f"--select {args.select}: {settled.select_path} is not among the files to process")
    write = not (args.check or args.diff)
    modules = {src.real: module_name(src.real) for src in found.files}
    subclassed = subclassed_in_tree({m: real for real, m in modules.items() if m is not None})
    return [
        process.Task(
            src.display,
            src.real,
            write=write,
            diff=args.diff,
            safe=not args.fast,
            select=settled.select,
            module=modules[src.real],
            compile_overrides=settled.config.compile,
            subclassed=tuple(sorted(for_module(subclassed, modules[src.real]).items())),
            line_length=args.line_length or find_line_length(src.real),
        )
        for src in sources
    ]


def _read_stdin() -> bytes:
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return buffer.read()
    return sys.stdin.read().encode("utf-8")


# -- flatten and report ----------------------------------------------------------------


def _flatten_all(work: _Work, args: argparse.Namespace, reporter: report.Reporter) -> report.Counts:
    """Stdin's task, then the files' (in parallel), each reported as it comes, in order."""
    # looked up now, so tests can patch inliner.cli.process.flatten
    engine = process.flatten
    counts = report.Counts()
    if work.stdin is not None:
        _handle(process.run(work.stdin, engine), reporter, counts, args)
    reporter.progress_start(len(work.tasks))
    try:
        for outcome in _outcomes(work.tasks, engine, args.jobs):
            reporter.progress_advance()
            _handle(outcome, reporter, counts, args)
    finally:
        reporter.progress_end()
    return counts


def _handle(
    outcome: process.Outcome,
    reporter: report.Reporter,
    counts: report.Counts,
    args: argparse.Namespace,
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
                    task.display,
                    process.FAILED,
                    f"internal error: worker failed: {type(exc).__name__}: {exc}",
                )
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
