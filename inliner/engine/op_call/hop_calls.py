"""Find ``autograd_function_apply`` calls and the bodies they run, statically.

Bodies come from module-level functions, from ``torch.fx.symbolic_trace(Module())``
of a module-level ``nn.Module`` class, or (in dumped graphs and thunderfx
reproducers) from nested ``class fwd_body_0(torch.nn.Module)`` reached through
``self.fwd_body_0`` or ``self.fwd_body_0()``, possibly via a local variable.
Anything else is refused with INL200.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from inliner.engine.analysis.scopes import Scope, ScopeIndex, dotted
from inliner.engine.codes import Code
from inliner.engine.model import Refuse
from inliner.engine.op_call.lower_hop import HOP_NAMES, KNOWN_FLAGS, HopFlags
from inliner.engine.source import SourceText, end_line

_APPLY_IN_COMMENT = re.compile(r"\b([A-Za-z_]\w*)\.apply\(")
#: what dynamo prints before the nodes one source line made
_DYNAMO_COMMENT = re.compile(r"#\s*File: .*?, code: (.*)$")


@dataclass
class Body:
    func: ast.FunctionDef
    is_method: bool
    #: a nested class in a dumped GraphModule that only exists to hold this body
    owner: ast.ClassDef | None = None
    #: "dump" (a nested body class), "traced" (symbolic_trace of a module class) or
    #: "function" (a module-level function): see inliner/hop_bodies.py
    kind: str = "function"


@dataclass
class HopCall:
    call: ast.Call
    scope: Scope
    statement: ast.stmt  # the module-level statement that contains the call
    name: str = "autograd_function"
    flags: HopFlags = field(default_factory=HopFlags)
    fwd: Body | None = None
    bwd: Body | None = None
    #: ``fwd_body_0 = self.fwd_body_0`` statements that only fed this call
    local_aliases: list[ast.Assign] = field(default_factory=list)
    #: what a dotted name read by the bodies from outside stands for at module level
    qualify: Callable[[str], set[str]] = lambda name: {f"builtins.{name}"}


def find_calls(tree: ast.Module, index: ScopeIndex) -> list[HopCall]:
    calls = []
    for call, scope in index.calls:
        name = dotted(call.func)
        if name is None or not (index.qualify(name, scope) & HOP_NAMES):
            continue
        statement = next(s for s in tree.body if s.lineno <= call.lineno <= end_line(s))
        calls.append(HopCall(call, scope, statement))
    return calls


def resolve(site: HopCall, tree: ast.Module, index: ScopeIndex, text: SourceText) -> None:
    """Fill in flags and bodies, or raise Refuse."""
    call = site.call
    if len(call.args) < 2 or any(isinstance(a, ast.Starred) for a in call.args):
        raise Refuse(Code.OP_CALL_SHAPE, "fwd/bwd and the operands are not literal arguments", None)
    site.flags = read_flags(call.keywords)
    site.fwd = _body(call.args[0], site, index, "forward")
    site.bwd = _body(call.args[1], site, index, "backward")
    module_scope = index.scopes_root(site.scope)
    site.qualify = lambda name: index.qualify(name, module_scope)
    site.name = _name_from_function(site.fwd) or "autograd_function"


def read_flags(keywords: list[ast.keyword]) -> HopFlags:
    """The flags as the op reads them, or Refuse.

    The generation decides what is read: torch <= 2.9 (``args_tensor_mask`` given) reads
    ``args_tensor_mask`` and ``non_differentiable_idx`` and ignores the rest, whatever
    they are; torch 2.10+ ignores ``args_tensor_mask`` and reads
    ``non_differentiable_idx``, ``saved_for_backward_idx`` and ``dirty_idx`` (default
    empty). A flag read that is missing or ``None`` makes torch raise on every call: such
    a call is left as it is, so it still raises."""
    given: dict[str, ast.expr] = {}
    for keyword in keywords:
        if keyword.arg not in KNOWN_FLAGS:
            what = "`**` keywords are" if keyword.arg is None else f"an unknown keyword `{keyword.arg}` is"
            raise Refuse(Code.OP_CALL_SHAPE, f"{what} passed", None)
        given[keyword.arg] = keyword.value
    mask = given.get("args_tensor_mask")
    old_abi = mask is not None and not _is_none(mask)
    read = ("args_tensor_mask", "non_differentiable_idx") if old_abi else _NEW_ABI_READS
    values = {name: _flag(name, given.get(name), required=name != "dirty_idx") for name in read}
    return HopFlags(
        non_differentiable_idx=values["non_differentiable_idx"],
        saved_for_backward_idx=values.get("saved_for_backward_idx"),
        dirty_idx=values.get("dirty_idx", ()),
        args_tensor_mask=values.get("args_tensor_mask"),
    )


_NEW_ABI_READS = ("non_differentiable_idx", "saved_for_backward_idx", "dirty_idx")


def _flag(name: str, expr: ast.expr | None, *, required: bool) -> tuple:
    if expr is None:
        if required:
            raise Refuse(Code.OP_CALL_SHAPE, f"`{name}` is not passed, so torch raises KeyError on this call", None)
        return ()
    if _is_none(expr):
        raise Refuse(Code.OP_CALL_SHAPE, f"`{name}` is None: torch raises TypeError when it reads it", None)
    value = _folded(expr)
    if not isinstance(value, (list, tuple)):
        raise Refuse(Code.OP_CALL_SHAPE, f"`{name}` is not a list the engine can read statically", None)
    return tuple(value)


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _folded(expr: ast.expr) -> object:
    """A literal, or a list computed from literals with ``+`` and ``* n`` (``[True] * 3``);
    None when the value needs anything else."""
    try:
        return ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if not isinstance(expr, ast.BinOp):
        return None
    left, right = _folded(expr.left), _folded(expr.right)
    if isinstance(expr.op, ast.Add) and type(left) is type(right) and isinstance(left, (list, tuple)):
        return left + right  # type: ignore[operator]
    if isinstance(expr.op, ast.Mult):
        sequence, count = (left, right) if isinstance(left, (list, tuple)) else (right, left)
        if isinstance(sequence, (list, tuple)) and type(count) is int and 0 <= count <= 1024:
            return sequence * count
    return None


def _body(expr: ast.expr, site: HopCall, index: ScopeIndex, role: str) -> Body:
    not_found = Refuse(
        Code.OP_BODIES_NOT_FOUND, f"the {role} body of an autograd_function_apply call cannot be found statically", None
    )
    if isinstance(expr, ast.Name):
        found = index.lookup(expr.id, site.scope)
        bindings = found.bindings.get(expr.id, []) if found else []
        if len(bindings) != 1:
            # a dump binds `fwd_body_0 = self.fwd_body_0` once and clears it with `= None`
            real = [b for b in bindings if not _is_none_assignment(b.node)]
            if len(real) != 1:
                raise not_found
            bindings = real
        binding = bindings[0]
        # an async def returns a coroutine, never the op's outputs: no body a flat function could stand for
        if (
            binding.kind == "def"
            and isinstance(binding.node, ast.FunctionDef)
            and found is not None
            and found.is_module
        ):
            return Body(binding.node, is_method=False)
        if binding.kind == "alias" and binding.qualified and binding.qualified.startswith("self."):
            assert isinstance(binding.node, ast.Assign)  # aliases are bound by assignments only
            site.local_aliases.append(binding.node)
            return _nested_body(binding.qualified[len("self.") :], found, index, not_found)
        node = binding.node
        node = getattr(node, "_inliner_parent", node)  # a stored Name -> its assignment
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            value = node.value
            target = _self_attribute(value)
            if target is not None and found is not None:
                site.local_aliases.append(node)
                return _nested_body(target, found, index, not_found)
            if found is not None and found.is_module:
                return _traced_module_body(value, found, index, not_found)
        raise not_found
    target = _self_attribute(expr)
    if target is not None:
        return _nested_body(target, site.scope, index, not_found)
    raise not_found


def _is_none_assignment(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and _assigned_none(node)


def _assigned_none(name: ast.Name) -> bool:
    parent = getattr(name, "_inliner_parent", None)
    return isinstance(parent, ast.Assign) and isinstance(parent.value, ast.Constant) and parent.value.value is None


def _self_attribute(expr: ast.expr) -> str | None:
    """``self.X`` or ``self.X()`` -> ``X``."""
    if isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
        expr = expr.func
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return expr.attr
    return None


def _nested_body(attr: str, scope: Scope | None, index: ScopeIndex, not_found: Refuse) -> Body:
    """``self.<attr>`` inside a method: a class nested in the method's class."""
    if (
        scope is None
        or not isinstance(scope.node, ast.FunctionDef)
        or scope.parent is None
        or not scope.parent.is_class
    ):
        raise not_found
    owner_scope = scope.parent
    bindings = owner_scope.bindings.get(attr, [])
    if len(bindings) != 1 or bindings[0].kind != "class":
        raise not_found
    owner = bindings[0].node
    assert isinstance(owner, ast.ClassDef)
    return Body(_forward_of(owner, not_found), is_method=True, owner=owner, kind="dump")


