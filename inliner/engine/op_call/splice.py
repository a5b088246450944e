"""Splice a flattened op call into its module's text: the call's head and tail replaced
around its operands (``call_edits``), the flat functions placed above the statement
holding it (``above_own_comments``), its result local renamed after them
(``result_renames``), the body aliases and nested body classes nothing uses any more
removed (``cleanup``), and what all calls of one function do to its locals spliced once
(``splice_locals``)."""

from __future__ import annotations

import ast
import builtins
import re
import tokenize
from collections.abc import Collection
from dataclasses import dataclass, field

from inliner.engine.codes import Code
from inliner.engine.line_origin import Origin
from inliner.engine.model import CustomVJP, Refuse
from inliner.engine.names import fresh, snake_case
from inliner.engine.op_call.hop_calls import HopCall, remaining_loads, source_comment
from inliner.engine.source import SourceText, end_line, start_line

HOP_LEAF = "autograd_function_apply"


def splice_locals(local_edits: dict[ast.AST, LocalEdits], edits: list[tuple[int, int, str]], text: SourceText) -> None:
    """Add to ``edits`` what the flattened calls do to their functions' locals.

    Several calls in one function touch the same statements (``fwd_body_1 = bwd_body_1 =
    autograd_function_apply = None`` clears the next call's bodies and the previous call's
    result), so what they do to locals is merged and spliced once. A rename inside text
    already deleted (by any edit so far, an earlier function's included) is not made."""
    for local in local_edits.values():
        deleted = [(s, e) for s, e, r in edits if e > s and not r]
        releases = _drop_from_releases(local.function, local.dropped, text)
        edits.extend(releases)
        skip = deleted + [(s, e) for s, e, r in releases if not r]
        edits.extend(_rename_locals(local.function, local.renames, text, skip))


def names_from_comments(sites: list[HopCall], text: SourceText) -> dict[ast.Call, str]:
    """The Function each call of a dump stands for, by its call node, from dynamo's comments.

    The calls under one ``# File: ..., code: ...`` comment (in source order, which is the
    order they run) are its ``X.apply(`` in the order they run, when there are as many of
    each: a comment naming two Functions over one call (``F.apply(x) if c else G.apply(x)``)
    or one over two (a loop) cannot say which call is which, and names none."""
    groups: dict[int, tuple[list[str], list[HopCall]]] = {}
    for site in sites:
        comment = source_comment(site, text)
        if comment is not None:
            groups.setdefault(comment[0], (comment[1], []))[1].append(site)
    named = {}
    for names, members in groups.values():
        if len(names) == len(members):
            named.update({site.call: name for site, name in zip(members, names)})
    return named


_SPECIAL_COMMENT = re.compile(r"#!|#.*coding[:=]")


def above_own_comments(line: int, previous_end: int, text: SourceText) -> int:
    """The first line of the comment block right above module-level ``line`` (no blank line
    between, nothing of the statement that ends on ``previous_end``; a shebang or encoding
    line stays first)."""
    while line > previous_end + 1:
        above = text.line(line - 1)
        if not above.startswith("#") or _SPECIAL_COMMENT.match(above):
            break
        line -= 1
    return line


def not_builtin(name: str) -> str:
    """A module-level flat callable named ``list`` (from ``list_fwd``) or a local ``sum`` (from a
    Function ``Sum``) would hide the builtin from all code after it."""
    return f"{name}_op" if hasattr(builtins, name) else name


@dataclass
class LocalEdits:
    """What the flattened calls of one function do to its locals (applied once, after all calls)."""

    function: ast.AST
    dropped: set[str] = field(default_factory=set)  # `fwd_body_0`-style aliases whose lines are removed
    renames: dict[str, str] = field(default_factory=dict)  # result locals named after the op


