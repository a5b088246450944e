"""What one run is asked to do: the flags, filled from ``[tool.inliner]``, then defaults.

A flag given on the command line wins over the configuration, which wins over the
defaults; combinations that cannot work together are usage errors (exit 2), raised
here before any file is read.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

from inliner.cli import files as discovery
from inliner.cli import report
from inliner.cli.config import (
    OPTION_TYPES,
    Config,
    ConfigError,
    find_config,
    find_project_root,
    load_config,
)
from inliner.engine import Selection


class UsageError(Exception):
    pass


@dataclass(frozen=True)
class Options:
    """The settled options: ``args`` (every flag now has its value) and what follows from them."""

    args: argparse.Namespace
    root: Path
    config: Config
    filters: discovery.Filters
    select: Selection | None
    select_path: str | None  # the file named by ``--select PATH:LINE``


def parse_select(text: str | None) -> tuple[Selection | None, str | None]:
    """``--select``'s selection, and the file it names (``PATH:LINE``), if any."""
    if text is None:
        return None, None
    if not text.strip():
        raise UsageError("--select needs a class name, PATH:LINE or LINE")
    return Selection.parse_with_path(text)


def settle(
    args: argparse.Namespace,
    paths: list[str],
    reporter: report.Reporter,
    *,
    select: Selection | None,
    select_path: str | None,
) -> Options:
    """Find the project and its configuration, fill ``args`` from it, and set up ``reporter``."""
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
    return Options(args, root, config, _filters(args), select, select_path)


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