def _traced_module_body(value: ast.expr, scope: Scope, index: ScopeIndex, not_found: Refuse) -> Body:
    """``torch.fx.symbolic_trace(SomeModule())`` or ``torch.fx.GraphModule``-free equivalents."""
    if not (isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords):
        raise not_found
    func = dotted(value.func)
    if func is None or not (
        index.qualify(func, scope) & {"torch.fx.symbolic_trace", "torch.fx._symbolic_trace.symbolic_trace"}
    ):
        raise not_found
    arg = value.args[0]
    if not (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and not arg.args and not arg.keywords):
        raise not_found
    bindings = scope.bindings.get(arg.func.id, [])
    if len(bindings) != 1 or bindings[0].kind != "class":
        raise not_found
    cls = bindings[0].node
    assert isinstance(cls, ast.ClassDef)
    if any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in cls.body):
        raise not_found  # an __init__ could give forward state a flat function cannot carry
    return Body(_forward_of(cls, not_found), is_method=True, kind="traced")


def _forward_of(cls: ast.ClassDef, not_found: Refuse) -> ast.FunctionDef:
    methods = [s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "forward"]
    if len(methods) != 1 or methods[0].decorator_list:
        raise not_found
    return methods[0]


def source_comment(site: HopCall, text: SourceText) -> tuple[int, list[str]] | None:
    """Dumps say which Functions a group of nodes came from: ``# File: ..., code: a = F.apply(x)``.

    A dump prints such a comment (or ``# No stacktrace found ...``) before each group of
    nodes, so the call belongs to the nearest comment line above it, with no blank line
    between. Returns that comment's line and the Function names it mentions, in order,
    when it is dynamo's ``File:`` comment.
    """
    stop = getattr(site.scope.node, "lineno", 0)
    line = site.call.lineno - 1
    while line > stop:
        stripped = text.line(line).strip()
        if not stripped:
            return None
        if stripped.startswith("#"):
            found = _DYNAMO_COMMENT.match(stripped)
            names = _applied_names(found.group(1)) if found else []
            return (line, names) if names else None
        line -= 1
    return None


