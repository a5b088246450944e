"""Where a backward gives None: the positions every ``return`` gives as a literal None.

The split path runs a backward that is not traceable through an opaque op, which must
say before it runs which gradients it returns: a custom op cannot return None where it
declared a tensor. The literal ``None``s of every return are known from the source
alone; what they cannot tell (returns of different shapes, a returned name that may hold
a tuple) keeps the call an island.
"""

from __future__ import annotations

import ast

from inliner.engine.analysis.scopes import mentions, own_nodes


def static_nones(func: ast.FunctionDef) -> tuple[int, ...] | None:
    """Positions that every ``return`` of ``func`` (not of a nested function) gives as a
    literal None, when every return has one shape: a tuple of the same length (or one
    expression), or the same positions before a starred element of unknown length
    (``return (None, None, *grads)``: 0 and 1); ``()`` for a body that always raises;
    None when that is not known. Another position may still be None at run time (a name
    bound to None on some path): the runtime checks it where it would matter."""
    nodes = own_nodes(func)
    returns = [n for n in nodes if isinstance(n, ast.Return)]
    if not returns:
        # no return and a last statement that raises: every call raises (fla-core's
        # "backward is not implemented"), so no gradient is ever given, None or not
        return () if func.body and isinstance(func.body[-1], ast.Raise) else None
    shapes: set[tuple[tuple[bool, ...], bool]] = set()
    for node in returns:
        value = node.value
        if value is None or (isinstance(value, ast.Name) and _may_hold_a_tuple(value.id, nodes)):
            return None
        shape = _return_shape(value.elts if isinstance(value, ast.Tuple) else [value])
        if shape is None:
            return None
        shapes.add(shape)
    if len(shapes) != 1:
        return None
    ((known, _open),) = shapes
    return tuple(i for i, none in enumerate(known) if none)


def _return_shape(elements: list[ast.expr]) -> tuple[tuple[bool, ...], bool] | None:
    """Per position of one returned tuple, whether it is a literal None, as far as the
    positions are known (``*[None] * 4`` and ``*(None, None)`` are literal Nones; any
    other starred element ends what is known, ``(None, None, *grads)``); and whether it
    ended so. None when a literal None follows that end: it would come at a position
    not known here."""
    shape: list[bool] = []
    for k, element in enumerate(elements):
        if not isinstance(element, ast.Starred):
            shape.append(_is_none(element))
            continue
        count = _count_of_nones(element.value)
        if count is None:
            rest = elements[k + 1 :]
            if any(_is_none(e) or (isinstance(e, ast.Starred) and _count_of_nones(e.value)) for e in rest):
                return None
            return tuple(shape), True
        shape.extend([True] * count)
    return tuple(shape), False


def _count_of_nones(expr: ast.expr) -> int | None:
    """``[None] * 4``, ``(None,) * 2``, ``[None, None]``: how many Nones (None: not such a literal)."""
    if isinstance(expr, (ast.List, ast.Tuple)):
        return len(expr.elts) if all(_is_none(e) for e in expr.elts) else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        for items, times in ((expr.left, expr.right), (expr.right, expr.left)):
            count = _count_of_nones(items)
            if count is not None and isinstance(times, ast.Constant) and type(times.value) is int:
                return count * max(times.value, 0)
    return None


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _may_hold_a_tuple(name: str, nodes: list[ast.AST]) -> bool:
    """Whether ``name`` is bound to a tuple, a list, None or something unknown anywhere
    in the body (a returned name holding several gradients, some None). Only what binds
    the name counts: a statement inside a ``with`` or ``for`` block is a node of its own."""
    for node in nodes:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            if not isinstance(node.value, (ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript, ast.Attribute)):
                return True
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
            if mentions(node.target, name):
                return True
        elif isinstance(node, ast.With):
            if any(item.optional_vars is not None and mentions(item.optional_vars, name) for item in node.items):
                return True
    return False
