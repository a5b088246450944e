"""Which module-level names a module's functions change at run time.

A body that reads a module-level name some function rebinds (``global``) or mutates
(attribute, item, ``append``...) reads a value that may differ from call to call: the
compile-kind walk counts that read as opaque. Import-time writes do not count.
"""

from __future__ import annotations

import ast

from inliner.engine.analysis import compile_tables as tables
from inliner.engine.analysis.compile_calls import root_name as _root_name


def names_mutated_in(statement: ast.stmt) -> frozenset[str]:
    """Names the functions inside one top-level statement rebind (``global``) or mutate
    (attribute, item, ``append``...), when they do not bind them themselves. Import-time
    writes do not count. A function of the statement's text alone, so an editor's cache
    may answer for a statement from a previous version of the file."""
    out: set[str] = set()
    for func in ast.walk(statement):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        nodes = list(ast.walk(func))  # walked once: the module's every function is
        own = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
        own |= {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        declared = {n for node in nodes if isinstance(node, ast.Global) for n in node.names}
        for node in nodes:
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and node.id in declared:
                out.add(node.id)
            for root in _written_roots(node):
                if root not in own or root in declared:
                    out.add(root)
    return frozenset(out)


def _written_roots(node: ast.AST) -> list[str]:
    """Root names whose object ``node`` writes into (``a.b = ``, ``a[i] += ``, ``a.append(...)``)."""
    targets: list[ast.AST] = []
    if isinstance(node, (ast.Assign, ast.Delete)):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in tables.MUTATING_METHODS
    ):
        targets = [node.func]
    roots = []
    for target in targets:
        for part in ast.walk(target):
            if isinstance(part, (ast.Attribute, ast.Subscript)):
                root = _root_name(part)
                if root is not None:
                    roots.append(root)
    return roots
