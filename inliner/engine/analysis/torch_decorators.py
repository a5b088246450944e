"""Names a module binds to one of torch's ctx-aware decorators, however it binds them.

Projects pick an AMP decorator by torch version or device at import time and give it a
name of their own, in the module that uses it or in a utilities module it imports from:

    if check_pytorch_version("2.4"):
        autocast_custom_fwd = functools.partial(torch.amp.custom_fwd, device_type=device)
    else:
        autocast_custom_fwd = getattr(torch, device).amp.custom_fwd

or unpack a pair a module-level function returns on each of its paths:

    amp_custom_fwd, amp_custom_bwd = get_amp_custom_fwd_bwd()

Which branch ran is not known statically, but when every binding of the name is one of
torch's decorators of the same kind, the decorator is that kind whichever branch ran.
"""

from __future__ import annotations

import ast

from inliner.engine.analysis.scopes import Binding, Scope, ScopeIndex, dotted, own_nodes
from inliner.engine.docstrings import without_docstring

#: torch's decorators that wrap a Function's forward or backward and see its ctx
KNOWN = frozenset({"custom_fwd", "custom_bwd", "once_differentiable"})


def bound_torch_decorator(name: str, index: ScopeIndex, scope: Scope) -> str | None:
    """The torch decorator every binding of ``name`` in ``scope`` gives it (the first
    binding's, when they agree on its kind), or None: a binding is anything else, a
    function rebinds the name through ``global``, or a star import may."""
    found = [_binding_value(binding, name, index, scope) for binding in scope.bindings.get(name, [])]
    names = [f for f in found if f is not None and f != _WRAPS_ITSELF]
    if None in found or not names or len({leaf(f) for f in names}) != 1:
        return None
    # last: it walks the whole module, and most names are no torch decorator
    return None if _rebound_elsewhere(name, scope) else names[0]


#: ``custom_fwd = adapt(custom_fwd, ...)``: what the name held before, passed through a
#: factory whose decorator only calls it (``_forwarding_factory``)
_WRAPS_ITSELF = "<the name's other bindings>"


def common_torch_name(qnames: set[str]) -> str | None:
    """The one torch name every binding of a name resolves to, if there is one."""
    if len(qnames) == 1:
        (name,) = qnames
        if name.startswith("torch."):
            return name
    return None


def leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def partial_of_known(call: ast.expr, index: ScopeIndex, scope: Scope) -> str | None:
    """``functools.partial(<torch decorator>, <constant keywords>)``: that decorator."""
    if not (isinstance(call, ast.Call) and len(call.args) == 1):
        return None
    callee, inner = dotted(call.func), dotted(call.args[0])
    if callee is None or inner is None or index.qualify(callee, scope) != {"functools.partial"}:
        return None
    if not all(k.arg is not None and _is_constant_like(k.value) for k in call.keywords):
        return None
    return _known(index.qualify(inner, scope))


def assigned_value(scope: Scope, target: ast.Name) -> ast.expr | None:
    """The value of the single-target ``target = value`` that binds ``target``."""
    for node in ast.walk(scope.node):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and node.targets[0] is target:
            return node.value
    return None


def _binding_value(binding: Binding, name: str, index: ScopeIndex, scope: Scope) -> str | None:
    if binding.kind == "import" and binding.qualified:
        return _known({binding.qualified})
    if binding.kind == "alias" and binding.qualified:
        return _known(index.qualify(binding.qualified, scope)) or _attribute_of_device_module(
            binding.qualified, index, scope
        )
    if binding.kind == "other" and isinstance(binding.node, ast.Name):
        value = assigned_value(scope, binding.node)
        if value is not None:
            return partial_of_known(value, index, scope) or _rewrapped(value, name, scope)
        return _unpacked_from_a_call(binding.node, index, scope)
    return None


def _rewrapped(value: ast.expr, name: str, scope: Scope) -> str | None:
    """``name = adapt(name, ...)``, ``adapt`` a module-level factory whose decorator only
    sets constant keywords and calls what it was given (mamba-ssm's
    ``custom_amp_decorator``, which adds ``device_type="cuda"``): the name stays torch's
    decorator, as its other bindings make it."""
    if not (isinstance(value, ast.Call) and value.args and isinstance(value.func, ast.Name)):
        return None
    first = value.args[0]
    if not (isinstance(first, ast.Name) and first.id == name) or any(isinstance(a, ast.Starred) for a in value.args):
        return None
    bindings = scope.bindings.get(value.func.id, [])
    if len(bindings) != 1 or not isinstance(bindings[0].node, ast.FunctionDef):
        return None
    return _WRAPS_ITSELF if _forwarding_factory(bindings[0].node) else None


