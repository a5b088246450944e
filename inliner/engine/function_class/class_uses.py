"""How a module uses one Function class, read from CPython's ``ast`` with the scope index.

Three answers, per use of the class's name (and of ``cls`` in its classmethods):

- through ``.apply`` only: the class can become a flat callable, and ``F.apply(...)``
  call sites become ``F(...)``;
- as a class a plain class answers the same way (``F._helper(x)``, ``F.scale``,
  ``F.count = 0``, ``registry[k] = F``, passed or returned, a subclass in the same
  scope): the class is kept, its ``apply`` the flat callable (``runtime.FlatClass``);
- in a way only an ``autograd.Function`` answers (``isinstance(x, F)``,
  ``F._backward_cls``, ``F.forward(...)``, ``F()``, a subclass elsewhere or with other
  bases): refused with the use's position (INL112).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from inliner.engine.analysis.scopes import Scope, ScopeIndex, dotted
from inliner.engine.codes import Code
from inliner.engine.function_class.kept_class import (
    AUTOGRAD_MEMBERS,
    FUNCTION_ATTRIBUTES,
    PLAIN_DUNDERS,
)
from inliner.engine.model import Refuse
from inliner.engine.source import Located

#: Builtins whose answer about a class differs between an autograd.Function and a plain class.
_INTROSPECTION = frozenset({"isinstance", "issubclass", "type", "super", "vars", "dir"})
#: Builtins that read or write an attribute by name: checked like ``F.name`` when the name is a literal.
_BY_NAME = {"getattr": "read", "hasattr": "read", "setattr": "write", "delattr": "write"}
_CONTAINERS = (ast.Tuple, ast.List, ast.Set, ast.Starred)


class RefuseAt(Refuse):
    """A refusal located at a node of the module's ``ast`` (a use of the class)."""

    def __init__(self, code: Code, reason: str, at: Located) -> None:
        super().__init__(code, reason, None)
        self.at = at


class Parents:
    """``ast`` parent links, built on first use (most modules never need them)."""

    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self._map: dict[ast.AST, ast.AST] | None = None

    def of(self, node: ast.AST) -> ast.AST | None:
        if self._map is None:
            self._map = {child: parent for parent in ast.walk(self.tree) for child in ast.iter_child_nodes(parent)}
        return self._map.get(node)


@dataclass
class ClassUses:
    apply_sites: list[ast.Attribute] = field(default_factory=list)  # rewritten when the class goes
    as_class: bool = False  # some use needs a class: keep one
    subclasses: list[ast.ClassDef] = field(default_factory=list)  # same scope, this class their only base
    unique: bool = True  # the name is bound once where the class is defined


def class_uses(cls: ast.ClassDef, index: ScopeIndex, parents: Parents, *, readable: set[str]) -> ClassUses:
    """Classify every use of ``cls``; raise ``RefuseAt`` at the first one only a Function answers.

    ``readable``: the attributes the kept class (with its flattened bases) defines.
    """
    return _Analysis(cls, index, parents).run(readable)


