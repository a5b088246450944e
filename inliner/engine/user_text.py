"""Keep the user's text, format only what the engine wrote.

A statement of fwd or bwd whose text is one the user wrote (in the class, or an op
call's bodies) is moved as it is: libcst keeps its bytes and only its indentation
changes. Anything else in an emitted function is the engine's (a ``def`` line, a
changed statement, the binding) and black formats that statement alone, at the
file's line length less its indentation. A moved docstring's inner lines follow
their statement's new indentation, and only when the value ``inspect.cleandoc``
gives stays the same.

``Written`` records which nodes the engine wrote so that the edit can say which of
its lines are the engine's (``written_lines``): every other line is the user's.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import warnings
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

#: a statement of a module or block (libcst's ``BaseStatement`` has no other kinds)
Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement

_S = TypeVar("_S", cst.SimpleStatementLine, cst.FunctionDef)
_MIN_LINE_LENGTH = 40  # black's width for a deeply nested statement never drops below this
_UNSPLIT = 10_000  # a width no statement reaches
_SPACES_ONLY = re.compile(r"^[ \t\f]+$", re.MULTILINE)


@dataclass(frozen=True)
class Originals:
    """What the user wrote where the emitted code comes from: each statement's text
    (nested ones too, without leading lines), and the indentation each docstring had."""

    texts: frozenset[str] = frozenset()
    docstring_indents: tuple[tuple[str, str], ...] = ()  # (literal, indentation), literals seen at one only

    @classmethod
    def of(cls, nodes: Iterable[tuple[cst.CSTNode, str]], unit: str = "    ") -> Originals:
        """From ``(node, indentation of the node)`` pairs, in a file indenting blocks by ``unit``.

        A node itself (a class, an op call's body) and a class's methods are never
        emitted as they are, so their texts are not taken (the largest ones to print)."""
        texts: set[str] = set()
        indents: dict[str, set[str]] = {}
        for node, outer in nodes:
            skip = {node}
            if isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
                skip.update(s for s in node.body.body if isinstance(s, cst.FunctionDef))
            node.visit(_Collect(unit, outer, texts, indents, skip))
        unique = tuple((literal, next(iter(seen))) for literal, seen in indents.items() if len(seen) == 1)
        return cls(frozenset(texts), unique)

    def docstring_indent(self, literal: str) -> str | None:
        return dict(self.docstring_indents).get(literal)


class _Collect(cst.CSTVisitor):
    def __init__(
        self, unit: str, outer: str, texts: set[str], indents: dict[str, set[str]], skip: set[cst.CSTNode]
    ) -> None:
        super().__init__()
        self.unit, self.depth, self.texts, self.indents, self.skip = unit, [outer], texts, indents, skip

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and node not in self.skip:
            self.texts.add(_key(_code(node, self.unit)))
        if isinstance(node, cst.SimpleStatementLine) and _is_docstring_line(node):
            literal = _literal(node)
            self.indents.setdefault(literal, set()).add(self.depth[-1])
        if isinstance(node, cst.IndentedBlock):
            self.depth.append(self.depth[-1] + _block_indent(node, self.unit))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, cst.IndentedBlock):
            self.depth.pop()


class _BlankLinesEmptied(cst.CSTTransformer):
    """A blank line holds nothing: the spaces of a line of only spaces are dropped, as black drops them."""

    def leave_EmptyLine(self, original: cst.EmptyLine, updated: cst.EmptyLine) -> cst.EmptyLine:
        return _emptied_line(updated)


def _emptied_line(line: cst.EmptyLine) -> cst.EmptyLine:
    if line.comment is None and (line.indent or line.whitespace.value):
        return line.with_changes(indent=False, whitespace=cst.SimpleWhitespace(""))
    return line


def _blank_lines_emptied(statement: Statement, code: str) -> Statement:
    """``statement`` with its blank lines empty (``code``, its text, says whether any is not)."""
    if _SPACES_ONLY.search(code):
        emptied = statement.visit(_BlankLinesEmptied())
        assert isinstance(emptied, type(statement))
        statement = emptied
    lines = tuple(_emptied_line(line) for line in statement.leading_lines)
    if any(new is not old for new, old in zip(lines, statement.leading_lines)):
        statement = statement.with_changes(leading_lines=lines)
    return statement


def _code(statement: cst.CSTNode, indent: str) -> str:
    """A statement's text, without its leading lines, its blocks indented by ``indent``."""
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return cst.Module(body=[statement.with_changes(leading_lines=())], default_indent=indent).code


def _key(code: str) -> str:
    """What two statement texts must share to be the same user text: lines of only spaces count as empty."""
    return _SPACES_ONLY.sub("", code)


@dataclass
class Written:
    """What the engine wrote in the statements it emits, to find their lines later."""

    statements: list[Statement] = field(default_factory=list)  # whole statements (their leading lines aside)
    headers: list[cst.FunctionDef | cst.ClassDef] = field(default_factory=list)  # the ``def ...:`` lines only
    #: (statement, first, count): ``count`` of its leading lines from the ``first``
    comments: list[tuple[Statement, int, int]] = field(default_factory=list)
    #: compound statements the engine changed: their clause lines (``for ...:``, ``else:``), not their bodies
    clauses: list[cst.BaseCompoundStatement] = field(default_factory=list)

    def renamed(self, old: Statement, new: Statement) -> None:
        """``new`` stands where ``old`` did (its leading lines changed): what was recorded of ``old`` is of ``new``."""
        self.statements = [new if s is old else s for s in self.statements]
        if isinstance(new, cst.BaseCompoundStatement):
            self.clauses = [new if c is old else c for c in self.clauses]


@dataclass
class UserText:
    """Tidies emitted statements: the user's text kept, the engine's formatted."""

    originals: Originals
    line_length: int
    indent: str = "    "  # the file's indentation unit, as libcst renders a block without its own
    written: Written = field(default_factory=Written)

    def function(self, func: cst.FunctionDef, outer: str) -> cst.FunctionDef:
        """``func`` (emitted at indentation ``outer``) with its header formatted and its body tidied.

        The header is not recorded in ``written``: the caller records the node it emits."""
        body = func.body
        assert isinstance(body, cst.IndentedBlock)
        inner = outer + _block_indent(body, self.indent)
        statements = [self.statement(s, inner) for s in body.body]
        if statements and _is_docstring_line(statements[0]):
            statements[0] = self.docstring(statements[0], inner)
        statements = self._spaced_definitions(statements)
        return self._header(func, outer).with_changes(body=body.with_changes(body=statements))

    def _spaced_definitions(self, statements: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """A nested ``def`` or ``class`` right after a statement the engine wrote gets the
        blank line above it that pycodestyle (E306) and black want: the engine's
        statement (``(x,) = residuals``) may now stand where nothing stood before it."""
        written = {id(s) for s in self.written.statements}
        out = list(statements)
        for i in range(1, len(out)):
            current = out[i]
            if not isinstance(current, (cst.FunctionDef, cst.ClassDef)) or id(out[i - 1]) not in written:
                continue
            if not any(line.comment is None for line in current.leading_lines):
                out[i] = current.with_changes(leading_lines=(cst.EmptyLine(indent=False), *current.leading_lines))
        return out

    def docstring(self, statement: cst.BaseStatement, indent: str) -> cst.BaseStatement:
        """A docstring the user wrote, its inner lines moved with it to ``indent``."""
        old = self.originals.docstring_indent(_literal(statement))
        return statement if old is None else reindented_docstring(statement, old, indent)

    def formatted(
        self, statement: cst.SimpleStatementLine, outer: str, *, normalize_strings: bool
    ) -> cst.SimpleStatementLine:
        """``statement`` formatted by black at indentation ``outer``, its leading lines kept."""
        return _black(statement, self.line_length - len(outer), normalize_strings=normalize_strings)

    def statement(self, statement: cst.BaseStatement, outer: str) -> cst.BaseStatement:
        """The user's statement as it is; one the engine changed, formatted (a compound one, its bodies)."""
        assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        code = _code(statement, self.indent)
        statement = _blank_lines_emptied(statement, code)
        if _is_docstring_line(statement) or _key(code) in self.originals.texts:
            return statement  # the engine writes no string statement: black would take it for a module's docstring
        if isinstance(statement, cst.SimpleStatementLine):  # the user's quotes kept, their text changed
            formatted = self.formatted(statement, outer, normalize_strings=False)
            self.written.statements.append(formatted)
            return formatted
        return self._compound(statement, outer)

    def _compound(self, statement: cst.BaseCompoundStatement, outer: str) -> cst.BaseCompoundStatement:
        """A compound statement the engine changed: its bodies tidied, its header kept as libcst prints it."""
        indent = self.indent

        class _Bodies(cst.CSTTransformer):
            def __init__(self, tidy: UserText) -> None:
                self.tidy = tidy
                self.depth = [outer]

            def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
                self.depth.append(self.depth[-1] + _block_indent(node, indent))
                return False  # its statements are tidied one by one below

            def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
                inner = self.depth.pop()
                return updated.with_changes(body=[self.tidy.statement(s, inner) for s in updated.body])

        tidied = statement.visit(_Bodies(self))
        assert isinstance(tidied, cst.BaseCompoundStatement)
        self.written.clauses.append(tidied)
        return tidied

    def _header(self, func: cst.FunctionDef, outer: str) -> cst.FunctionDef:
        """``func`` with its ``def ...:`` line formatted (its decorators, comments and body kept)."""
        stub = func.with_changes(
            leading_lines=(),
            decorators=(),
            lines_after_decorators=(),
            body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Pass()])]),
        )
        formatted = _black(stub, self.line_length - len(outer), normalize_strings=True)
        if not isinstance(formatted, cst.FunctionDef):  # pragma: no cover - black keeps a def a def
            return func
        return formatted.with_changes(
            leading_lines=func.leading_lines,
            decorators=func.decorators,
            lines_after_decorators=func.lines_after_decorators,
        )


