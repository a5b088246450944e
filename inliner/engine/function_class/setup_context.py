"""``forward(*inputs)`` + ``setup_context(ctx, inputs, output)`` joined into one combined-style forward.

The joined forward is forward's body, then ``output = <returned value>``, then
setup_context's body, then ``return output``: the named lowering then treats it like
any ``forward(ctx, ...)``. setup_context must only pick values apart: the carrier runs
it once, with the tensors forward saw, and re-binds inputs/outputs per transform level
by position.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from inliner.engine.analysis.ctxflow import BodyFacts, analyse
from inliner.engine.codes import Code
from inliner.engine.model import Refuse
from inliner.engine.names import fresh, names_in, rename
from inliner.engine.walk import walk

_STRUCTURAL_METHODS = {"size", "dim", "numel", "stride", "is_contiguous", "is_floating_point", "get_device"}
_STRUCTURAL_FUNCTIONS = {"len", "isinstance", "tuple", "list", "int", "float", "bool"}
# ctx methods setup_context may call: they record facts about the values, they compute nothing
_CTX_METHODS = {
    "save_for_backward",
    "mark_dirty",
    "mark_non_differentiable",
    "set_materialize_grads",
    "save_for_forward",
}


@dataclass
class JoinedForward:
    """forward and setup_context as one ``forward(ctx, ...)``."""

    func: cst.FunctionDef
    #: (returned name, the names setup_context unpacks it into): its ``a, b = output``
    output_items: tuple[str, list[str]] | None


@dataclass
class _Join:
    """The parts of the joined forward, named so that they collide with nothing forward binds."""

    forward: cst.FunctionDef
    returned: cst.Return  # forward's only return, its last statement
    ctx: str
    inputs: str  # the name setup_context's ``inputs`` has in the joined body
    output: str
    setup_body: cst.IndentedBlock  # renamed to match
    rebinds_params: bool  # forward stores to one of its own positional parameters


def join_setup_context(
    name: str, forward: cst.FunctionDef, setup: cst.FunctionDef, backward: cst.FunctionDef
) -> JoinedForward:
    """The combined-style forward of class ``name``; refuses what the join could not keep exact."""
    ctx, inputs_name, output_name = _setup_parameters(name, forward, setup)
    facts = analyse(forward, None)
    if facts.has_yield:
        raise Refuse(Code.CLASS_SHAPE, "forward is a generator or coroutine", forward)
    returned = _final_return(name, forward, facts)
    _check_only_picks_apart(name, setup)
    _check_setup_reads(name, forward, setup, facts)
    join = _name_the_parts(forward, setup, backward, facts, returned, (ctx, inputs_name, output_name))
    return JoinedForward(_joined_function(join), _output_items(join))


def _setup_parameters(name: str, forward: cst.FunctionDef, setup: cst.FunctionDef) -> list[str]:
    """setup_context's (ctx, inputs, output) names, for a forward whose parameters it can rebind."""
    params = forward.params
    # Keyword-only parameters are not inputs (setup_context never sees them) and the
    # carrier has forward's signature, so torch binds them as for the original
    # (docs/semantics.md §14: torch 2.13 rejects any, 2.9 accepts them omitted).
    if params.star_kwarg is not None or params.posonly_params:
        raise Refuse(Code.SIGNATURE, "a setup_context forward with ** or positional-only parameters", forward)
    setup_params = [p.name.value for p in setup.params.params]
    if len(setup_params) != 3 or isinstance(setup.params.star_arg, cst.Param) or setup.params.kwonly_params:
        raise Refuse(Code.SIGNATURE, "setup_context must take (ctx, inputs, output)", setup)
    return setup_params


def _final_return(name: str, forward: cst.FunctionDef, facts: BodyFacts) -> cst.Return:
    """forward's only return, which must be its last statement: the join puts setup_context after it."""
    body = forward.body
    assert isinstance(body, cst.IndentedBlock)
    returns = facts.returns
    last = body.body[-1] if body.body else None
    if (
        len(returns) != 1
        or not isinstance(last, cst.SimpleStatementLine)
        or len(last.body) != 1
        or last.body[0] is not returns[0][0]
    ):
        raise Refuse(Code.CLASS_SHAPE, "a setup_context forward must end in its only return", forward)
    return returns[0][0]


def _check_only_picks_apart(name: str, setup: cst.FunctionDef) -> None:
    """Refuse a setup_context that computes: the carrier runs it once, not per transform level."""
    setup_body = setup.body
    assert isinstance(setup_body, cst.IndentedBlock)
    for stmt in setup_body.body:
        check = _Structural()
        walk(stmt, check)
        if not check.ok:
            raise Refuse(
                Code.SETUP_CONTEXT_COMPUTES,
                "setup_context computes values (flattening could change torch.func higher-order grads)",
                stmt,
            )


def _check_setup_reads(name: str, forward: cst.FunctionDef, setup: cst.FunctionDef, facts: BodyFacts) -> None:
    """Refuse a setup_context reading a free name that forward binds: joined, it would read forward's."""
    params = forward.params
    setup_params = [p.name.value for p in setup.params.params]
    positional = [p.name.value for p in params.params]
    setup_free = names_in(setup) - set(setup_params)
    stored_in_forward = set(facts.stores) | set(positional) | {p.name.value for p in params.kwonly_params}
    if isinstance(params.star_arg, cst.Param):
        stored_in_forward.add(params.star_arg.name.value)
    clash = setup_free & stored_in_forward - _stored_names(setup)
    if clash:
        raise Refuse(Code.CLASS_SHAPE, f"setup_context reads `{min(clash)}`, which forward also binds", setup)


