"""The decorators on a Function's members: which the flat form replays, and as what.

Every decorator on ``forward`` or ``backward`` (``vjp``) is replayed: the emitted
binding evaluates its expression once, where the class body did, and the runtime
applies it once to the carriers' shared trampolines (``inliner.runtime._replay``), so it wraps
what it wrapped and sees the real ctx. What this module decides is whether replaying
is exact, and records what each decorator is (``DecoratorUse.kind``), for the
diagnostics and for whoever decides how the flat callable may be compiled:

| kind | what | example |
| --- | --- | --- |
| ``known`` | torch's own ctx-aware decorators | ``torch.amp.custom_fwd(...)``, ``once_differentiable`` |
| ``alias`` | a name bound in this module to a known one | ``custom_fwd = torch.cuda.amp.custom_fwd``, ``functools.partial(torch.amp.custom_fwd, device_type="cuda")`` |
| ``context`` | a grad-mode or autocast context used as a decorator | ``torch.no_grad()``, ``torch.enable_grad()``, ``torch.autocast(...)`` |
| ``compile`` | a dynamo entry point | ``torch.compile``, ``torch.compiler.disable`` |
| ``wrapper`` | anything else: a project's decorator, replayed as it is | ``ensure_contiguous``, ``input_guard(check=True)`` |

A ``wrapper`` defined in this module whose every call provably only forwards its
arguments (tensors possibly made contiguous; literal defaults filled in) to the
function and returns its result is marked ``pass_through``.

Refused (INL106), because replaying would not be exact: a decorator above
``@staticmethod`` (it wraps the staticmethod object), any decorator on a
setup_context-style forward (it has no ctx, and the carrier's forward binds torch's
defaults from its own signature), a decorator on ``setup_context``, ``jvp`` or
``vmap``, a decorator expression that reads a name of the class body, decorator
arguments whose evaluation the rewrite would reorder against another evaluation with
effects (defaults, another member's decorators), and a decorator defined in this
module that may read an attribute forward sets on ctx (those become residuals, not
attributes of the carrier's ctx).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import libcst as cst

from inliner.engine.analysis.scopes import Binding, Scope, ScopeIndex
from inliner.engine.analysis.scopes import dotted as ast_dotted
from inliner.engine.analysis.torch_decorators import KNOWN, bound_torch_decorator, common_torch_name
from inliner.engine.codes import Code
from inliner.engine.docstrings import without_docstring
from inliner.engine.model import Refuse
from inliner.engine.names import dotted
from inliner.engine.walk import walk

QualifiedNames = Callable[[cst.CSTNode], set[str]]

_CONTEXTS = {"no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "autocast"}
_COMPILE = {"torch.compile", "torch.compiler.disable", "torch._dynamo.disable", "torch._dynamo.optimize"}
_PURE_FACTORIES = KNOWN | _CONTEXTS | {"compile", "disable"}
CLASS_SCOPE_NAMES = {"forward", "backward", "vjp", "setup_context", "vmap", "jvp", "generate_vmap_rule"}


@dataclass(frozen=True)
class DecoratorUse:
    """One replayed decorator of ``member`` (``forward`` or ``backward``)."""

    member: str
    expr: cst.BaseExpression
    kind: str  # "known" | "alias" | "context" | "compile" | "wrapper"
    target: str  # what it resolves to: "torch.amp.custom_fwd", "pkg.utils.ensure_contiguous", "<local>"
    pass_through: bool = False  # wrappers only: proven to forward its arguments and result, nothing else
    #: wrappers defined in this module: the decorator's (or its factory's) ``def``
    definition: ast.FunctionDef | None = field(default=None, compare=False, repr=False)


def is_staticmethod(expr: cst.BaseExpression, qualified: Callable[[cst.CSTNode], set[str]]) -> bool:
    """``@staticmethod`` (the builtin, or a name nothing in the module rebinds)."""
    qnames = qualified(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else set()
    return "builtins.staticmethod" in qnames or (
        isinstance(expr, cst.Name) and expr.value == "staticmethod" and not qnames
    )


class DecoratorReader:
    """Reads the decorators of one class's members, with the scope the class body sees."""

    def __init__(self, index: ScopeIndex, scope: Scope, cls_name: str) -> None:
        self.index = index
        self.scope = scope
        self.cls_name = cls_name

    # -- names ---------------------------------------------------------------
    def qualified(self, node: cst.CSTNode) -> set[str]:
        name = dotted(node)
        return self.index.qualify(name, self.scope) if name else set()

    def _single_binding(self, name: str) -> tuple[Binding, Scope] | None:
        found = self.index.lookup(name, self.scope)
        bindings = found.bindings.get(name, []) if found is not None else []
        return (bindings[0], found) if len(bindings) == 1 and found is not None else None

    # -- the member ----------------------------------------------------------
    def read(self, func: cst.FunctionDef, *, replayable: bool) -> tuple[DecoratorUse, ...]:
        """The decorators of ``func`` other than ``@staticmethod``; refuses what cannot be replayed."""
        member = func.name.value
        uses: list[DecoratorUse] = []
        decorators = list(func.decorators)
        static = [i for i, d in enumerate(decorators) if self._is_staticmethod(d.decorator)]
        if not static:
            raise Refuse(Code.CLASS_SHAPE, self._not_static_reason(func), func)
        if static != [0]:
            raise Refuse(
                Code.DECORATOR,
                f"a decorator above @staticmethod on `{member}` wraps the staticmethod object",
                decorators[0],
            )
        for decorator in decorators[1:]:
            if not replayable:
                raise Refuse(
                    Code.DECORATOR,
                    f"decorator on `{member}` is not replayed (only forward/backward decorators are)",
                    decorator,
                )
            self._check_names(decorator.decorator, member)
            uses.append(self.classify(decorator.decorator, member))
        return tuple(uses)

    def _is_staticmethod(self, expr: cst.BaseExpression) -> bool:
        return is_staticmethod(expr, self.qualified)

    def _not_static_reason(self, func: cst.FunctionDef) -> str:
        member = func.name.value
        for decorator in func.decorators:
            expr = decorator.decorator
            if isinstance(expr, cst.Name) and expr.value == "staticmethod":
                return (
                    f"`{member}`'s @staticmethod may not be the builtin here (a star import or an assignment"
                    " in this module may rebind the name)"
                )
        return f"`{member}` is not a @staticmethod (legacy or classmethod Functions are not flattened)"

    def _check_names(self, expr: cst.BaseExpression, member: str) -> None:
        for name in _loaded_names(expr):
            if name in CLASS_SCOPE_NAMES:
                raise Refuse(
                    Code.DECORATOR,
                    f"the decorator on `{member}` reads `{name}`, a name of the class body",
                    expr,
                )

    # -- what it is ----------------------------------------------------------
    def classify(self, expr: cst.BaseExpression, member: str) -> DecoratorUse:
        target = expr.func if isinstance(expr, cst.Call) else expr
        qnames = self.qualified(target)
        head = (dotted(target) or "").split(".")[0]
        known = common_torch_name(qnames)
        if known is not None:
            leaf = known.rsplit(".", 1)[-1]
            via_alias = bool(head) and self._is_alias(head)
            if leaf in KNOWN:
                return DecoratorUse(member, expr, "alias" if via_alias else "known", known)
            if known in _COMPILE:
                return DecoratorUse(member, expr, "compile", known)
            if leaf in _CONTEXTS:
                return DecoratorUse(member, expr, "context", known)
        bound = self._bound_torch_decorator(head, target)
        if bound is not None:
            return DecoratorUse(member, expr, "alias", bound)
        definition = self._definition(head, target)
        name = next(iter(qnames)) if len(qnames) == 1 else "<local>"
        through = definition is not None and pass_through(
            definition, isinstance(expr, cst.Call), self.index, self.scope
        )
        return DecoratorUse(member, expr, "wrapper", name, through, definition)

    def _is_alias(self, head: str) -> bool:
        found = self._single_binding(head)
        return found is not None and found[0].kind == "alias"

    def _bound_torch_decorator(self, head: str, target: cst.BaseExpression) -> str | None:
        """A name of this module every binding of which is one of torch's decorators
        (``custom_fwd = functools.partial(torch.amp.custom_fwd, device_type="cuda")``,
        in each branch of an ``if``)."""
        scope = self.index.lookup(head, self.scope) if isinstance(target, cst.Name) else None
        return bound_torch_decorator(head, self.index, scope) if scope is not None else None

    def _definition(self, head: str, target: cst.BaseExpression) -> ast.FunctionDef | None:
        if not isinstance(target, cst.Name):
            return None
        found = self._single_binding(head)
        if found is None or found[0].kind != "def" or not isinstance(found[0].node, ast.FunctionDef):
            return None
        return found[0].node


