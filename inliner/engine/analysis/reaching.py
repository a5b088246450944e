"""Which assignment a name's use sees, where only one can: straight-line reaching definitions.

The compile-kind walk asks of a write such as ``shape[i] = d`` whether ``shape`` may be
an object from outside. Over all of a function's bindings the answer is often yes
(``shape`` is a parameter), though the write sits right after ``shape = list(shape)``.
This pass follows each function body in order and records, for a name used where one
assignment of it certainly reaches, the value that assignment bound.

It is sound by leaving out what it cannot follow: a name bound inside a branch, loop,
``with``, ``try`` or ``match`` is unknown after that statement (and inside a ``match``) (inside a loop, a name
bound anywhere in the loop is unknown until the iteration binds it again); names a
walrus, ``global``, ``nonlocal`` or a nested scope's ``nonlocal`` binds are never
known; nested functions and lambdas get their own pass. An unknown use falls back to
the flow-insensitive answer over every binding.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: what binds its ``name``: definitions, ``except ... as name``, ``case ... as name``
_NAMED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)

_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Match, *_TRY)
#: statements without a block: a use in one sees the environment from before it
_SIMPLE = (
    ast.Expr,
    ast.Return,
    ast.Delete,
    ast.AugAssign,
    ast.Raise,
    ast.Assert,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
    ast.Pass,
    ast.Break,
    ast.Continue,
)

#: ``id`` of a ``Name`` node -> the value the one assignment reaching it bound
Reaching = dict[int, ast.expr]


def in_loops(function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[int]:
    """``id`` of each ``Name`` of ``function``'s own statements inside a loop, where a
    binding written later may reach it; outside one, only a binding written before can."""
    inside: set[int] = set()
    for node in _own_nodes(function):
        if node is not function and isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            inside.update(id(name) for name in _own_names(node))
    return frozenset(inside)


def reaching_values(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Reaching:
    """The single reaching value of each name use in ``function``'s own statements."""
    flow = _Flow(_untracked(function))
    flow.block(function.body, {})
    return flow.facts


class _Flow:
    def __init__(self, untracked: frozenset[str]) -> None:
        self.untracked = untracked
        self.facts: Reaching = {}

    def block(self, statements: list[ast.stmt], env: dict[str, ast.expr]) -> dict[str, ast.expr]:
        for statement in statements:
            env = self.statement(statement, env)
        return env

    def statement(self, node: ast.stmt, env: dict[str, ast.expr]) -> dict[str, ast.expr]:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            self.uses(node, env)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and len(targets) == 1 and isinstance(targets[0], ast.Name):
                return self.bind(env, targets[0].id, node.value)
            return _forget(env, _bound_in([node]))
        if isinstance(node, _COMPOUND):
            return self.compound(node, env)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return _forget(env, {node.name})  # its decorators and defaults are left to the fallback
        if isinstance(node, _SIMPLE):
            self.uses(node, env)
        return _forget(env, _bound_in([node]))  # any other statement: nothing recorded inside

    def compound(self, node: ast.stmt, env: dict[str, ast.expr]) -> dict[str, ast.expr]:
        """A branch, loop, ``with``, ``match`` or ``try``: followed inside, its bindings forgotten after."""
        bound = _bound_in([node])
        if isinstance(node, ast.If):
            self.uses(node.test, env)
            self.block(node.body, dict(env))
            self.block(node.orelse, dict(env))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.uses(node.iter, env)  # evaluated once, before the first iteration
            inside = _forget(env, bound)
            self.block(node.body, inside)
            self.block(node.orelse, inside)
        elif isinstance(node, ast.While):
            inside = _forget(env, bound)
            self.uses(node.test, inside)  # evaluated before every iteration
            self.block(node.body, inside)
            self.block(node.orelse, inside)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:  # each item sees what the items before it bound
                self.uses(item.context_expr, env)
                env = _forget(env, _bound_in([item]))
            self.block(node.body, env)
        elif isinstance(node, ast.Match):
            self.uses(node.subject, env)
            for case in node.cases:  # a case's guard and patterns are left to the fallback
                self.block(case.body, _forget(env, bound))
        else:
            assert isinstance(node, _TRY)
            after_body = self.block(node.body, dict(env))
            caught = _forget(env, _bound_in(node.body))
            for handler in node.handlers:
                self.block(handler.body, _forget(caught, {handler.name} if handler.name else set()))
            self.block(node.orelse, after_body)
            self.block(node.finalbody, _forget(env, bound))
        return _forget(env, bound)

    def bind(self, env: dict[str, ast.expr], name: str, value: ast.expr) -> dict[str, ast.expr]:
        if name in self.untracked:
            return _forget(env, {name})
        return {**env, name: value}

    def uses(self, node: ast.AST, env: dict[str, ast.expr]) -> None:
        """Record the value reaching each name in ``node``. A stored name gets the value from
        before the statement too: ``x += [y]`` extends what ``x`` held."""
        for name in _own_names(node):
            value = env.get(name.id)
            if value is not None:
                self.facts[id(name)] = value


def _forget(env: dict[str, ast.expr], names: Iterable[str]) -> dict[str, ast.expr]:
    gone = set(names) & env.keys()
    return {k: v for k, v in env.items() if k not in gone} if gone else env


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and what it holds, not descending into nested scopes or comprehensions
    (which are yielded themselves)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (*_SCOPES, *_COMPREHENSIONS)):
            yield child
        else:
            yield from _own_nodes(child)


def _own_names(node: ast.AST) -> Iterator[ast.Name]:
    return (n for n in _own_nodes(node) if isinstance(n, ast.Name))


def _bound_in(nodes: Iterable[ast.AST]) -> set[str]:
    """Every name a store in ``nodes`` binds (targets, loop and ``with`` variables,
    handlers, imports, nested definitions), at any depth of their blocks."""
    bound: set[str] = set()
    for node in nodes:
        for part in _own_nodes(node):
            if isinstance(part, ast.Name) and isinstance(part.ctx, (ast.Store, ast.Del)):
                bound.add(part.id)
            elif isinstance(part, _NAMED):
                if part.name:
                    bound.add(part.name)
            elif isinstance(part, (ast.Import, ast.ImportFrom)):
                bound.update((a.asname or a.name).split(".")[0] for a in part.names)
            elif isinstance(part, ast.MatchMapping) and part.rest:
                bound.add(part.rest)
    return bound


def _untracked(function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """Names some path may rebind out of order: by a walrus (in a comprehension too), or
    declared ``global``/``nonlocal`` here or ``nonlocal`` in a nested scope."""
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return frozenset(names)