def _block_indent(block: cst.BaseSuite, unit: str) -> str:
    if isinstance(block, cst.IndentedBlock):
        return block.indent if block.indent is not None else unit
    return ""


def _black(statement: _S, line_length: int, *, normalize_strings: bool) -> _S:
    """``statement`` formatted alone by black; as it is when black is missing or refuses it,
    or would make it more than one statement (``a = 1; b = 2``).

    A one-line statement with a comment at its end stays on one line: split, the comment
    would end its last line, away from the code it annotates (a ``# noqa``)."""
    code = cst.Module(body=[statement.with_changes(leading_lines=())]).code
    if _commented_line(statement, code):
        line_length = _UNSPLIT
    try:
        import black

        mode = black.Mode(line_length=max(_MIN_LINE_LENGTH, line_length), string_normalization=normalize_strings)
        body = cst.parse_module(black.format_str(code, mode=mode)).body
    except Exception:  # black is a nicety; the unformatted code is equally correct
        return statement
    if len(body) != 1 or type(body[0]) is not type(statement):
        return statement
    formatted = body[0]
    assert isinstance(formatted, type(statement))
    return formatted.with_changes(leading_lines=statement.leading_lines)


def _commented_line(statement: cst.CSTNode, code: str) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or code.count("\n") != 1:
        return False
    return statement.trailing_whitespace.comment is not None


