"""One residual per value: merge residual slots that hold the same local and reach no
reader twice; then each reader opens only the slots it reads.

A forward that saves ``x`` for backward and again for its jvp returns ``(x, dx, x, dx)``;
backward reads the first pair and jvp the second. The runtime passes each slot by the
routes its index keywords name (``saved_for_backward_idx``, ``saved_for_forward_idx``), and
a slot may take both, so the two copies can be one slot: ``(x, dx)``, both keywords
``(0, 1)``, and each reader unpacks the names it uses.

Only what is certainly the same value merges: the same name at both positions of every
return (one tuple, built at the return, holds one object twice). Plain slots merge with
plain slots (each reader gets that object either way); saved slots never merge within
one route (``save_for_backward(x, x)`` unpacks two tensors that need not be one object),
nor with a plain slot or a ``saved_tensors`` group; a slot that stands for a ctx
attribute on the autograd node (``ctx_attrs``) keeps its own name there, so it merges with
nothing; and a reader that uses both names keeps both slots.

A slot stays in fwd's return for the runtime (a ``ctx_attrs`` slot is on the autograd
node even where backward never reads it; a jvp's slot is not backward's), but a reader
binds no name it does not read: ``x, scale, other = residuals`` where only ``x`` and
``other`` are read becomes ``x, _, other = residuals``, and where only ``x`` is,
``(x,) = residuals[:1]``; a reader that reads none opens nothing.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import libcst as cst

from inliner.engine.docstrings import after_docstring
from inliner.engine.model import CustomVJP, VJPSpec
from inliner.engine.names import fresh, names_in, unpack_statement
from inliner.engine.walk import walk


def merge_repeated(vjp: CustomVJP) -> CustomVJP:
    """``vjp`` with repeated residual slots merged (itself when nothing merges)."""
    returns = _residual_returns(vjp.fwd)
    readers = [vjp.bwd, *(f for f in vjp.extra if f.name.value == vjp.spec.jvp)]
    unpacks = [u for u in map(_unpack, readers) if u is not None]
    if not returns or len(unpacks) != len(readers):
        return vjp
    width = len(returns[0][1])
    if width < 2 or any(len(names) != width for _, names in returns + unpacks):
        return vjp
    used = [
        names_in(f.body.with_changes(body=[s for s in f.body.body if s is not u[0]])) for f, u in zip(readers, unpacks)
    ]
    plan = _Plan(vjp.spec, [names for _, names in unpacks], used)
    for j in range(width):
        plan.place(j, [i for i in range(j) if all(names[i] == names[j] for _, names in returns)])
    if len(plan.slots) == width:
        return vjp
    return _rebuilt(vjp, plan, returns, readers, unpacks)


def _residual_returns(fwd: cst.FunctionDef) -> list[tuple[cst.Return, list[str]]]:
    """fwd's returns and the residual names of each, if every one is ``return out, (names...)``."""
    finder = _Returns()
    walk(fwd.body, finder)
    out = []
    for ret in finder.found:
        value = ret.value
        if not (isinstance(value, cst.Tuple) and len(value.elements) == 2):
            return []
        residuals = value.elements[1].value
        if not isinstance(residuals, cst.Tuple) or isinstance(value.elements[1], cst.StarredElement):
            return []
        names = [
            e.value.value for e in residuals.elements if isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
        ]
        if len(names) != len(residuals.elements):
            return []
        out.append((ret, names))
    return out


class _Returns(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Return] = []

    def visit_Return(self, node: cst.Return) -> None:
        self.found.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function's returns are its own

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def _unpack(reader: cst.FunctionDef) -> tuple[cst.CSTNode, list[str]] | None:
    """The ``a, b = residuals`` statement a reader opens with, and its names."""
    body = reader.body
    residuals = reader.params.posonly_params[:1] or reader.params.params[:1]
    if not isinstance(body, cst.IndentedBlock) or not residuals:
        return None
    for stmt in body.body[:2]:  # after the docstring, if there is one
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
            continue
        small = stmt.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Name):
            target = small.targets[0].target
            if small.value.value == residuals[0].name.value and isinstance(target, cst.Tuple):
                names = [
                    e.value.value
                    for e in target.elements
                    if isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
                ]
                return (stmt, names) if len(names) == len(target.elements) else None
    return None


