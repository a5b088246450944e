"""What one call in a flat body does, for the compile-kind walk (``inliner/compile_kind.py``).

A call is resolved the way Python would resolve it at run time, as far as the source
tells: a local of the body (an import, an alias of a torch name, a nested function, a
value from outside), or a free name the engine's scope index qualifies (``torch.sin``,
``numpy.sin``, ``builtins.print``, a same-file helper, a module-level object). The
tables in ``inliner/compile_tables.py`` then say what calling it does. Anything the
source cannot pin down is opaque.

The walker passed in is duck-typed: ``lookup``, ``is_external``, ``where``, ``note``,
``facts``, ``outer``, ``body``, ``depth``, ``in_forward``, ``_check_callee`` and ``_is_known_tensor``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from inliner.engine.analysis import compile_tables as tables
from inliner.engine.analysis.compile_tables import OPAQUE, SIDE_EFFECTING, TRACEABLE
from inliner.engine.analysis.scopes import dotted

_SPACES = re.compile(r"\s+")

#: builtins whose value is a new scalar or string (never an object from outside)
_SCALAR_BUILTINS = frozenset(
    {
        "len",
        "int",
        "float",
        "bool",
        "complex",
        "str",
        "abs",
        "round",
        "repr",
        "format",
        "hash",
        "id",
        "isinstance",
        "issubclass",
        "callable",
        "hasattr",
        "range",
        "divmod",
        "pow",
        "chr",
        "ord",
        "bin",
        "hex",
        "oct",
        "ascii",
        "sum",
    }
)


def text_of(node: ast.AST, limit: int = 60) -> str:
    """The source of ``node`` on one line, shortened for a reason string."""
    try:
        text = _SPACES.sub(" ", ast.unparse(node))
    except Exception:  # a synthesized node without every field: name it by its type
        text = type(node).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def root_name(expr: ast.AST) -> str | None:
    """``a`` of ``a.b[0].c()``."""
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


# -- resolution -----------------------------------------------------------------------------


def qualified_names(walker, name: str) -> set[str] | None:
    """What the dotted ``name`` stands for where the call runs: qualified names (``<local>``
    for a value of this module), or None for a local of the body that is no import or alias."""
    root, _, rest = name.partition(".")
    tail = f".{rest}" if rest else ""
    scope = walker.lookup(root)
    if scope is None:
        return walker.facts.index.qualify(name, walker.outer)
    if root in scope.imports:
        return {scope.imports[root] + tail}
    alias = _alias_of(walker, scope, root)
    if alias is not None:
        return {q + tail for q in alias}
    return None


def _alias_of(walker, scope, name: str) -> set[str] | None:
    """``f = torch.sin`` (bound once, to a free dotted name): what ``f`` stands for."""
    values = [value for bound, value in scope.bindings if bound == name]
    if len(values) != 1 or name in scope.params or not isinstance(values[0], (ast.Name, ast.Attribute)):
        return None
    target = dotted(values[0])
    if scope.parent is not None or target is None:
        return None  # an alias made in a nested scope is not followed
    if walker.lookup_from(scope, target.partition(".")[0]) is not None:
        return None  # an alias of another local
    qualified = walker.facts.index.qualify(target, walker.outer)
    return qualified if qualified and "<local>" not in qualified else None


# -- checking a call ------------------------------------------------------------------------


def check_call(walker, call: ast.Call, *, discarded: bool) -> None:
    func = call.func
    if _makes_record(walker, call):
        return
    if isinstance(func, ast.Subscript):
        walker.note(call, OPAQUE, f"launches kernel {text_of(func)}")
        return
    if isinstance(func, ast.Lambda):
        return  # its body is walked
    name = dotted(func)
    if name is None:
        if isinstance(func, ast.Attribute):
            _method(walker, call, func.value, func.attr, discarded)
        else:
            walker.note(call, OPAQUE, f"calls the result of {text_of(func)}")
        return
    qualified = qualified_names(walker, name)
    if qualified is None:
        _local_call(walker, call, name, discarded)
    elif "<local>" in qualified or not qualified:
        _module_value_call(walker, call, name, qualified - {"<local>"}, discarded)
    else:
        _qualified_call(walker, call, qualified, discarded)


def _makes_record(walker, call: ast.Call) -> bool:
    """The lowering's own ``state = Record(...)`` at the top of a record's fwd."""
    body = walker.body
    return body is not None and body.record_call is call


def _local_call(walker, call: ast.Call, name: str, discarded: bool) -> None:
    root, _, rest = name.partition(".")
    func = call.func
    if rest:
        assert isinstance(func, ast.Attribute)
        _method(walker, call, func.value, func.attr, discarded)
        return
    scope = walker.lookup(root)
    if root in scope.functions:
        return  # a nested def or lambda: walked where it is defined
    if not walker.is_external(func):
        walker.note(call, OPAQUE, f"calls {root}")
        return
    body = walker.body
    # What a forward calls dynamo traces as it traced the original's (the split path,
    # inliner/runtime/_split.py): the effects of such a call, if any, are dynamo's to
    # replay or refuse. Anywhere else the call must run eagerly on every call.
    kind = OPAQUE if _is_forward(walker) else SIDE_EFFECTING
    if scope.parent is None and body is not None and root in body.residuals:
        walker.note(call, SIDE_EFFECTING, f"calls {root}, {body.residual_source}")
    elif root in scope.params:
        walker.note(call, kind, f"calls {root}, passed in as an argument")
    else:
        walker.note(call, kind, f"calls {root}, a value from outside the body")


def _module_value_call(walker, call: ast.Call, name: str, also: set[str], discarded: bool) -> None:
    """A free name bound in this file (a def, a class, an object) or in an enclosing function."""
    if also:
        _qualified_call(walker, call, also, discarded)
    root, _, rest = name.partition(".")
    index = walker.facts.index
    found = index.lookup(root, walker.outer)
    bindings = found.bindings.get(root, []) if found is not None else []
    if not rest and len(bindings) == 1 and bindings[0].kind == "def":
        helper = bindings[0].node
        record = _record_parameter(walker, call, helper)
        finding = walker.facts.helper(helper, found, walker.depth, record, _is_forward(walker))
        if finding is not None:
            walker.note(call, finding.kind, f"calls {root}, which {finding.text}")
        return
    if rest and not any(b.kind == "class" for b in bindings) and isinstance(call.func, ast.Attribute):
        _method(walker, call, call.func.value, call.func.attr, discarded)
        return
    walker.note(call, OPAQUE, f"calls {name}")


@dataclass(frozen=True)
class HelperRecord:
    """A helper handed the ctx record: the parameter that receives it, and whether the
    caller is the forward that made it (its writes are then the original's ctx writes) or
    the backward (whose writes the lowering knows: ``backward_writes_ctx``)."""

    param: str
    owned: bool
    from_backward: bool = False


def _record_parameter(walker, call: ast.Call, helper: ast.FunctionDef) -> HelperRecord | None:
    """The helper's parameter that receives the ctx record, when the call hands it over
    plainly (by position or keyword, to a parameter the helper never rebinds)."""
    if not walker.record:
        return None
    positional = [*helper.args.posonlyargs, *helper.args.args]
    received = [k.arg for k in call.keywords if walker.is_record(k.value)]
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if walker.is_record(arg):
            received.append(positional[i].arg if i < len(positional) else None)
    if len(received) != 1 or received[0] is None:
        return None
    param = received[0]
    rebinds = any(
        isinstance(n, ast.Name) and n.id == param and not isinstance(n.ctx, ast.Load) for n in ast.walk(helper)
    )
    declared = any(isinstance(n, (ast.Global, ast.Nonlocal)) and param in n.names for n in ast.walk(helper))
    if rebinds or declared:
        return None
    return HelperRecord(param, walker.owns_record, walker.backward_record)


def _qualified_call(walker, call: ast.Call, qualified: set[str], discarded: bool) -> None:
    for name in sorted(qualified):
        if name.startswith("builtins."):
            _builtin(walker, call, name[len("builtins.") :])
            continue
        if name == "torch" or name.startswith("torch."):
            if name == "torch.where" and len(call.args) == 1 and not call.keywords:
                walker.note(call, OPAQUE, "calls torch.where with one argument, an output shape that depends on data")
                continue
            walker.note(call, _in_forward(walker, tables.torch_kind(name), name), f"calls {name}")
            continue
        walker.note(call, _in_forward(walker, tables.stdlib_kind(name), name), f"calls {name}")


def _is_forward(walker) -> bool:
    """The walk is of a forward body, or of a same-file helper a forward calls (not of a
    backward or a jvp): dynamo traces it as it traced the original's forward."""
    return bool(walker.in_forward)


def _in_forward(walker, kind: str, qualified: str) -> str:
    """``kind`` of calling ``qualified``, except that in a forward a side effect dynamo
    treats as it treats the original's (``compile_tables.traced_in_forward``) is opaque:
    the split path takes the call, where the effect happens as in the original, where
    any other side effect keeps the call an eager island."""
    if kind == SIDE_EFFECTING and _is_forward(walker) and tables.traced_in_forward(qualified):
        return OPAQUE
    return kind


def _builtin(walker, call: ast.Call, name: str) -> None:
    args = call.args
    if "." in name:
        head, _, method = name.partition(".")
        if not (head in tables.BUILTINS_PURE and method in tables.READING_METHODS):
            walker.note(call, OPAQUE, f"calls {name}")
        return
    if name in ("setattr", "delattr"):
        if args and walker.is_record(args[0]) and walker.owns_record:
            return  # the original's ``setattr(ctx, ...)`` in forward: state forward made
        if args and (walker.is_external(args[0]) or walker._is_known_tensor(args[0])):
            walker.note(call, SIDE_EFFECTING, f"calls {name} on {walker.where(args[0])}")
        return
    if name in tables.BUILTINS_SIDE_EFFECTING:
        traced = name in tables.BUILTINS_TRACED_IN_FORWARD
        walker.note(call, OPAQUE if traced and _is_forward(walker) else SIDE_EFFECTING, f"calls {name}")
        return
    if name not in tables.BUILTINS_PURE and not tables.is_exception_name(name):
        walker.note(call, OPAQUE, f"calls {name}")
        return
    if name in tables.BUILTINS_CONVERTING:
        for arg in args:
            if any(isinstance(n, ast.Call) and computes_on_tensor_data(walker, n) for n in ast.walk(arg)):
                walker.note(call, OPAQUE, f"turns a tensor into a Python number ({text_of(call)})")
                return
    if name == "next" and args and walker.is_external(args[0]):
        walker.note(call, SIDE_EFFECTING, f"advances {walker.where(args[0])}")
    if name in tables.BUILTINS_CALLING:
        called = [args[0]] if name in ("map", "filter") and args else []
        called += [k.value for k in call.keywords if k.arg == "key"]
        for expr in called:
            walker._check_callee(expr, call)


def _method(walker, call: ast.Call, receiver: ast.AST, method: str, discarded: bool) -> None:
    if method in tables.CTX_METHODS and walker.is_record(receiver):
        return  # ``state.save_for_backward(...)``: the original's ctx call, replayed by the carrier
    external = walker.is_external(receiver)
    tensor = walker._is_known_tensor(receiver)
    shown = text_of(call.func)
    if tables.is_tensor_method(method) or tensor:
        kind = tables.tensor_method_kind(method)
        if kind is not None:
            walker.note(call, kind, f"calls {shown}()")
        elif method.endswith("_"):
            if external and not tensor and walker.lookup(root_name(receiver) or "") is None:
                walker.note(call, SIDE_EFFECTING, f"updates {walker.where(receiver)} in place")
        elif discarded and external and not tensor:
            verb = tables.MUTATING_METHODS.get(method)
            what = (
                f"{verb} {walker.where(receiver)}"
                if verb
                else f"calls {shown}() for its effect on {walker.where(receiver)}"
            )
            walker.note(call, SIDE_EFFECTING, what)
        return
    if method in tables.MUTATING_METHODS:
        if external and not fresh_container(walker, receiver):
            what = f"{tables.MUTATING_METHODS[method]} {walker.where(receiver)}"
            walker.note(call, SIDE_EFFECTING, what, into=receiver)
        return
    if method in tables.READING_METHODS:
        return
    if external:
        # dynamo traces a forward's call of an outside object's method (or breaks the graph
        # at it) as it did in the original's forward: the split path may take it. A write
        # the body makes itself (above: ``append``, ``update``...) keeps the call eager.
        kind = OPAQUE if _is_forward(walker) else SIDE_EFFECTING
        walker.note(call, kind, f"calls {shown}, a method of {walker.where(receiver)}")
    else:
        walker.note(call, OPAQUE, f"calls {shown}")


# -- what a call returns, what it computes on -----------------------------------------------


_FRESH = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_CONTAINER_TYPES = frozenset({"list", "dict", "set"})


def fresh_container(walker, receiver: ast.AST, *, rebinding: bool = False) -> bool:
    """``receiver`` is a local name every binding of which makes a new list, dict or set
    (``saved = [x.detach(), w]`` on each branch, then ``saved.append(b)`` or
    ``saved[1] = b``): writing to it changes only what this body made, whatever the
    elements are. ``rebinding``: the write is ``receiver += ...``, which rebinds a tuple
    (``t[0] += v`` would first extend what the tuple holds)."""
    known = reaching_value(walker, receiver)
    if known is not None:  # the write sees this binding
        return (rebinding and _a_tuple(known)) or _makes_container(walker, known)
    return every_binding(walker, receiver, lambda value: _makes_container(walker, value))


def _a_tuple(value: ast.AST) -> bool:
    """A tuple display, or a choice between them: ``+=`` rebinds it."""
    if isinstance(value, ast.IfExp):
        return _a_tuple(value.body) and _a_tuple(value.orelse)
    return isinstance(value, ast.Tuple)


def reaching_value(walker, expr: ast.AST) -> ast.expr | None:
    """The value of the one assignment that reaches the local name ``expr``, where flow shows it."""
    if not isinstance(expr, ast.Name):
        return None
    scope = walker.lookup(expr.id)
    return scope.reaching.get(id(expr)) if scope is not None else None


def every_binding(walker, expr: ast.AST, holds: Callable[[ast.AST | None], bool]) -> bool:
    """``expr`` is a local name of the walked body (not a parameter) bound at least once,
    and every value bound to it ``holds``."""
    if not isinstance(expr, ast.Name):
        return False
    scope = walker.lookup(expr.id)
    if scope is None or expr.id in scope.params:
        return False
    values = [value for name, value in scope.bindings if name == expr.id]
    return bool(values) and all(holds(value) for value in values)


def _makes_container(walker, value: ast.AST | None) -> bool:
    if isinstance(value, _FRESH):
        return True
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in _CONTAINER_TYPES
        and qualified_names(walker, value.func.id) == {f"builtins.{value.func.id}"}
    )


