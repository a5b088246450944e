"""A module's op calls found and lowered: each resolved to its two bodies (``hop_calls``),
lowered through the cache (``lower_hop``), checked, classified, emitted above its statement
and spliced into its function (``splice``)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Hashable
from dataclasses import astuple
from typing import Any

import libcst as cst

from inliner.engine.analysis.compile_context import CompileContext, bodies_of
from inliner.engine.analysis.compile_kind import CALL_RESIDUALS
from inliner.engine.analysis.scopes import ScopeIndex
from inliner.engine.candidate import Candidate
from inliner.engine.emit import emit
from inliner.engine.incremental import WatchedNames
from inliner.engine.invariants import check_no_new_names
from inliner.engine.line_origin import Emitted
from inliner.engine.lowering import Run, internal_refusal, lowered, positions_from
from inliner.engine.model import CustomVJP, Refuse
from inliner.engine.names import fresh
from inliner.engine.op_call.hop_calls import HopCall, find_calls, resolve
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
)
from inliner.engine.read import ParsedModule
from inliner.engine.source import Block, SourceText, end_column, end_line, parse_block, start_line
from inliner.engine.user_text import Originals, WrittenLines


def call_candidates(tree: ast.Module, index: ScopeIndex, text: SourceText) -> list[Candidate]:
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


def flatten_call_or_refuse(
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
