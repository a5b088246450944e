"""What only the compiler finds, checked one top-level statement at a time.

``ast.parse`` lets through what the symbol table and code generator reject (a repeated
parameter, ``return`` outside a function, ``nonlocal`` at module level...); the engine
leaves such a file alone, as Python would refuse to import it. Compiling the whole module
on every keystroke of an editor costs as much as parsing it again, so each top-level
statement is compiled on its own and remembered by its text once it compiled.

Two things tie statements together, and are kept whole:

- ``from __future__`` imports must come first: the statements up to the last one at the
  top level are compiled together, and the features they turn on are passed to the rest;
- ``global`` in module scope depends on every other use of the name there: a module with
  one is compiled whole.

Everything else the compiler rejects lies inside the statement that holds it.
"""

from __future__ import annotations
import __future__

import ast
import warnings
from collections.abc import Iterator
from functools import partial
from typing import TypeGuard

from inliner.engine.incremental import Remember
from inliner.engine.source import SourceText, start_line


def check_compiles(tree: ast.Module, text: SourceText, path: str, remember: Remember) -> None:
    """Compile ``tree`` and throw the code away; raises what ``compile`` raises (the error of
    the first statement that fails, in source order)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. invalid escape sequences: not ours to report
        if any(isinstance(node, ast.Global) for node in _module_scope(tree.body)):
            _compiles(tree, path)
            return
        leading = _future_prefix(tree)
        flags = 0
        if leading:
            _compiles(ast.Module(tree.body[:leading], []), path)
            flags = _future_flags(tree.body[:leading])
        for statement in tree.body[leading:]:
            where = (statement.lineno - start_line(statement), statement.col_offset, statement.end_col_offset)
            key = ("compiles", text.statement_text(statement), where, flags)
            remember(key, partial(_compiles, ast.Module([statement], []), path, flags))


def _compiles(tree: ast.Module, path: str, flags: int = 0) -> bool:
    compile(tree, path, "exec", flags=flags, dont_inherit=True)
    return True  # what is remembered: a failure raises, and is not


def _future_prefix(tree: ast.Module) -> int:
    """How many top-level statements lead up to the last ``from __future__`` import (0: none)."""
    last = 0
    for i, statement in enumerate(tree.body):
        if _is_future_import(statement):
            last = i + 1
    return last


def _future_flags(statements: list[ast.stmt]) -> int:
    """The compiler flags of the features these (compiled, so valid) statements import."""
    flags = 0
    for statement in statements:
        if _is_future_import(statement):
            for alias in statement.names:
                feature = getattr(__future__, alias.name, None)
                flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _is_future_import(statement: ast.stmt) -> TypeGuard[ast.ImportFrom]:
    return isinstance(statement, ast.ImportFrom) and statement.module == "__future__"


def _module_scope(statements: list[ast.stmt]) -> Iterator[ast.AST]:
    """The statements that run in module scope: nested blocks, not function or class bodies."""
    stack: list[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, name, ()))
