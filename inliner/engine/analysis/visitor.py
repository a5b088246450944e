"""``ast.NodeVisitor`` with its dispatch looked up once per node type.

The standard visitor builds ``"visit_" + name`` and calls ``getattr`` for every node,
walks fields through a generator, and sends every constant through a shim that looks
for the ``visit_Num``-style methods removed in Python 3.14. The engine's analyses
visit every node of the module on each keystroke of an editor, so the lookup is done
once per (visitor class, node type) and the fields are read directly. Same order,
same callbacks: a subclass overrides ``visit_<Node>`` and ``generic_visit`` as usual.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, ClassVar


class Visitor(ast.NodeVisitor):
    """``ast.NodeVisitor``, faster; no ``visit_Num``/``visit_Str`` shims (nothing here defines them)."""

    _methods: ClassVar[dict[type, Callable[[Any, Any], Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._methods = {}  # per class: a subclass may define other visit_ methods

    def visit(self, node: ast.AST) -> Any:
        kind = type(node)
        method = self._methods.get(kind)
        if method is None:
            method = self._methods[kind] = self._method_for(kind)
        return method(self, node)

    @classmethod
    def _method_for(cls, kind: type) -> Callable[[Any, Any], Any]:
        method = getattr(cls, "visit_" + kind.__name__, None)
        if method is None or method is ast.NodeVisitor.visit_Constant:
            return cls.generic_visit
        return method

    def generic_visit(self, node: ast.AST) -> None:
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)