def call_edits(call: ast.Call, flat_name: str, text: SourceText) -> list[tuple[int, int, str]]:
    """``op(fwd, bwd, x, y, **flags)`` -> ``Flat(x, y)``, leaving the operands' own text in place.

    Only the head (callee, bodies) and the tail (flags, closing parenthesis) are replaced,
    so an operand can itself hold another flattened call or a renamed local: their edits
    land in text this call does not touch. A call laid out over several lines keeps the
    lines (and comments) before its first operand and its closing parenthesis's line.
    """
    start = text.start_offset(call)
    end = text.end_offset(call)
    if len(call.args) == 2:
        return [(start, end, f"{flat_name}()")]
    found = _argument_spans(text.source, text.end_offset(call.func), end)
    if found is None or len(found[0]) != len(call.args) + len(call.keywords):
        raise Refuse(Code.OP_CALL_SHAPE, "its arguments cannot be located in the text", None)
    spans, commas = found
    head_end = spans[2][0]
    last_operand = spans[len(call.args) - 1][1]
    tail = text.source[last_operand:end]
    closing = ")"
    if "\n" in text.source[commas[1] : head_end] or "\r" in text.source[commas[1] : head_end]:
        head_end = commas[1] + 1  # operands on their own lines: keep them there
        line_break = max(tail.rfind("\n"), tail.rfind("\r"))
        if line_break >= 0:
            line_break -= 1 if tail[line_break - 1 : line_break + 1] == "\r\n" else 0
            closing = "," + tail[line_break:]
    return [(start, head_end, f"{flat_name}("), (last_operand, end, closing)]


def _argument_spans(source: str, after_func: int, end: int) -> tuple[list[tuple[int, int]], list[int]] | None:
    """(start, end) offsets of each argument of the call whose parenthesis follows ``after_func``
    (parentheses around an argument included, commas and comments excluded), and the offsets
    of the commas between them."""
    open_paren = source.find("(", after_func, end)
    if open_paren < 0:
        return None
    segment = source[open_paren:end]
    line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", segment)]
    lines = iter(re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", segment))
    spans: list[tuple[int, int]] = []
    commas: list[int] = []
    current: list[int] | None = None
    depth = 0
    try:
        for token in tokenize.generate_tokens(lambda: next(lines, "")):
            if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER):
                continue
            tok_start = open_paren + line_starts[token.start[0] - 1] + token.start[1]
            tok_end = open_paren + line_starts[token.end[0] - 1] + token.end[1]
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
                if depth == 1:
                    continue
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
                if depth == 0:
                    if current is not None:
                        spans.append((current[0], current[1]))
                    return spans, commas
            elif depth == 1 and token.type == tokenize.OP and token.string == ",":
                if current is not None:
                    spans.append((current[0], current[1]))
                commas.append(tok_start)
                current = None
                continue
            if current is None:
                current = [tok_start, tok_end]
            else:
                current[1] = tok_end
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return None


def result_renames(site: HopCall, flat_name: str, taken: set[str]) -> dict[str, str]:
    """A dump's ``autograd_function_apply = <call>`` local is renamed after the flat function,
    so nothing a tracer records (thunder names proxies after locals) still says the op's name.

    Only a local the function binds once (besides ``= None`` releases) and no nested scope
    binds is renamed: every mention of it in the function then means this call's result.
    """
    function = site.scope.node
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and node.value is site.call and len(node.targets) == 1:
            target = node.targets[0]
        elif isinstance(node, ast.AnnAssign) and node.value is site.call:
            target = node.target  # `autograd_function_apply: "f32[4]" = ...` in annotated dumps
        else:
            continue
        if not (isinstance(target, ast.Name) and HOP_LEAF in target.id):
            return {}
        name = target.id
        bindings = site.scope.bindings.get(name, [])
        if [b.node for b in bindings if not _is_release_target(b.node)] != [target]:
            return {}
        if any(_binds_in_nested_scope(inner, name) for inner in _nested_scopes(function)):
            return {}
        return {name: fresh(not_builtin(snake_case(flat_name)), taken)}
    return {}


def _is_release_target(node: ast.AST) -> bool:
    parent = getattr(node, "_inliner_parent", None)
    return isinstance(parent, ast.Assign) and isinstance(parent.value, ast.Constant) and parent.value.value is None


_SCOPE_NODES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _nested_scopes(function: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(function) if n is not function and isinstance(n, _SCOPE_NODES)]


def _binds_in_nested_scope(scope: ast.AST, name: str) -> bool:
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.arg) and node.arg == name:
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
    return False


def _rename_locals(
    function: ast.AST, renames: dict[str, str], text: SourceText, skip: list[tuple[int, int]]
) -> list[tuple[int, int, str]]:
    edits: list[tuple[int, int, str]] = []
    if not renames:
        return edits
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id in renames:
            start = text.start_offset(node)
            if not any(s <= start < e for s, e in skip):
                edits.append((start, text.end_offset(node), renames[node.id]))
    return edits