class _Analysis:
    def __init__(self, cls: ast.ClassDef, index: ScopeIndex, parents: Parents) -> None:
        self.cls = cls
        self.index = index
        self.parents = parents
        self.outer, self.body_scope = index.class_scopes[cls]
        self.uses = ClassUses(unique=len(self.outer.bindings.get(cls.name, ())) == 1)
        self.reads: list[tuple[str, ast.Attribute]] = []
        self.written: set[str] = set()

    def run(self, readable: set[str]) -> ClassUses:
        for name, load_scope in self.index.loads:
            if name.id == self.cls.name and self.index.lookup(name.id, load_scope) is self.outer:
                self._use(name, load_scope, spelled=self.cls.name, is_name=True)
        for method, cls_param in self._classmethods():
            self._cls_uses(method, cls_param)
        for attr, node in self.reads:
            self._check_read(attr, node, readable)
        return self.uses

    # -- one use ---------------------------------------------------------------
    def _use(self, node: ast.Name, scope: Scope, *, spelled: str, is_name: bool) -> None:
        if is_name and node in self.index.apply_attribute:
            attribute = self.index.apply_attribute[node]
            if not isinstance(attribute.ctx, ast.Load):
                raise RefuseAt(Code.USED_AS_FUNCTION, f"`{spelled}.apply` is assigned here", attribute)
            if self.uses.unique:
                self.uses.apply_sites.append(attribute)
            return
        if is_name and not self.uses.unique:
            raise RefuseAt(
                Code.USED_AS_FUNCTION,
                "it is used as a class here (not through `.apply`), and its name is bound more than once "
                "in its scope, so this use cannot be tied to it",
                node,
            )
        parent = self.parents.of(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            if self._attribute(parent, spelled):
                self.uses.as_class = True
            return
        if isinstance(parent, ast.Call) and parent.func is node:
            raise RefuseAt(Code.USED_AS_FUNCTION, f"`{spelled}(...)` here makes an instance of the Function", parent)
        elif isinstance(parent, ast.ClassDef) and node in parent.bases:
            self._subclass(parent)
        elif isinstance(parent, ast.ClassDef):
            raise RefuseAt(
                Code.USED_AS_FUNCTION, f"the class statement of {parent.name} is given it as a keyword", parent
            )
        else:
            self._value(node, scope, spelled)
        self.uses.as_class = True

    def _attribute(self, attribute: ast.Attribute, spelled: str) -> bool:
        """Record ``F.attr``; True unless it is ``F.apply`` (which the flat callable has too)."""
        attr = attribute.attr
        if isinstance(attribute.ctx, ast.Load):
            if attr == "apply":
                return False
            self.reads.append((attr, attribute))
            return True
        if attr in FUNCTION_ATTRIBUTES or attr == "symbolic" or attr.startswith("__"):
            raise RefuseAt(
                Code.USED_AS_FUNCTION,
                f"`{spelled}.{attr}` is assigned here, which changes what torch does with the Function",
                attribute,
            )
        self.written.add(attr)
        return True

    def _subclass(self, sub: ast.ClassDef) -> None:
        if len(sub.bases) != 1 or sub.keywords:
            raise RefuseAt(Code.USED_AS_FUNCTION, f"its subclass {sub.name} also has other bases or keywords", sub)
        if self.index.class_scopes[sub][0] is not self.outer:
            raise RefuseAt(Code.USED_AS_FUNCTION, f"its subclass {sub.name} is defined in another scope", sub)
        self.uses.subclasses.append(sub)

    def _value(self, node: ast.AST, scope: Scope, spelled: str) -> None:
        """A bare use: stored, passed, returned. Refused where a builtin would tell the difference."""
        child, parent = node, self.parents.of(node)
        while isinstance(parent, _CONTAINERS):
            child, parent = parent, self.parents.of(parent)
        if isinstance(parent, ast.Call) and child in parent.args:
            callee = dotted(parent.func)
            qualified = self.index.qualify(callee, scope) if callee else set()
            builtins = sorted(q.split(".", 1)[1] for q in qualified if q.startswith("builtins."))
            used = [b for b in builtins if b in _INTROSPECTION]
            if used:
                raise RefuseAt(
                    Code.USED_AS_FUNCTION, f"`{used[0]}(...)` here needs it to stay a torch.autograd.Function", parent
                )
            by_name = [b for b in builtins if b in _BY_NAME]
            if by_name and child is node and parent.args[0] is node:
                self._by_name(parent, by_name[0], spelled)

    def _by_name(self, call: ast.Call, builtin: str, spelled: str) -> None:
        """``getattr(F, "name")`` is ``F.name``; a computed name cannot be checked."""
        name = call.args[1] if len(call.args) > 1 else None
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            raise RefuseAt(
                Code.USED_AS_FUNCTION,
                f"`{builtin}({spelled}, ...)` here names an attribute the engine cannot read",
                call,
            )
        as_attribute = ast.Attribute(
            value=call.args[0], attr=name.value, ctx=ast.Load() if _BY_NAME[builtin] == "read" else ast.Store()
        )
        ast.copy_location(as_attribute, call)
        self._attribute(as_attribute, spelled)

    def _check_read(self, attr: str, node: ast.Attribute, readable: set[str]) -> None:
        spelled = dotted(node) or attr
        if attr in PLAIN_DUNDERS:
            return
        if attr in AUTOGRAD_MEMBERS:
            raise RefuseAt(
                Code.USED_AS_FUNCTION, f"`{spelled}` here is a member the flat form removes from the class", node
            )
        if attr in FUNCTION_ATTRIBUTES or attr.startswith("__"):
            raise RefuseAt(
                Code.USED_AS_FUNCTION, f"`{spelled}` here is an attribute only a torch.autograd.Function has", node
            )
        if attr not in readable and attr not in self.written:
            raise RefuseAt(
                Code.USED_AS_FUNCTION, f"`{spelled}` here is neither defined by the class nor set in this module", node
            )

    # -- `cls` in the class's own classmethods ----------------------------------------
    def _classmethods(self) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
        out = []
        for stmt in self.cls.body:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            is_classmethod = any(
                "builtins.classmethod" in self.index.qualify(name, self.body_scope)
                for d in stmt.decorator_list
                if (name := dotted(d))
            )
            params = [*stmt.args.posonlyargs, *stmt.args.args]
            if is_classmethod and params:
                out.append((stmt, params[0].arg))
        return out

    def _cls_uses(self, method: ast.FunctionDef | ast.AsyncFunctionDef, cls_param: str) -> None:
        scope = self.outer  # what builtins resolve to there (a method-local `isinstance` is not followed)
        for node in ast.walk(method):
            if isinstance(node, ast.arg) and node.arg == cls_param and node is not self._first_arg(method):
                raise RefuseAt(Code.USED_AS_FUNCTION, f"`{method.name}` binds `{cls_param}` again", node)
            if not (isinstance(node, ast.Name) and node.id == cls_param):
                continue
            if not isinstance(node.ctx, ast.Load):
                raise RefuseAt(Code.USED_AS_FUNCTION, f"`{method.name}` rebinds `{cls_param}`", node)
            self._use(node, scope, spelled=cls_param, is_name=False)

    @staticmethod
    def _first_arg(method: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.arg:
        return [*method.args.posonlyargs, *method.args.args][0]
