"""Diagnostics are data: a stable code, a message that says what to do, a position.

Only the surfaces (CLI, language server, import hook) turn them into text.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from enum import Enum
from typing import TypedDict

from inliner.engine.codes import Code


class Severity(str, Enum):
    ERROR = "error"  # the file could not be processed at all
    WARNING = "warning"  # a Function (or op call) was left untouched
    INFO = "info"  # a Function (or op call) can be / was flattened


class End(TypedDict, total=False):
    """The end of a diagnostic's range, as keyword arguments of ``Diagnostic`` (both or none)."""

    end_line: int
    end_column: int


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int  # 1-based
    column: int  # 1-based, like black/ruff/pyflakes output
    code: Code
    message: str
    severity: Severity = Severity.WARNING
    #: the class (or op call) the diagnostic is about, when there is one
    name: str | None = None
    end_line: int | None = None
    end_column: int | None = None

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"

    @staticmethod
    def utf8_column(source: str, line: int, offset: int) -> int:
        """The 1-based character column of a 1-based UTF-8 byte ``offset`` into ``line`` of ``source``."""
        lines = source.splitlines()
        if not 1 <= line <= len(lines) or offset < 1:
            return offset
        return len(lines[line - 1].encode("utf-8")[: offset - 1].decode("utf-8", errors="ignore")) + 1

    @staticmethod
    def syntax_error_end(exc: BaseException, line: int, column: int, *, utf8_of: str | None = None) -> End:
        """``end_line``/``end_column`` of a SyntaxError, when Python gives a range ending after its start.

        The parser counts columns in characters, as we do; errors that ``compile`` finds in
        an AST (a duplicate argument, ``return`` outside a function) count UTF-8 bytes, as
        the AST does: for those pass the source as ``utf8_of``. Python leaves the end
        empty, or 0, for some errors ("'(' was never closed"), and then there is none.
        """
        end_line, end_column = getattr(exc, "end_lineno", None), getattr(exc, "end_offset", None)
        if isinstance(end_line, int) and isinstance(end_column, int) and end_column >= 1:
            if utf8_of is not None:
                end_column = Diagnostic.utf8_column(utf8_of, end_line, end_column)
            if (end_line, end_column) > (line, column):
                return {"end_line": end_line, "end_column": end_column}
        return {}


def internal_error(exc: BaseException) -> str:
    """``KeyError: 'x' at scopes.py:120``: what failed and where in inliner, for a bug report."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
