"""Print a ``CustomVJP`` as code: ``<name>_fwd``, ``<name>_bwd`` and one binding line.

The only place that decides what generated code looks like. What the engine writes
is formatted with black so it reads as if a careful person wrote it; what the user
wrote keeps its text (``inliner.engine.user_text``).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from inliner.engine.model import CustomVJP, VJPSpec
from inliner.engine.residuals import merge_repeated, open_only_what_is_read
from inliner.engine.user_text import (
    Originals,
    Statement,
    UserText,
    Written,
    comment_block,
    docstring_value,
)


def _int_tuple(values: tuple[int, ...]) -> cst.BaseExpression:
    return cst.parse_expression(repr(tuple(values)))


def _string(value: str) -> cst.SimpleString:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return cst.SimpleString(f'"{escaped}"')


def _attr_dict(pairs: tuple[tuple[int, str], ...]) -> cst.BaseExpression:
    """``{1: "k", 2: "shape"}``: residual index -> the ctx attribute it was."""
    return cst.parse_expression("{" + ", ".join(f'{i}: "{attr}"' for i, attr in pairs) + "}")


def _spec_keywords(spec: VJPSpec) -> list[cst.Arg]:
    keywords: list[tuple[str, cst.BaseExpression]] = []
    if spec.saved_for_backward_idx:
        keywords.append(("saved_for_backward_idx", _int_tuple(spec.saved_for_backward_idx)))
    if spec.saved_tensors_idx is not None:
        keywords.append(("saved_tensors_idx", cst.Integer(str(spec.saved_tensors_idx))))
    if spec.ctx_attrs:
        keywords.append(("ctx_attrs", _attr_dict(spec.ctx_attrs)))
    if spec.non_differentiable_idx:
        keywords.append(("non_differentiable_idx", _int_tuple(spec.non_differentiable_idx)))
    if spec.dirty_idx:
        keywords.append(("dirty_idx", _int_tuple(spec.dirty_idx)))
    if not spec.materialize_grads:
        keywords.append(("materialize_grads", cst.Name("False")))
    if spec.fill_defaults:
        keywords.append(("fill_defaults", cst.Name("True")))
    if spec.forward_decorators:
        keywords.append(("forward_decorators", _decorators(spec.forward_decorators, spec.made_in_function)))
    if spec.backward_decorators:
        keywords.append(("backward_decorators", _decorators(spec.backward_decorators, spec.made_in_function)))
        if spec.backward_name != "backward":
            keywords.append(("backward_name", cst.SimpleString(f'"{spec.backward_name}"')))
    if spec.bwd_needs_input_grad:
        keywords.append(("bwd_needs_input_grad", cst.Name("True")))
    if not spec.bwd_reads_saved:
        keywords.append(("bwd_reads_saved", cst.Name("False")))
    if spec.saved_on_demand:
        keywords.append(("saved_on_demand", cst.Name("True")))
    if spec.generate_vmap_rule is not None:
        keywords.append(("generate_vmap_rule", spec.generate_vmap_rule))
    if spec.vmap is not None:
        keywords.append(("vmap", cst.Name(spec.vmap)))
    if spec.saved_for_forward_idx:
        keywords.append(("saved_for_forward_idx", _int_tuple(spec.saved_for_forward_idx)))
    if spec.jvp is not None:
        keywords.append(("jvp", cst.Name(spec.jvp)))
    if spec.symbolic is not None:
        keywords.append(("symbolic", spec.symbolic))
    if spec.ctx_record:
        keywords.append(("ctx_record", cst.Name("True")))
    if spec.fwd_needs_input_grad:
        keywords.append(("fwd_needs_input_grad", cst.Name("True")))
    if spec.compile_kind != "traceable":
        keywords.append(("compile_kind", _string(spec.compile_kind)))
        keywords.append(("compile_reason", _string(spec.compile_reason)))
    keywords.extend(_backward_kind_keywords(spec))
    return [
        cst.Arg(value, keyword=cst.Name(key), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
        for key, value in keywords
    ]


def _decorators(decorators: tuple[cst.BaseExpression, ...], lazily: bool) -> cst.BaseExpression:
    """``(torch.no_grad(),)``; inside a function, ``lambda: (torch.no_grad(),)``: a factory
    called in a compiled region would have dynamo build the decorators and hand them to
    ``custom_vjp`` across its graph break, and a ``torch.no_grad()`` dynamo hands over
    turns grad mode off for the rest of the frame and after it (torch 2.13), where the
    original's class statement breaks the graph before its decorators are evaluated."""
    listed = cst.Tuple([cst.Element(d) for d in decorators])
    return cst.Lambda(cst.Parameters(), listed) if lazily else listed