def _is_docstring_line(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString)
    )


def reindented_docstring(statement: cst.BaseStatement, old: str, new: str) -> cst.BaseStatement:
    """A docstring written at indentation ``old`` moved to ``new``: its inner lines too.

    Each line after the first that starts with ``old`` starts with ``new`` instead; a
    line of only spaces that does not becomes empty. Kept as it was if another line
    does not start with ``old``, or unless the value that ``inspect.cleandoc`` gives
    (what ``help()`` and ``inspect.getdoc`` show) stays the same."""
    assert isinstance(statement, cst.SimpleStatementLine)
    expr = statement.body[0]
    assert isinstance(expr, cst.Expr) and isinstance(expr.value, cst.SimpleString)
    literal = expr.value.value
    lines = literal.split("\n")
    if len(lines) == 1 or old == new or "\r" in literal:
        return statement
    moved = [lines[0]]
    for line in lines[1:]:
        if line.startswith(old):
            moved.append(new + line[len(old) :])
        elif not line.strip():
            moved.append("")
        else:
            return statement
    text = "\n".join(moved)
    if not _same_docstring(literal, text):
        return statement
    return statement.with_changes(body=[expr.with_changes(value=expr.value.with_changes(value=text))])


def _literal(statement: cst.BaseStatement) -> str:
    assert isinstance(statement, cst.SimpleStatementLine)
    expr = statement.body[0]
    assert isinstance(expr, cst.Expr) and isinstance(expr.value, cst.SimpleString)
    return expr.value.value


