"""Orchestrate one module: find candidates, lower them, splice the emitted code, report.

Each phase is a function below, in the order ``rewrite_module`` runs them; a class is
found and lowered by ``function_class.lower_class``, an op call by ``op_call.lower_call``.

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
import os
import warnings
from collections.abc import Callable, Mapping

from inliner.engine.analysis.compile_context import CompileContext
from inliner.engine.analysis.compile_overrides import CompileOverrides
from inliner.engine.analysis.foreign import ForeignModules, ReadSource, Where
from inliner.engine.analysis.module_writes import names_mutated_in
from inliner.engine.candidate import Candidate
from inliner.engine.codes import Code
from inliner.engine.function_class.class_uses import Parents
from inliner.engine.function_class.family import root_of, subclass_candidates
from inliner.engine.function_class.lower_class import class_candidates, flatten_class_family
from inliner.engine.function_class.meant_as_base import BaseCheck
from inliner.engine.imports import bound_for_good, import_edits, spaced_insertion
from inliner.engine.incremental import FlattenCache
from inliner.engine.lowering import Run
from inliner.engine.model import CustomVJP, Refusal
from inliner.engine.op_call.hop_calls import annotate_parents
from inliner.engine.op_call.lower_call import call_candidates, flatten_call_or_refuse
from inliner.engine.op_call.splice import LocalEdits, splice_locals
from inliner.engine.read import ParsedModule, read_module
from inliner.engine.report import Report, selected
from inliner.engine.result import FlattenResult, Selection, TextEdit
from inliner.engine.runtime_names import RUNTIME_MODULE, RuntimeNames, runtime_import_line
from inliner.engine.source import SourceText, start_line


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
    sources: ReadSource | None = None,
) -> FlattenResult:
    run = Run(cache if cache is not None else FlattenCache(), diagnostics_only, stop, line_length)
    parsed = run.cache.module(source, path, lambda: read_module(source, path, run.cache.remember))
    if isinstance(parsed, FlattenResult):
        return parsed
    of_statement = _statement_facts(run.cache, parsed.text)
    compiling = CompileContext(
        parsed.tree, parsed.index, parsed.text, module=module, overrides=compile_overrides, of_statement=of_statement,
        foreign=ForeignModules(sources, Where(module, os.path.basename(path) == "__init__.py")),
    )  # fmt: skip
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
        candidates += call_candidates(tree, index, text)
    candidates.sort(key=lambda c: (c.first_line, c.name_position))
    _refuse_calls_inside_classes(candidates)
    if select is not None:
        chosen = {root_of(c).node for c in candidates if selected(c, select)}
        candidates = [c for c in candidates if selected(c, select) or root_of(c).node in chosen]
    return candidates


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


def _lower_candidates(
    candidates: list[Candidate], parsed: ParsedModule, compiling: CompileContext, bases: BaseCheck, run: Run
) -> tuple[RuntimeNames, list[tuple[int, int, str]], dict[ast.AST, LocalEdits]]:
    """Lower every candidate (a class with its subclasses), setting each one's outcome.

    Returns the runtime's names in the module, the edits replacing each flattened
    candidate's text, and what the flattened calls do to their functions' locals."""
    taken = set(parsed.index.names)
    names = RuntimeNames.choose(taken, bound_for_good(parsed.tree, RUNTIME_MODULE))
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
                flatten_call_or_refuse(candidate, parsed, taken, names.custom_vjp, local_edits, compiling, run)
            )
    for candidate in candidates:
        if candidate.outcome is None:  # a subclass of a class left as it is
            base = candidate.base
            assert base is not None
            candidate.outcome = Refusal(
                Code.USED_AS_FUNCTION, f"its base {base.name} stays a torch.autograd.Function", None
            )
    return names, edits, local_edits


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
    """``edits`` with the import edits before them (the runtime's import unless the module's
    imports bind all it would, the ones made unused)."""
    text = parsed.text
    line = runtime_import_line(candidates, names, text.newline)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the original's own warnings (escape sequences...), seen again
        rewritten = ast.parse(text.splice(edits))  # what the rewrite still uses decides which imports stay
    insertion, *removals = import_edits(
        parsed.tree, text, rewritten, module=RUNTIME_MODULE, line=line or "", path=path, edited=edits
    )
    added = [spaced_insertion(insertion, text, [*removals, *edits])] if line is not None else []
    edits = [*added, *removals, *edits]
    return text.final_edits(edits)


def _statement_facts(cache: FlattenCache, text: SourceText) -> Callable[[ast.stmt], frozenset[str]]:
    """``names_mutated_in`` a top-level statement, remembered by the statement's own text
    (its lines, and where in them it starts and ends): the same text, the same answer."""

    def of_statement(statement: ast.stmt) -> frozenset[str]:
        where = (statement.lineno - start_line(statement), statement.col_offset, statement.end_col_offset)
        key = ("mutated", text.statement_text(statement), where)
        return cache.remember(key, lambda: names_mutated_in(statement))

    return of_statement
