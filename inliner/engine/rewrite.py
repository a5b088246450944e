"""Orchestrate one module: find candidates, lower them, splice the emitted code, report.

Cost model (measured on the installed torch tree): a file that cannot hold a
Function or the op is returned after a substring test; a file that can is parsed
once by CPython's ``ast`` (fast, C) to find candidates, resolve names and locate
call sites; only the text of each candidate (a class, or an op call's bodies) is
parsed with libcst for lowering. The new text is produced by splicing
replacements into the original string, so everything outside the rewritten
regions is byte-identical by construction.

With a ``FlattenCache`` (``inliner.engine.incremental``), a candidate whose text, and
whose answers to what its lowering asked about the module, are unchanged since the
previous call is not parsed or lowered again; ``diagnostics_only`` stops before
checking and printing the lowered code.
"""

from __future__ import annotations

import ast
import re
import tokenize
import warnings
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import astuple, dataclass, field

import libcst as cst

from inliner.engine.analysis.scopes import ScopeIndex, dotted
from inliner.engine.diagnostics import INTERNAL_ERROR, Diagnostic, Severity, internal_error
from inliner.engine.emit import emit
from inliner.engine.function_class.lower_function import lower_function_class
from inliner.engine.incremental import Cancelled, FlattenCache, Lowering, relocated
from inliner.engine.invariants import check_no_new_names
from inliner.engine.model import CustomVJP, Refusal, Refuse
from inliner.engine.names import dotted as cst_dotted
from inliner.engine.names import fresh, snake_case
from inliner.engine.op_call.hop_calls import HopCall, annotate_parents, find_calls, remaining_loads, resolve, source_comment
from inliner.engine.op_call.lower_hop import lower_hop
from inliner.engine.line_origin import Emitted, Origin
from inliner.engine.result import FlattenResult, Selection, Target
from inliner.engine.source import Block, SourceText, parse_block

FUNCTION_BASES = frozenset(
    {
        "torch.autograd.Function",
        "torch.autograd.function.Function",
        "torch.autograd.function.InplaceFunction",
        "torch.autograd.InplaceFunction",
    }
)
RUNTIME_MODULE = "inliner.runtime"
RUNTIME_NAME = "custom_vjp"
HOP_LEAF = "autograd_function_apply"

_CLASS_WITH_FUNCTION_BASE = re.compile(r"\bclass\s+\w+\s*\([^)]*Function\b|\bFunction\s+as\b|=\s*[\w.]*Function\b")
_HOP_ALIASES = re.compile(r"(\w+)\s*=\s*[\w.]*\bautograd_function_apply\b\s*$|\bautograd_function_apply\s+as\s+(\w+)", re.M)


def may_contain_candidates(source: str) -> bool:
    """A cheap textual pre-filter: no match means nothing to flatten, so skip the parse."""
    if HOP_LEAF in source:
        return True
    if "Function" not in source:
        return False
    return _CLASS_WITH_FUNCTION_BASE.search(source) is not None


@dataclass
class _Candidate:
    kind: str  # "class" | "call"
    name: str
    first_line: int  # 1-based, decorators included
    last_line: int
    name_position: tuple[int, int, int]  # line, char column, end char column (0-based columns)
    node: ast.AST
    outcome: CustomVJP | Refusal | None = None
    refusal_position: tuple[int, int, int, int] | None = None  # lines 1-based, char columns 0-based
    apply_sites: list[ast.Attribute] = field(default_factory=list)
    hop: HopCall | None = None

    @property
    def label(self) -> str:
        if self.kind == "class":
            return f"class {self.name}"
        return HOP_LEAF + " call" + ("" if self.name == HOP_LEAF else f" ({self.name})")


@dataclass
class _Module:
    """One text parsed and indexed: what every run on that text reads (and never changes)."""

    tree: ast.Module
    classes: list[ast.ClassDef]
    hop_names: frozenset[str]
    index: ScopeIndex
    text: SourceText


@dataclass
class _Run:
    """How this call runs: what it may reuse, whether it emits code, when to give up."""

    cache: FlattenCache
    diagnostics_only: bool = False
    stop: Callable[[], bool] | None = None

    def check(self) -> None:
        if self.stop is not None and self.stop():
            raise Cancelled()