class _Plan:
    """Which original slots each kept slot stands for, and the name each reader gives it."""

    def __init__(self, spec: VJPSpec, reader_names: list[list[str]], used: list[set[str]]) -> None:
        self.spec = spec
        self.reader_names = reader_names
        self.used = used
        self.slots: list[list[int]] = []  # kept slot -> the original slots it holds
        self.names: list[list[str]] = []  # kept slot -> its name in each reader

    def routes(self, slot: int) -> set[str]:
        spec = self.spec
        found = {"saved"} if slot in spec.saved_for_backward_idx else set()
        found |= {"fsaved"} if slot in spec.saved_for_forward_idx else set()
        if slot == spec.saved_tensors_idx:
            return {"group"}
        return found or {"plain"}

    def place(self, j: int, same_value: list[int]) -> None:
        for k, members in enumerate(self.slots):
            if members[0] in same_value and self._fits(k, j):
                members.append(j)
                for r, names in enumerate(self.reader_names):
                    if names[j] in self.used[r]:
                        self.names[k][r] = names[j]
                return
        self.slots.append([j])
        self.names.append([names[j] for names in self.reader_names])

    def _fits(self, k: int, j: int) -> bool:
        named = {i for i, _ in self.spec.ctx_attrs}
        if j in named or any(i in named for i in self.slots[k]):
            return False
        taken = set().union(*(self.routes(i) for i in self.slots[k]))
        joining = self.routes(j)
        both_plain = taken == joining == {"plain"}
        if not both_plain and (taken & joining or not (taken | joining) <= {"saved", "fsaved"}):
            return False
        return not any(
            self.names[k][r] in used and names[j] in used
            for r, (names, used) in enumerate(zip(self.reader_names, self.used))
        )

    def new_index(self) -> dict[int, int]:
        return {i: k for k, members in enumerate(self.slots) for i in members}


def _rebuilt(vjp: CustomVJP, plan: _Plan, returns, readers, unpacks) -> CustomVJP:
    keep = [members[0] for members in plan.slots]
    new_returns = {}
    for ret, names in returns:
        value = ret.value
        residuals = cst.Tuple([cst.Element(cst.Name(names[i])) for i in keep])
        new_returns[ret] = ret.with_changes(
            value=value.with_changes(elements=[value.elements[0], value.elements[1].with_changes(value=residuals)])
        )
    fwd = cst.ensure_type(vjp.fwd.visit(_Replace(new_returns)), cst.FunctionDef)
    new_readers = {}
    for r, (reader, unpack) in enumerate(zip(readers, unpacks)):
        opened = unpack_statement([names[r] for names in plan.names], _param_name(reader))
        replaced = reader.visit(_Replace({unpack[0]: unpack[0].with_changes(body=opened.body)}))
        new_readers[reader.name.value] = cst.ensure_type(replaced, cst.FunctionDef)
    index = plan.new_index()
    spec = dataclasses.replace(
        vjp.spec,
        saved_for_backward_idx=tuple(index[i] for i in vjp.spec.saved_for_backward_idx),
        saved_for_forward_idx=tuple(index[i] for i in vjp.spec.saved_for_forward_idx),
        saved_tensors_idx=None if vjp.spec.saved_tensors_idx is None else index[vjp.spec.saved_tensors_idx],
        ctx_attrs=tuple((index[i], attr) for i, attr in vjp.spec.ctx_attrs),
    )
    extra = [new_readers.get(f.name.value, f) for f in vjp.extra]
    return dataclasses.replace(vjp, fwd=fwd, bwd=new_readers[vjp.bwd.name.value], extra=extra, spec=spec)


def _param_name(reader: cst.FunctionDef) -> str:
    return (reader.params.posonly_params[:1] or reader.params.params[:1])[0].name.value


class _Replace(cst.CSTTransformer):
    """Put each node of ``replacements`` in place of its key (a node of the same type)."""

    def __init__(self, replacements: dict[cst.CSTNode, cst.CSTNode]) -> None:
        self.replacements = replacements

    def on_leave(self, original_node: cst.CSTNodeT, updated_node: cst.CSTNodeT) -> cst.CSTNodeT:
        return cast(cst.CSTNodeT, self.replacements.get(original_node, updated_node))


