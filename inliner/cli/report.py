"""The only place that prints.

stdout carries payload only (diffs, the rewritten text for ``-``, ``--help``,
``--version``, and the diagnostics in a machine format or as ``--statistics``); every
message, text diagnostic, progress bar and the summary go to stderr. Also home of the
pure diff helpers, so the text format lives next to its printer (the machine formats
are in ``formats``).
"""

from __future__ import annotations

import difflib
import io
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

from inliner.cli import formats
from inliner.engine.diagnostics import Diagnostic

QUIET, NORMAL, VERBOSE = -1, 0, 1

_BOLD, _CYAN, _GREEN, _RED, _RESET = "\033[1m", "\033[36m", "\033[32m", "\033[31m", "\033[0m"


# --- diffs (pure) -------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    # str.splitlines also splits on form feeds and other separators; Python only
    # ends lines at \n, \r\n and \r, and so must the diff.
    return io.StringIO(text, newline="").readlines()


def unified_diff(old: str, new: str, path: str, context: int = 3) -> str:
    """A ``patch -p0``-able unified diff, with no timestamps (the output is deterministic)."""
    out: list[str] = []
    for line in difflib.unified_diff(_lines(old), _lines(new), fromfile=path, tofile=path, n=context):
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:
            out.append(line + "\n")
            out.append("\\ No newline at end of file\n")
    return "".join(out)


def color_diff(diff: str) -> str:
    out: list[str] = []
    for line in _lines(diff):
        body = line.rstrip("\r\n")
        end = line[len(body) :]
        if line.startswith(("+++", "---")):
            out.append(_BOLD + body + _RESET + end)
        elif line.startswith("@@"):
            out.append(_CYAN + body + _RESET + end)
        elif line.startswith("+"):
            out.append(_GREEN + body + _RESET + end)
        elif line.startswith("-"):
            out.append(_RED + body + _RESET + end)
        else:
            out.append(line)
    return "".join(out)


def use_color(flag: bool | None, stream: IO[str] | None = None) -> bool:
    """``--color``/``--no-color`` (or config) win; else no color under NO_COLOR or off a tty."""
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream if stream is not None else sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# --- printing -----------------------------------------------------------------------


def emit(message: str, file: IO[str] | None = None) -> None:
    """Raw write, for argparse's own help/usage/error text."""
    (file if file is not None else sys.stderr).write(message)


@dataclass
class Counts:
    changed: int = 0
    unchanged: int = 0
    failed: int = 0
    flattened: int = 0
    refused: int = 0


class Reporter:
    PROGRESS_MIN_FILES = 20

    def __init__(self, *, verbosity: int = NORMAL, color: bool = False, check: bool = False) -> None:
        self.verbosity = verbosity
        self.color = color
        self.check = check  # "would rewrite" instead of "rewrote"
        self.output_format = "text"  # one of formats.FORMATS
        self.statistics = False  # counts per code instead of each diagnostic
        self._progress: tuple[int, int] | None = None  # (done, total) while a bar is shown
        self._held: list[Diagnostic] = []  # for SARIF and --statistics, printed by finish()
        self._failures: list[tuple[str, str]] = []

    # low level ----------------------------------------------------------------------

    def _err(self, line: str) -> None:
        err = sys.stderr
        if self._progress is not None:
            err.write("\r\033[K")
        err.write(line + "\n")
        if self._progress is not None:
            self._draw()
        err.flush()

    def stdout_text(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    def stdout_bytes(self, data: bytes, encoding: str) -> None:
        """Write encoded source text as is (keeps encoding, BOM and newlines)."""
        sys.stdout.flush()
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:
            sys.stdout.write(data.decode(encoding))
        else:
            buffer.write(data)
            buffer.flush()

    # messages -----------------------------------------------------------------------

    def error(self, message: str) -> None:
        self._err(f"error: {message}")

    def warning(self, message: str) -> None:
        if self.verbosity >= NORMAL:
            self._err(f"warning: {message}")

    def info(self, message: str) -> None:
        if self.verbosity >= NORMAL:
            self._err(message)

    def verbose(self, message: str) -> None:
        if self.verbosity >= VERBOSE:
            self._err(message)

    def usage_error(self, usage: str, prog: str, message: str) -> None:
        sys.stderr.write(f"{usage}{prog}: error: {message}\n")

    def _shown(self, d: Diagnostic) -> bool:
        """text and github follow -q/-v; json and SARIF are data and carry every diagnostic."""
        if self.output_format in ("json", "sarif"):
            return True
        severity = formats.severity(d)
        return severity == "error" or (severity == "warning" and self.verbosity >= NORMAL) or self.verbosity >= VERBOSE

    def diagnostics(self, diagnostics: Iterable[Diagnostic]) -> None:
        for d in sorted(diagnostics, key=formats.sort_key):
            if not self._shown(d):
                continue
            if self.statistics or self.output_format == "sarif":
                self._held.append(d)
            elif self.output_format == "json":
                self.stdout_text(formats.json_line(d) + "\n")
            elif self.output_format == "github":
                self.stdout_text(formats.github_annotation(d) + "\n")
            else:
                self._err(d.format())

    def finish(self) -> None:
        """Print what is only complete at the end of the run: statistics, the SARIF log."""
        if self.statistics:
            rows = formats.statistics(self._held)
            self.stdout_text(
                formats.statistics_json(rows) if self.output_format == "json" else formats.statistics_text(rows)
            )
        elif self.output_format == "sarif":
            self.stdout_text(formats.sarif_text(self._held, failures=self._failures))
        self._held = []

    def rewritten(self, path: str) -> None:
        if self.verbosity >= NORMAL:
            self._err(f"{'would rewrite' if self.check else 'rewrote'} {path}")

    def unchanged(self, path: str) -> None:
        self.verbose(f"{path} unchanged")

    def failed(self, path: str, reason: str) -> None:
        self._failures.append((path, reason))
        self._err(f"error: cannot process {path}: {reason}")

    def skipped(self, path: str, reason: str) -> None:
        self.verbose(f"{path} skipped: {reason}")

    def diff(self, text: str) -> None:
        self.stdout_text(color_diff(text) if self.color else text)

    def summary(self, counts: Counts) -> None:
        if self.verbosity < NORMAL:
            return
        parts = []
        if counts.changed:
            verb = "would be rewritten" if self.check else "rewritten"
            parts.append(f"{_plural(counts.changed, 'file')} {verb}")
        if counts.unchanged:
            parts.append(f"{_plural(counts.unchanged, 'file')} left unchanged")
        if counts.failed:
            parts.append(f"{_plural(counts.failed, 'file')} failed")
        head = "Oh no!" if counts.failed else "All done!"
        self._err(f"{head} {', '.join(parts) or 'no files processed'}.")
        flattened = "would be flattened" if self.check else "flattened"
        self._err(f"Functions: {counts.flattened} {flattened}, {counts.refused} refused.")

    # progress -----------------------------------------------------------------------

    def progress_start(self, total: int) -> None:
        if self.verbosity < NORMAL or total <= self.PROGRESS_MIN_FILES:
            return
        try:
            if not sys.stderr.isatty():
                return
        except (AttributeError, ValueError):
            return
        self._progress = (0, total)
        self._draw()

    def progress_advance(self) -> None:
        if self._progress is not None:
            done, total = self._progress
            self._progress = (done + 1, total)
            self._draw()

    def progress_end(self) -> None:
        if self._progress is not None:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self._progress = None

    def _draw(self) -> None:
        assert self._progress is not None
        done, total = self._progress
        width = 30
        filled = width * done // total
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
        sys.stderr.flush()
