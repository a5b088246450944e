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
checking and printing the lowered code. What is decided from the whole module (how
it uses each class, compile kinds, imports) is decided again on every call.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Hashable, Mapping
from dataclasses import astuple
from typing import Any

import libcst as cst

from inliner.engine.analysis.compile_context import CompileContext, bodies_of
from inliner.engine.analysis.compile_kind import CALL_RESIDUALS, names_mutated_in
from inliner.engine.analysis.compile_overrides import CompileOverrides
from inliner.engine.analysis.scopes import ScopeIndex
from inliner.engine.candidate import Candidate
from inliner.engine.codes import Code
from inliner.engine.emit import emit
from inliner.engine.function_class.class_uses import Parents
from inliner.engine.function_class.family import (
    root_of,
    subclass_candidates,
)
from inliner.engine.function_class.lower_class import class_candidates, flatten_class_family
from inliner.engine.function_class.meant_as_base import BaseCheck
from inliner.engine.imports import import_edits, spaced_insertion
from inliner.engine.incremental import FlattenCache, WatchedNames
from inliner.engine.invariants import check_no_new_names
from inliner.engine.line_origin import Emitted
from inliner.engine.lowering import Run, internal_refusal, lowered, positions_from
from inliner.engine.model import CustomVJP, Refusal, Refuse
from inliner.engine.names import fresh
from inliner.engine.op_call.hop_calls import HopCall, annotate_parents, find_calls, resolve
from inliner.engine.op_call.lower_hop import lower_hop
from inliner.engine.op_call.splice import (
    HOP_LEAF,
    LocalEdits,
    above_own_comments,
    call_edits,
    call_origin,
    cleanup,
    names_from_comments,
    not_builtin,
    result_renames,
    splice_locals,
)
from inliner.engine.read import ParsedModule, read_module
from inliner.engine.report import Report, selected
from inliner.engine.result import FlattenResult, Selection, TextEdit
from inliner.engine.runtime_names import RUNTIME_MODULE, RuntimeNames, runtime_import_line
from inliner.engine.source import Block, SourceText, end_column, end_line, parse_block, start_line
from inliner.engine.user_text import Originals, WrittenLines


def rewrite_module(
    source: str,
    *,
    path: str = "<string>",
    select: Selection | None = None,
    module: str | None = None,
    compile_overrides: CompileOverrides | None = None,
    subclassed: Mapping[str, str] | None = None,
    cache: FlattenCache | None = None,
    diagnostics_only: bool = False,
    stop: Callable[[], bool] | None = None,
    line_length: int = 88,
) -> FlattenResult:
    run = Run(cache if cache is not None else FlattenCache(), diagnostics_only, stop, line_length)
    parsed = run.cache.module(source, path, lambda: read_module(source, path, run.cache.remember))
    if isinstance(parsed, FlattenResult):
        return parsed
    of_statement = _statement_facts(run.cache, parsed.text)
    compiling = CompileContext(
        parsed.tree, parsed.index, parsed.text, module=module, overrides=compile_overrides, of_statement=of_statement
    )
    bases = BaseCheck(parsed.tree, parsed.index, parsed.text, module, subclassed)
    candidates = _find_candidates(parsed, select, bases)
    if not candidates:
        return FlattenResult(source)
    names, edits, local_edits = _lower_candidates(candidates, parsed, compiling, bases, run)
    report = Report.of(candidates, compiling, path)
    if not report.flattened or run.diagnostics_only:
        return FlattenResult(
            source, report.diagnostics, report.flattened, report.refused, targets=report.targets,
            emitted=not run.diagnostics_only, compile_kinds=report.kinds,
        )  # fmt: skip
    splice_locals(local_edits, edits, parsed.text)
    edits += _apply_site_edits(candidates, edits, parsed.text)
    final = _final_edits(candidates, names, parsed, edits, path)
    new_source = parsed.text.apply(final)
    return FlattenResult(
        new_source, report.diagnostics, report.flattened, report.refused, changed=new_source != source,
        compile_kinds=report.kinds, edits=final, targets=report.targets, original=source,
    )  # fmt: skip


# -- the phases of rewrite_module --------------------------------------------------