def rewrite_module(
    source: str,
    *,
    path: str = "<string>",
    select: Selection | None = None,
    cache: FlattenCache | None = None,
    diagnostics_only: bool = False,
    stop: Callable[[], bool] | None = None,
) -> FlattenResult:
    run = _Run(cache if cache is not None else FlattenCache(), diagnostics_only, stop)
    module = run.cache.module(source, path, lambda: _read_module(source, path))
    if isinstance(module, FlattenResult):
        return module
    tree, classes, hop_names, index, text = module.tree, module.classes, module.hop_names, module.index, module.text

    candidates = _class_candidates(classes, index, text)
    if hop_names:
        annotate_parents(tree)
        candidates += _call_candidates(tree, index, text)
    candidates.sort(key=lambda c: (c.first_line, c.name_position))
    _refuse_calls_inside_classes(candidates)
    if select is not None:
        candidates = [c for c in candidates if _selected(c, select)]
    if not candidates:
        return FlattenResult(source)

    taken = set(index.names)
    runtime_name = RUNTIME_NAME if RUNTIME_NAME not in taken else fresh("_inliner_custom_vjp", taken)
    taken.add(runtime_name)

    edits: list[tuple[int, int, str]] = []
    local_edits: dict[int, _LocalEdits] = {}
    for candidate in candidates:
        if candidate.outcome is not None:
            continue
        run.check()
        name = candidate.name
        try:
            if candidate.kind == "class":
                edits.extend(_flatten_class(candidate, index, text, taken, runtime_name, run))
            else:
                edits.extend(_flatten_call(candidate, tree, text, taken, runtime_name, local_edits, run))
        except Refuse as refuse:
            candidate.outcome = refuse.refusal
            continue
        except Exception as exc:  # an engine bug: this one stays as written, the others go on
            candidate.name = name  # an op call is renamed once lowered
            candidate.outcome = _internal_refusal(exc)
            continue
    diagnostics = tuple(_diagnostic(c, path) for c in candidates)
    flattened = tuple(c.name for c in candidates if isinstance(c.outcome, CustomVJP))
    refused = tuple(c.name for c in candidates if isinstance(c.outcome, Refusal))
    targets = _targets(candidates, diagnostics)
    if not flattened or run.diagnostics_only:
        return FlattenResult(source, diagnostics, flattened, refused, targets=targets, emitted=not run.diagnostics_only)
    # Several calls in one function touch the same statements (`fwd_body_1 = bwd_body_1 =
    # autograd_function_apply = None` clears the next call's bodies and the previous call's
    # result), so what they do to locals is merged and spliced once.
    for local in local_edits.values():
        deleted = [(s, e) for s, e, r in edits if e > s and not r]
        releases = _drop_from_releases(local.function, local.dropped, text)
        edits.extend(releases)
        edits.extend(_rename_locals(local.function, local.renames, text, deleted + [(s, e) for s, e, r in releases if not r]))

    spans = [(s, e) for s, e, _ in edits if e > s]
    for candidate in candidates:
        if candidate.kind != "class" or not isinstance(candidate.outcome, CustomVJP):
            continue
        for attribute in candidate.apply_sites:
            start = text.offset(attribute.lineno, attribute.col_offset)
            end = text.offset(attribute.end_lineno, attribute.end_col_offset)
            if not any(s <= start < e for s, e in spans):
                edits.append((start, end, candidate.name))

    edits.insert(0, _runtime_import(tree, text, runtime_name))  # before anything inserted at the same offset
    final = text.final_edits(edits)
    new_source = text.apply(final)
    return FlattenResult(
        new_source, diagnostics, flattened, refused, changed=new_source != source, edits=final, targets=targets, original=source
    )


