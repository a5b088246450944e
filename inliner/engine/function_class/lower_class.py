"""A module's ``Function`` classes found and lowered: each family flattened all or none
(``family``), each member lowered through the cache from its text and what it asks about
the module (``questions``), checked, classified and emitted in place of the class."""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Hashable
from dataclasses import astuple, dataclass
from typing import Any

import libcst as cst

from inliner.engine.analysis.compile_context import CompileContext, bodies_of
from inliner.engine.analysis.compile_kind import CLASS_RESIDUALS
from inliner.engine.analysis.scopes import ScopeIndex, dotted
from inliner.engine.candidate import Candidate
from inliner.engine.codes import Code
from inliner.engine.emit import emit
from inliner.engine.function_class.class_uses import Parents
from inliner.engine.function_class.family import (
    ancestors,
    base_blocks,
    decorator_nodes,
    flatten_family,
    inherited_by_subclasses,
    module_uses,
)
from inliner.engine.function_class.kept_class import AUTOGRAD_MEMBERS
from inliner.engine.function_class.lower_function import Inherited, lower_function_class
from inliner.engine.function_class.meant_as_base import BaseCheck
from inliner.engine.function_class.questions import ClassQuestions, WatchedReader
from inliner.engine.incremental import Lowering, WatchedNames
from inliner.engine.invariants import check_no_new_names
from inliner.engine.line_origin import Emitted, Origin
from inliner.engine.lowering import Run, internal_refusal, lowered, positions_from
from inliner.engine.model import CustomVJP, Refusal, Refuse
from inliner.engine.names import TakenNames
from inliner.engine.names import dotted as cst_dotted
from inliner.engine.runtime_names import RuntimeNames
from inliner.engine.source import Block, SourceText, end_line, parse_block, start_line
from inliner.engine.user_text import Originals, WrittenLines

FUNCTION_BASES = frozenset(
    {
        "torch.autograd.Function",
        "torch.autograd.function.Function",
        "torch.autograd.function.InplaceFunction",
        "torch.autograd.InplaceFunction",
    }
)


def class_candidates(
    classes: list[ast.ClassDef], index: ScopeIndex, text: SourceText, bases: BaseCheck
) -> list[Candidate]:
    out = []
    for cls in classes:
        outer, _ = index.class_scopes[cls]
        base_names = [index.qualify(d, outer) if (d := dotted(base)) else {"<local>"} for base in cls.bases]
        if not any(names & FUNCTION_BASES for names in base_names):
            continue
        first_line = start_line(cls)
        line, col = text.class_name_position(cls)
        candidate = Candidate("class", cls.name, first_line, end_line(cls), (line, col, col + len(cls.name)), cls)
        as_base = bases.refusal(cls, [])
        if as_base is not None:
            candidate.outcome, candidate.refusal_position = as_base
        elif any(names & FUNCTION_BASES and names - FUNCTION_BASES for names in base_names):
            candidate.outcome = Refusal(
                Code.CLASS_SHAPE, "its base may also name something other than torch.autograd.Function", None
            )
        elif outer.is_class:
            candidate.outcome = Refusal(Code.CLASS_SHAPE, "it is defined inside another class body", None)
        out.append(candidate)
    return out


def flatten_class_family(
    root: Candidate,
    candidates: list[Candidate],
    index: ScopeIndex,
    text: SourceText,
    taken: set[str],
    names: RuntimeNames,
    parents: Parents,
    compiling: CompileContext,
    bases: BaseCheck,
    run: Run,
) -> list[tuple[int, int, str]]:
    """``flatten_family``, each member flattened by ``_flatten_class``."""

    def flatten(member: Candidate, family: list[Candidate]) -> list[tuple[int, int, str]]:
        try:
            return _flatten_class(member, family, index, text, taken, names, parents, compiling, run)
        except Refuse as refuse:
            member.outcome = refuse.refusal
        except Exception as exc:  # an engine bug: this family stays as written, the others go on
            member.outcome = internal_refusal(exc)
        return []

    return flatten_family(root, candidates, bases, flatten)


def _flatten_class(
    candidate: Candidate,
    family: list[Candidate],
    index: ScopeIndex,
    text: SourceText,
    taken: set[str],
    names: RuntimeNames,
    parents: Parents,
    compiling: CompileContext,
    run: Run,
) -> list[tuple[int, int, str]]:
    cls = candidate.node
    assert isinstance(cls, ast.ClassDef)
    outer_scope = index.class_scopes[cls][0]
    uses = module_uses(candidate, family, index, text, parents)  # module-wide: decided on every run
    candidate.apply_sites = uses.apply_sites
    base = candidate.base
    assert base is None or base.inherited is not None
    questions = ClassQuestions(candidate, index, text)

    def lower(taking: WatchedNames, ask: Callable[[Any], Any]) -> tuple[CustomVJP, _ClassProduct]:
        return _lower_class(candidate, text, taking, ask, uses.as_class, uses.unique, names.record)

    lowering = run.cache.lower(
        _class_key(candidate, text, names, uses.as_class, uses.unique),
        candidate.first_line,
        lower,
        taken,
        ask=questions.ask,
        position=lambda: candidate.refusal_position,
    )
    vjp = lowered(candidate, lowering)
    product: _ClassProduct = lowering.product
    candidate.lowering, candidate.block, candidate.inherited = lowering, product.block, product.inherited
    candidate.decorator_generations = product.decorator_generations
    if not run.diagnostics_only:  # a check on the code to print (an engine bug if it fails)
        check_no_new_names_once(lowering, vjp, candidate, names)
    bodies = lowering.once("bodies", lambda: bodies_of(vjp, CLASS_RESIDUALS))
    candidate.compile = compiling.decide_class(cls, outer_scope, vjp, bodies)  # writes the kind into vjp.spec
    if run.diagnostics_only:
        return []
    block = product.block
    kind = candidate.compile

    def make() -> tuple[str, WrittenLines]:
        indent = block.module.default_indent
        inherited = list(base.inherited.members.values()) if base is not None and base.inherited else []
        originals = Originals.of([(block.node, block.indent), *((m, indent) for m in inherited)], indent)
        emission = emit(
            vjp, names.custom_vjp, nested=block.wrapped, line_length=run.line_length, outer=block.indent,
            indent=indent, originals=originals, flat_class=names.flat_class,
        )  # fmt: skip
        return block.render_written(emission.statements, emission.written)

    rendered, written = lowering.once(("emit", kind, run.line_length), make)
    start = text.offset(candidate.first_line, 0)
    ranges = [(candidate.first_line, candidate.last_line)]
    ranges += [(b.first_line, b.last_line) for b in ancestors(candidate)]  # where inherited members were written
    origin = class_origin(cls, tuple(sorted(ranges)), vjp, names.custom_vjp, written)
    return [(start, text.line_end(candidate.last_line), Emitted(rendered, origin))]