def open_only_what_is_read(vjp: CustomVJP) -> CustomVJP:
    """``vjp`` with each reader's opening unpack trimmed to the names it reads (see above)."""
    bwd = _opening_trimmed(vjp.bwd)
    extra = [_opening_trimmed(f) if f.name.value == vjp.spec.jvp else f for f in vjp.extra]
    if bwd is vjp.bwd and all(a is b for a, b in zip(extra, vjp.extra)):
        return vjp
    return dataclasses.replace(vjp, bwd=bwd, extra=extra)


def _opening_trimmed(reader: cst.FunctionDef) -> cst.FunctionDef:
    """``reader`` opening only the residual slots its body reads."""
    opening = _opening(reader)
    if opening is None:
        return reader
    stmt, names, start = opening
    body = cast(cst.IndentedBlock, reader.body)
    rest = [s for s in body.body if s is not stmt]
    read = names_in(body.with_changes(body=rest))
    kept = [i for i, n in enumerate(names) if n in read]
    if len(kept) == len(names):
        return reader
    statements = list(body.body)
    at = statements.index(stmt)
    if not kept:
        del statements[at]
        if at < len(statements):  # the unpacking's own comments stay where they were
            after = cast(cst.SimpleStatementLine | cst.BaseCompoundStatement, statements[at])
            statements[at] = after.with_changes(
                leading_lines=[*stmt.leading_lines, *_comment_line(stmt), *after.leading_lines]
            )
        return reader.with_changes(body=body.with_changes(body=statements))
    first, last = kept[0], kept[-1]
    taken = names_in(reader)
    placeholder = "_" if "_" not in taken else fresh("_unread", taken)
    opened = [n if n in read else placeholder for n in names[first : last + 1]]
    param = _param_name(reader)
    stop = "" if last + 1 == len(names) else str(start + last + 1)
    source = param if start + first == 0 and not stop else f"{param}[{start + first or ''}:{stop}]"
    statements[at] = stmt.with_changes(body=unpack_statement(opened, source).body)
    return reader.with_changes(body=body.with_changes(body=statements))


def _opening(reader: cst.FunctionDef) -> tuple[cst.SimpleStatementLine, list[str], int] | None:
    """The ``a, b = residuals`` (or ``= residuals[k:]``) a reader opens with: the statement,
    its names and ``k``."""
    body = reader.body
    if not isinstance(body, cst.IndentedBlock) or not body.body:
        return None
    params = reader.params.posonly_params[:1] or reader.params.params[:1]
    first = after_docstring(body.body)
    stmt = body.body[first] if first < len(body.body) else None
    if not params or not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    small = stmt.body[0]
    if not (
        isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Tuple)
    ):
        return None
    start = _start(small.value, params[0].name.value)
    elements = small.targets[0].target.elements
    names = [e.value.value for e in elements if isinstance(e, cst.Element) and isinstance(e.value, cst.Name)]
    if start is None or len(names) != len(elements) or len(set(names)) != len(names):
        return None
    return stmt, names, start


def _start(value: cst.BaseExpression, residuals: str) -> int | None:
    """0 for ``residuals``, k for ``residuals[k:]``, None for anything else."""
    if isinstance(value, cst.Name):
        return 0 if value.value == residuals else None
    if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and value.value.value == residuals):
        return None
    if len(value.slice) != 1 or not isinstance(value.slice[0].slice, cst.Slice):
        return None
    bounds = value.slice[0].slice
    if bounds.upper is not None or bounds.step is not None:
        return None
    if bounds.lower is None:
        return 0
    return int(bounds.lower.value) if isinstance(bounds.lower, cst.Integer) else None


def _comment_line(stmt: cst.SimpleStatementLine) -> list[cst.EmptyLine]:
    """The statement's trailing comment as a line of its own (none if it has none)."""
    comment = stmt.trailing_whitespace.comment
    return [] if comment is None else [cst.EmptyLine(comment=comment)]