def _read_module(source: str, path: str) -> _Module | FlattenResult:
    """Parse and index ``source``; or the whole answer, when it holds nothing to do or cannot be read."""
    if not may_contain_candidates(source):
        return FlattenResult(source)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        column = getattr(exc, "offset", None) or 1
        message = getattr(exc, "msg", None) or str(exc)
        diagnostic = Diagnostic(path, line, column, "INL000", f"cannot parse: {message}", Severity.ERROR, **Diagnostic.syntax_error_end(exc, line, column))
        return FlattenResult(source, (diagnostic,), error=f"cannot parse: {message} ({line}:{column})")

    classes = [n for n in _statements(tree) if isinstance(n, ast.ClassDef) and n.bases]
    if classes or HOP_LEAF in source:
        try:  # the symbol table finds what the parser lets through (duplicate parameters...)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. invalid escape sequences: not ours to report
                compile(tree, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None) or 1
            message = getattr(exc, "msg", None) or str(exc)
            column = Diagnostic.utf8_column(source, line, getattr(exc, "offset", None) or 1)  # AST columns are bytes
            diagnostic = Diagnostic(path, line, column, "INL000", f"cannot compile: {message}", Severity.ERROR, **Diagnostic.syntax_error_end(exc, line, column, utf8_of=source))
            return FlattenResult(source, (diagnostic,), error=f"cannot compile: {message} (line {line})")
    hop_names = frozenset({HOP_LEAF} | {a or b for a, b in _HOP_ALIASES.findall(source)}) if HOP_LEAF in source else frozenset()
    if not classes and not hop_names:
        return FlattenResult(source)
    index = ScopeIndex.build(tree, {c.name for c in classes}, hop_names)
    return _Module(tree, classes, hop_names, index, SourceText(source))


def _statements(tree: ast.Module) -> list[ast.stmt]:
    """Every statement, nested ones included, in ``ast.walk``'s order (a class is a statement:
    no need to walk the expressions, which are most of the tree)."""
    found: list[ast.stmt] = []
    queue = deque([tree])
    while queue:
        node = queue.popleft()
        for name in node._fields:
            value = getattr(node, name)
            for child in value if isinstance(value, list) else ():
                if isinstance(child, ast.stmt):
                    found.append(child)
                    queue.append(child)
                elif isinstance(child, (ast.excepthandler, ast.match_case)):
                    queue.append(child)
    return found


# -- Function subclasses ---------------------------------------------------------


def _class_candidates(classes: list[ast.ClassDef], index: ScopeIndex, text: SourceText) -> list[_Candidate]:
    out = []
    for cls in classes:
        outer, _ = index.class_scopes[id(cls)]
        base_names = [index.qualify(d, outer) if (d := dotted(base)) else {"<local>"} for base in cls.bases]
        if not any(names & FUNCTION_BASES for names in base_names):
            continue
        first_line = min([cls.lineno, *(d.lineno for d in cls.decorator_list)])
        line, col = text.class_name_position(cls)
        candidate = _Candidate("class", cls.name, first_line, cls.end_lineno, (line, col, col + len(cls.name)), cls)
        if any(names & FUNCTION_BASES and names - FUNCTION_BASES for names in base_names):
            candidate.outcome = Refusal("INL105", "its base may also name something other than torch.autograd.Function", None)
        elif outer.is_class:
            candidate.outcome = Refusal("INL105", "it is defined inside another class body", None)
        out.append(candidate)
    return out


def _flatten_class(
    candidate: _Candidate, index: ScopeIndex, text: SourceText, taken: set[str], runtime_name: str, run: _Run
) -> list[tuple[int, int, str]]:
    cls = candidate.node
    assert isinstance(cls, ast.ClassDef)
    candidate.apply_sites = _apply_sites(candidate, index, text)
    _, body_scope = index.class_scopes[id(cls)]

    def lower(names: set[str], qualify: Callable[[str], set[str]]) -> tuple[CustomVJP, Block]:
        block = parse_block(text, candidate.first_line, candidate.last_line, cls.lineno)
        assert isinstance(block.node, cst.ClassDef)

        def qualified(node: cst.CSTNode) -> set[str]:
            name = cst_dotted(node)
            return qualify(name) if name else set()

        with _positions_from(candidate, block):
            vjp = lower_function_class(block.node, qualified=qualified, taken=names)
        return vjp, block

    snippet = text.lines_between(candidate.first_line, candidate.last_line)
    key = ("class", snippet, text.indentation(cls.lineno), text.newline, runtime_name)
    lowering = run.cache.lower(
        key,
        candidate.first_line,
        lower,
        taken,
        qualify=lambda name: index.qualify(name, body_scope),
        position=lambda: candidate.refusal_position,
    )
    vjp = _lowered(candidate, lowering)
    if run.diagnostics_only:
        return []
    block = lowering.product
    methods = [s for s in block.node.body.body if isinstance(s, cst.FunctionDef)]
    lowering.once("check", lambda: check_no_new_names(vjp, methods, module_level=(runtime_name,)))
    line_length = max(40, 88 - len(block.indent))
    rendered = lowering.once("emit", lambda: block.render(emit(vjp, runtime_name, nested=block.wrapped, line_length=line_length)))
    start = text.offset(candidate.first_line, 0)
    origin = class_origin(cls, candidate.first_line, candidate.last_line, vjp, runtime_name)
    return [(start, text.line_end(candidate.last_line), Emitted(rendered, origin))]


