"""What a class's lowering asks about the rest of its module (how a name qualifies in a
body, what a decorator is, which helper a bare call reaches), answered for this run's
text: a value for the lowering, and an answer ``FlattenCache`` compares across runs."""

from __future__ import annotations

import ast
from collections.abc import Callable, Hashable
from typing import Any

import libcst as cst

from inliner.engine.analysis.scopes import Scope, ScopeIndex
from inliner.engine.candidate import Candidate
from inliner.engine.function_class.decorators import DecoratorReader, DecoratorUse
from inliner.engine.function_class.family import body_scope
from inliner.engine.names import dotted as cst_dotted
from inliner.engine.source import SourceText, end_line, start_line


class WatchedReader(DecoratorReader):
    """The class's ``DecoratorReader`` whose questions about the module go through ``ask``."""

    def __init__(self, cls_name: str, ask: Callable[[Any], Any]) -> None:
        self.cls_name = cls_name
        self._ask = ask

    def qualified(self, node: cst.CSTNode) -> set[str]:
        name = cst_dotted(node)
        return self._ask(("qualify", 0, name)) if name else set()

    def classify(self, expr: cst.BaseExpression, member: str) -> DecoratorUse:
        return self._ask(("decorator", expr, member))


class ClassQuestions:
    """The questions a class's lowering asks about the rest of the module, answered for
    this run's text: a value for the lowering, and an answer the cache compares."""

    def __init__(self, candidate: Candidate, index: ScopeIndex, text: SourceText) -> None:
        cls = candidate.node
        assert isinstance(cls, ast.ClassDef)
        self.index, self.text = index, text
        self.outer = index.class_scopes[cls][0]
        self.bodies: list[Scope] = []  # its body, its base's, ... (``qualify`` depth)
        member: Candidate | None = candidate
        while member is not None:
            self.bodies.append(body_scope(member, index))
            member = member.base
        self.reader = DecoratorReader(index, self.bodies[0], candidate.name)

    def ask(self, question: tuple) -> tuple[Any, Hashable]:
        topic = question[0]
        if topic == "qualify":
            _, depth, name = question
            found = self.index.qualify(name, self.bodies[depth])
            return found, frozenset(found)
        if topic == "decorator":
            _, expr, member = question
            use = self.reader.classify(expr, member)
            definition = ast.dump(use.definition) if use.definition is not None else None
            return use, (use.kind, use.target, use.pass_through, definition)
        if topic == "helper":
            _, name, from_helper = question
            helper = _helper(self.index, self.outer, name, from_helper)
            if helper is None or helper[0] != "def":
                return helper, helper
            first, last, indent_line = helper[1]
            return helper, ("def", self.text.lines_between(first, last), self.text.indentation(indent_line))
        raise LookupError(f"unknown question {question!r}")


def _helper(index: ScopeIndex, outer: Scope, name: str, from_helper: bool) -> tuple[str, Any] | None:
    """What a call of a bare name reaches from the class's methods (``from_helper``: from a
    module-level function): a function defined once at module level (its lines: first,
    last, the ``def`` line), or a builtin."""
    found = index.lookup(name, index.scopes_root(outer) if from_helper else outer)
    if found is None:
        return ("builtin", None)
    bindings = found.bindings.get(name, ())
    if not found.is_module or len(bindings) != 1 or bindings[0].kind != "def":
        return None
    node = bindings[0].node
    if not isinstance(node, ast.FunctionDef):
        return None
    first = start_line(node)
    return ("def", (first, end_line(node), node.lineno))
