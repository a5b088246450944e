"""thunder's contract on traces: every trace it prints is a Python program that runs.

``trace.python()`` is executed in ``trace.python_ctx()``; a name the program calls that
neither that context, Python's builtins nor the program itself binds is a ``NameError``
waiting to happen (thunder 0.2.6's own ``autograd.Function`` lookaside leaves one:
``MyFunc_<id>_0``). Used by tests/tracers/test_thunder.py and tests/tracers/test_thunder_repro.py.

A computation trace's symbols run only inside a tracing context, so "running" one means
what thunder's maintainers do: ``thunder.jit(trace.python_callable())`` on the inputs the
jitted function's prologue computed (its arguments, plus the tensors it captured).
"""

from __future__ import annotations

import ast
import builtins
from typing import Any


def _root(node: ast.expr) -> str | None:
    """``torch`` for ``torch.ops.aten.add``, ``f`` for ``f``; None for ``g()()`` etc."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _bound(tree: ast.AST) -> set[str]:
    """Names the program binds itself: imports, functions, parameters, assignment targets."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
    return names


def called_names(source: str) -> set[str]:
    """The names a program calls (``f`` in ``f(x)``, ``torch`` in ``torch.add(x)``),
    decorators included."""
    tree = ast.parse(source)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            names.add(_root(node.func))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names |= {_root(d) for d in node.decorator_list}
    names.discard(None)
    return names


def unresolved_names(trace: Any) -> set[str]:
    """The names ``trace``'s program calls that nothing binds: not its ``python_ctx()``,
    not Python's builtins, not the program itself."""
    source = trace.python()
    known = set(trace.python_ctx()) | set(dir(builtins)) | _bound(ast.parse(source))
    return called_names(source) - known


def unresolved_by_trace(traces: Any) -> dict[str, set[str]]:
    """``{"<index>: <first line>": unresolved names}`` for every trace that has some."""
    out = {}
    for i, trace in enumerate(traces):
        missing = unresolved_names(trace)
        if missing:
            out[f"{i}: {str(trace).splitlines()[0]}"] = missing
    return out


def computation_inputs(jitted: Any, *args: Any, **kwargs: Any) -> tuple:
    """The arguments thunder passes the computation trace of ``jitted(*args, **kwargs)``
    (its prologue's result, from the cache entry those arguments hit)."""
    _, inputs, _ = jitted._lc_cd.get_computation_and_inputs(*args, **kwargs)
    return tuple(inputs)


def run_initial_trace(jitted: Any, *args: Any, decorators: bool = True, **kwargs: Any) -> Any:
    """The initial computation trace of ``jitted`` run as a program, under ``thunder.jit``,
    on the inputs thunder computes from ``args``.

    The program is decorated ``@torch.no_grad()`` (thunder differentiates it itself);
    ``decorators=False`` runs its body alone, which autograd can differentiate."""
    import thunder

    inputs = computation_inputs(jitted, *args, **kwargs)  # may trace anew: first
    trace = thunder.last_traces(jitted)[0]
    program = thunder.jit(trace.python_callable(include_decorators=decorators))
    return program(*inputs)


def flat_outputs(value: Any) -> list:
    """The tensors of a program's result (a computation trace returns them flat, in a tuple)."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat_outputs(v)]
    return []