def _lowered(candidate: _Candidate, lowering: Lowering) -> CustomVJP:
    """The candidate's lowering as its outcome: the flat form, or the refusal raised again."""
    if isinstance(lowering.outcome, Refusal):
        candidate.refusal_position = relocated(lowering, candidate.first_line)
        raise Refuse(lowering.outcome.code, lowering.outcome.reason, lowering.outcome.node)
    candidate.outcome = lowering.outcome
    return lowering.outcome


def _apply_sites(candidate: _Candidate, index: ScopeIndex, text: SourceText) -> list[ast.Attribute]:
    """The ``Name.apply`` attributes that certainly mean this class; refuse on any other use."""
    outer, _ = index.class_scopes[id(candidate.node)]
    unique = len(outer.bindings.get(candidate.name, ())) == 1
    sites = []
    for name, load_scope in index.loads:
        if name.id != candidate.name or index.lookup(name.id, load_scope) is not outer:
            continue
        attribute = index.apply_attribute.get(id(name))
        if attribute is None:
            candidate.refusal_position = (
                name.lineno,
                text.char_column(name.lineno, name.col_offset),
                name.end_lineno,
                text.char_column(name.end_lineno, name.end_col_offset),
            )
            raise Refuse("INL112", "it is used as a class here (not through `.apply`), so it must stay a class", None)
        if unique:
            sites.append(attribute)
    return sites


# -- autograd_function_apply calls --------------------------------------------------


def _refuse_calls_inside_classes(candidates: list[_Candidate]) -> None:
    """A Function class whose body calls the op is left alone, and so are those calls.

    Rewriting either alone is not stable (the flat fwd would hold a call a second run
    flattens, or the class would hold a flat call a second run lets it flatten), and
    both at once would need the class lowered from text the calls already changed.
    """
    classes = [c for c in candidates if c.kind == "class"]
    for call in (c for c in candidates if c.kind == "call"):
        holder = next((k for k in classes if k.first_line <= call.first_line and call.last_line <= k.last_line), None)
        if holder is None:
            continue
        if holder.outcome is None:
            holder.outcome = Refusal("INL105", "its body calls autograd_function_apply (a Function and an op call inside it are not rewritten together)", None)
        if call.outcome is None:
            call.outcome = Refusal("INL201", f"it lies inside class {holder.name}, which the engine leaves as it is", None)


def _call_candidates(tree: ast.Module, index: ScopeIndex, text: SourceText) -> list[_Candidate]:
    out = []
    seen_per_comment: dict[int, int] = {}
    for site in sorted(find_calls(tree, index), key=lambda s: (s.call.lineno, s.call.col_offset)):
        call = site.call
        line, col = call.lineno, text.char_column(call.lineno, call.col_offset)
        end_col = text.char_column(call.func.end_lineno, call.func.end_col_offset) if call.func.end_lineno == line else col
        candidate = _Candidate("call", HOP_LEAF, call.lineno, call.end_lineno, (line, col, end_col), call, hop=site)
        try:
            resolve(site, tree, index, text)
            comment = source_comment(site, text)
            if comment is not None:
                # the k-th call under one `code: ...` comment is its k-th `X.apply(`
                k = seen_per_comment.get(comment[0], 0)
                seen_per_comment[comment[0]] = k + 1
                if k < len(comment[1]):
                    site.name = comment[1][k]
            candidate.name = site.name
        except Refuse as refuse:
            candidate.outcome = refuse.refusal
        except Exception as exc:  # an engine bug: this call stays as written, the others go on
            candidate.outcome = _internal_refusal(exc)
        out.append(candidate)
    return out


