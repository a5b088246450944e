"""What an op body may hold for its flat function to compute what the op computed.

An ``autograd_function_apply`` body comes in three kinds, and each runs differently:

- ``dump``: a nested ``fwd_body_0`` class of a printed dynamo graph. Its code *is* a
  traced graph: straight-line calls, with dynamo's grad-mode bracket around it.
- ``traced``: ``torch.fx.symbolic_trace(SomeModule())``. What runs is the graph fx
  recorded when the module was loaded, not the source: any value the trace did not
  derive from the body's parameters (a module-level variable, a call on constants such
  as ``torch.randn(3)`` or ``torch.is_grad_enabled()``, an ``is`` test) was computed
  once, then and there, and is a constant of the graph, while the flat function would
  compute it at every call.
- ``function``: a module-level function, which torch <= 2.9 calls as it is.

The flat function runs the source at every call, so the engine takes straight-line
torch code only: simple statements and one final ``return``, calls of ``torch`` (as
the module's imports spell it) and methods of the body's own values. For a traced body
also: every call takes a value derived from the parameters, names from outside are
``torch`` or imports, no in-place ``+=`` (fx records ``x = x + 1``) and no ``is``/``in``
test on traced values. Anything else is refused (INL202): the engine does not guess
what a construct did at trace time.

Grad mode (INL203): dynamo wraps each dumped body in exactly
``_set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None``
... ``_set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None``
(torch 2.9 and 2.13 alike); the carrier already runs fwd without grad and bwd in the
engine's grad mode (docs/semantics.md §22), so that bracket is dropped. Any other
grad-mode switch (dynamo's spelling of a ``with torch.enable_grad()`` inside the
original, or a hand-written one) changes what the body computes or records, and the
engine cannot tell which original it stood for: the call is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from inliner.engine.codes import Code
from inliner.engine.model import Refuse
from inliner.engine.names import dotted

Qualify = Callable[[str], set[str]]

_BRACKET_NAME = re.compile(r"_set_grad_enabled(_\d+)?$")
_GRAD_MODE = {
    "_set_grad_enabled",
    "set_grad_enabled",
    "no_grad",
    "enable_grad",
    "inference_mode",
    "_set_inference_mode",
}
_CONSTANTS = {"None", "True", "False", "Ellipsis", "NotImplemented"}
_FX_GLOBALS = {"device": "torch.device"}
_NOT_STRAIGHT = {
    cst.IfExp: "a conditional expression",
    cst.BooleanOperation: "an `and`/`or`",
    cst.Lambda: "a lambda",
    cst.ListComp: "a comprehension",
    cst.SetComp: "a comprehension",
    cst.DictComp: "a comprehension",
    cst.GeneratorExp: "a generator expression",
    cst.Yield: "a yield",
    cst.Await: "an await",
    cst.NamedExpr: "an assignment expression",
}


def strip_dynamo_bracket(body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """``body`` without dynamo's grad-mode bracket, when it has exactly that bracket.

    The bracket is the first statement (``torch._C._set_grad_enabled(False)``) and the
    one right before the final return (``... (True)``), each in dynamo's own spelling;
    anything else is left for ``check_body`` to refuse."""
    if len(body) >= 3 and _bracket_line(body[0], "False") and _bracket_line(body[-2], "True"):
        return [*body[1:-2], body[-1]]
    return body


def _bracket_line(stmt: cst.BaseStatement, flag: str) -> bool:
    """``_set_grad_enabled_N = torch._C._set_grad_enabled(<flag>);  _set_grad_enabled_N = None``."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) in (1, 2)):
        return False
    first = stmt.body[0]
    if not (
        isinstance(first, cst.Assign) and len(first.targets) == 1 and isinstance(first.targets[0].target, cst.Name)
    ):
        return False
    name = first.targets[0].target.value
    call = first.value
    if not (
        _BRACKET_NAME.match(name)
        and isinstance(call, cst.Call)
        and dotted(call.func) == "torch._C._set_grad_enabled"
        and len(call.args) == 1
        and call.args[0].keyword is None
        and isinstance(call.args[0].value, cst.Name)
        and call.args[0].value.value == flag
    ):
        return False
    if len(stmt.body) == 1:
        return True
    release = stmt.body[1]
    return (
        isinstance(release, cst.Assign)
        and len(release.targets) == 1
        and isinstance(release.targets[0].target, cst.Name)
        and release.targets[0].target.value == name
        and isinstance(release.value, cst.Name)
        and release.value.value == "None"
    )


