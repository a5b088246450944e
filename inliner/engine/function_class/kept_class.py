"""Split a Function class body into what the flat form lowers and what a kept class holds.

A Function whose module uses it as a class (``F._helper(x)``, ``F.scale``, a stored
class, an ONNX ``symbolic``, a class decorator, a same-module subclass) keeps a plain
class of its name: everything but the autograd members stays in it, and its ``apply``
is the flat callable (``runtime.FlatClass``). What a kept class can never hold is a
member torch itself reads from an ``autograd.Function`` (``apply``, ``_backward_cls``,
``is_traceable``...): the class would no longer mean what it meant, so it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from inliner.engine.codes import Code
from inliner.engine.docstrings import is_cst_docstring
from inliner.engine.model import Refuse
from inliner.engine.names import names_in

AUTOGRAD_MEMBERS = frozenset({"forward", "backward", "vjp", "setup_context", "vmap", "jvp"})

#: What ``torch.autograd.Function`` itself defines (torch 2.13, ``dir(Function)`` less
#: ``dir(object)``), plus the class-level flags torch reads. A kept class defining one
#: would change what torch does with it; reading one from a kept class finds nothing.
FUNCTION_ATTRIBUTES = frozenset(
    {
        "_backward_cls", "_compiled_autograd_backward_state", "_compiled_autograd_key",
        "_compiled_autograd_should_lift", "_forward_cls", "_get_compiled_autograd_symints",
        "_input_metadata", "_is_pure_view", "_materialize_non_diff_grads", "_raw_saved_tensors",
        "_register_hook", "_register_hook_dict", "_sequence_nr", "_set_sequence_nr", "apply",
        "backward", "boxed_grads_call", "clear_saved_tensors_on_access", "dirty_tensors",
        "forward", "generate_vmap_rule", "is_traceable", "jvp", "mark_dirty",
        "mark_non_differentiable", "mark_shared_storage", "materialize_grads",
        "maybe_clear_saved_tensors", "metadata", "name", "needs_input_grad", "next_functions",
        "non_differentiable", "register_hook", "register_prehook", "requires_grad",
        "save_for_backward", "save_for_forward", "saved_for_forward", "saved_tensors",
        "saved_variables", "set_materialize_grads", "setup_context", "to_save", "vjp", "vmap",
    }
)  # fmt: skip

#: Dunder attributes a plain class answers as the Function did.
PLAIN_DUNDERS = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})

_KEPT_SMALL = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr, cst.Import, cst.ImportFrom)


@dataclass
class ClassBody:
    """A Function class body, sorted: the members the lowering takes, the statements a kept class keeps."""

    members: dict[str, cst.FunctionDef] = field(default_factory=dict)
    docstring: cst.SimpleStatementLine | None = None
    generate_vmap_rule: cst.BaseExpression | None = None
    kept: list[cst.BaseStatement] = field(default_factory=list)  # the docstring included
    symbolic: bool = False  # the body binds ``symbolic``

    @property
    def needs_class(self) -> bool:
        """Does anything besides the docstring stay?"""
        return any(statement is not self.docstring for statement in self.kept)


def split_class_body(cls: cst.ClassDef, *, is_classmethod) -> ClassBody:
    """Sort ``cls``'s body; refuse what neither the flat form nor a kept class can carry."""
    name = cls.name.value
    out = ClassBody()
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for index, stmt in enumerate(body):
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            member = stmt.name.value
            if isinstance(stmt, cst.FunctionDef) and member in AUTOGRAD_MEMBERS:
                if member in out.members:
                    raise Refuse(Code.CLASS_SHAPE, f"defines `{member}` twice", stmt)
                out.members[member] = stmt
                continue
            _check_kept_name(name, member, stmt)
            if member == "symbolic":
                if isinstance(stmt, cst.ClassDef) or any(is_classmethod(d.decorator) for d in stmt.decorators):
                    raise Refuse(Code.CLASS_SHAPE, "its ONNX `symbolic` is not a staticmethod", stmt)
                out.symbolic = True
            out.kept.append(stmt)
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            kept_smalls = [s for s in stmt.body if _sort_small(out, name, s, is_docstring=index == 0)]
            if kept_smalls:
                line = stmt.with_changes(body=kept_smalls) if len(kept_smalls) != len(stmt.body) else stmt
                if index == 0 and out.generate_vmap_rule is None and is_cst_docstring(stmt.body[0]):
                    out.docstring = line
                out.kept.append(line)
            continue
        raise Refuse(Code.CLASS_SHAPE, "has a class-level statement the flat form cannot carry", stmt)
    _check_class_time_reads(name, out)
    return out