def check_ctx_reads(cls_name: str, uses: Iterable[DecoratorUse], attributes: set[str]) -> None:
    """Refuse a decorator defined in this module that may read an attribute forward sets
    on ctx: the flat form keeps those as residuals, so the carrier's ctx lacks them."""
    if not attributes:
        return
    for use in uses:
        if use.definition is None:
            continue
        for node in ast.walk(use.definition):
            name = node.attr if isinstance(node, ast.Attribute) else None
            if isinstance(node, ast.Name) and node.id in {"getattr", "hasattr", "vars"}:
                name = node.id
            if name is not None and (name in attributes or name in {"getattr", "hasattr", "vars", "__dict__"}):
                raise Refuse(
                    Code.DECORATOR,
                    f"decorator on `{use.member}` may read `{name}` of ctx, which the flat form keeps as a residual",
                    use.expr,
                )


# -- evaluation order -----------------------------------------------------------------


def check_evaluation_order(
    cls_name: str,
    order: list[str],
    uses: dict[str, tuple[DecoratorUse, ...]],
    others: dict[str, list[cst.BaseExpression]],
    qualified: QualifiedNames,
) -> None:
    """Refuse when the rewrite would evaluate decorator arguments and another expression
    with effects in the other order.

    The class body goes member by member (``order``): each member's decorators, then its
    defaults and annotations (``others``); ``generate_vmap_rule = ...`` where it stands.
    The rewrite evaluates every default first (the flat ``def``s), then forward's
    decorators, backward's, and ``generate_vmap_rule`` last (the binding line).
    """
    decorated = [m for m in order if any(not _pure(u.expr, qualified) for u in uses.get(m, ()))]
    if len(decorated) > 1 and decorated[0] != "forward":
        first = uses[decorated[0]][0].expr
        raise Refuse(
            Code.DECORATOR,
            "backward's decorators run before forward's in the class body; the flat binding would swap them",
            first,
        )
    for member in decorated:
        at = order.index(member)
        for other, expressions in others.items():
            swapped = order.index(other) < at if other == "generate_vmap_rule" else at <= order.index(other)
            effectful = next((e for e in expressions if not _pure(e, qualified)), None)
            if swapped and effectful is not None:
                code = cst.Module([]).code_for_node(effectful)
                raise Refuse(
                    Code.DECORATOR,
                    f"the flat form would evaluate `{code}` and the decorator arguments of `{member}` in the other order",
                    effectful,
                )


