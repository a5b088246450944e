"""Whether a Function class is meant as a base for other Functions: then it stays one.

A base written to be subclassed (a loss library's ``forward(cls, ctx, ...)`` that each
concrete loss calls with its own class, hooks left abstract for subclasses to define)
is used through its subclasses, in its module, in the library's other modules and in
its users' code. Its flat form is no ``torch.autograd.Function``, so no class defined
after the rewrite could derive from it (``runtime.FlatClass`` raises where one is
defined). Such a class is left as written, its same-module subclasses with it (INL113).

Read from the class's ``ast`` alone, so it is decided again on every run at no cost:

- an autograd member that is not a classmethod takes a parameter named ``cls``;
- a member is abstract (``@abstractmethod``), or the class derives from ``abc.ABC`` or
  names ``ABCMeta`` as its metaclass;
- a member other than ``backward``, ``jvp``, ``vjp``, ``vmap`` and ``symbolic`` (where it
  says "not supported") does nothing but raise ``NotImplementedError``;
- a classmethod reaches ``cls.name`` for a name neither the class nor its bases define.

The surfaces that see a whole tree add one more (``inliner.subclassed``): a class that
another module of the tree derives from.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass

from inliner.engine.analysis.scopes import Scope, ScopeIndex, dotted
from inliner.engine.codes import Code
from inliner.engine.function_class.kept_class import AUTOGRAD_MEMBERS, FUNCTION_ATTRIBUTES
from inliner.engine.model import Refusal
from inliner.engine.source import SourceText, end_column, end_line

_ABSTRACT_DECORATORS = frozenset(
    {"abc.abstractmethod", "abc.abstractclassmethod", "abc.abstractstaticmethod", "abc.abstractproperty"}
)
_ABSTRACT_BASES = frozenset({"abc.ABC", "abc.ABCMeta"})
#: Members where only raising NotImplementedError means "not supported", not "define me".
_UNSUPPORTED_MEANS_NOT_DEFINED = frozenset({"backward", "jvp", "vjp", "vmap", "symbolic"})

Qualify = Callable[[str], "set[str]"]
Method = ast.FunctionDef | ast.AsyncFunctionDef
Position = tuple[int, int, int, int]  # lines 1-based, character columns 0-based


@dataclass(frozen=True)
class BaseSignal:
    """What shows the class is meant as a base, and where."""

    what: str
    at: ast.expr | ast.stmt | ast.arg


def meant_as_base(cls: ast.ClassDef, defined: Collection[str], qualify: Qualify) -> BaseSignal | None:
    """The first sign that ``cls`` is meant as a base, or None.

    ``defined``: the names the class and its bases of the same module bind in their bodies;
    ``qualify``: what a dotted name in the class body may stand for (``ScopeIndex.qualify``)."""
    methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for find in (_abstract_class, _abstract_member, _cls_parameter, _not_implemented, _undefined_hook):
        found = find(cls, methods, defined, qualify)
        if found is not None:
            return found
    return None


def _abstract_class(cls: ast.ClassDef, methods: list[Method], defined: Collection[str], qualify: Qualify):
    for expr in [*cls.bases, *(k.value for k in cls.keywords if k.arg == "metaclass")]:
        name = dotted(expr)
        if name and qualify(name) & _ABSTRACT_BASES:
            return BaseSignal(f"it derives from `{name}`, so it is abstract", expr)
    return None


def _abstract_member(cls: ast.ClassDef, methods: list[Method], defined: Collection[str], qualify: Qualify):
    for method in methods:
        for decorator in method.decorator_list:
            name = dotted(decorator)
            if name and qualify(name) & _ABSTRACT_DECORATORS:
                return BaseSignal(f"its member `{method.name}` is abstract (`@{name}`)", decorator)
    return None


def _cls_parameter(cls: ast.ClassDef, methods: list[Method], defined: Collection[str], qualify: Qualify):
    for method in methods:
        if method.name not in AUTOGRAD_MEMBERS or _is_classmethod(method, qualify):
            continue
        for arg in _parameters(method):
            if arg.arg == "cls":
                what = f"its `{method.name}` takes `cls`, for subclasses to call it with their own class"
                return BaseSignal(what, arg)
    return None


def _not_implemented(cls: ast.ClassDef, methods: list[Method], defined: Collection[str], qualify: Qualify):
    for method in methods:
        if method.name in _UNSUPPORTED_MEANS_NOT_DEFINED:
            continue
        raised = _only_raise(method)
        if raised is not None and raised.exc is not None:
            exc = raised.exc.func if isinstance(raised.exc, ast.Call) else raised.exc
            name = dotted(exc)
            if name and "builtins.NotImplementedError" in qualify(name):
                return BaseSignal(
                    f"its member `{method.name}` only raises NotImplementedError, for subclasses to define", raised
                )
    return None


def _undefined_hook(cls: ast.ClassDef, methods: list[Method], defined: Collection[str], qualify: Qualify):
    for method in methods:
        params = _parameters(method)
        if not params or not _is_classmethod(method, qualify):
            continue
        own = params[0].arg
        for node in _walk_body(method):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == own
                and not _is_dunder(node.attr)
                and node.attr not in defined
                and node.attr not in FUNCTION_ATTRIBUTES
            ):
                what = f"its `{method.name}` reaches `{own}.{node.attr}`, which it does not define, for subclasses to define"
                return BaseSignal(what, node)
    return None


def _is_classmethod(method: Method, qualify: Qualify) -> bool:
    return any((name := dotted(d)) and "builtins.classmethod" in qualify(name) for d in method.decorator_list)


def _parameters(method: Method) -> list[ast.arg]:
    args = method.args
    return [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []), *args.kwonlyargs]


def _only_raise(method: Method) -> ast.Raise | None:
    """The ``raise`` that is the whole body (a docstring and ``pass`` aside), or None."""
    body = [s for s in method.body if not _is_docstring_or_pass(s)]
    return body[0] if len(body) == 1 and isinstance(body[0], ast.Raise) else None


def _is_docstring_or_pass(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _walk_body(method: Method) -> Iterator[ast.AST]:
    for statement in method.body:
        yield from ast.walk(statement)


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


class BaseCheck:
    """Decides, for one module, which Function classes stay Functions as bases (INL113).

    ``subclassed``: the classes other modules of the tree derive from (qualified name ->
    one such subclass, ``pkg.mod.Sub``), which only a surface seeing the tree knows."""

    def __init__(
        self,
        tree: ast.Module,
        index: ScopeIndex,
        text: SourceText,
        module: str | None,
        subclassed: Mapping[str, str] | None,
    ) -> None:
        self.tree, self.index, self.text = tree, index, text
        self.module = module
        self.subclassed = subclassed or {}
        self._written: dict[str, set[str]] | None = None

    def refusal(self, cls: ast.ClassDef, bases: list[ast.ClassDef]) -> tuple[Refusal, Position | None] | None:
        """Why ``cls`` (deriving from ``bases`` of its module) stays a Function, and where; or None."""
        outer, body = self.index.class_scopes[cls]
        subclass = self._subclass_elsewhere(cls, outer)
        if subclass is not None:
            module, _, name = subclass.rpartition(".")
            what = f"class {name} in module {module} derives from it"
            keeps = f"{name} keeps working (define the subclasses in this module to flatten them together)"
            return Refusal(Code.MEANT_AS_BASE, _reason(what, keeps=keeps), None), None
        defined = set(body.bindings).union(*(self.index.class_scopes[b][1].bindings for b in bases))
        defined |= self._written_on(cls.name)  # ``F.scale = 2.0`` after the class: given in its module
        signal = meant_as_base(cls, defined, lambda name: self.index.qualify(name, body))
        if signal is None:
            return None
        keeps = "classes deriving from it, here or in other modules, keep working"
        return Refusal(Code.MEANT_AS_BASE, _reason(signal.what, keeps=keeps), None), self._position(signal.at)

    def _written_on(self, name: str) -> set[str]:
        """The attributes the module assigns on something named ``name`` (``name.attr = ...``)."""
        if self._written is None:
            self._written = {}
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and not _loads(node):
                    self._written.setdefault(node.value.id, set()).add(node.attr)
        return self._written.get(name, set())

    def _subclass_elsewhere(self, cls: ast.ClassDef, outer: Scope) -> str | None:
        if not self.subclassed or self.module is None or not outer.is_module:
            return None
        return self.subclassed.get(f"{self.module}.{cls.name}")

    def _position(self, at: ast.expr | ast.stmt | ast.arg) -> Position:
        text = self.text
        last = end_line(at)
        return (at.lineno, text.char_column(at.lineno, at.col_offset), last, text.char_column(last, end_column(at)))


def _loads(node: ast.Attribute) -> bool:
    return isinstance(node.ctx, ast.Load)


def _reason(what: str, *, keeps: str) -> str:
    return f"it is meant as a base: {what}; it stays a torch.autograd.Function, as do its subclasses in this module, so that {keeps}"
