"""A light scope index over Python's own ``ast``: what each scope binds, what imports stand for.

libcst's ScopeProvider + QualifiedNameProvider answer these questions for every
name in a module and cost about ten times the parse on large files. inliner only
asks about a handful of names (the bases and decorators of candidate classes and
the loads of those classes), so one pass over the C-parsed ``ast`` records the
bindings of every scope and the loads of the few names we care about; resolution
then follows Python's rules (function scopes see enclosing function and module
scopes, class scopes are skipped by nested functions, ``global``/``nonlocal``
redirect, a walrus binds in the enclosing non-comprehension scope).
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

from inliner.engine.analysis.visitor import Visitor

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class Binding:
    kind: str  # "import" | "alias" | "class" | "def" | "other" | "global" | "nonlocal"
    node: ast.AST
    qualified: str | None = None  # imports: what the bound name stands for; aliases: the dotted value


#: Modules whose ``from m import *`` never binds the name of a builtin, in any Python
#: version (``typing.__all__`` holds none), so ``staticmethod`` after it is still the builtin.
_STAR_WITHOUT_BUILTINS = frozenset({"typing"})
_BUILTIN_NAMES = frozenset(dir(builtins))


def _star_may_bind(star: Binding, name: str) -> bool:
    """Whether the star import ``star`` may bind ``name``."""
    return not (star.qualified in _STAR_WITHOUT_BUILTINS and name in _BUILTIN_NAMES)


@dataclass(eq=False)
class Scope:
    node: ast.AST
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)

    @property
    def is_class(self) -> bool:
        return isinstance(self.node, ast.ClassDef)

    @property
    def is_module(self) -> bool:
        return isinstance(self.node, ast.Module)

    @property
    def is_comprehension(self) -> bool:
        return isinstance(self.node, _COMPREHENSIONS)

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


def dotted(expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        head = dotted(expr.value)
        return None if head is None else f"{head}.{expr.attr}"
    return None


def own_nodes(func: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of ``func``'s body, without those of functions, lambdas and classes nested in it."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return out


class ScopeIndex(Visitor):
    """One pass over a module; afterwards ``lookup``/``qualify`` answer questions about names."""

    def __init__(self, interesting: set[str], call_names: frozenset[str] = frozenset()) -> None:
        self.interesting = interesting
        #: calls whose callee's last dotted component is one of these are recorded
        self.call_names = call_names
        self.calls: list[tuple[ast.Call, Scope]] = []
        self.scopes: list[Scope] = []
        #: ClassDef -> (scope it is defined in, scope of its body)
        self.class_scopes: dict[ast.ClassDef, tuple[Scope, Scope]] = {}
        self.loads: list[tuple[ast.Name, Scope]] = []  # loads of interesting names
        self.apply_attribute: dict[ast.Name, ast.Attribute] = {}  # Name -> its `Name.apply`
        self.names: set[str] = set()  # every identifier used as a variable anywhere
        self.root: Scope | None = None  # the module's scope, once built

    @classmethod
    def build(cls, tree: ast.Module, interesting: set[str], call_names: frozenset[str] = frozenset()) -> ScopeIndex:
        index = cls(interesting, call_names)
        index.visit(tree)
        return index

    @property
    def current(self) -> Scope:
        return self.scopes[-1]

    def _in_new_scope(self, node: ast.AST, parts) -> Scope:
        scope = Scope(node, self.current if self.scopes else None)
        self.scopes.append(scope)
        for part in parts:
            if isinstance(part, list):
                for item in part:
                    self.visit(item)
            elif part is not None:
                self.visit(part)
        self.scopes.pop()
        return scope

    # -- scopes ------------------------------------------------------------
    def visit_Module(self, node: ast.Module) -> None:
        self.root = self._in_new_scope(node, [node.body])

    def _function(self, node) -> None:
        self.current.bind(node.name, Binding("def", node))
        self.names.add(node.name)
        for item in node.decorator_list:
            self.visit(item)
        self._defaults(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self._in_new_scope(node, [self._arg_nodes(node.args), node.body])

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._defaults(node.args)
        self._in_new_scope(node, [self._arg_nodes(node.args), node.body])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        outer = self.current
        outer.bind(node.name, Binding("class", node))
        self.names.add(node.name)
        for item in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(item)
        inner = self._in_new_scope(node, [node.body])
        self.class_scopes[node] = (outer, inner)

    def _comprehension(self, node) -> None:
        first, *rest = node.generators
        self.visit(first.iter)
        elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        parts: list = [first.target, first.ifs]
        for generator in rest:
            parts.extend([generator.iter, generator.target, generator.ifs])
        self._in_new_scope(node, [*parts, *elements])

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_DictComp = _comprehension
    visit_GeneratorExp = _comprehension

    def _defaults(self, args: ast.arguments) -> None:
        for default in (*args.defaults, *(d for d in args.kw_defaults if d is not None)):
            self.visit(default)
        for arg in self._arg_nodes(args):
            if arg.annotation is not None:
                self.visit(arg.annotation)

    @staticmethod
    def _arg_nodes(args: ast.arguments) -> list[ast.arg]:
        out = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if args.vararg:
            out.append(args.vararg)
        if args.kwarg:
            out.append(args.kwarg)
        return out

    def visit_arg(self, node: ast.arg) -> None:
        self.current.bind(node.arg, Binding("other", node))
        self.names.add(node.arg)

    # -- bindings and loads ------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        self.names.add(node.id)
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.current.bind(node.id, Binding("other", node))
        elif node.id in self.interesting:
            self.loads.append((node, self.current))

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        target = self.current
        index = len(self.scopes) - 1
        while target.is_comprehension and index > 0:
            index -= 1
            target = self.scopes[index]
        target.bind(node.target.id, Binding("other", node))
        self.names.add(node.target.id)

    def visit_Call(self, node: ast.Call) -> None:
        if self.call_names:
            name = dotted(node.func)
            if name is not None and name.rsplit(".", 1)[-1] in self.call_names:
                self.calls.append((node, self.current))
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        # `alias = some.dotted.name` is remembered so that calls through the alias resolve
        value = dotted(node.value)
        if value is not None and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.visit(node.value)
            self.current.bind(node.targets[0].id, Binding("alias", node, value))
            self.names.add(node.targets[0].id)
            return
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "apply":
            value = node.value
            if isinstance(value, ast.Name):
                self.apply_attribute[value] = node
            elif (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and not value.args
                and not value.keywords
            ):
                self.apply_attribute[value.func] = node  # `F().apply`: an instance is only a detour
        self.visit(node.value)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self.current.bind(name, Binding("global", node))

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        for name in node.names:
            self.current.bind(name, Binding("nonlocal", node))

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.current.bind(node.name, Binding("other", node))
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.current.bind(node.name, Binding("other", node))
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.current.bind(node.name, Binding("other", node))

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.current.bind(node.rest, Binding("other", node))
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                bound, qualified = alias.asname, alias.name
            else:
                bound = qualified = alias.name.split(".")[0]
            self.current.bind(bound, Binding("import", node, qualified))
            self.names.add(bound)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.current.bind("*", Binding("other", node, None if node.level else node.module))
                continue
            bound = alias.asname or alias.name
            qualified = f"{node.module}.{alias.name}" if node.module and not node.level else None
            self.current.bind(bound, Binding("import" if qualified else "other", node, qualified))
            self.names.add(bound)

    # -- questions ---------------------------------------------------------
    def lookup(self, name: str, scope: Scope) -> Scope | None:
        """The scope whose binding a load of ``name`` in ``scope`` refers to (None: builtins)."""
        current: Scope | None = scope
        first = True
        while current is not None:
            if current.is_class and not first:
                current = current.parent
                continue
            first = False
            bindings = current.bindings.get(name)
            if bindings:
                kinds = {b.kind for b in bindings}
                if "global" in kinds:
                    return self.scopes_root(current)
                if "nonlocal" in kinds:
                    current = current.parent
                    continue
                return current
            if current.is_module and any(_star_may_bind(b, name) for b in current.bindings.get("*", ())):
                return current
            current = current.parent
        return None

    @staticmethod
    def scopes_root(scope: Scope) -> Scope:
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def qualify(self, name: str, scope: Scope, _depth: int = 0) -> set[str]:
        """What a dotted name may stand for: qualified names, or ``<local>`` for anything else."""
        head, _, rest = name.partition(".")
        found = self.lookup(head, scope)
        if found is None:
            return {f"builtins.{name}"}
        out: set[str] = set()
        star = [b for b in found.bindings.get("*", ()) if _star_may_bind(b, head)]
        for binding in found.bindings.get(head) or star:
            if binding.kind == "import" and binding.qualified:
                out.add(binding.qualified + (f".{rest}" if rest else ""))
            elif binding.kind == "alias" and binding.qualified and _depth < 8:
                target = binding.qualified + (f".{rest}" if rest else "")
                out |= self.qualify(target, found, _depth + 1)
            else:
                out.add("<local>")
        return out


def mentions(node: ast.AST, name: str) -> bool:
    """``name`` is a ``Name`` somewhere in ``node`` (a target, a value, a key)."""
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))