def _backward_kind_keywords(spec: VJPSpec) -> list[tuple[str, cst.BaseExpression]]:
    """The backward's own kind where it differs from the forward's (``compile_kind``), and,
    for one that is not traceable, where it gives None: what the split path needs. A
    forward with side effects keeps the call eager whatever the backward is, unless they
    are writes into its arguments alone (``forward_writes_arguments``: the split path where
    the argument is a list at the call)."""
    keywords: list[tuple[str, cst.BaseExpression]] = []
    if spec.compile_kind == "side_effecting":
        if not spec.forward_argument_writes or spec.decorators or spec.ctx_record:
            return []
        keywords.append(("forward_writes_arguments", _int_tuple(spec.forward_argument_writes)))
    if spec.backward_kind != spec.compile_kind:
        keywords.append(("backward_kind", _string(spec.backward_kind)))
        if spec.backward_kind != "traceable":
            keywords.append(("backward_reason", _string(spec.backward_reason)))
    if spec.backward_kind != "traceable" and spec.backward_nones is not None:
        keywords.append(("backward_nones", _int_tuple(spec.backward_nones)))
    if _split_decorators(spec) and not (spec.compile_kind == "traceable" and spec.backward_kind == "traceable"):
        keywords.append(("split_decorators", cst.Name("True")))
    if spec.ctx_record and spec.backward_kind == "side_effecting" and not spec.backward_writes_ctx:
        keywords.append(("record_read_only", cst.Name("True")))
    elif spec.ctx_record and spec.record_sets_only:
        keywords.append(("record_sets_only", cst.Name("True")))
    return keywords


#: decorators that keep dynamo out of what they wrap: the original breaks the graph there
_DYNAMO_DISABLED = {"torch.compiler.disable", "torch._dynamo.disable"}


def _split_decorators(spec: VJPSpec) -> bool:
    """May the replayed decorators take the split path? Dynamo traces them around fwd as it
    traced them around the original's forward, a nested ``torch.compile`` included (it is
    inlined there, as in the original's traced body); one that disables dynamo stays an island,
    as the original broke the graph at it."""
    return bool(spec.decorators) and not any(use.target in _DYNAMO_DISABLED for use in spec.decorators)


def binding(vjp: CustomVJP, runtime: str, target: str | None = None) -> cst.SimpleStatementLine:
    """``Name = custom_vjp(name_fwd, name_bwd, name="Name", ...)``."""
    call = _custom_vjp_call(vjp, runtime)
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target or vjp.name))], call)])


def _apply_binding(vjp: CustomVJP, runtime: str) -> cst.SimpleStatementLine:
    """``apply = staticmethod(custom_vjp(...))``: a kept class's ``apply`` is the flat callable."""
    call = cst.Call(cst.Name("staticmethod"), [cst.Arg(_custom_vjp_call(vjp, runtime))])
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name("apply"))], call)])


def _custom_vjp_call(vjp: CustomVJP, runtime: str) -> cst.Call:
    return cst.Call(
        cst.Name(runtime),
        [
            cst.Arg(cst.Name(vjp.fwd.name.value)),
            cst.Arg(cst.Name(vjp.bwd.name.value)),
            cst.Arg(
                cst.SimpleString(f'"{vjp.name}"'),
                keyword=cst.Name("name"),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            ),
            *_spec_keywords(vjp.spec),
        ],
    )


@dataclass
class Emission:
    """The statements that replace the original, and which of their nodes the engine wrote."""

    statements: list[Statement]
    written: Written


