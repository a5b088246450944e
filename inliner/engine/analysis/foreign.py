"""Decorators imported from another module of the project, seen into.

A decorator the carriers replay around forward is Python dynamo traces with the call
(the split path) unless it writes outside state, which dynamo would guard and recompile
on (an island). One defined in the module being flattened is walked as a forward helper
is; one imported from another module is walked the same way in *its* module, when the
surface can read that module's source (``flatten(..., sources=...)``: the command line,
the import hook and the language server read it from the project's files). A decorator
whose module cannot be read, or whose binding this does not follow, is not seen into.

Followed: ``from pkg.mod import deco``, ``from .mod import deco`` (relative to the
module's own package), ``from pkg import mod`` with ``@mod.deco``, ``import pkg.mod`` with
``@pkg.mod.deco``, each called or not (a factory ``@deco(...)``), defined by one
module-level ``def`` in the module it names or re-exported there by one
``from ... import`` (a package's ``__init__``), up to four hops. A name bound there only to
torch's own AMP decorators (``torch_decorators``) is one of them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from inliner.engine.analysis.compile_kind import Finding, ModuleFacts
from inliner.engine.analysis.compile_tables import SIDE_EFFECTING
from inliner.engine.analysis.scopes import Scope, ScopeIndex, dotted
from inliner.engine.analysis.torch_decorators import bound_torch_decorator
from inliner.subclassed import absolute_module

#: A module's source by its dotted name (None: not readable, or not part of the project).
ReadSource = Callable[[str], "str | None"]


_REEXPORT_DEPTH = 4
#: what ``_definition`` finds for a name bound only to torch's own decorators
TORCH_DECORATOR = "torch decorator"
Definition = tuple[ModuleFacts, Scope, ast.FunctionDef]
NOT_SEEN = Finding(SIDE_EFFECTING, "is imported from a module the engine does not read")


@dataclass(frozen=True)
class Where:
    """The module being flattened: its dotted name, and whether it is a package's ``__init__``."""

    module: str | None
    is_package: bool


class ForeignModules:
    """The other modules of a project one flattening looks into, each parsed once."""

    def __init__(self, read: ReadSource | None, where: Where) -> None:
        self._read = read
        self._where = where
        self._parsed: dict[str, tuple[ModuleFacts, Scope] | None] = {}

    def wrapper_finding(self, decorator: ast.expr, index: ScopeIndex, module_scope: Scope) -> Finding | None:
        """The worst finding in the imported definition of ``decorator`` (None: nothing to
        note); where it is not seen into, side effecting."""
        if self._read is not None:
            for module, name in _candidates(decorator, index, module_scope, self._where):
                found = self._definition(module, name, 0)
                if found == TORCH_DECORATOR:
                    return None
                if isinstance(found, tuple):
                    facts, scope, definition = found
                    return facts.helper(definition, scope, 0, in_forward=True)
        return NOT_SEEN

    def _definition(self, module: str, name: str, depth: int) -> Definition | str | None:
        """The one module-level ``def`` ``name`` is in ``module``, following a re-export
        (``from .decorators import input_guard`` in a package's ``__init__``), or
        ``TORCH_DECORATOR``: every binding there is one of torch's (``torch_decorators``)."""
        parsed = self._module(module)
        bindings = parsed[1].bindings.get(name, []) if parsed is not None else []
        if parsed is None or not bindings:
            return None
        node = bindings[0].node
        if len(bindings) == 1 and bindings[0].kind == "def" and isinstance(node, ast.FunctionDef):
            return parsed[0], parsed[1], node
        if bound_torch_decorator(name, parsed[0].index, parsed[1]) is not None:
            return TORCH_DECORATOR
        if len(bindings) != 1:
            return None
        if not isinstance(node, ast.ImportFrom) or depth >= _REEXPORT_DEPTH:
            return None
        alias = next(a for a in node.names if (a.asname or a.name) == name)
        # the module read may be a package's __init__ or a plain module: a relative import
        # is tried from each (the def must be found where it leads)
        for where in (Where(module, True), Where(module, False)):
            base = _absolute(node, where)
            found = self._definition(base, alias.name, depth + 1) if base else None
            if found is not None:
                return found
        return None

    def _module(self, module: str) -> tuple[ModuleFacts, Scope] | None:
        if module not in self._parsed:
            self._parsed[module] = _parse(self._read, module)
        return self._parsed[module]


def _parse(read: ReadSource | None, module: str) -> tuple[ModuleFacts, Scope] | None:
    try:
        source = read(module) if read is not None else None
        tree = ast.parse(source) if source is not None else None
    except (SyntaxError, ValueError, OSError, UnicodeDecodeError):
        return None
    if tree is None:
        return None
    index = ScopeIndex.build(tree, set())
    if index.root is None:
        return None
    return ModuleFacts(tree, index), index.root


def _candidates(decorator: ast.expr, index: ScopeIndex, module_scope: Scope, where: Where) -> list[tuple[str, str]]:
    """Where ``decorator``'s definition may be: (module, name of its ``def`` there)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = dotted(target)
    if name is None:
        return []
    head, *attrs = name.split(".")
    bindings = module_scope.bindings.get(head, [])
    if index.lookup(head, module_scope) is not module_scope or len(bindings) != 1:
        return []
    node = bindings[0].node
    if isinstance(node, ast.ImportFrom):
        alias = next((a for a in node.names if (a.asname or a.name) == head), None)
        base = _absolute(node, where)
        if alias is None or base is None:
            return []
        if not attrs:
            return [(base, alias.name)]
        return [(f"{base}.{alias.name}.{'.'.join(attrs[:-1])}".rstrip("."), attrs[-1])]
    if isinstance(node, ast.Import) and attrs and bindings[0].qualified:
        return [(".".join([bindings[0].qualified, *attrs[:-1]]), attrs[-1])]
    return []


def _absolute(node: ast.ImportFrom, where: Where) -> str | None:
    """The module a ``from ... import`` in ``where`` reads from, relative imports resolved."""
    if node.level and where.module is None:
        return None
    package = (where.module if where.is_package else where.module.rpartition(".")[0]) if where.module else ""
    return absolute_module(node, package)
