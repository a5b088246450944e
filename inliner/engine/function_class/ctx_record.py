"""The ctx-record strategy: lower a Function whose ctx has no spelling as named residuals.

The named lowering (``lower_function``) turns each ``ctx.attr`` into a local of fwd and
a residual of bwd. When the ctx flow cannot be spelled that way (ctx handed to a
helper, an attribute set on some paths only, backward writing to ctx, tuple targets
mixing ctx attributes and locals, forward reading ``ctx.needs_input_grad``, marks
and saves made conditionally, ...), this strategy keeps ctx as an object: fwd starts
with ``state = Record("Name")``, its body uses ``state`` exactly where the original
used ctx, and every return hands ``state`` back as the one residual; bwd (and jvp)
open it and may read and write it as the original's backward did its ctx. The
runtime's ``Record`` (``inliner.runtime._record``) answers what a ctx answers and the carrier
replays its saves and marks on the real ctx.

It is the fallback, never the default: ``FALLBACK_CODES`` are the refusals of the
named lowering that send a class here, and a use of ctx a record cannot stand in
for (an attribute only torch's ctx has, ctx stored somewhere or handed to code the
engine cannot read) is refused here with its own diagnostic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

import libcst as cst

from inliner.engine.analysis.ctxflow import always_returns, analyse, is_binding, is_truth_test
from inliner.engine.codes import Code
from inliner.engine.docstrings import after_docstring
from inliner.engine.function_class.signature import first_param, param_names, params_without_first
from inliner.engine.model import Refuse, VJPSpec
from inliner.engine.names import fresh, names_in, rename, unpack_statement
from inliner.engine.walk import walk_code

#: Refusals of the named lowering a record lowering may still flatten: ctx dynamics.
FALLBACK_CODES = frozenset(
    {
        Code.CTX_UNSUPPORTED,
        Code.CTX_ESCAPES,
        Code.CTX_ATTRIBUTE_ON_SOME_PATHS,
        Code.BACKWARD_WRITES_CTX,
        Code.MARKS_UNMATCHED,
        Code.CONDITIONAL_MATERIALIZE_GRADS,
        Code.CONDITIONAL_SAVE_FOR_FORWARD,
    }
)

#: Methods of torch's ``FunctionCtx`` a record runs itself (only forward may call them).
RECORD_METHODS = frozenset(
    {
        "save_for_backward",
        "save_for_forward",
        "mark_dirty",
        "mark_non_differentiable",
        "set_materialize_grads",
        "mark_shared_storage",
    }
)
#: Attributes a record answers like torch's ctx but that no code may assign.
READ_ONLY = frozenset(
    {
        "saved_tensors",
        "saved_variables",
        "needs_input_grad",
        "to_save",
        "saved_for_forward",
        "dirty_tensors",
        "non_differentiable",
        "materialize_grads",
    }
)
#: What autograd has yet to process: in jvp a record holds other values than torch's ctx.
_PENDING = frozenset({"to_save", "saved_for_forward", "dirty_tensors", "non_differentiable"})
#: What only torch's ctx (an autograd node) has; ``_dtype``/``_fwd_used_autocast`` are what
#: ``custom_fwd`` sets on the real ctx.
TORCH_ONLY = frozenset(
    {
        "apply",
        "apply_boxed",
        "apply_jvp",
        "maybe_clear_saved_tensors",
        "metadata",
        "name",
        "next_functions",
        "register_hook",
        "register_prehook",
        "requires_grad",
        "_autograd_function_id",
        "_compiled_autograd_backward_state",
        "_compiled_autograd_key",
        "_dtype",
        "_forward_cls",
        "_fwd_used_autocast",
        "_get_compiled_autograd_symints",
        "_get_user_fn",
        "_input_metadata",
        "_is_pure_view",
        "_materialize_non_diff_grads",
        "_raw_saved_tensors",
        "_register_hook",
        "_register_hook_dict",
        "_sequence_nr",
        "_set_sequence_nr",
    }
)
_ATTRIBUTE_BUILTINS = {"getattr": "read", "hasattr": "read", "setattr": "write", "delattr": "delete"}
_LAZY_SCOPES = (cst.FunctionDef, cst.Lambda, cst.GeneratorExp)

#: ``resolve(name, from_helper)``: what a call of ``name`` reaches, seen from the class's
#: methods (or, ``from_helper``, from a module-level helper): ``("def", FunctionDef)`` for a
#: plain function defined once at module level, ``("builtin", None)`` for a builtin no
#: module binding shadows, else None.
Resolve = Callable[[str, bool], "tuple[str, cst.FunctionDef | None] | None"]


@dataclass
class CtxFacts:
    """What one method (and the helpers it hands ctx to) does with ctx."""

    reads_needs_input_grad: bool = False
    #: attributes backward (or jvp) writes, as ``ctx.attr`` (or ``helper(): ctx.attr``)
    writes: list[str] = field(default_factory=list)
    #: those of ``writes`` that delete the attribute (``del ctx.attr``, ``delattr``)
    deletes: list[str] = field(default_factory=list)


class _CtxChecker(cst.CSTVisitor):
    """Every use of ``ctx`` in one function must be one a record stands in for."""

    def __init__(
        self, func: cst.FunctionDef, ctx: str, role: str, cls: str, context: _Context, call_site: cst.CSTNode | None
    ) -> None:
        self.func = func
        self.ctx = ctx
        self.role = role  # "forward" | "setup" | "backward" | "jvp"
        self.cls = cls
        self.context = context
        self.call_site = call_site  # in a helper: the call in the class that handed ctx over
        self.stack: list[cst.CSTNode] = []
        # names bound anywhere in the function: a call through one of them is not a builtin
        # or a module-level helper
        self.locals = set(analyse(func, None).stores) | _all_param_names(func)

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)
        if type(node) is cst.Name and node.value == self.ctx:  # libcst node classes are final
            self._name(node, self.stack[:-1])
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def _refuse(self, code: Code, reason: str, node: cst.CSTNode) -> NoReturn:
        where = f" (in `{self.func.name.value}`, which {self.cls} hands `{self.ctx}` to)" if self.call_site else ""
        raise Refuse(code, f"{reason}{where}", self.call_site or node)

    def _name(self, node: cst.Name, parents: list[cst.CSTNode]) -> None:
        parent = parents[-1] if parents else None
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return  # `obj.ctx`: an attribute name, not our ctx
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return  # `f(ctx=...)`: a keyword
        if parent is self.func:
            return  # the function's own name
        if is_binding(node, parents):
            own = isinstance(parent, cst.Param) and len(parents) >= 3 and parents[-3] is self.func
            if not own:
                self._refuse(Code.CTX_UNSUPPORTED, f"`{self.ctx}` is rebound or shadowed", node)
            return
        if any(isinstance(p, cst.ClassDef) for p in parents):
            self._refuse(Code.CTX_ESCAPES, f"`{self.ctx}` is used inside a nested class", node)
        if self.role in ("forward", "setup") and any(
            isinstance(p, _LAZY_SCOPES) and p is not self.func for p in parents
        ):
            # under torch.func every level gets its own record; a closure made in forward
            # would keep the one fwd made (backward's closures see their level's own)
            self._refuse(
                Code.CTX_UNSUPPORTED, f"`{self.ctx}` is captured by a function or generator made in forward", node
            )
        if any(isinstance(p, (cst.Global, cst.Nonlocal)) for p in parents):
            self._refuse(Code.CTX_UNSUPPORTED, f"`{self.ctx}` is declared global or nonlocal", node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            self._attribute(parent, parents[:-1])
            return
        if isinstance(parent, cst.Arg) and len(parents) >= 2 and isinstance(parents[-2], cst.Call):
            self._argument(parents[-2], parent)
            return
        if is_truth_test(node, parents):
            return  # the record is as truthy (and as little None) as ctx
        self._refuse(Code.CTX_ESCAPES, f"`{self.ctx}` is stored elsewhere or used as a value", node)

    # -- ctx.attr ------------------------------------------------------------------
    def _attribute(self, attr: cst.Attribute, parents: list[cst.CSTNode]) -> None:
        parent = parents[-1] if parents else None
        if isinstance(parent, cst.Call) and parent.func is attr:
            kind = "call"
        elif _is_target(attr, parents):
            kind = "delete" if any(isinstance(p, cst.Del) for p in parents) else "write"
        else:
            kind = "read"
        self._use(attr.attr.value, kind, attr)

    def _use(self, name: str, kind: str, node: cst.CSTNode) -> None:
        ctx = self.ctx
        deletes = kind == "delete"
        kind = "write" if deletes else kind
        if (name.startswith("__") and name.endswith("__")) or name.startswith("_inliner_"):
            self._refuse(Code.CTX_UNSUPPORTED, f"`{ctx}.{name}` is not an attribute a record can stand in for", node)
        if name in TORCH_ONLY:
            self._refuse(
                Code.CTX_UNSUPPORTED,
                f"`{ctx}.{name}` is torch's own (an autograd node's), which a record cannot answer",
                node,
            )
        if kind == "write" and (name in READ_ONLY or name in RECORD_METHODS):
            self._refuse(Code.CTX_TORCH_ATTRIBUTE, f"`{ctx}.{name}` is assigned, an attribute torch itself uses", node)
        if name in RECORD_METHODS and self.role not in ("forward", "setup"):
            self._refuse(Code.CTX_UNSUPPORTED, f"{self.role} uses `{ctx}.{name}`, which only forward may call", node)
        if name in _PENDING and self.role == "jvp":
            self._refuse(Code.CTX_UNSUPPORTED, f"jvp reads `{ctx}.{name}`, which a record no longer holds there", node)
        if name == "needs_input_grad" and self.role in ("forward", "setup"):
            if self.role == "setup":
                self._refuse(
                    Code.CTX_UNSUPPORTED,
                    f"setup_context reads `{ctx}.needs_input_grad` (it differs per torch.func level)",
                    node,
                )
            self.context.facts.reads_needs_input_grad = True
        if kind == "write" and self.role in ("backward", "jvp"):
            where = f"{self.func.name.value}(): " if self.call_site else ""
            self.context.facts.writes.append(f"{where}{ctx}.{name}")
            if deletes:
                self.context.facts.deletes.append(f"{where}{ctx}.{name}")

    # -- f(..., ctx, ...) ---------------------------------------------------------------
    def _argument(self, call: cst.Call, arg: cst.Arg) -> None:
        func, here = call.func, arg.value
        target = self._resolve(func)
        builtin = func.value if target is not None and target[0] == "builtin" and isinstance(func, cst.Name) else None
        if builtin in _ATTRIBUTE_BUILTINS:
            key = call.args[1].value if len(call.args) >= 2 else None
            plain = all(not a.star and a.keyword is None for a in call.args)
            if call.args[0] is arg and plain and isinstance(key, cst.SimpleString):
                name = key.evaluated_value
                if isinstance(name, str) and name.isidentifier():
                    self._use(name, _ATTRIBUTE_BUILTINS[builtin], call)
                    return
            self._refuse(
                Code.CTX_ESCAPES,
                f"`{builtin}` is given `{self.ctx}` with a name the engine cannot read statically",
                here,
            )
        if arg.star:
            self._refuse(Code.CTX_ESCAPES, f"`{self.ctx}` is unpacked into a call", here)
        helper = target[1] if target is not None and target[0] == "def" else None
        if helper is None or helper.decorators or helper.asynchronous is not None:
            callee = _callee_text(func)
            self._refuse(
                Code.CTX_ESCAPES, f"`{self.ctx}` is passed to `{callee}`, whose body the engine cannot check", here
            )
        param = _receiving_parameter(helper, call, arg)
        if param is None:
            self._refuse(
                Code.CTX_ESCAPES,
                f"`{self.ctx}` is passed to `{helper.name.value}` in a way the engine cannot follow",
                here,
            )
        self.context.check_helper(helper, param, self.role, self.call_site or here)

    def _resolve(self, func: cst.BaseExpression) -> tuple[str, cst.FunctionDef | None] | None:
        if not isinstance(func, cst.Name) or func.value in self.locals:
            return None
        return self.context.resolve(func.value, self.call_site is not None)


def _all_param_names(func: cst.FunctionDef) -> set[str]:
    """The parameters of ``func`` and of every function and lambda inside it."""
    params = _Params()
    walk_code(func, params)
    return params.names


class _Params(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    # on_visit and on_leave themselves: libcst's look up a visit_/leave_ method per node
    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) is cst.Param:  # libcst's node classes are final
            self.names.add(node.name.value)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        pass


def _is_target(attr: cst.Attribute, parents: list[cst.CSTNode]) -> bool:
    """Is ``ctx.attr`` assigned, augmented, deleted or bound by for/with/except?"""
    child: cst.CSTNode = attr
    for p in reversed(parents):
        if isinstance(p, (cst.Element, cst.Tuple, cst.List, cst.StarredElement)):
            child = p
            continue
        if isinstance(p, cst.AssignTarget):
            return p.target is child
        if isinstance(p, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.Del)):
            return p.target is child
        if isinstance(p, cst.AsName):
            return p.name is child
        return False
    return False


def _callee_text(func: cst.BaseExpression) -> str:
    text = cst.Module(body=[]).code_for_node(func)
    return text if len(text) <= 40 else text[:37] + "..."


def _receiving_parameter(helper: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    """The helper's parameter bound to ``arg`` (positional or by keyword), if plainly one."""
    params = helper.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    if any(a.star for a in call.args):
        return None
    if arg.keyword is not None:
        name = arg.keyword.value
        keywords = [p.name.value for p in (*params.params, *params.kwonly_params)]
        return name if name in keywords else None
    index = [a for a in call.args if a.keyword is None].index(arg)
    return positional[index] if index < len(positional) else None


