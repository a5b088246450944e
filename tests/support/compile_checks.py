"""torch.compile checks that look past the first call: outputs, custom gradients and Python
side effects over three calls, and what ``fullgraph=True`` says.

Shared by tests/support/tracer_cases.py (the ``compile_*`` rows of the tracer matrix, over the
golden cases) and tests/runtime/test_compile_kinds.py (hand-written Functions whose bodies have
side effects, leave torch, or take objects). Each check takes plain callables:

- ``fn(*tensors)``: the traced body, calling the Function under test;
- ``make_inputs()``: fresh, seeded inputs (those with ``requires_grad`` are differentiated);
- ``log``: the list the bodies append their side effects to, or None.

A check never raises for a tracer failure; it returns a :class:`Result`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

CALLS = 3


@dataclass
class Result:
    ok: bool
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = re.sub(r"\s+", " ", text)
    return f"{type(exc).__name__}: {text[:300]}"


def flat_tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat_tensors(v)]
    return []


def _loss(outputs: Any) -> torch.Tensor | None:
    """A fixed, output-weighted loss (weights differ per output so a swapped gradient shows)."""
    floats = [t for t in flat_tensors(outputs) if t.is_floating_point() and t.requires_grad]
    if not floats:
        return None
    return sum(((t * (k + 1.5)).sum() for k, t in enumerate(floats)), torch.zeros(()))


def call_and_differentiate(fn: Callable, inputs: tuple) -> tuple[list, list]:
    """(detached tensor outputs, each keeping its ``requires_grad``; gradients of the inputs
    that require grad, None where unused)."""
    outputs = fn(*inputs)
    leaves = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    loss = _loss(outputs)
    grads: list = [None] * len(leaves)
    if loss is not None and leaves:
        grads = list(torch.autograd.grad(loss, leaves, allow_unused=True))
    kept = [t.detach().requires_grad_(t.requires_grad) for t in flat_tensors(outputs)]
    return kept, [None if g is None else g.detach() for g in grads]


def same(a: list, b: list, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is None or y is None:
            if x is not y:
                return False
        elif not _same_tensor(x, y, rtol, atol):
            return False
    return True


def _same_tensor(x: torch.Tensor, y: torch.Tensor, rtol: float, atol: float) -> bool:
    if (x.shape, x.dtype, x.requires_grad) != (y.shape, y.dtype, y.requires_grad):
        return False
    return torch.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True)


def log_snapshot(log: list | None) -> list | None:
    """What a log holds, comparable across runs (tensors by value)."""
    if log is None:
        return None
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in log]


def same_log(a: list | None, b: list | None) -> bool:
    if a is None or b is None:
        return a is b
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and torch.equal(x, y)):
                return False
        elif x != y:
            return False
    return True


def eager_calls(fn: Callable, make_inputs: Callable, log: list | None) -> tuple[list, list | None]:
    """``CALLS`` eager calls: per call (outputs, gradients), then the log they left."""
    if log is not None:
        log.clear()
    results = [call_and_differentiate(fn, make_inputs()) for _ in range(CALLS)]
    snapshot = log_snapshot(log)
    if log is not None:
        log.clear()
    return results, snapshot


def compiled_calls(
    fn: Callable,
    make_inputs: Callable,
    backend: str | Callable,
    expected: list,
    log: list | None = None,
    expected_log: list | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    fullgraph: bool = False,
) -> Result:
    """``CALLS`` calls of ``torch.compile(fn, backend=backend)``: each call's outputs (values
    and ``requires_grad``) and gradients must equal ``expected`` (per call, from
    :func:`eager_calls`), and the log after the last call ``expected_log``. The graph breaks
    dynamo counted are ``details["breaks"]``."""
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    if log is not None:
        log.clear()
    details: dict[str, Any] = {}
    try:
        compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
        for k in range(CALLS):
            outputs, grads = call_and_differentiate(compiled, make_inputs())
            want_outputs, want_grads = expected[k]
            if not same(outputs, want_outputs, rtol, atol):
                return Result(False, f"call {k + 1}: outputs differ from eager")
            if not same(grads, want_grads, rtol, atol):
                return Result(False, f"call {k + 1}: gradients differ from eager", {"grads": grads})
    except Exception as exc:
        return Result(False, short(exc), {"error": str(exc)})
    finally:
        details["breaks"] = sum(counters["graph_break"].values())
        torch._dynamo.reset()
    got_log = log_snapshot(log)
    if log is not None:
        log.clear()
    if not same_log(got_log, expected_log):
        return Result(
            False,
            f"side-effect log after {CALLS} calls differs from eager: {_brief(got_log)} != {_brief(expected_log)}",
        )
    return Result(True, details={"log": got_log, **details})


def fullgraph(fn: Callable, make_inputs: Callable, expected: tuple, backend: str = "aot_eager", **tol: float) -> Result:
    """``torch.compile(fn, fullgraph=True)``: one call, outputs and gradients equal ``expected``.
    A failure keeps dynamo's whole message in ``details["error"]``."""
    import torch._dynamo

    torch._dynamo.reset()
    try:
        outputs, grads = call_and_differentiate(torch.compile(fn, backend=backend, fullgraph=True), make_inputs())
    except Exception as exc:
        return Result(False, short(exc), {"error": str(exc)})
    finally:
        torch._dynamo.reset()
    if not same(outputs, expected[0], **tol):
        return Result(False, "outputs differ from eager")
    if not same(grads, expected[1], **tol):
        return Result(False, "gradients differ from eager")
    return Result(True)