def _find_candidates(parsed: ParsedModule, select: Selection | None, bases: BaseCheck) -> list[Candidate]:
    """Function classes, their same-scope subclasses and op calls, in source order (only
    the selected ones and their families, with ``select``)."""
    tree, index, text = parsed.tree, parsed.index, parsed.text
    candidates = class_candidates(parsed.classes, index, text, bases)
    candidates += subclass_candidates(parsed.classes, candidates, index, text)
    if parsed.hop_names:
        annotate_parents(tree)
        candidates += _call_candidates(tree, index, text)
    candidates.sort(key=lambda c: (c.first_line, c.name_position))
    _refuse_calls_inside_classes(candidates)
    if select is not None:
        chosen = {root_of(c).node for c in candidates if selected(c, select)}
        candidates = [c for c in candidates if selected(c, select) or root_of(c).node in chosen]
    return candidates


def _lower_candidates(
    candidates: list[Candidate], parsed: ParsedModule, compiling: CompileContext, bases: BaseCheck, run: Run
) -> tuple[RuntimeNames, list[tuple[int, int, str]], dict[ast.AST, LocalEdits]]:
    """Lower every candidate (a class with its subclasses), setting each one's outcome.

    Returns the runtime's names in the module, the edits replacing each flattened
    candidate's text, and what the flattened calls do to their functions' locals."""
    taken = set(parsed.index.names)
    names = RuntimeNames.choose(taken)
    parents = Parents(parsed.tree)
    edits: list[tuple[int, int, str]] = []
    local_edits: dict[ast.AST, LocalEdits] = {}
    for candidate in candidates:
        if candidate.outcome is not None or candidate.base is not None:
            continue  # a subclass is flattened with its base
        run.check()
        if candidate.kind == "class":
            edits.extend(
                flatten_class_family(
                    candidate, candidates, parsed.index, parsed.text, taken, names, parents, compiling, bases, run
                )
            )
        else:
            edits.extend(
                _flatten_call_or_refuse(candidate, parsed, taken, names.custom_vjp, local_edits, compiling, run)
            )
    for candidate in candidates:
        if candidate.outcome is None:  # a subclass of a class left as it is
            base = candidate.base
            assert base is not None
            candidate.outcome = Refusal(
                Code.USED_AS_FUNCTION, f"its base {base.name} stays a torch.autograd.Function", None
            )
    return names, edits, local_edits


def _flatten_call_or_refuse(
    candidate: Candidate,
    parsed: ParsedModule,
    taken: set[str],
    runtime_name: str,
    local_edits: dict[ast.AST, LocalEdits],
    compiling: CompileContext,
    run: Run,
) -> list[tuple[int, int, str]]:
    """``_flatten_call``, its refusal (or an engine bug) recorded as the candidate's outcome."""
    name = candidate.name
    try:
        return _flatten_call(candidate, parsed.tree, parsed.text, taken, runtime_name, local_edits, compiling, run)
    except Refuse as refuse:
        candidate.outcome = refuse.refusal
    except Exception as exc:  # an engine bug: this one stays as written, the others go on
        candidate.name = name  # an op call is renamed once lowered
        candidate.outcome = internal_refusal(exc)
    return []


def _apply_site_edits(
    candidates: list[Candidate], edits: list[tuple[int, int, str]], text: SourceText
) -> list[tuple[int, int, str]]:
    """``F.apply`` -> the flat callable's name, wherever no other edit replaces that text."""
    spans = [(s, e) for s, e, _ in edits if e > s]
    found = []
    for candidate in candidates:
        if candidate.kind != "class" or not isinstance(candidate.outcome, CustomVJP) or candidate.outcome.kept:
            continue  # a kept class keeps its `F.apply` call sites
        for attribute in candidate.apply_sites:
            start = text.start_offset(attribute)
            end = text.end_offset(attribute)
            if not any(s <= start < e for s, e in spans):
                found.append((start, end, candidate.name))
    return found