def check_body(
    func: cst.FunctionDef, body: list[cst.BaseStatement], *, kind: str, role: str, params: list[str], qualify: Qualify
) -> None:
    """Raise ``Refuse`` unless ``body`` (``func``'s statements, cleaned) is straight-line torch code.

    ``params``: the parameters the flat function keeps (``self``/``ctx`` already dropped)."""
    checker = _Checker(kind, role, set(params), qualify)
    for i, stmt in enumerate(body):
        if not isinstance(stmt, cst.SimpleStatementLine):
            what = _statement_kind(stmt)
            raise Refuse(
                Code.OP_BODY_NOT_STRAIGHT_LINE,
                f"the {role} body has {what}; op bodies must be straight-line code",
                stmt,
            )
        for j, small in enumerate(stmt.body):
            last = i == len(body) - 1 and j == len(stmt.body) - 1
            checker.small(small, last)


def _statement_kind(stmt: cst.BaseStatement) -> str:
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return "a nested definition"
    keyword = {cst.If: "if", cst.For: "for", cst.While: "while", cst.With: "with", cst.Try: "try", cst.Match: "match"}
    return f"control flow (`{keyword.get(type(stmt), type(stmt).__name__)}`)"


class _Checker:
    def __init__(self, kind: str, role: str, params: set[str], qualify: Qualify) -> None:
        self.kind = kind
        self.role = role
        self.qualify = qualify
        self.locals: set[str] = set(params)
        #: traced bodies: the locals whose value derives from a parameter (fx proxies)
        self.traced: set[str] = set(params)

    def _meanings(self, name: str) -> set[str]:
        meanings = self.qualify(name)
        head, _, rest = name.partition(".")
        if self.kind == "dump" and meanings == {f"builtins.{name}"} and head in _FX_GLOBALS:
            # print_readable() spells torch.device as `device` without importing it
            return {_FX_GLOBALS[head] + (f".{rest}" if rest else "")}
        return meanings

    def refuse(self, what: str, node: cst.CSTNode, code: Code = Code.OP_BODY_NOT_STRAIGHT_LINE) -> None:
        raise Refuse(code, f"the {self.role} body {what}", node)

    # -- statements ----------------------------------------------------------------
    def small(self, small: cst.BaseSmallStatement, last: bool) -> None:
        if isinstance(small, cst.Return):
            if not last:
                self.refuse("returns before its last statement; op bodies must be straight-line code", small)
            if small.value is not None:
                self.expression(small.value)
            return
        if isinstance(small, cst.Pass):
            return
        if isinstance(small, cst.Expr):
            self.expression(small.value)
            return
        if isinstance(small, cst.Assign):
            self.assign([t.target for t in small.targets], small.value)
            return
        if isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.assign([small.target], small.value)
            return
        if isinstance(small, cst.AugAssign):
            if self.kind == "traced":
                self.refuse(
                    "updates a value in place with an augmented assignment, which symbolic_trace records as a new value",
                    small,
                )
            self.assign([small.target], small.value, augmented=True)
            return
        self.refuse(f"has a `{type(small).__name__.lower()}` statement; op bodies must be straight-line code", small)

    def assign(self, targets: list[cst.BaseExpression], value: cst.BaseExpression, augmented: bool = False) -> None:
        derived = self.expression(value)
        for target in targets:
            for name_node in self.target_names(target):
                name = name_node.value
                if augmented:
                    derived = derived or name in self.traced
                self.locals.add(name)
                if derived:
                    self.traced.add(name)
                else:
                    self.traced.discard(name)

    def target_names(self, target: cst.BaseExpression) -> list[cst.Name]:
        if isinstance(target, cst.Name):
            return [target]
        if isinstance(target, (cst.Tuple, cst.List)):
            out: list[cst.Name] = []
            for element in target.elements:
                if isinstance(element, cst.StarredElement) and self.kind == "traced":
                    self.refuse("unpacks a traced value with `*`", element)
                out.extend(self.target_names(element.value))
            return out
        if isinstance(target, cst.Subscript):
            self.expression(target)  # item assignment: a method call on the value, in effect
            return []
        self.refuse(
            f"assigns to `{cst.Module([]).code_for_node(target)}`; op bodies may only bind their own names", target
        )
        return []

    # -- expressions ---------------------------------------------------------------
    def expression(self, node: cst.BaseExpression) -> bool:
        """Check ``node``; True when (in a traced body) its value derives from a parameter."""
        for kind, what in _NOT_STRAIGHT.items():
            if isinstance(node, kind):
                self.refuse(f"has {what}; op bodies must be straight-line code", node)
        if isinstance(node, cst.Name):
            return self.name(node)
        if isinstance(node, cst.Call):
            return self.call(node)
        if isinstance(node, cst.Attribute):
            return self.attribute(node)
        if isinstance(node, cst.Comparison):
            derived = self.expression(node.left)
            for target in node.comparisons:
                right = self.expression(target.comparator)
                identity = isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn))
                if identity and (derived or right) and self.kind == "traced":
                    self.refuse(
                        "tests a traced value with `is`/`in`, which symbolic_trace answered once, for its proxy", node
                    )
                derived = derived or right
            return derived
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            derived = self.expression(node.expression)
            if derived and self.kind == "traced":
                self.refuse("tests the truth of a traced value", node)
            return derived
        if isinstance(node, (cst.FormattedString, cst.ConcatenatedString)) and self.kind == "traced":
            if any(self.expression(part.expression) for part in _formatted_parts(node)):
                self.refuse("formats a traced value into a string", node)
            return False
        if isinstance(node, cst.StarredElement) and self.kind == "traced":
            if self.expression(node.value):
                self.refuse("unpacks a traced value with `*`", node)
            return False
        derived = False
        for child in node.children:
            if isinstance(child, cst.BaseExpression):
                derived = self.expression(child) or derived
            else:
                derived = self.children(child) or derived
        return derived

    def children(self, node: cst.CSTNode) -> bool:
        """Subscript elements, arguments, tuple elements...: the expressions inside."""
        if isinstance(node, cst.BaseExpression):
            return self.expression(node)
        if isinstance(node, cst.Arg):
            return self.expression(node.value)  # not its keyword: that names no variable
        derived = False
        for child in node.children:
            derived = self.children(child) or derived
        return derived

    def name(self, node: cst.Name) -> bool:
        if node.value in self.locals:
            return node.value in self.traced
        if node.value in _CONSTANTS:
            return False
        if self.kind == "traced":
            meanings = self._meanings(node.value)
            if not meanings or "<local>" in meanings:
                self.refuse(
                    f"reads the module-level `{node.value}`, whose value symbolic_trace fixed when it traced the body",
                    node,
                )
        return False

    def attribute(self, node: cst.Attribute) -> bool:
        name = dotted(node)
        if name is not None and name.split(".", 1)[0] not in self.locals:
            return self.name(_head(node))  # `torch.float32`, `math.pi`: what the head stands for
        return self.expression(node.value)

    def call(self, node: cst.Call) -> bool:
        derived = any([self.children(arg) for arg in node.args])
        func = node.func
        name = dotted(func)
        if name is not None and name.split(".", 1)[0] not in self.locals:
            meanings = self._meanings(name)
            if meanings and all(m.startswith("torch.") for m in meanings):
                if any(m.endswith(".autograd_function_apply") for m in meanings):
                    self.refuse(
                        "calls autograd_function_apply itself; op calls inside op bodies are not flattened", node
                    )
                if any(m.rsplit(".", 1)[-1] in _GRAD_MODE for m in meanings):
                    self.refuse(
                        f"switches grad mode (`{name}`) other than by dynamo's bracket around the whole body",
                        node,
                        Code.OP_BODY_GRAD_MODE,
                    )
            else:
                what = f"the builtin `{name}`" if any(m.startswith("builtins.") for m in meanings) else f"`{name}`"
                self.refuse(f"calls {what}, which is not torch code the engine can follow", node)
        elif isinstance(func, cst.Attribute):
            derived = self.expression(func.value) or derived  # a method of one of the body's values
        elif isinstance(func, cst.Name):
            self.refuse(f"calls `{func.value}`, one of its own values, which the engine cannot follow", node)
        else:
            self.refuse("calls the result of an expression, which the engine cannot follow", node)
        if self.kind == "traced" and not derived:
            self.refuse(
                f"calls `{cst.Module([]).code_for_node(func)}` on values known when the body was traced "
                "(symbolic_trace ran it once, when the module was loaded)",
                node,
            )
        return derived


def _head(node: cst.Attribute) -> cst.Name:
    value = node.value
    while isinstance(value, cst.Attribute):
        value = value.value
    assert isinstance(value, cst.Name)
    return value


def _formatted_parts(node: cst.BaseExpression) -> list[cst.FormattedStringExpression]:
    out: list[cst.FormattedStringExpression] = []
    strings = (
        [node]
        if isinstance(node, cst.FormattedString)
        else [node.left, node.right]
        if isinstance(node, cst.ConcatenatedString)
        else []
    )
    for string in strings:
        if isinstance(string, cst.FormattedString):
            out.extend(p for p in string.parts if isinstance(p, cst.FormattedStringExpression))
        elif isinstance(string, cst.ConcatenatedString):
            out.extend(_formatted_parts(string))
    return out