def returns_new_object(walker, call: ast.Call) -> bool:
    """True when the value of ``call`` is certainly an object the body made (a tensor a torch
    call returns, a scalar, a container built from values the body made)."""
    if _makes_record(walker, call):
        return True
    func = call.func
    name = dotted(func)
    qualified = qualified_names(walker, name) if name is not None else None
    if qualified and all(q == "torch" or q.startswith("torch.") for q in qualified):
        return True
    if qualified and all(q.startswith("builtins.") for q in qualified):
        builtin = next(iter(qualified))[len("builtins.") :]
        if builtin in _SCALAR_BUILTINS:
            return True
        return not any(walker.is_external(a) for a in (*call.args, *(k.value for k in call.keywords)))
    if isinstance(func, ast.Attribute):
        method = func.attr
        if method in tables.READING_METHODS or method in tables.MUTATING_METHODS:
            return not walker.is_external(func.value)
        if tables.is_tensor_method(method):
            return True
    return False


def computes_on_tensor_data(walker, call: ast.Call) -> bool:
    """Does ``call`` compute on tensor values (a torch function or tensor method that is not
    metadata, like ``x.sum()`` or ``torch.any(x)``)? Used for branches and conversions."""
    func = call.func
    name = dotted(func)
    qualified = qualified_names(walker, name) if name is not None and "." in name else None
    if qualified and "<local>" not in qualified:
        return any(
            (
                q.startswith("torch.")
                and not tables.is_torch_metadata(q)
                and tables.torch_kind(q) == TRACEABLE
                and not q.startswith(("torch.cuda.", "torch.backends."))
            )
            for q in qualified
        )
    if isinstance(func, ast.Attribute):
        method = func.attr
        return (
            tables.is_tensor_method(method)
            and method not in tables.TENSOR_METADATA
            and method not in tables.READING_METHODS
            and method not in tables.MUTATING_METHODS
        )
    return False