@dataclass
class _Context:
    """What the checks of one class share: the facts found, how to reach helpers."""

    cls: str
    resolve: Resolve
    facts: CtxFacts = field(default_factory=CtxFacts)
    checked: set[tuple[str, str, str]] = field(default_factory=set)

    def check_helper(self, helper: cst.FunctionDef, param: str, role: str, call_site: cst.CSTNode) -> None:
        key = (helper.name.value, param, role)
        if key in self.checked:
            return
        self.checked.add(key)
        if len(self.checked) > 32:
            raise Refuse(Code.CTX_ESCAPES, "ctx is handed through too many helpers to check", call_site)
        if analyse(helper, None).has_yield:
            raise Refuse(Code.CTX_ESCAPES, f"`{helper.name.value}` (given ctx) is a generator", call_site)
        check_ctx_uses(helper, param, role, self, call_site=call_site)


def check_ctx_uses(
    func: cst.FunctionDef, ctx: str, role: str, context: _Context, *, call_site: cst.CSTNode | None = None
) -> None:
    walk_code(func, _CtxChecker(func, ctx, role, context.cls, context, call_site))


# -- the lowering ------------------------------------------------------------------


@dataclass
class RecordLowering:
    """Inputs of the strategy: the (combined-style) forward, backward and optional jvp."""

    name: str
    forward: cst.FunctionDef
    backward: cst.FunctionDef
    jvp: cst.FunctionDef | None
    record_name: str  # what the runtime's Record is called in the module
    resolve: Resolve
    setup_style: bool = False  # the forward is forward + setup_context joined
    reason: str = ""  # why the named lowering could not spell ctx

    def lower(
        self, fwd_name: str, bwd_name: str, jvp_name: str = ""
    ) -> tuple[cst.FunctionDef, cst.FunctionDef, VJPSpec, list[cst.FunctionDef]]:
        name = self.name
        context = _Context(name, self.resolve)
        ctx = first_param(self.forward, name)
        check_ctx_uses(self.forward, ctx, "setup" if self.setup_style else "forward", context)
        needs_input_grad = context.facts.reads_needs_input_grad
        bwd_ctx = first_param(self.backward, name)
        check_ctx_uses(self.backward, bwd_ctx, "backward", context)
        if self.jvp is not None:
            check_ctx_uses(self.jvp, first_param(self.jvp, name), "jvp", context)
        fwd_def = self._forward(fwd_name, ctx, needs_input_grad)
        bwd_def = _reader(self.backward, bwd_name, bwd_ctx, name)
        extra = []
        if self.jvp is not None:
            extra.append(_reader(self.jvp, jvp_name, first_param(self.jvp, name), name))
        spec = VJPSpec(
            ctx_record=True,
            fwd_needs_input_grad=needs_input_grad,
            fill_defaults=self.setup_style,
            jvp=jvp_name if self.jvp is not None else None,
            record_reason=self.reason,
            backward_writes_ctx=tuple(dict.fromkeys(context.facts.writes)),
            backward_deletes_ctx=tuple(dict.fromkeys(context.facts.deletes)),
        )
        return fwd_def, bwd_def, spec, extra

    def _forward(self, fwd_name: str, ctx: str, needs_input_grad: bool) -> cst.FunctionDef:
        func = self.forward
        facts = analyse(func, None)
        if facts.has_yield:
            raise Refuse(Code.CLASS_SHAPE, "forward is a generator or coroutine", func)
        params = params_without_first(func.params)
        if needs_input_grad and "needs_input_grad" in param_names(params):
            raise Refuse(
                Code.CTX_UNSUPPORTED, f"forward reads `{ctx}.needs_input_grad` and has a parameter of that name", func
            )
        state = fresh("state", names_in(func))
        residuals = cst.Tuple([cst.Element(cst.Name(state))])
        returns = {ret for ret, _ in facts.returns}
        body = func.body.visit(_ReturnsWithRecord(returns, residuals))
        assert isinstance(body, cst.IndentedBlock)
        body = rename(body, {ctx: state})
        statements = list(body.body)
        args = [cst.Arg(cst.SimpleString(f'"{self.name}"'))]
        if needs_input_grad:
            args.append(cst.Arg(cst.Name("needs_input_grad")))
            params = params.with_changes(
                star_arg=params.star_arg if isinstance(params.star_arg, cst.Param) else cst.ParamStar(),
                kwonly_params=[*params.kwonly_params, cst.Param(cst.Name("needs_input_grad"))],
            )
        create = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(state))], cst.Call(cst.Name(self.record_name), args))]
        )
        statements.insert(after_docstring(statements), create)
        if not always_returns(statements):
            statements.append(cst.SimpleStatementLine([_with_record(cst.Return(None), residuals)]))
        return cst.FunctionDef(
            name=cst.Name(fwd_name),
            params=params,
            body=body.with_changes(body=statements),
            leading_lines=func.leading_lines,
        )