def _flatten_call(
    candidate: _Candidate,
    tree: ast.Module,
    text: SourceText,
    taken: set[str],
    runtime_name: str,
    local_edits: dict[int, _LocalEdits],
    run: _Run,
) -> list[tuple[int, int, str]]:
    site = candidate.hop
    assert site is not None and site.fwd is not None and site.bwd is not None
    spans = []  # (first line, last line, indentation line) of each body
    for body in (site.fwd, site.bwd):
        func = body.func
        spans.append((min([func.lineno, *(d.lineno for d in func.decorator_list)]), func.end_lineno, func.lineno))
    call = site.call
    operands = call.args[2:]
    flat_name = fresh(site.name, taken)
    local = local_edits.get(id(site.scope.node))
    renames = dict(local.renames) if local is not None else None

    def lower(names: set[str], qualify: Callable[[str], set[str]]) -> tuple[CustomVJP, list[Block]]:
        blocks = [parse_block(text, *span) for span in spans]
        fwd_block, bwd_block = blocks
        assert isinstance(fwd_block.node, cst.FunctionDef) and isinstance(bwd_block.node, cst.FunctionDef)
        with _positions_from(candidate, *blocks):
            vjp = lower_hop(
                flat_name,
                fwd_block.node,
                bwd_block.node,
                flags=site.flags,
                n_operands=len(operands),
                fwd_is_method=site.fwd.is_method,
                bwd_is_method=site.bwd.is_method,
                taken=names,
                renames=renames,
            )
        return vjp, blocks

    bodies = tuple(
        (text.lines_between(first, last), text.indentation(indent_line), first - call.lineno) for first, last, indent_line in spans
    )
    key = (
        "call", bodies, text.newline, flat_name, astuple(site.flags), len(operands), site.fwd.is_method,
        site.bwd.is_method, tuple(sorted(renames.items())) if renames is not None else None, runtime_name,
    )  # fmt: skip
    lowering = run.cache.lower(key, call.lineno, lower, taken, position=lambda: candidate.refusal_position)
    vjp = _lowered(candidate, lowering)
    if not run.diagnostics_only:
        originals = [block.node for block in lowering.product]
        lowering.once("check", lambda: check_no_new_names(vjp, originals, module_level=(runtime_name,)))
    call_edits = _call_edits(call, flat_name, text)
    candidate.name = flat_name
    candidate.outcome = vjp
    edits = []
    if not run.diagnostics_only:
        make = lambda: cst.Module(body=emit(vjp, runtime_name, nested=False), default_newline=text.newline).code
        definitions = lowering.once("emit", make)
        # The flat function goes right before the module-level statement holding the call.
        statement = site.statement
        first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
        insert_at = text.offset(first, 0)
        origin = call_origin(site, vjp, runtime_name)
        edits.append((insert_at, insert_at, Emitted(definitions + text.newline * 2, origin)))
        edits.extend(call_edits)
        cleanup, dropped = _cleanup(site, tree, text)
        edits.extend(cleanup)
    else:
        dropped = set()
    renames = _result_renames(site, flat_name, taken)
    # Shared with the other calls of this function: touched only once nothing can fail.
    if local is None:
        local = local_edits[id(site.scope.node)] = _LocalEdits(site.scope.node)
    local.dropped |= dropped
    local.renames.update(renames)
    return edits


@dataclass
class _LocalEdits:
    """What the flattened calls of one function do to its locals (applied once, after all calls)."""

    function: ast.AST
    dropped: set[str] = field(default_factory=set)  # `fwd_body_0`-style aliases whose lines are removed
    renames: dict[str, str] = field(default_factory=dict)  # result locals named after the op


def _call_edits(call: ast.Call, flat_name: str, text: SourceText) -> list[tuple[int, int, str]]:
    """``op(fwd, bwd, x, y, **flags)`` -> ``Flat(x, y)``, leaving the operands' own text in place.

    Only the head (callee, bodies) and the tail (flags, closing parenthesis) are replaced,
    so an operand can itself hold another flattened call or a renamed local: their edits
    land in text this call does not touch. A call laid out over several lines keeps the
    lines (and comments) before its first operand and its closing parenthesis's line.
    """
    start = text.offset(call.lineno, call.col_offset)
    end = text.offset(call.end_lineno, call.end_col_offset)
    if len(call.args) == 2:
        return [(start, end, f"{flat_name}()")]
    found = _argument_spans(text.source, text.offset(call.func.end_lineno, call.func.end_col_offset), end)
    if found is None or len(found[0]) != len(call.args) + len(call.keywords):
        raise Refuse("INL201", "autograd_function_apply call whose arguments cannot be located in the text", None)
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


