"""The bindings inside one flat body, scope by scope, for the compile-kind walk.

Python's rules, reduced to what the walk asks: which names a function, lambda or
comprehension binds itself (parameters, assignments, loop targets, imports, nested
defs), which it declares ``global``/``nonlocal``, and the value each binding takes, so
that the walk can tell a value the body created from one that came from outside.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from inliner.engine.analysis.reaching import Reaching, in_loops, reaching_values
from inliner.engine.analysis.visitor import Visitor

_SCOPE_NODES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
#: the nodes that open a scope of their own (``_SCOPE_NODES`` as a type)
ScopeNode = (
    ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
)


@dataclass(eq=False)
class Local:
    """One scope inside the walked function: what it binds and which of those may hold outside objects."""

    node: ast.AST
    parent: Local | None
    names: set[str] = field(default_factory=set)
    params: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    functions: set[str] = field(default_factory=set)  # nested defs / lambdas bound once
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    bindings: list[tuple[str, ast.AST | None]] = field(default_factory=list)  # (name, value; None: outside)
    #: where each binding's target is, in ``bindings``' order ((0, 0): not known)
    positions: list[tuple[int, int]] = field(default_factory=list)
    external: set[str] = field(default_factory=set)
    #: the one value reaching a use of a name, where flow shows it (``reaching.reaching_values``)
    reaching: Reaching = field(default_factory=dict)
    #: ``id`` of each name use inside a loop (``reaching.in_loops``)
    in_loops: frozenset[int] = frozenset()


class _Binder(Visitor):
    """Collect the bindings made directly in one scope (nested scopes are collected on their own)."""

    def __init__(self, scope: Local, skip: frozenset[str]) -> None:
        self.scope = scope
        self.skip = skip  # names whose binding from the residuals is known to be a tensor
        self.root = scope.node

    def bind(self, name: str, value: ast.AST | None, where: ast.AST | None = None) -> None:
        self.scope.names.add(name)
        self.scope.bindings.append((name, value))
        self.scope.positions.append((getattr(where, "lineno", 0), getattr(where, "col_offset", 0)))

    def bind_target(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    self.bind_target(t, v)
                return
            element_of = None if value is None else ast.Subscript(value, ast.Constant(0))
            for element in target.elts:
                if isinstance(value, ast.Name) and isinstance(element, ast.Name) and element.id in self.skip:
                    self.scope.names.add(element.id)
                    continue
                self.bind_target(element, element_of)
        elif isinstance(target, ast.Starred):
            self.bind_target(target.value, value)
        # attribute and item targets bind nothing

    def generic_visit(self, node: ast.AST) -> None:
        if node is not self.root and isinstance(node, _SCOPE_NODES):
            self._enter_nested(node)
            return
        super().generic_visit(node)

    def _enter_nested(self, node: ScopeNode) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bind(node.name, node, node)
            self.scope.functions.add(node.name)
            for part in (*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d)):
                self.visit(part)
        elif isinstance(node, ast.Lambda):
            for part in (*node.args.defaults, *(d for d in node.args.kw_defaults if d)):
                self.visit(part)
        else:  # a comprehension: its first iterable is evaluated here, a walrus binds here
            self.visit(node.generators[0].iter)
            for walrus in (n for n in ast.walk(node) if isinstance(n, ast.NamedExpr)):
                self.bind(walrus.target.id, walrus.value, walrus)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self.bind_target(target, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.bind_target(node.target, node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            self.bind(node.target.id, ast.BinOp(node.target, node.op, node.value), node.target)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.bind(node.target.id, node.value, node)
        self.generic_visit(node)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.bind_target(node.target, ast.Subscript(node.iter, ast.Constant(0)))
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self.bind_target(node.optional_vars, None)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bind(node.name, ast.Constant(None), node)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            self.scope.names.add(bound)
            self.scope.imports[bound] = alias.name if alias.asname else bound

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            bound = alias.asname or alias.name
            self.scope.names.add(bound)
            if node.module and not node.level:
                self.scope.imports[bound] = f"{node.module}.{alias.name}"
            else:
                self.bind(bound, None, node)

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.declared_global.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scope.declared_nonlocal.update(node.names)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bind(node.name, None, node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.bind(node.name, None, node)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bind(node.name, None, node)


def make_scope(node: ScopeNode, parent: Local | None, own_params: frozenset[str], skip: frozenset[str]) -> Local:
    scope = Local(node, parent)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                scope.params.add(arg.arg)
                scope.names.add(arg.arg)
        binder = _Binder(scope, skip)
        for statement in node.body if isinstance(node.body, list) else [node.body]:
            binder.visit(statement)
        if not isinstance(node, ast.Lambda):
            scope.reaching = reaching_values(node)
            scope.in_loops = in_loops(node)
    else:
        binder = _Binder(scope, skip)
        for generator in node.generators:
            binder.bind_target(generator.target, ast.Subscript(generator.iter, ast.Constant(0)))
    scope.names -= scope.declared_global | scope.declared_nonlocal
    scope.functions |= {name for name, value in scope.bindings if isinstance(value, ast.Lambda)}
    scope.external = {p for p in scope.params if p not in own_params}
    # functions bound more than once are not known functions
    counts: dict[str, int] = {}
    for name, _ in scope.bindings:
        counts[name] = counts.get(name, 0) + 1
    scope.functions = {f for f in scope.functions if counts.get(f) == 1 and f not in scope.params}
    return scope
