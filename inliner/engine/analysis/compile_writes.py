"""Which writes of outside state a forward may make on the split path, for the compile-kind
walk (``compile_kind.py``).

Dynamo traces a forward's write to state it did not create and replays it after the
graph, as it did in the original's forward. Where what it guards settles, the split path
takes the call with the original's graphs: a plain set whose key and value read neither
what it writes nor what holds it, or a counter on what the caller passed. A counter on
module-level or closure state, an append, or a write computed from what it writes keeps
the island: the original recompiled on every call (measured in
tests/runtime/test_forward_sets.py).

The walker passed in is duck-typed: ``in_forward``, ``lookup``, ``own_parameter``,
``func`` and ``scope``.
"""

from __future__ import annotations

import ast

from inliner.engine.analysis.compile_calls import root_name as _root_name
from inliner.engine.analysis.compile_locals import Local
from inliner.engine.analysis.compile_tables import OPAQUE, SIDE_EFFECTING
from inliner.engine.analysis.scopes import dotted


def write_kind(walker, target: ast.AST, value: ast.AST | None, increment: ast.AST | None) -> str:
    """The kind of a write to outside state: ``OPAQUE`` for a forward's plain set
    (``_plain_set``) or counter on what the caller passed (``_counted_argument``),
    ``SIDE_EFFECTING`` otherwise. The check is syntactic: a read of the target inside a
    helper the value calls is not seen (the split path then recompiles on every call,
    as the original did)."""
    if not walker.in_forward:
        return SIDE_EFFECTING
    root = target.id if isinstance(target, ast.Name) else _root_name(target)
    keys = []
    part = target
    while isinstance(part, (ast.Attribute, ast.Subscript)):
        if isinstance(part, ast.Subscript):
            keys.append(part.slice)
        elif part.attr in _TENSOR_STATE:
            return SIDE_EFFECTING
        part = part.value
    if root is None:
        return SIDE_EFFECTING
    # what the write changes, as a dotted path (``Cls.buf``, ``CACHE``); its root where
    # the path has an item in the middle (``a.b[k].c``)
    written = dotted(target.value if isinstance(target, ast.Subscript) else target) or root
    if value is not None and _plain_set(walker, root, written, value, keys):
        return OPAQUE
    if increment is not None and _counted_argument(walker, root, written, increment, keys):
        return OPAQUE
    return SIDE_EFFECTING


def _plain_set(walker, root: str, written: str, value: ast.AST, keys: list[ast.expr]) -> bool:
    """``obj.attr = v``, ``CACHE[key] = v``, ``global X; X = v``: a key and a value that
    read neither what it writes nor what holds it, under any name the written object
    may have here (``obj = STATE``, then ``obj.count = STATE.count + 1`` reads it)."""
    paths = _paths_of(walker, root, written)
    return not any(_reads(walker, part, path) for part in (value, *keys) for path in paths)


def _paths_of(walker, root: str, written: str) -> set[str]:
    """``written``, and the same path through each object a binding of the local
    ``root`` names (``state = state or Default()`` names ``state``)."""
    paths = {written}
    scope = walker.lookup(root)
    if scope is not None:
        rest = written[len(root) :]
        for bound, value in scope.bindings:
            if bound == root and value is not None:
                paths |= {chain + rest for chain in _chains(value)}
    return paths


def _counted_argument(walker, root: str, written: str, increment: ast.AST, keys: list[ast.expr]) -> bool:
    """``state.calls += 1``, ``stats["calls"] += 1`` on a parameter without a default
    (a default is module-level state): dynamo makes the count dynamic after one
    recompile, as for the original."""
    if not _is_number(increment) or not walker.own_parameter(root) or _has_default(walker, root):
        return False
    return not any(_reads(walker, key, written) for key in keys)


def _has_default(walker, name: str) -> bool:
    args = walker.func.args
    positional = [*args.posonlyargs, *args.args]
    defaulted = positional[len(positional) - len(args.defaults) :]
    defaulted += [a for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
    return any(a.arg == name for a in defaulted)


def _reads(walker, expr: ast.AST, written: str, seen: set[str] | None = None) -> bool:
    """``expr`` may read what a write to ``written`` changes (``_reads_path``), itself or
    through a local that the assignment reaching it, or else some binding of it, reads
    through (``n = len(CACHE)``, then ``CACHE[n] = v``). ``seen``: the locals already
    followed for this question, each once."""
    if _reads_path(expr, written):
        return True
    seen = set() if seen is None else seen
    root = written.split(".")[0]
    for node in ast.walk(expr):
        # the written object's own name: its bindings are what it is (``_paths_of``)
        if not isinstance(node, ast.Name) or node.id in seen or node.id == root:
            continue
        scope = walker.lookup(node.id)
        if scope is None:
            continue
        known = scope.reaching.get(id(node))
        key = node.id if known is None else f"{node.id}@{id(known)}"
        if key in seen:
            continue
        seen.add(key)  # a name's bindings, or the one assignment reaching it: followed once
        values = [known] if known is not None else _may_reach(walker, node, scope)
        if any(v is None or _reads(walker, v, written, seen) for v in values):
            return True
    return False


def _may_reach(walker, use: ast.Name, scope: Local) -> list[ast.AST | None]:
    """The values bound to ``use``'s name that may reach it: every binding, except that
    a use of the walked scope's own outside loops sees none written after it."""
    pairs = [(v, at) for (bound, v), at in zip(scope.bindings, scope.positions, strict=True) if bound == use.id]
    if scope is not walker.scope or id(use) in scope.in_loops or not hasattr(use, "lineno"):
        return [v for v, _ in pairs]
    here = (use.lineno, use.col_offset)
    return [v for v, at in pairs if at < here]


def _reads_path(expr: ast.AST, written: str) -> bool:
    """``expr`` may read what a write to ``written`` (``Cls.buf``, ``CACHE``) changes: a
    reference to it, to an attribute of it, or to an object holding it, or a call of a
    method of an object holding it (``Cls.buf = alloc(Cls.rows)`` reads another attribute,
    not the one it writes; ``Cls.buf = Cls.make()`` may read it; ``cfg.other.value()``
    does not reach ``cfg.probes.last``)."""
    root = written.split(".")[0]
    inner = {id(n.value) for n in ast.walk(expr) if isinstance(n, ast.Attribute)}
    called = {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}
    for node in ast.walk(expr):
        if not isinstance(node, (ast.Name, ast.Attribute)) or id(node) in inner:
            continue
        path = dotted(node)
        if path is None or path.split(".")[0] != root:
            continue  # an attribute of a computed value: its own names are walked too
        if id(node) in called:  # what the call may read: its receiver, or the function itself
            path = path.rpartition(".")[0] or path
        if path == written or written.startswith(path + ".") or path.startswith(written + "."):
            return True
    return False


def _chains(value: ast.AST) -> set[str]:
    """The dotted names an assigned value may be the object of (``STATE``, ``cfg.inner``,
    either side of ``a or b`` and of ``a if c else b``); a call's result is its own."""
    if isinstance(value, ast.BoolOp):
        return set().union(*(_chains(v) for v in value.values))
    if isinstance(value, ast.IfExp):
        return _chains(value.body) | _chains(value.orelse)
    path = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    return {path} if path else set()


def _is_number(expr: ast.AST) -> bool:
    """A literal int or float, signed or not: what a counter adds."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)


#: attributes whose set changes a tensor's autograd state, not a Python attribute
_TENSOR_STATE = frozenset({"data", "grad", "requires_grad", "retains_grad", "__class__", "__dict__"})