def _final_edits(
    candidates: list[Candidate],
    names: RuntimeNames,
    parsed: ParsedModule,
    edits: list[tuple[int, int, str]],
    path: str,
) -> tuple[TextEdit, ...]:
    """``edits`` with the import edits before them (the runtime's import, the ones made unused)."""
    text = parsed.text
    line = runtime_import_line(candidates, names, text.newline)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the original's own warnings (escape sequences...), seen again
        rewritten = ast.parse(text.splice(edits))  # what the rewrite still uses decides which imports stay
    insertion, *removals = import_edits(
        parsed.tree, text, rewritten, module=RUNTIME_MODULE, line=line, path=path, edited=edits
    )
    edits = [spaced_insertion(insertion, text, [*removals, *edits]), *removals, *edits]
    return text.final_edits(edits)


def _statement_facts(cache: FlattenCache, text: SourceText) -> Callable[[ast.stmt], frozenset[str]]:
    """``names_mutated_in`` a top-level statement, remembered by the statement's own text
    (its lines, and where in them it starts and ends): the same text, the same answer."""

    def of_statement(statement: ast.stmt) -> frozenset[str]:
        where = (statement.lineno - start_line(statement), statement.col_offset, statement.end_col_offset)
        key = ("mutated", text.statement_text(statement), where)
        return cache.remember(key, lambda: names_mutated_in(statement))

    return of_statement


# -- autograd_function_apply calls --------------------------------------------------


def _refuse_calls_inside_classes(candidates: list[Candidate]) -> None:
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
            holder.outcome = Refusal(
                Code.CLASS_SHAPE,
                "its body calls autograd_function_apply (a Function and an op call inside it are not rewritten together)",
                None,
            )
        if call.outcome is None:
            call.outcome = Refusal(
                Code.OP_CALL_SHAPE, f"it lies inside class {holder.name}, which the engine leaves as it is", None
            )


def _call_candidates(tree: ast.Module, index: ScopeIndex, text: SourceText) -> list[Candidate]:
    out = []
    sites = sorted(find_calls(tree, index), key=lambda s: (s.call.lineno, s.call.col_offset))
    named = names_from_comments(sites, text)
    for site in sites:
        call = site.call
        line, col = call.lineno, text.char_column(call.lineno, call.col_offset)
        end_col = text.char_column(line, end_column(call.func)) if end_line(call.func) == line else col
        candidate = Candidate("call", HOP_LEAF, call.lineno, end_line(call), (line, col, end_col), call, hop=site)
        try:
            resolve(site, tree, index, text)
            assert site.fwd is not None and site.bwd is not None, "resolve sets both bodies or refuses"
            if call in named and site.fwd.kind == "dump" and site.bwd.kind == "dump":
                site.name = named[call]
            candidate.name = site.name
        except Refuse as refuse:
            candidate.outcome = refuse.refusal
        except Exception as exc:  # an engine bug: this call stays as written, the others go on
            candidate.outcome = internal_refusal(exc)
        out.append(candidate)
    return out