def _sort_small(out: ClassBody, name: str, small: cst.BaseSmallStatement, *, is_docstring: bool) -> bool:
    """Record one class-level small statement; True if a kept class keeps it."""
    if isinstance(small, cst.Pass):
        return False
    if is_docstring and is_cst_docstring(small):
        return True
    if (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and small.targets[0].target.value == "generate_vmap_rule"
    ):
        out.generate_vmap_rule = small.value
        return False
    if not isinstance(small, _KEPT_SMALL):
        raise Refuse(Code.CLASS_SHAPE, "has a class-level statement the flat form cannot carry", small)
    for bound in _bound_names(small):
        _check_kept_name(name, bound, small)
        if bound == "symbolic":
            out.symbolic = True
    return True


def _check_kept_name(cls_name: str, member: str, node: cst.CSTNode) -> None:
    if member in FUNCTION_ATTRIBUTES:
        raise Refuse(Code.CLASS_SHAPE, f"defines `{member}`, which torch.autograd.Function itself uses", node)
    if member.startswith("__") and member.endswith("__"):
        raise Refuse(
            Code.CLASS_SHAPE, f"defines `{member}`, which a plain class would not treat as the Function did", node
        )


def _bound_names(small: cst.BaseSmallStatement) -> set[str]:
    if isinstance(small, cst.Assign):
        return set().union(*(names_in(t.target) for t in small.targets))
    if isinstance(small, (cst.AnnAssign, cst.AugAssign)):
        return names_in(small.target)
    if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
        return {
            (a.asname.name.value if a.asname and isinstance(a.asname.name, cst.Name) else _import_head(a))
            for a in small.names
        }
    if isinstance(small, cst.ImportFrom):
        raise Refuse(Code.CLASS_SHAPE, "a class-level `import *`", small)
    return set()


def _import_head(alias: cst.ImportAlias) -> str:
    name: cst.BaseExpression = alias.name
    while isinstance(name, cst.Attribute):
        name = name.value
    assert isinstance(name, cst.Name)
    return name.value


def _check_class_time_reads(name: str, out: ClassBody) -> None:
    """Code run while the class body runs (class-level statements, decorators, defaults)
    may not read a member the flat form removes from the class."""
    removed = set(out.members) | ({"generate_vmap_rule"} if out.generate_vmap_rule is not None else set())
    if not removed:
        return
    for stmt in out.kept:
        if isinstance(stmt, cst.FunctionDef):
            parts: list[cst.CSTNode] = [*stmt.decorators, *_defaults_and_annotations(stmt)]
        elif isinstance(stmt, cst.ClassDef):
            parts = [*stmt.decorators, *stmt.bases, *stmt.keywords]
        else:
            parts = [stmt]
        read = set().union(*(names_in(p) for p in parts)) & removed if parts else set()
        if read:
            raise Refuse(
                Code.CLASS_SHAPE, f"its class body reads `{sorted(read)[0]}`, which the flat form removes", stmt
            )


def _defaults_and_annotations(func: cst.FunctionDef) -> list[cst.CSTNode]:
    params = func.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            every.append(star)
    out: list[cst.CSTNode] = [p.default for p in every if p.default is not None]
    out += [p.annotation for p in every if p.annotation is not None]
    if func.returns is not None:
        out.append(func.returns)
    return out