def _result_renames(site: HopCall, flat_name: str, taken: set[str]) -> dict[str, str]:
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
        return {name: fresh(snake_case(flat_name), taken)}
    return {}


def _is_release_target(node: ast.AST) -> bool:
    parent = getattr(node, "_inliner_parent", None)
    return isinstance(parent, ast.Assign) and isinstance(parent.value, ast.Constant) and parent.value.value is None


_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


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
    edits = []
    if not renames:
        return edits
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id in renames:
            start = text.offset(node.lineno, node.col_offset)
            if not any(s <= start < e for s, e in skip):
                edits.append((start, text.offset(node.end_lineno, node.end_col_offset), renames[node.id]))
    return edits


def _cleanup(site: HopCall, tree: ast.Module, text: SourceText) -> tuple[list[tuple[int, int, str]], set[str]]:
    """Remove ``fwd_body_0 = self.fwd_body_0`` lines and nested body classes nothing uses any more.

    Returns the edits and the alias names whose lines went (their ``= None`` releases
    are trimmed once every call of the function is done)."""
    edits = []
    call_args = {id(a) for a in site.call.args[:2]}
    function = site.scope.node
    dropped: set[str] = set()
    for alias in site.local_aliases:
        target = alias.targets[0]
        assert isinstance(target, ast.Name)
        if remaining_loads(function, target.id, call_args | {id(alias)}) == 0 and _owns_lines(alias, text):
            edits.append((text.offset(alias.lineno, 0), text.line_end(alias.end_lineno), ""))
            dropped.add(target.id)
    removed = {id(a) for a in site.local_aliases} | call_args
    for body in (site.fwd, site.bwd):
        owner = body.owner if body is not None else None
        if owner is None or id(owner) in removed:
            continue
        if remaining_loads(tree, owner.name, removed | {id(owner)}) == 0:
            first = min([owner.lineno, *(d.lineno for d in owner.decorator_list)])
            if first > 1 and not text.line(first - 1).strip():
                first -= 1  # the blank line that separated it
            edits.append((text.offset(first, 0), text.line_end(owner.end_lineno), ""))
            removed.add(id(owner))
    return edits, dropped


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
        start = text.offset(node.lineno, node.col_offset)
        end = text.offset(node.end_lineno, node.end_col_offset)
        kept = [i for i, t in enumerate(targets) if t.id not in names]
        if kept:
            def span(t: ast.Name) -> tuple[int, int]:
                return text.offset(t.lineno, t.col_offset), text.offset(t.end_lineno, t.end_col_offset)

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
        elif not stripped and text.source[end : text.line_end(node.end_lineno)].strip() == "":
            edits.append((line_start, text.line_end(node.end_lineno), ""))
    return edits


def _owns_lines(statement: ast.stmt, text: SourceText) -> bool:
    """The statement alone occupies its lines (no ``;`` neighbours)."""
    segment = text.source[text.offset(statement.lineno, statement.col_offset) : text.offset(statement.end_lineno, statement.end_col_offset)]
    lines = text.lines_between(statement.lineno, statement.end_lineno)
    return lines.strip() == segment.strip()


# -- shared --------------------------------------------------------------------------


class _positions_from:
    """Record where a refusal raised inside the lowering points to, in file coordinates
    (the refused node lies in one of ``blocks``)."""

    def __init__(self, candidate: _Candidate, *blocks) -> None:
        self.candidate = candidate
        self.blocks = blocks

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> bool:
        if isinstance(exc, Refuse) and exc.refusal.node is not None:
            for block in self.blocks:
                try:
                    self.candidate.refusal_position = block.position(exc.refusal.node)
                    break
                except KeyError:
                    continue  # not in this block (or synthesized by the lowering: report at the name)
        return False


def _internal_refusal(exc: Exception) -> Refusal:
    return Refusal(INTERNAL_ERROR, f"internal error ({internal_error(exc)}); please report this as an inliner bug", None)


def _selected(candidate: _Candidate, select: Selection) -> bool:
    if select.name is not None:
        return candidate.name == select.name
    if select.line is not None:
        return candidate.first_line <= select.line <= candidate.last_line
    return True