def _flatten_call(
    candidate: Candidate,
    tree: ast.Module,
    text: SourceText,
    taken: set[str],
    runtime_name: str,
    local_edits: dict[ast.AST, LocalEdits],
    compiling: CompileContext,
    run: Run,
) -> list[tuple[int, int, str]]:
    site = candidate.hop
    assert site is not None and site.fwd is not None and site.bwd is not None
    spans: list[tuple[int, int, int]] = []  # (first line, last line, indentation line) of each body
    for body in (site.fwd, site.bwd):
        func = body.func
        spans.append((start_line(func), end_line(func), func.lineno))
    call = site.call
    flat_name = fresh(not_builtin(site.name), taken)
    local = local_edits.get(site.scope.node)
    renames = dict(local.renames) if local is not None else None
    lower = _call_lowerer(candidate, site, text, spans, flat_name, renames)
    qualify = site.qualify

    def ask(question: tuple) -> tuple[Any, Hashable]:
        found = qualify(question[1])  # ("qualify", name): at module level
        return found, frozenset(found)

    lowering = run.cache.lower(
        _call_key(site, text, spans, flat_name, renames, runtime_name),
        call.lineno,
        lower,
        taken,
        ask=ask,
        position=lambda: candidate.refusal_position,
    )
    vjp = lowered(candidate, lowering)
    if not run.diagnostics_only:  # a check on the code to print (an engine bug if it fails)
        originals = [block.node for block in lowering.product]
        lowering.once("check", lambda: check_no_new_names(vjp, originals, module_level=(runtime_name,)))
    bodies = lowering.once("bodies", lambda: bodies_of(vjp, CALL_RESIDUALS))
    compile_kind = compiling.decide_call(call, site.scope, vjp, bodies)  # writes the kind into vjp.spec
    head_and_tail = call_edits(call, flat_name, text)
    candidate.name = flat_name
    candidate.outcome = vjp
    candidate.compile = compile_kind
    edits: list[tuple[int, int, str]] = []
    if not run.diagnostics_only:

        def make() -> tuple[str, WrittenLines]:
            originals = Originals.of((block.node, block.indent) for block in lowering.product)
            emission = emit(vjp, runtime_name, line_length=run.line_length, originals=originals)
            module = cst.Module(body=emission.statements, default_newline=text.newline)
            return module.code, WrittenLines(module, emission.written)

        definitions, written = lowering.once(("emit", compile_kind, run.line_length), make)
        # The flat function goes right before the module-level statement holding the call,
        # and before the comment lines that introduce that statement.
        statement = site.statement
        previous_end = max((end_line(s) for s in tree.body if end_line(s) < statement.lineno), default=0)
        first = start_line(statement)
        first = above_own_comments(first, previous_end, text)
        insert_at = text.offset(first, 0)
        origin = call_origin(site, vjp, runtime_name, written)
        edits.append((insert_at, insert_at, Emitted(definitions + text.newline * 2, origin)))
        edits.extend(head_and_tail)
        removals, dropped = cleanup(site, tree, text)
        edits.extend(removals)
    else:
        dropped = set()
    renamed = result_renames(site, flat_name, taken)
    # Shared with the other calls of this function: touched only once nothing can fail.
    if local is None:
        local = local_edits[site.scope.node] = LocalEdits(site.scope.node)
    local.dropped |= dropped
    local.renames.update(renamed)
    return edits


def _call_key(
    site: HopCall,
    text: SourceText,
    spans: list[tuple[int, int, int]],
    flat_name: str,
    renames: dict | None,
    runtime_name: str,
) -> Hashable:
    """Everything an op call's lowering reads besides what it asks (names, module-level names)."""
    assert site.fwd is not None and site.bwd is not None
    bodies = tuple(
        (text.lines_between(first, last), text.indentation(indent_line), first - site.call.lineno)
        for first, last, indent_line in spans
    )
    return (
        "call", bodies, text.newline, flat_name, astuple(site.flags), len(site.call.args) - 2, site.fwd.is_method,
        site.bwd.is_method, site.fwd.kind, site.bwd.kind, tuple(sorted(renames.items())) if renames is not None else None,
        runtime_name,
    )  # fmt: skip


def _call_lowerer(
    candidate: Candidate,
    site: HopCall,
    text: SourceText,
    spans: list[tuple[int, int, int]],
    flat_name: str,
    renames: dict | None,
):
    """``lower(taken, ask)`` for the cache: parse the two bodies and lower the call."""
    assert site.fwd is not None and site.bwd is not None
    fwd, bwd = site.fwd, site.bwd

    def lower(taking: WatchedNames, ask: Callable[[Any], Any]) -> tuple[CustomVJP, list[Block]]:
        blocks = [parse_block(text, *span) for span in spans]
        fwd_block, bwd_block = blocks
        assert isinstance(fwd_block.node, cst.FunctionDef) and isinstance(bwd_block.node, cst.FunctionDef)
        with positions_from(candidate, *blocks):
            vjp = lower_hop(
                flat_name,
                fwd_block.node,
                bwd_block.node,
                flags=site.flags,
                n_operands=len(site.call.args) - 2,
                fwd_is_method=fwd.is_method,
                bwd_is_method=bwd.is_method,
                taken=taking,
                renames=renames,
                fwd_kind=fwd.kind,
                bwd_kind=bwd.kind,
                qualify=lambda name: ask(("qualify", name)),
            )
        return vjp, blocks

    return lower