def cleanup(site: HopCall, tree: ast.Module, text: SourceText) -> tuple[list[tuple[int, int, str]], set[str]]:
    """Remove ``fwd_body_0 = self.fwd_body_0`` lines and nested body classes nothing uses any more.

    Returns the edits and the alias names whose lines went (their ``= None`` releases
    are trimmed once every call of the function is done)."""
    edits = []
    call_args: set[ast.AST] = set(site.call.args[:2])
    function = site.scope.node
    dropped: set[str] = set()
    for alias in site.local_aliases:
        target = alias.targets[0]
        assert isinstance(target, ast.Name)
        if remaining_loads(function, target.id, call_args | {alias}) == 0 and _owns_lines(alias, text):
            edits.append((text.offset(alias.lineno, 0), text.line_end(end_line(alias)), ""))
            dropped.add(target.id)
    removed: set[ast.AST] = {*site.local_aliases, *call_args}
    for body in (site.fwd, site.bwd):
        owner = body.owner if body is not None else None
        if owner is None or owner in removed:
            continue
        if remaining_loads(tree, owner.name, removed | {owner} | _own_bodies_elsewhere(tree, owner)) == 0:
            first = start_line(owner)
            if first > 1 and not text.line(first - 1).strip():
                first -= 1  # the blank line that separated it
            edits.append((text.offset(first, 0), text.line_end(end_line(owner)), ""))
            removed.add(owner)
    return edits, dropped


def _own_bodies_elsewhere(tree: ast.Module, owner: ast.ClassDef) -> set[ast.AST]:
    """Other dumped graphs in the file whose own nested class has ``owner``'s name: their
    ``self.fwd_body_0`` means that class, not ``owner``."""
    out: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and owner not in node.body:
            if any(isinstance(s, ast.ClassDef) and s.name == owner.name for s in node.body):
                out.add(node)
    return out


def _drop_from_releases(function: ast.AST, names: set[str], text: SourceText) -> list[tuple[int, int, str]]:
    """``fwd_body_0 = bwd_body_0 = x = None`` -> ``x = None`` once the bodies are gone.

    Only the dropped targets' own text is deleted, so a kept target can still be renamed."""
    edits: list[tuple[int, int, str]] = []
    if not names:
        return edits
    for node in ast.walk(function):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is None):
            continue
        targets = [t for t in node.targets if isinstance(t, ast.Name)]
        if len(targets) != len(node.targets) or not ({t.id for t in targets} & names) or node.lineno != node.end_lineno:
            continue
        start = text.start_offset(node)
        end = text.end_offset(node)
        kept = [i for i, t in enumerate(targets) if t.id not in names]
        if kept:

            def span(t: ast.Name) -> tuple[int, int]:
                return text.start_offset(t), text.end_offset(t)

            last_kept = kept[-1]
            for i, target in enumerate(targets):
                if i in kept:
                    continue
                if i < last_kept:  # `a = ` up to the next target
                    edits.append((span(target)[0], span(targets[i + 1])[0], ""))
            if last_kept < len(targets) - 1:  # ` = b = c` after the last kept target
                edits.append((span(targets[last_kept])[1], span(targets[-1])[1], ""))
            continue
        # the whole statement goes: also the `;` (and spacing) that joined it to the line
        line_start = text.offset(node.lineno, 0)
        before = text.source[line_start:start]
        stripped = before.rstrip()
        if stripped.endswith(";"):
            edits.append((line_start + len(stripped) - 1, end, ""))
        elif not stripped and text.source[end : text.line_end(end_line(node))].strip() == "":
            edits.append((line_start, text.line_end(end_line(node)), ""))
    return edits


def _owns_lines(statement: ast.stmt, text: SourceText) -> bool:
    """The statement alone occupies its lines (no ``;`` neighbours)."""
    segment = text.source[text.start_offset(statement) : text.end_offset(statement)]
    lines = text.lines_between(statement.lineno, end_line(statement))
    return lines.strip() == segment.strip()


def call_origin(site: HopCall, vjp: CustomVJP, runtime: str, written: Collection[int]) -> Origin:
    """An op call's flat functions: made from its two bodies; the binding stands for the call."""
    assert site.fwd is not None and site.bwd is not None
    ranges, defs = [], {}
    for body, emitted in ((site.fwd, vjp.fwd), (site.bwd, vjp.bwd)):
        func = body.func
        first = start_line(func)
        ranges.append((first, func.end_lineno or func.lineno))
        defs[emitted.name.value] = func.lineno
    return Origin(tuple(ranges), defs, (f"{vjp.name} = {runtime}(", site.call.lineno), written)