@dataclass
class _ClassProduct:
    """What a class's lowering leaves for emitting it and for lowering its subclasses."""

    block: Block
    inherited: Inherited
    decorator_generations: dict[cst.CSTNode, int]  # decorator expression -> generation of the class it is in


def check_no_new_names_once(lowering: Lowering, vjp: CustomVJP, candidate: Candidate, names: RuntimeNames) -> None:
    """The name invariant, checked once per lowering (what it reads is in the key)."""
    node = lowering.product.block.node
    assert isinstance(node, cst.ClassDef)
    methods = [s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value in AUTOGRAD_MEMBERS]
    inherited = candidate.base.inherited if candidate.base is not None else None
    methods += list(inherited.members.values()) if inherited else []
    module_level = (names.custom_vjp, names.flat_class, names.record)
    lowering.once("check", lambda: check_no_new_names(vjp, methods, module_level=module_level))


def _class_key(candidate: Candidate, text: SourceText, names: RuntimeNames, as_class: bool, unique: bool) -> Hashable:
    """Everything a class's lowering reads besides what it asks: its text, how the module
    uses it (decided on every run), the runtime names, and its base's lowering (by serial,
    with where the base lies relative to it: refusal positions inside the base are relative)."""
    cls = candidate.node
    assert isinstance(cls, ast.ClassDef)
    snippet = text.lines_between(candidate.first_line, candidate.last_line)
    bases = []
    base = candidate.base
    while base is not None:
        assert base.lowering is not None
        bases.append((base.lowering.serial, base.first_line - candidate.first_line))
        base = base.base
    return (
        "class", snippet, text.indentation(cls.lineno), text.newline, astuple(names), as_class, unique,
        bool(cls.decorator_list), candidate.generation, tuple(bases),
    )  # fmt: skip


def _lower_class(
    candidate: Candidate,
    text: SourceText,
    taken: TakenNames,
    ask: Callable[[Any], Any],
    as_class: bool,
    unique: bool,
    record_name: str,
) -> tuple[CustomVJP, _ClassProduct]:
    """Lower one class, learning about the module only through ``ask`` (``ClassQuestions``)."""
    cls = candidate.node
    assert isinstance(cls, ast.ClassDef)
    block = parse_block(text, candidate.first_line, candidate.last_line, cls.lineno)
    assert isinstance(block.node, cst.ClassDef)
    base = candidate.base
    inherited = base.inherited if base is not None else None
    generations = base.decorator_generations if base is not None else {}
    me = candidate.generation

    def qualified(node: cst.CSTNode) -> set[str]:
        name = cst_dotted(node)
        depth = me - generations.get(node, me)  # 0: this class's body
        return ask(("qualify", depth, name)) if name else set()

    parsed: dict[tuple[int, int, int], cst.BaseStatement] = {}  # one node per helper, as before

    def resolve(name: str, from_helper: bool) -> tuple[str, Any] | None:
        found = ask(("helper", name, from_helper))
        if found is None or found[0] != "def":
            return found
        if found[1] not in parsed:
            parsed[found[1]] = parse_block(text, *found[1]).node
        return ("def", parsed[found[1]])

    blocks = [block, *base_blocks(candidate)]
    with positions_from(candidate, *blocks):
        vjp = lower_function_class(
            block.node,
            qualified=qualified,
            taken=taken,
            decorators=WatchedReader(candidate.name, ask),
            keep=as_class,
            # a class decorator may bind the name to something else than the class `cls` is
            class_alias=candidate.name if unique and not cls.decorator_list else None,
            inherited=inherited,
            resolve=resolve,
            record_name=record_name,
        )
        mine = inherited_by_subclasses(candidate, block.node, inherited, qualified)
    own = {key: me for key in decorator_nodes(mine, block.node)}
    return vjp, _ClassProduct(block, mine, {**generations, **own})


# -- where generated text comes from (for the line map) -----------------------------


def class_origin(
    cls: ast.ClassDef,
    ranges: tuple[tuple[int, int], ...],
    vjp: CustomVJP,
    runtime: str,
    written: Collection[int],
) -> Origin:
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
    return Origin(ranges, defs, (f"{vjp.name} = {runtime}(", cls.lineno), written)