def member_expressions(func: cst.FunctionDef) -> list[cst.BaseExpression]:
    """What defining ``func`` evaluates besides its decorators: defaults and annotations."""
    params = func.params
    out: list[cst.BaseExpression] = []
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            every.append(extra)
    for param in every:
        if param.default is not None:
            out.append(param.default)
        if param.annotation is not None:
            out.append(param.annotation.annotation)
    if func.returns is not None:
        out.append(func.returns.annotation)
    return out


def _pure(expr: cst.BaseExpression, qualified: QualifiedNames) -> bool:
    """Evaluating ``expr`` cannot run code with effects: names, attributes, literals,
    displays of those, subscripts (annotations) and calls of torch's decorator factories."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return dotted(expr) is not None or (isinstance(expr, cst.Attribute) and _pure(expr.value, qualified))
    if isinstance(
        expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)
    ):
        return True
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return all(_pure(e.value, qualified) for e in expr.elements)
    if isinstance(expr, cst.Subscript):
        return _pure(expr.value, qualified) and all(
            isinstance(s.slice, cst.Index) and _pure(s.slice.value, qualified) for s in expr.slice
        )
    if isinstance(expr, cst.UnaryOperation):
        return _pure(expr.expression, qualified)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        return _pure(expr.left, qualified) and _pure(expr.right, qualified)  # `Tensor | None`
    if isinstance(expr, cst.Call):
        known = common_torch_name(qualified(expr.func))
        return (
            known is not None
            and known.rsplit(".", 1)[-1] in _PURE_FACTORIES
            and all(_pure(a.value, qualified) for a in expr.args)
        )
    return False


# -- pass-through wrappers --------------------------------------------------------------

_SAFE_BUILTINS = {"isinstance", "tuple", "list", "dict", "len", "zip", "enumerate"}
_SAFE_METHODS = {"contiguous", "items", "values", "keys"}


def pass_through(definition: ast.FunctionDef, factory: bool, index: ScopeIndex, scope: Scope) -> bool:
    """The decorator defined by ``definition`` (a factory of one, if ``factory``) returns
    the function itself, or a wrapper that calls it once with the wrapper's own
    arguments (tensors possibly made ``.contiguous()``) and returns what it returned."""
    if definition.decorator_list:
        return False
    if factory:
        inner = _returned_def(definition.body)
        if inner is None:
            return False
        definition = inner
    params = [a.arg for a in definition.args.args]
    if len(params) != 1 or definition.args.vararg or definition.args.kwarg or definition.args.kwonlyargs:
        return False
    fn = params[0]
    body = without_docstring(definition.body)
    if len(body) == 1 and _returns_name(body[0], fn):
        return True
    wrapper = _returned_def(body)
    if wrapper is None or not all(_wraps(d, fn, index, scope) for d in wrapper.decorator_list):
        return False
    return _forwards(wrapper, fn, index, scope)


def _forwards(wrapper: ast.FunctionDef, fn: str, index: ScopeIndex, scope: Scope) -> bool:
    body = without_docstring(wrapper.body)
    if not body or not isinstance(body[-1], ast.Return) or not isinstance(body[-1].value, ast.Call):
        return False
    call = body[-1].value
    if not (isinstance(call.func, ast.Name) and call.func.id == fn):
        return False
    local = {a.arg for a in (*wrapper.args.posonlyargs, *wrapper.args.args, *wrapper.args.kwonlyargs)}
    local |= {a.arg for a in (wrapper.args.vararg, wrapper.args.kwarg) if a is not None}
    if not _literal_defaults(wrapper.args):
        return False
    check = _PureCheck(local, fn, index, scope)
    for stmt in body[:-1]:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if stmt.targets[0].id == fn or not check.expr(stmt.value):
                return False
            check.local.add(stmt.targets[0].id)
        elif isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list and _helper_is_pure(stmt, check):
            check.helpers.add(stmt.name)
        else:
            return False
    arguments = [a.value if isinstance(a, ast.Starred) else a for a in call.args] + [k.value for k in call.keywords]
    return all(isinstance(a, ast.Name) and a.id in check.local and a.id not in check.helpers for a in arguments)


def _literal_defaults(args: ast.arguments) -> bool:
    """The wrapper's defaults, if any, are literals (``k=1``, ``flag=None``): evaluating
    them does nothing, and the wrapper passes the value on as any other argument."""
    defaults = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    return all(isinstance(d, ast.Constant) for d in defaults)


def _helper_is_pure(helper: ast.FunctionDef, outer: _PureCheck) -> bool:
    args = helper.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        return False
    body = without_docstring(helper.body)
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    inner = _PureCheck({a.arg for a in args.args}, outer.fn, outer.index, outer.scope)
    return inner.expr(body[0].value)


class _PureCheck:
    """Expressions that only compute from local values: no attribute read but torch.Tensor
    and a few methods, no call but a few builtins, those methods and pure helpers."""

    def __init__(self, local: set[str], fn: str, index: ScopeIndex, scope: Scope) -> None:
        self.local = set(local)
        self.helpers: set[str] = set()
        self.fn = fn
        self.index = index
        self.scope = scope

    def expr(self, node: ast.expr, bound: frozenset[str] = frozenset()) -> bool:
        if isinstance(node, ast.Name):
            return (node.id in self.local or node.id in bound) and node.id not in self.helpers
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Attribute):
            return ast_dotted(node) == "torch.Tensor" and self.index.qualify("torch.Tensor", self.scope) == {
                "torch.Tensor"
            }
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return all(self.expr(e, bound) for e in node.elts)
        if isinstance(node, ast.Starred):
            return self.expr(node.value, bound)
        if isinstance(node, ast.Dict):
            return all(k is not None and self.expr(k, bound) for k in node.keys) and all(
                self.expr(v, bound) for v in node.values
            )
        if isinstance(node, ast.IfExp):
            return all(self.expr(e, bound) for e in (node.test, node.body, node.orelse))
        if isinstance(node, ast.BoolOp):
            return all(self.expr(e, bound) for e in node.values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self.expr(node.operand, bound)
        if isinstance(node, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return all(self.expr(e, bound) for e in (node.left, *node.comparators))
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            return self._comprehension(node, bound)
        if isinstance(node, ast.Call) and not node.keywords:
            return self._call(node, bound)
        return False

    def _comprehension(self, node, bound: frozenset[str]) -> bool:
        names = set(bound)
        for generator in node.generators:
            if generator.is_async or not self.expr(generator.iter, frozenset(names)):
                return False
            if not isinstance(generator.target, (ast.Name, ast.Tuple)):
                return False
            targets = [generator.target] if isinstance(generator.target, ast.Name) else generator.target.elts
            target_names = [t.id for t in targets if isinstance(t, ast.Name)]
            if len(target_names) != len(targets):
                return False
            names |= set(target_names)
            if not all(self.expr(c, frozenset(names)) for c in generator.ifs):
                return False
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        return all(self.expr(p, frozenset(names)) for p in parts)

    def _call(self, node: ast.Call, bound: frozenset[str]) -> bool:
        if not all(self.expr(a, bound) for a in node.args):
            return False
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in self.helpers:
                return True
            return (
                func.id in _SAFE_BUILTINS
                and func.id not in self.local
                and self.index.qualify(func.id, self.scope) == {f"builtins.{func.id}"}
            )
        return isinstance(func, ast.Attribute) and func.attr in _SAFE_METHODS and self.expr(func.value, bound)


# -- small helpers --------------------------------------------------------------------


def _returns_name(stmt: ast.stmt, name: str) -> bool:
    return isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Name) and stmt.value.id == name


def _returned_def(body: list[ast.stmt]) -> ast.FunctionDef | None:
    """``def inner(...): ...`` followed by ``return inner``, and nothing else."""
    body = without_docstring(body)
    if len(body) == 2 and isinstance(body[0], ast.FunctionDef) and _returns_name(body[1], body[0].name):
        return body[0]
    return None


def _wraps(decorator: ast.expr, fn: str, index: ScopeIndex, scope: Scope) -> bool:
    """``@functools.wraps(fn)``: copies names and docs, nothing a call observes."""
    if not isinstance(decorator, ast.Call) or decorator.keywords or len(decorator.args) != 1:
        return False
    callee = ast_dotted(decorator.func)
    argument = decorator.args[0]
    return (
        callee is not None
        and index.qualify(callee, scope) == {"functools.wraps"}
        and isinstance(argument, ast.Name)
        and argument.id == fn
    )


def _loaded_names(expr: cst.CSTNode) -> set[str]:
    """Names an expression loads (not attribute names, not keyword names)."""
    found: set[str] = set()

    class Visitor(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            walk(node.value, self)
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            walk(node.value, self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    walk(expr, Visitor())
    return found
