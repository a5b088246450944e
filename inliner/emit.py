"""Print a ``CustomVJP`` as code: ``<name>_fwd``, ``<name>_bwd`` and one binding line.

The only place that decides what generated code looks like. Output is formatted
with black so it reads as if a careful person wrote it.
"""

from __future__ import annotations

import libcst as cst

from inliner.model import CustomVJP, VJPSpec


def _int_tuple(values: tuple[int, ...]) -> cst.BaseExpression:
    return cst.parse_expression(repr(tuple(values)))


def _string(value: str) -> cst.SimpleString:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return cst.SimpleString(f'"{escaped}"')


def _spec_keywords(spec: VJPSpec) -> list[cst.Arg]:
    keywords: list[tuple[str, cst.BaseExpression]] = []
    if spec.saved_for_backward_idx:
        keywords.append(("saved_for_backward_idx", _int_tuple(spec.saved_for_backward_idx)))
    if spec.saved_tensors_idx is not None:
        keywords.append(("saved_tensors_idx", cst.Integer(str(spec.saved_tensors_idx))))
    if spec.non_differentiable_idx:
        keywords.append(("non_differentiable_idx", _int_tuple(spec.non_differentiable_idx)))
    if spec.dirty_idx:
        keywords.append(("dirty_idx", _int_tuple(spec.dirty_idx)))
    if not spec.materialize_grads:
        keywords.append(("materialize_grads", cst.Name("False")))
    if spec.fill_defaults:
        keywords.append(("fill_defaults", cst.Name("True")))
    if spec.forward_decorators:
        keywords.append(("forward_decorators", cst.Tuple([cst.Element(d) for d in spec.forward_decorators])))
    if spec.backward_decorators:
        keywords.append(("backward_decorators", cst.Tuple([cst.Element(d) for d in spec.backward_decorators])))
    if spec.bwd_needs_input_grad:
        keywords.append(("bwd_needs_input_grad", cst.Name("True")))
    if not spec.bwd_reads_saved:
        keywords.append(("bwd_reads_saved", cst.Name("False")))
    if spec.generate_vmap_rule is not None:
        keywords.append(("generate_vmap_rule", spec.generate_vmap_rule))
    if spec.vmap is not None:
        keywords.append(("vmap", cst.Name(spec.vmap)))
    if spec.saved_for_forward_idx:
        keywords.append(("saved_for_forward_idx", _int_tuple(spec.saved_for_forward_idx)))
    if spec.jvp is not None:
        keywords.append(("jvp", cst.Name(spec.jvp)))
    if spec.compile_kind != "traceable":
        keywords.append(("compile_kind", _string(spec.compile_kind)))
        keywords.append(("compile_reason", _string(spec.compile_reason)))
    return [
        cst.Arg(value, keyword=cst.Name(key), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
        for key, value in keywords
    ]


def binding(vjp: CustomVJP, runtime: str, target: str | None = None) -> cst.SimpleStatementLine:
    """``Name = custom_vjp(name_fwd, name_bwd, name="Name", ...)``."""
    call = cst.Call(
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
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target or vjp.name))], call)])


def emit(
    vjp: CustomVJP, runtime: str, *, target: str | None = None, nested: bool = False, line_length: int = 88
) -> list[cst.BaseStatement]:
    """The statements that replace the original (black-formatted, comments kept)."""
    statements: list[cst.BaseStatement] = [
        vjp.fwd.with_changes(leading_lines=()),
        vjp.bwd.with_changes(leading_lines=()),
        *(f.with_changes(leading_lines=()) for f in vjp.extra),
        binding(vjp, runtime, target),
    ]
    formatted = format_statements(statements, line_length=line_length)
    blank = (cst.EmptyLine(),) * (1 if nested else 2)
    comments = {vjp.fwd.name.value: _comments(vjp.fwd.leading_lines), vjp.bwd.name.value: _comments(vjp.bwd.leading_lines)}
    out: list[cst.BaseStatement] = []
    for i, stmt in enumerate(formatted):
        own = _comments(stmt.leading_lines)
        if isinstance(stmt, cst.FunctionDef):
            own = own + comments.get(stmt.name.value, ())
        if i == 0:
            lines = (*vjp.leading_lines, *own)
        elif isinstance(stmt, cst.FunctionDef):
            lines = (*blank, *own)
        else:
            lines = (*(blank[:1] if nested else blank), *own)
        out.append(stmt.with_changes(leading_lines=lines))
    return out


def _comments(lines) -> tuple[cst.EmptyLine, ...]:
    return tuple(line for line in lines if line.comment is not None)


def format_statements(statements: list[cst.BaseStatement], *, line_length: int = 88) -> list[cst.BaseStatement]:
    code = cst.Module(body=statements).code
    try:
        import black

        code = black.format_str(code, mode=black.Mode(line_length=line_length))
    except Exception:  # black is a nicety; the unformatted code is equally correct
        pass
    return list(cst.parse_module(code).body)
