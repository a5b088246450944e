"""Static invariants every rewrite must keep, checked before anything is written.

A lowering bug that leaves a ``ctx`` read in a flat function, or reads a name the
original never read, produces code that compiles and fails only when run (with a
NameError, or worse, by reading a global of that name). The check here is
independent of how the lowering works: it compares the names each emitted function
reads from outside itself with the names the original's methods read from outside
themselves, using CPython's own symbol tables.
"""

from __future__ import annotations

import ast
import builtins
import symtable
import textwrap
from collections.abc import Iterable

import libcst as cst

from inliner.engine.codes import Code
from inliner.engine.model import CustomVJP, Refuse

_BUILTINS = frozenset(dir(builtins))


def outside_reads(function: cst.FunctionDef) -> set[str]:
    """Names ``function`` (with its decorators and defaults) reads from enclosing scopes.

    A ``nonlocal`` name belongs to an enclosing function, which the text alone lacks (and
    the symbol table rejects): the function is checked inside a stand-in one binding them."""
    code = textwrap.dedent(cst.Module(body=[function]).code)
    declared = sorted({n for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Nonlocal) for n in node.names})
    if declared:
        code = "def _inliner_enclosing():\n" + f"    {' = '.join(declared)} = None\n" + textwrap.indent(code, "    ")
    return _outside_reads(symtable.symtable(code, "<inliner>", "exec"))


def _outside_reads(table: symtable.SymbolTable) -> set[str]:
    names = set()
    for symbol in table.get_symbols():
        if not symbol.is_referenced():
            continue
        if table.get_type() == "module":
            if not (symbol.is_assigned() or symbol.is_imported()):
                names.add(symbol.get_name())
        elif symbol.is_global() or symbol.is_declared_global():
            names.add(symbol.get_name())
    for child in table.get_children():
        names |= _outside_reads(child)
    return names


def first_parameters(functions: Iterable[cst.FunctionDef]) -> set[str]:
    """The leading parameter (``ctx``, ``self``, ``cls``) of each original method."""
    out = set()
    for function in functions:
        params = [*function.params.posonly_params, *function.params.params]
        if params:
            out.add(params[0].name.value)
    return out


def check_no_new_names(
    vjp: CustomVJP,
    originals: Iterable[cst.FunctionDef],
    *,
    module_level: Iterable[str] = (),
) -> None:
    """Refuse the rewrite if an emitted function reads a name the original could not have.

    Allowed: what the original methods read from outside, builtins, and the names the
    rewrite itself binds at module level. A leading parameter of an original method
    (``ctx`` above all) is never allowed to be read from outside.
    """
    originals = list(originals)
    allowed = set().union(*(outside_reads(f) for f in originals)) | _BUILTINS | set(module_level)
    forbidden = first_parameters(originals)
    emitted = [vjp.fwd, vjp.bwd, *vjp.extra]
    allowed |= {f.name.value for f in emitted} | {vjp.name}
    for function in emitted:
        reads = outside_reads(function)
        bad = sorted((reads - allowed) | (reads & forbidden))
        if bad:
            names = ", ".join(f"`{n}`" for n in bad)
            raise Refuse(
                Code.INVARIANT_VIOLATION,
                f"internal error: the rewrite of `{function.name.value}` would read {names}, "
                "which nothing defines there (please report this as an inliner bug)",
                None,
            )