def emit(
    vjp: CustomVJP,
    runtime: str,
    *,
    target: str | None = None,
    nested: bool = False,
    line_length: int = 88,
    outer: str = "",
    indent: str = "    ",
    originals: Originals | None = None,
    flat_class: str = "FlatClass",
) -> Emission:
    """The statements that replace the original, at indentation ``outer``.

    What the user wrote (``originals``, see ``user_text.Originals``) keeps its
    text; what the engine wrote is formatted by black at ``line_length``. A kept class
    (``vjp.kept``) comes last, as the user wrote it less its autograd members, with
    ``apply = staticmethod(custom_vjp(...))`` appended.
    """
    vjp = open_only_what_is_read(merge_repeated(vjp))
    user = UserText(originals or Originals(), line_length, indent)
    blank = (cst.EmptyLine(indent=False),) * (1 if nested else 2)
    written = user.written
    functions = [vjp.fwd, vjp.bwd, *vjp.extra]
    out: list[Statement] = []
    for i, func in enumerate(functions):
        tidied = user.function(func, outer)
        if i == 0 and vjp.class_docstring is not None:
            docstring = user.docstring(vjp.class_docstring.with_changes(leading_lines=()), outer + indent)
            tidied = _with_class_docstring(tidied, docstring, written)
        own = _comments(func.leading_lines)
        lines = (*vjp.leading_lines, *own) if i == 0 else (*blank, *own)
        tidied = tidied.with_changes(leading_lines=lines)
        written.headers.append(tidied)
        out.append(tidied)
    if vjp.kept is None:
        bound = user.formatted(binding(vjp, runtime, target), outer, normalize_strings=True)
        bound = bound.with_changes(leading_lines=blank[:1] if nested else blank)
        written.statements.append(bound)
        out.append(bound)
    else:
        out.append(_kept_class(vjp, runtime, flat_class, user, outer + indent, blank))
    return Emission(out, written)


def _with_class_docstring(fwd: cst.FunctionDef, docstring: cst.BaseStatement, written: Written) -> cst.FunctionDef:
    """fwd documented as the class was (the flat callable's ``__doc__``, as the class's was).

    A docstring forward had too becomes a comment block where it stood: a second string
    would be a bare statement, and forward's ``__doc__`` has nowhere to go."""
    body = fwd.body
    assert isinstance(body, cst.IndentedBlock)
    statements = list(body.body)
    own = docstring_value(statements[0]) if statements else None
    if own is None or len(statements) < 2:
        return fwd.with_changes(body=body.with_changes(body=[docstring, *statements]))
    demoted, after = statements[0], statements[1]
    assert isinstance(demoted, cst.SimpleStatementLine) and isinstance(after, Statement)
    block = comment_block(own)
    moved = after.with_changes(leading_lines=(*_comments(demoted.leading_lines), *block, *after.leading_lines))
    written.renamed(after, moved)
    written.comments.append((moved, len(_comments(demoted.leading_lines)), len(block)))
    after = moved
    return fwd.with_changes(body=body.with_changes(body=[docstring, after, *statements[2:]]))


def _kept_class(
    vjp: CustomVJP, runtime: str, flat_class: str, user: UserText, inner: str, blank: tuple[cst.EmptyLine, ...]
) -> cst.ClassDef:
    kept = vjp.kept
    assert kept is not None and isinstance(kept.node.body, cst.IndentedBlock)
    node = kept.node
    body = list(node.body.body)
    if body:  # blank lines that followed a removed member do not open the class
        first = body[0]
        assert isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))  # BaseStatement's only kinds
        body[0] = first.with_changes(leading_lines=_comments(first.leading_lines))
    apply = user.formatted(_apply_binding(vjp, runtime), inner, normalize_strings=True)
    apply = apply.with_changes(leading_lines=(cst.EmptyLine(indent=False),) if body else ())
    user.written.statements.append(apply)
    node = node.with_changes(body=node.body.with_changes(body=[*body, apply]))
    if kept.replace_base:
        node = node.with_changes(bases=[node.bases[0].with_changes(value=cst.Name(flat_class))])
    # The class's own leading comments went above fwd, the first statement emitted.
    if node.decorators:
        decorators = [node.decorators[0].with_changes(leading_lines=blank), *node.decorators[1:]]
        node = node.with_changes(decorators=decorators, leading_lines=())
    else:
        node = node.with_changes(leading_lines=blank)
    if kept.replace_base:
        user.written.headers.append(node)
    return node


def _comments(lines) -> tuple[cst.EmptyLine, ...]:
    return tuple(line for line in lines if line.comment is not None)