def _applied_names(code: str) -> list[str]:
    """The ``X`` of each ``X.apply(...)`` in ``code``, in the order the calls run.

    Arguments run before the call that takes them, so ``C.apply(B.apply(A.apply(x)))``
    gives A, B, C: the order in which a dump's op calls appear. A line that does not
    parse on its own (a statement cut by the dump) falls back to textual order.
    """
    try:
        tree = ast.parse(code.strip())
    except (SyntaxError, ValueError):
        return _APPLY_IN_COMMENT.findall(code)
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            visit(node.value)  # the value runs before the targets
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                visit(target)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "apply":
            owner = node.func.value
            if isinstance(owner, ast.Name):
                names.append(owner.id)
            elif isinstance(owner, ast.Attribute):
                names.append(owner.attr)

    visit(tree)
    return names


def _name_from_function(body: Body | None) -> str | None:
    if body is None or body.is_method:
        return None
    name = body.func.name
    for suffix in ("_fwd", "_forward", "_fw"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def annotate_parents(tree: ast.AST) -> None:
    """Let ``_assigned_none`` see the assignment a stored name belongs to."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    target._inliner_parent = node  # type: ignore[attr-defined]


def remaining_loads(tree: ast.AST, name: str, ignore: set[ast.AST]) -> int:
    """Loads of ``name`` (as a variable or an attribute) outside the nodes in ``ignore``."""
    count = 0
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if node in ignore:
            continue
        if (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)) or (
            isinstance(node, ast.Attribute) and node.attr == name
        ):
            count += 1
        stack.extend(ast.iter_child_nodes(node))
    return count