def _name_the_parts(
    forward: cst.FunctionDef,
    setup: cst.FunctionDef,
    backward: cst.FunctionDef,
    facts: BodyFacts,
    returned: cst.Return,
    setup_params: tuple[str, str, str],
) -> _Join:
    """ctx and inputs renamed where forward uses the names; an ``x, y = inputs`` that re-binds
    forward's own parameters to themselves dropped."""
    ctx, inputs_name, output_name = setup_params
    params = forward.params
    positional = [p.name.value for p in params.params]
    forward_names = names_in(forward)
    taken = forward_names | names_in(setup) | names_in(backward)
    mapping: dict[str, str] = {}
    ctx_name = ctx if ctx not in forward_names else fresh(ctx, taken)
    if ctx_name != ctx:
        mapping[ctx] = ctx_name
    rebinds_params = any(p in facts.stores for p in positional)
    in_var = inputs_name if inputs_name not in forward_names else fresh(inputs_name, taken)
    if in_var != inputs_name:
        mapping[inputs_name] = in_var
    setup_body = setup.body
    assert isinstance(setup_body, cst.IndentedBlock)
    renamed_setup = rename(setup_body, mapping) if mapping else setup_body
    if not rebinds_params and not isinstance(params.star_arg, cst.Param):
        # `x, scale = inputs` re-binds forward's own parameters to themselves: drop it.
        kept = [st for st in renamed_setup.body if _unpacked_names(st, in_var) != positional]
        renamed_setup = renamed_setup.with_changes(body=kept)
    return _Join(forward, returned, ctx_name, in_var, output_name, renamed_setup, rebinds_params)


def _joined_function(join: _Join) -> cst.FunctionDef:
    """forward's body, ``output = <returned value>``, setup_context's body, ``return output``;
    ``inputs = (x, y)`` goes before forward's body when forward rebinds a parameter."""
    params = join.forward.params
    body = join.forward.body
    assert isinstance(body, cst.IndentedBlock)
    input_elements: list[cst.BaseElement] = [cst.Element(cst.Name(p.name.value)) for p in params.params]
    if isinstance(params.star_arg, cst.Param):
        input_elements.append(cst.StarredElement(cst.Name(params.star_arg.name.value)))
    inputs_stmt = cst.SimpleStatementLine(
        [cst.Assign([cst.AssignTarget(cst.Name(join.inputs))], cst.Tuple(input_elements))]
    )
    value = join.returned.value or cst.Name("None")
    output_stmt = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(join.output))], value)])
    uses_inputs = join.inputs in names_in(join.setup_body)
    new_body: list[cst.BaseStatement] = []
    if uses_inputs and join.rebinds_params:
        new_body.append(inputs_stmt)
    new_body.extend(body.body[:-1])
    new_body.append(output_stmt)
    if uses_inputs and not join.rebinds_params:
        new_body.append(inputs_stmt)
    new_body.extend(join.setup_body.body)
    new_body.append(cst.SimpleStatementLine([cst.Return(cst.Name(join.output))]))
    return join.forward.with_changes(
        params=params.with_changes(params=[cst.Param(cst.Name(join.ctx)), *params.params]),
        body=body.with_changes(body=new_body),
    )


def _output_items(join: _Join) -> tuple[str, list[str]] | None:
    """The first ``a, b = output`` of setup_context: which names the outputs are known by."""
    for stmt in join.setup_body.body:
        names = _unpacked_names(stmt, join.output)
        if names is not None:
            return join.output, names
    return None


class _Structural(cst.CSTVisitor):
    """Does an expression only pick values apart (no tensor computation)?"""

    def __init__(self) -> None:
        self.ok = True

    def visit_BinaryOperation(self, node) -> bool:
        self.ok = False
        return False

    def visit_UnaryOperation(self, node) -> bool:
        self.ok = False
        return False

    def visit_Comparison(self, node) -> bool:
        self.ok = False
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _STRUCTURAL_METHODS:
            return True
        if isinstance(func, cst.Attribute) and func.attr.value in _CTX_METHODS:
            return True
        if isinstance(func, cst.Name) and func.value in _STRUCTURAL_FUNCTIONS:
            return True
        self.ok = False
        return False

    def visit_Lambda(self, node) -> bool:
        self.ok = False
        return False


def _unpacked_names(stmt: cst.BaseStatement, source: str) -> list[str] | None:
    """``a, b = source`` at top level -> ["a", "b"]."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    small = stmt.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None
    if not (isinstance(small.value, cst.Name) and small.value.value == source):
        return None
    target = small.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    names = [
        el.value.value if isinstance(el, cst.Element) and isinstance(el.value, cst.Name) else ""
        for el in target.elements
    ]
    return names if all(names) else None


def _stored_names(func: cst.FunctionDef) -> set[str]:
    return set(analyse(func, None).stores)