def _same_docstring(old: str, new: str) -> bool:
    before, after = _value(old), _value(new)
    return isinstance(before, str) and isinstance(after, str) and inspect.cleandoc(before) == inspect.cleandoc(after)


def _value(literal: str) -> object:
    """A string literal's value, without the warnings Python gives an invalid escape (it gave them once)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.literal_eval(literal)
        except (SyntaxError, ValueError):  # pragma: no cover - the text of a parsed string
            return None


class WrittenLines(AbstractSet[int]):
    """The 0-based lines of an emitted text that the engine wrote, found when first asked:
    positions cost a second pass over the code, which only a caller that asks pays.
    A set (equal to another set of the same lines)."""

    def __init__(self, module: cst.Module, written: Written, skip: int = 0) -> None:
        self._module, self._written, self._skip = module, written, skip

    @functools.cached_property
    def lines(self) -> frozenset[int]:
        return written_lines(self._module, self._written, self._skip)

    def __contains__(self, line: object) -> bool:
        return line in self.lines

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self.lines))

    def __len__(self) -> int:
        return len(self.lines)

    def __hash__(self) -> int:
        return hash(self.lines)

    def __repr__(self) -> str:
        return f"WrittenLines({sorted(self.lines)})"


def written_lines(module: cst.Module, written: Written, skip: int = 0) -> frozenset[int]:
    """0-based lines of ``module``'s code that the engine wrote, less ``skip`` leading lines."""
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines: set[int] = set()
    for statement in written.statements:
        if statement in positions:
            span = positions[statement]
            lines.update(range(span.start.line, span.end.line + 1))
    for definition in written.headers:
        body = definition.body
        if definition in positions and isinstance(body, cst.IndentedBlock) and body.body:
            first = body.body[0]
            assert isinstance(first, Statement)
            end = positions[first].start.line - len(first.leading_lines)
            lines.update(range(positions[definition].start.line, end))
    for statement, skipped, count in written.comments:
        if statement in positions:
            start = positions[statement].start.line - len(statement.leading_lines) + skipped
            lines.update(range(start, start + count))
    for compound in written.clauses:
        if compound in positions:
            span = positions[compound]
            lines.update(set(range(span.start.line, span.end.line + 1)) - _body_lines(compound, positions))
    return frozenset(line - 1 - skip for line in lines if line - 1 - skip >= 0)


def _body_lines(compound: cst.BaseCompoundStatement, positions) -> set[int]:
    """The lines of the statements in ``compound``'s bodies (every clause's), with their leading lines."""
    found: set[int] = set()

    class _Bodies(cst.CSTVisitor):
        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
            for statement in node.body:
                assert isinstance(statement, Statement)
                span = positions[statement]
                found.update(range(span.start.line - len(statement.leading_lines), span.end.line + 1))
            return False

    compound.visit(_Bodies())
    return found


def comment_block(value: str) -> list[cst.EmptyLine]:
    """``value``'s lines (as ``inspect.cleandoc`` shows them) as comment lines."""
    lines = inspect.cleandoc(value).splitlines() or [""]
    return [cst.EmptyLine(comment=cst.Comment(f"# {line}".rstrip())) for line in lines]


def docstring_value(statement: cst.BaseStatement) -> str | None:
    """The value of a docstring statement, or None for any other statement."""
    if not _is_docstring_line(statement):
        return None
    assert isinstance(statement, cst.SimpleStatementLine)
    expr = statement.body[0]
    assert isinstance(expr, cst.Expr) and isinstance(expr.value, cst.SimpleString)
    value = _value(expr.value.value)
    return value if isinstance(value, str) else None