def _brief(log: list | None) -> str:
    if log is None:
        return "None"
    items = [f"tensor{tuple(v.shape)}" if isinstance(v, torch.Tensor) else repr(v) for v in log]
    text = ", ".join(items)
    return f"[{text[:120]}{'…' if len(text) > 120 else ''}]"


def island_message_ok(error: str, name: str) -> bool:
    """Whether a fullgraph error about the flat callable ``name`` says what to know: that
    inliner made it an eager island (naming it), why, and how to override (or which
    argument type no mechanism carries)."""
    return f"inliner: {name} runs eagerly" in error and (
        "# inliner: compile=traceable" in error or "no mechanism carries" in error or "(mark_dirty" in error
    )


def graphs_and_breaks(fn: Callable, make_inputs: Callable) -> Result:
    """One call of ``torch.compile(fn)`` (no fullgraph) with a backend that keeps every
    graph: dynamo's and AOTAutograd's forward and backward ones (``details["graphs"]``),
    and the graph breaks dynamo counted (``details["breaks"]``, a count per reason)."""
    import torch._dynamo
    from torch._dynamo.backends.common import aot_autograd
    from torch._dynamo.utils import counters

    graphs: list[torch.fx.GraphModule] = []

    def keep(gm: torch.fx.GraphModule, example_inputs: Any) -> Callable:
        graphs.append(gm)
        return gm.forward

    aot = aot_autograd(fw_compiler=keep, bw_compiler=keep)

    def backend(gm: torch.fx.GraphModule, example_inputs: Any) -> Callable:
        graphs.append(gm)
        return aot(gm, example_inputs)

    torch._dynamo.reset()
    counters.clear()
    try:
        call_and_differentiate(torch.compile(fn, backend=backend), make_inputs())
    except Exception as exc:
        return Result(False, short(exc), {"error": str(exc)})
    finally:
        breaks = dict(counters["graph_break"])
        torch._dynamo.reset()
    return Result(True, details={"graphs": graphs, "breaks": breaks})


def past_the_recompile_limit(fn: Callable, make_inputs: Callable) -> dict[str, Any]:
    """More calls of ``torch.compile(fn, backend="aot_eager")`` than dynamo's recompile limit,
    each differentiated: the calls' outputs and gradients (``call_and_differentiate``), the
    graph breaks, the graphs compiled and the frames dynamo gave up on."""
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, backend="aot_eager")
    calls = []
    for seed in range(torch._dynamo.config.recompile_limit + 3):
        torch.manual_seed(seed)
        calls.append(call_and_differentiate(compiled, make_inputs()))
    frames = counters["frames"]
    return {
        "calls": calls,
        "breaks": sum(counters["graph_break"].values()),
        "graphs": counters["stats"]["unique_graphs"],
        "given_up": frames["total"] - frames["ok"],
    }


def higher_order_ops(graphs: list[torch.fx.GraphModule]) -> list[str]:
    """The higher-order ops the graphs (and their submodules) call."""
    found = []
    for gm in graphs:
        for module in gm.modules():
            if isinstance(module, torch.fx.GraphModule):
                found += [
                    str(n.target) for n in module.graph.nodes if isinstance(n.target, torch._ops.HigherOrderOperator)
                ]
    return found


def inductor_calls(fn: Callable, make_inputs: Callable, expected: list, fullgraph: bool = False, **kw: Any) -> Result:
    """:func:`compiled_calls` with inductor, every graph scanned for higher-order ops
    (``details["hops"]``, ``where: op``): dynamo's, AOTAutograd's joint graph, and
    inductor's post-grad forward and backward graphs. Inductor compiles the backward at
    the first backward call, so the scanning passes stay installed for all the calls (a
    custom pass also keeps inductor's FX-graph cache from answering without compiling)."""
    import torch._inductor.config as inductor_config
    from torch._inductor.compile_fx import compile_fx

    hops: list[str] = []
    scanned = {"dynamo": 0, "AOT joint": 0, "post-grad": 0}  # graphs seen, so a skipped scan shows

    def scan(where: str) -> Callable[[torch.fx.Graph], None]:
        def run(graph: torch.fx.Graph) -> None:
            scanned[where] += 1
            hops.extend(
                f"{where}: {n.target}" for n in graph.nodes if isinstance(n.target, torch._ops.HigherOrderOperator)
            )

        return run

    def backend(gm: torch.fx.GraphModule, example_inputs: Any) -> Callable:
        scanned["dynamo"] += 1
        hops.extend(f"dynamo: {op}" for op in higher_order_ops([gm]))
        return compile_fx(gm, example_inputs)

    with inductor_config.patch(joint_custom_pre_pass=scan("AOT joint"), post_grad_custom_pre_pass=scan("post-grad")):
        result = compiled_calls(fn, make_inputs, backend, expected, fullgraph=fullgraph, **kw)
    result.details["hops"] = hops
    result.details["scanned"] = scanned
    return result