def _targets(candidates: list[_Candidate], diagnostics: tuple[Diagnostic, ...]) -> tuple[Target, ...]:
    """What was looked at, where, and how to ask for it alone: a class by its name when
    no other candidate shares it, anything else by the line of its name."""
    names = Counter(c.name for c in candidates)
    targets = []
    for candidate, diagnostic in zip(candidates, diagnostics):
        if candidate.kind == "class" and names[candidate.name] == 1:
            select = Selection(name=candidate.name)
        else:
            select = Selection(line=candidate.name_position[0])
        flattened = isinstance(candidate.outcome, CustomVJP)
        span = (candidate.first_line, candidate.last_line)
        targets.append(Target(candidate.name, candidate.kind, *span, flattened, select, diagnostic))
    return tuple(targets)


def _diagnostic(candidate: _Candidate, path: str) -> Diagnostic:
    outcome = candidate.outcome
    line, col, end_col = candidate.name_position
    if isinstance(outcome, Refusal):
        if candidate.refusal_position is not None:
            line, col, end_line, end_col = candidate.refusal_position
        else:
            end_line = line
        return Diagnostic(
            path,
            line,
            col + 1,
            outcome.code,
            _message(candidate.label, outcome.reason),
            Severity.WARNING,
            name=candidate.name,
            end_line=end_line,
            end_column=end_col + 1,
        )
    what = (
        f"class {candidate.name} is flattened into explicit fwd/bwd functions"
        if candidate.kind == "class"
        else f"autograd_function_apply call is flattened into {candidate.name}"
    )
    return Diagnostic(
        path, line, col + 1, "INL001", what, Severity.INFO, name=candidate.name, end_line=line, end_column=end_col + 1
    )


def _message(label: str, reason: str) -> str:
    if reason.startswith("class ") or reason.startswith("autograd_function_apply"):
        return f"{reason}; left untouched"
    return f"{label}: {reason}; left untouched"


def _runtime_import(tree: ast.Module, text: SourceText, runtime_name: str) -> tuple[int, int, str]:
    """Insert ``from inliner.runtime import custom_vjp`` after the docstring and __future__ imports."""
    alias = "" if runtime_name == RUNTIME_NAME else f" as {runtime_name}"
    line = f"from {RUNTIME_MODULE} import {RUNTIME_NAME}{alias}{text.newline}"
    after = None
    for i, stmt in enumerate(tree.body):
        is_docstring = (
            i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        )
        is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if is_docstring or is_future:
            after = stmt
            continue
        break
    if after is not None:
        offset = text.line_end(after.end_lineno)
    else:
        first = tree.body[0]
        first_line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
        offset = text.offset(first_line, 0)
    return (offset, offset, line)


# -- where generated text comes from (for the line map) -----------------------------


def class_origin(cls: ast.ClassDef, first_line: int, last_line: int, vjp: CustomVJP, runtime: str) -> Origin:
    """A class's replacement: made from the class; its functions from its methods."""
    methods = {m.name: m.lineno for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    defs = {}
    for emitted, sources in [
        (vjp.fwd.name.value, ("forward",)),
        (vjp.bwd.name.value, ("backward", "vjp")),
        (vjp.spec.vmap, ("vmap",)),
        (vjp.spec.jvp, ("jvp",)),
    ]:
        line = next((methods[m] for m in sources if m in methods), None)
        if emitted is not None and line is not None:
            defs[emitted] = line
    return Origin(((first_line, last_line),), defs, (f"{vjp.name} = {runtime}(", cls.lineno))


def call_origin(site: HopCall, vjp: CustomVJP, runtime: str) -> Origin:
    """An op call's flat functions: made from its two bodies; the binding stands for the call."""
    assert site.fwd is not None and site.bwd is not None
    ranges, defs = [], {}
    for body, emitted in ((site.fwd, vjp.fwd), (site.bwd, vjp.bwd)):
        func = body.func
        first = min([func.lineno, *(d.lineno for d in func.decorator_list)])
        ranges.append((first, func.end_lineno or func.lineno))
        defs[emitted.name.value] = func.lineno
    return Origin(tuple(ranges), defs, (f"{vjp.name} = {runtime}(", site.call.lineno))