def _reader(func: cst.FunctionDef, new_name: str, ctx: str, cls: str) -> cst.FunctionDef:
    """backward (or jvp) ``(ctx, *grads)`` -> ``(residuals, *grads)`` opening ``(state,) = residuals``."""
    if analyse(func, None).has_yield:
        raise Refuse(Code.CLASS_SHAPE, f"{func.name.value} is a generator or coroutine", func)
    taken = names_in(func)
    state = fresh("state", set(taken))
    residuals_name = fresh("residuals", taken | {state})
    body = rename(func.body, {ctx: state})
    assert isinstance(body, cst.IndentedBlock)
    statements = list(body.body)
    statements.insert(after_docstring(statements), unpack_statement([state], residuals_name))
    grads = params_without_first(func.params)
    first = cst.Param(cst.Name(residuals_name))
    if grads.posonly_params:
        params = grads.with_changes(posonly_params=[first, *grads.posonly_params])
    else:
        params = grads.with_changes(params=[first, *grads.params])
    return cst.FunctionDef(
        name=cst.Name(new_name),
        params=params,
        body=body.with_changes(body=statements),
        leading_lines=func.leading_lines,
    )


class _ReturnsWithRecord(cst.CSTTransformer):
    """``return value`` -> ``return value, (state,)`` for forward's own returns."""

    def __init__(self, returns: set[cst.Return], residuals: cst.Tuple) -> None:
        self.returns = returns
        self.residuals = residuals

    def leave_Return(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        if original_node not in self.returns:
            return updated_node
        return _with_record(updated_node, self.residuals)


def _with_record(ret: cst.Return, residuals: cst.Tuple) -> cst.Return:
    value = ret.value if ret.value is not None else cst.Name("None")
    if isinstance(value, cst.Tuple) and not value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return ret.with_changes(
        value=cst.Tuple([cst.Element(value), cst.Element(residuals)], lpar=[], rpar=[]),
        whitespace_after_return=cst.SimpleWhitespace(" "),
    )