def _forwarding_factory(definition: ast.FunctionDef) -> bool:
    """``def adapt(dec, ...): def decorator(*args, **kwargs): <kwargs[k] = constant, maybe
    under an if>; return dec(*args, **kwargs)`` then ``return decorator``."""
    params = [a.arg for a in (*definition.args.posonlyargs, *definition.args.args)]
    body = without_docstring(definition.body)
    if definition.decorator_list or not params or len(body) != 2:
        return False
    inner, returned = body
    if not (isinstance(inner, ast.FunctionDef) and isinstance(returned, ast.Return)):
        return False
    if not (isinstance(returned.value, ast.Name) and returned.value.id == inner.name) or inner.decorator_list:
        return False
    args = inner.args
    if args.vararg is None or args.kwarg is None or args.posonlyargs or args.args or args.kwonlyargs:
        return False
    *settings, last = without_docstring(inner.body)
    return _calls_through(last, params[0], args.vararg.arg, args.kwarg.arg) and all(
        _sets_a_constant_keyword(s, args.kwarg.arg) for s in settings
    )


def _calls_through(statement: ast.stmt, dec: str, args: str, kwargs: str) -> bool:
    """``return dec(*args, **kwargs)``."""
    call = statement.value if isinstance(statement, ast.Return) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == dec
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and isinstance(call.args[0].value, ast.Name)
        and call.args[0].value.id == args
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == kwargs
    )


def _sets_a_constant_keyword(statement: ast.stmt, kwargs: str) -> bool:
    """``kwargs["device_type"] = "cuda"``, possibly under an ``if`` on a name."""
    if isinstance(statement, ast.If):
        return isinstance(statement.test, (ast.Name, ast.Constant)) and all(
            _sets_a_constant_keyword(s, kwargs) for s in (*statement.body, *statement.orelse)
        )
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return False
    target = statement.targets[0]
    return (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and target.value.id == kwargs
        and isinstance(target.slice, ast.Constant)
        and isinstance(statement.value, ast.Constant)
    )


def _unpacked_from_a_call(target: ast.Name, index: ScopeIndex, scope: Scope) -> str | None:
    """``a, b = pick()``, ``pick`` a module-level function every ``return`` of which gives a
    tuple whose element at ``target``'s position is one of torch's decorators."""
    found = _tuple_assignment(scope, target)
    if found is None:
        return None
    call, position = found
    callee = call.func.id if isinstance(call.func, ast.Name) else ""
    bindings = scope.bindings.get(callee, [])
    if len(bindings) != 1 or bindings[0].kind != "def" or not isinstance(bindings[0].node, ast.FunctionDef):
        return None
    definition = bindings[0].node
    own_names = _local_names(definition)
    returns = [node for node in own_nodes(definition) if isinstance(node, ast.Return)]
    names = []
    for node in returns:
        value = node.value
        if not isinstance(value, ast.Tuple) or len(value.elts) <= position:
            return None
        element = value.elts[position]
        named = [element.func, *element.args] if isinstance(element, ast.Call) else [element]
        if any((dotted(n) or "").split(".")[0] in own_names for n in named):
            return None  # a name the function binds itself, not the module's
        names.append(_known(index.qualify(dotted(element) or "", scope)) or partial_of_known(element, index, scope))
    if not names or None in names or len({leaf(n) for n in names if n}) != 1:
        return None
    return names[0]


def _tuple_assignment(scope: Scope, target: ast.Name) -> tuple[ast.Call, int] | None:
    """``a, b = f()`` binding ``target``: the call, and ``target``'s position."""
    for node in ast.walk(scope.node):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)):
            continue
        elements = node.targets[0].elts
        if any(e is target for e in elements):
            call = node.value
            plain = all(isinstance(e, ast.Name) for e in elements)
            if plain and isinstance(call, ast.Call) and not call.args and not call.keywords:
                return call, next(i for i, e in enumerate(elements) if e is target)
            return None
    return None


def _local_names(definition: ast.FunctionDef) -> set[str]:
    """The parameters and the names ``definition`` binds: not the module's."""
    args = definition.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
    for node in own_nodes(definition):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _attribute_of_device_module(name: str, index: ScopeIndex, scope: Scope) -> str | None:
    """``lib.amp.custom_fwd`` where every binding of ``lib`` is ``getattr(torch, <device>)``."""
    head, _, rest = name.partition(".")
    bindings = scope.bindings.get(head, [])
    if not rest or not bindings:
        return None
    for binding in bindings:
        value = assigned_value(scope, binding.node) if isinstance(binding.node, ast.Name) else None
        if not (
            binding.kind == "other"
            and isinstance(value, ast.Call)
            and dotted(value.func) == "getattr"
            and index.qualify("getattr", scope) == {"builtins.getattr"}
            and len(value.args) == 2
            and not value.keywords
            and dotted(value.args[0]) is not None
            and index.qualify(dotted(value.args[0]) or "", scope) == {"torch"}
        ):
            return None
    return None if _rebound_elsewhere(head, scope) else _known({f"torch.<device>.{rest}"})


def _known(qnames: set[str]) -> str | None:
    name = common_torch_name(qnames)
    return name if name is not None and leaf(name) in KNOWN else None


def _rebound_elsewhere(name: str, scope: Scope) -> bool:
    """A ``global name`` in a function, or a star import: bindings this scope does not list."""
    if scope.bindings.get("*"):
        return True
    return any(isinstance(node, ast.Global) and name in node.names for node in ast.walk(scope.node))


def _is_constant_like(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) or dotted(node) is not None
