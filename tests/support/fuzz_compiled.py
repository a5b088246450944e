"""The fuzz oracle's compiled comparison (issue 27): original and rewrite under torch.compile.

On a deterministic share of generated modules (``takes_compiled``: a hash of the source,
so a replayed module gets the same treatment; always with ``INLINER_FUZZ_COMPILE=1``),
a few scenarios of each module are compiled with ``torch.compile(backend="aot_eager")``
and called ``CALLS`` times. Per call the outputs and the custom gradients (backwards are
deliberately not the true derivative) of the rewrite must equal the compiled original's,
the side-effect log after the calls must be the same, an error of the original must be
an error of the rewrite, and the rewrite may not break the graph more often than the
original unless one of its flat callables is an eager island by design
(``compile_path == "island"``). Dynamo is reset before and after each compiled run.
"""

from __future__ import annotations

import ast
import os
import warnings
import zlib
from typing import Any

import torch

from tests.support.golden import side_effects
from tests.support.harness import scenarios

CALLS = 3
#: one module in SHARE takes the compiled comparison in the CI profile
SHARE = 16
#: scenarios compiled per module: the first of these prefixes found, each
PREFERRED = ("scenario_basic", "scenario_object_argument", "scenario_flow")
FORCE = "INLINER_FUZZ_COMPILE"
#: known differences under torch.compile (each pinned by a strict xfail in
#: tests/fuzz/test_fuzz_regressions.py): a module whose source holds the text is not compared
KNOWN_COMPILED_GAPS: dict[str, str] = {}


def takes_compiled(source: str) -> bool:
    """Whether the module ``source`` takes the compiled comparison."""
    if os.environ.get(FORCE) == "1":
        return True
    if os.environ.get(FORCE) == "0" or any(text in source for text in KNOWN_COMPILED_GAPS):
        return False
    return zlib.crc32(source.encode()) % SHARE == 0


def chosen_scenarios(module: Any) -> list[str]:
    names = scenarios(module)
    chosen = []
    for prefix in PREFERRED:
        found = [n for n in names if n.startswith(prefix)]
        if found:
            chosen.append(found[0])
    return chosen


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _one_call(compiled: Any) -> dict[str, Any]:
    """Outputs (value and requires_grad) and seeded-cotangent gradients of one call."""
    record: dict[str, Any] = {}
    try:
        leaves, outputs = compiled()
    except Exception as exc:
        return {"error": type(exc).__name__}
    outs = _tensors(outputs)
    record["outputs"] = [(t.detach().clone(), t.requires_grad) for t in outs]
    differentiable = [t for t in outs if t.requires_grad and t.is_floating_point()]
    if not differentiable:
        return record
    generator = torch.Generator().manual_seed(1)
    total = sum((t * torch.randn(t.shape, generator=generator, dtype=t.dtype)).sum() for t in differentiable)
    try:
        grads = torch.autograd.grad(total, leaves, allow_unused=True)
    except Exception as exc:
        record["backward_error"] = type(exc).__name__
        return record
    record["grads"] = [None if g is None else g.detach().clone() for g in grads]
    return record


def compiled_run(module: Any, name: str, *, compiled: bool = True) -> dict[str, Any]:
    """``CALLS`` calls of scenario ``name`` (compiled, or eager for the reference):
    per-call records, graph breaks, and the side-effect log they leave."""
    import torch._dynamo
    from torch._dynamo.utils import counters

    effects = side_effects(module)
    if effects is not None:
        effects[0]()
    torch._dynamo.reset()
    counters.clear()
    calls = []
    try:
        scenario = getattr(module, name)
        run = torch.compile(scenario, backend="aot_eager") if compiled else scenario
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k in range(CALLS):
                torch.manual_seed(k)
                calls.append(_one_call(run))
    finally:
        breaks = sum(counters["graph_break"].values())
        # the split path refusing a call while tracing (an output that is an input, a record
        # setting materialize_grads): an island found at trace time, with its own graph break
        fallback = any(_FALLBACK in reason for reason in counters["graph_break"])
        torch._dynamo.reset()
    log = _snapshot(effects[1]()) if effects is not None else None
    return {"calls": calls, "breaks": breaks, "log": log, "fallback": fallback}


_FALLBACK = "runs eagerly under torch.compile"  # inliner.runtime._fallback.eager_message


def _snapshot(log: Any) -> Any:
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in log]


def islands(module: Any) -> list[str]:
    """The module's flat callables that dynamo meets as eager islands."""
    import torch._dynamo  # noqa: F401  (sets compile_path on flat callables made before it)

    return [n for n, v in vars(module).items() if getattr(v, "compile_path", None) == "island"]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if not a.is_floating_point():
            return torch.equal(a, b)
        return torch.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def made_inside_functions(source: str) -> bool:
    """Whether the rewrite makes a flat callable inside a function (a factory's Function):
    ``custom_vjp`` then runs inside the compiled call, where it breaks the graph more often
    than the original's class statement does (a known gap, issue 27; see the report)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call) and getattr(inner.func, "id", None) == "custom_vjp":
                    return True
    return False


def _raised(record: dict[str, Any]) -> bool:
    return "error" in record or "backward_error" in record


def _call_failure(k: int, compiled: dict, eager: dict, got: dict) -> str | None:
    """The rewrite's compiled call ``k`` must be the original's, compiled or eager (where
    torch.compile of the original departs from its own eager behaviour, or raises where
    eager did not, the rewrite may keep the eager behaviour); an eager error stays one."""
    if _raised(eager):
        return None if _raised(got) else f"call {k + 1}: the original raised {eager}, the rewrite did not"
    if _raised(got):
        return None if _raised(compiled) else f"call {k + 1}: the rewrite raised {got}, the original did not"
    if not (_same(compiled, got) or _same(eager, got)):
        return f"call {k + 1}: {_brief(compiled)} != {_brief(got)}"
    return None


def compiled_failures(original: Any, rewritten: Any, rewritten_source: str) -> list[str]:
    """``compiled-differs[...]`` and ``compiled-more-graph-breaks[...]`` failures of the
    rewritten module against the original."""
    failures = []
    island = islands(rewritten)
    factory = made_inside_functions(rewritten_source)
    for name in chosen_scenarios(original):
        want = compiled_run(original, name)
        eager = compiled_run(original, name, compiled=False)
        got = compiled_run(rewritten, name)
        where = f"compiled-differs[{name.removeprefix('scenario_')}]"
        problems = [
            _call_failure(k, *records) for k, records in enumerate(zip(want["calls"], eager["calls"], got["calls"]))
        ]
        problems = [p for p in problems if p is not None]
        if problems:
            failures.append(f"{where}: {problems[0]}")
            continue
        if any(_raised(a) for a in want["calls"] + eager["calls"]):
            continue
        if not (_same(want["log"], got["log"]) or _same(eager["log"], got["log"])):
            failures.append(f"{where}: side-effect log {want['log']} != {got['log']}")
        if got["breaks"] > want["breaks"] and not island and not factory and not got["fallback"]:
            failures.append(f"compiled-more-graph-breaks[{name}]: {got['breaks']} > {want['breaks']} (no island)")
    return failures


def _brief(record: dict[str, Any]) -> str:
    text = repr(record)
    return text if len(text) < 300 else text[:300] + "..."
