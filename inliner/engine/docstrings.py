"""Where a body's docstring is, in both trees the engine reads (``ast`` and libcst).

Lowerings insert statements after a docstring and analyses skip it; one definition
keeps them agreeing on what a docstring is.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst


def is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    return body[1:] if body and is_docstring(body[0]) else body


def is_cst_docstring(small: cst.BaseSmallStatement) -> bool:
    return isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))


def after_docstring(body: Sequence[cst.BaseStatement]) -> int:
    """Index of the first statement after a leading docstring (0 when there is none)."""
    first = body[0] if body else None
    return 1 if isinstance(first, cst.SimpleStatementLine) and is_cst_docstring(first.body[0]) else 0
