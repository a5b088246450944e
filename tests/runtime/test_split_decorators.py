"""Decorators replayed around forward and backward on the split path (docs/compile.md,
"The paths"): a project's decorator imported from another module (the engine cannot see
into it: liger-kernel's ``ensure_contiguous``, fla's ``input_guard``) and torch's own
``custom_fwd``/``custom_bwd``. Dynamo traced the decorator together with the original's
forward; it traces the carrier's replay of it around fwd the same way, and the decorated
backward runs as the backward (through ``inliner::call_bwd``, on every backward, where
the engine cannot see into its decorator).

Each case is an original autograd.Function (its backward deliberately not the true
derivative) and the engine's rewrite of it, both compiled (aot_eager, three calls)
beside the eager original: outputs, custom gradients, the decorators' calls counted per
call, graph breaks never more than the original's, fullgraph where the original compiles
whole, and no higher-order op in any graph of the rewrite.
"""

from __future__ import annotations

import functools
import sys
import types

import pytest
import torch
import torch._dynamo
from torch._dynamo.utils import counters

from inliner import flatten
from inliner.runtime import _split
from tests.support import compile_checks as cc
from tests.support.harness import load_module

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    # torch 2.9's dynamo cannot read these objects' attributes: the calls stay islands there
    # (test_split_records.test_without_dynamo_reading_object_attributes_records_and_decorators_stay_islands)
    pytest.mark.skipif(not _split.READS_OBJECT_ATTRIBUTES, reason="torch < 2.13: records and decorators stay islands"),
]

#: what the decorators saw, per call: (member, whether every tensor argument was contiguous)
SEEN: list = []


SUPPORT_SOURCE = """\
import contextlib
import functools

import torch


def ensure_contiguous(fn):
    \"\"\"liger-kernel's: tensor arguments made contiguous.\"\"\"

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        def maybe_to_contiguous(x):
            return x.contiguous() if isinstance(x, torch.Tensor) else x

        args = [maybe_to_contiguous(arg) for arg in args]
        kwargs = {k: maybe_to_contiguous(v) for k, v in kwargs.items()}
        return fn(ctx, *args, **kwargs)

    return wrapper


def input_guard(fn):
    \"\"\"fla's: contiguous tensor arguments, the call inside the first tensor's device.\"\"\"

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        contiguous_args = (i if not isinstance(i, torch.Tensor) else i.contiguous() for i in args)
        tensor = None
        for arg in args:
            if isinstance(arg, torch.Tensor):
                tensor = arg
                break
        ctx = torch.device(tensor.device) if tensor is not None else contextlib.nullcontext()
        with ctx:
            return fn(*contiguous_args, **kwargs)

    return wrapper


# fla's: torch's AMP decorators, chosen at import time by torch version and device
if hasattr(torch.amp, "custom_fwd"):
    device = "cpu"
    autocast_custom_fwd = functools.partial(torch.amp.custom_fwd, device_type=device)
    autocast_custom_bwd = functools.partial(torch.amp.custom_bwd, device_type=device)
else:
    device_torch_lib = getattr(torch, "cuda")
    autocast_custom_fwd = device_torch_lib.amp.custom_fwd
    autocast_custom_bwd = device_torch_lib.amp.custom_bwd


# mamba-ssm's: torch's decorators passed through a factory that adds the device type
def custom_amp_decorator(dec, add_device_type):
    def decorator(*args, **kwargs):
        if add_device_type:
            kwargs["device_type"] = "cpu"
        return dec(*args, **kwargs)

    return decorator


from torch.amp import custom_bwd, custom_fwd

custom_fwd = custom_amp_decorator(custom_fwd, True)
custom_bwd = custom_amp_decorator(custom_bwd, True)
"""

#: the support module the cases import their decorator from (what real code does); the
#: engine reads its source as the command line reads a project's other modules
SUPPORT = types.ModuleType("inliner_split_decorator_support")
exec(compile(SUPPORT_SOURCE, "<inliner_split_decorator_support>", "exec"), SUPPORT.__dict__)
sys.modules[SUPPORT.__name__] = SUPPORT
ensure_contiguous = SUPPORT.ensure_contiguous
SOURCES = {SUPPORT.__name__: SUPPORT_SOURCE}

BODY = """\
import torch
from inliner_split_decorator_support import {name}


class Fn(torch.autograd.Function):{pragma}
    @staticmethod
    @{forward}
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w + 1

    @staticmethod
    @{backward}
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * 3 + x, g * x * 2
"""

#: An imported decorator the engine cannot read keeps the island; a user who knows it only
#: does what dynamo traces opts in to the split path with the pragma.
_OPT_IN = "  # inliner: compile=opaque"

CASES = {
    "ensure_contiguous": dict(name="ensure_contiguous", forward="ensure_contiguous", backward="ensure_contiguous"),
    "input_guard": dict(name="input_guard", forward="input_guard", backward="input_guard"),
    "imported AMP aliases chosen at import time": dict(
        name="autocast_custom_fwd, autocast_custom_bwd", forward="autocast_custom_fwd", backward="autocast_custom_bwd"
    ),
    "imported AMP decorators passed through a factory": dict(
        name="custom_fwd, custom_bwd", forward="custom_fwd", backward="custom_bwd"
    ),
    "custom_fwd(cast_inputs)/custom_bwd": dict(
        name="ensure_contiguous",
        forward='torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float64)',
        backward='torch.amp.custom_bwd(device_type="cpu")',
    ),
    "custom_fwd(cast_inputs) over an imported wrapper": dict(
        name="ensure_contiguous",
        forward='torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float64)\n    @ensure_contiguous',
        backward='torch.amp.custom_bwd(device_type="cpu")\n    @ensure_contiguous',
    ),
    # dynamo inlines a nested torch.compile, in the original's traced body as around fwd
    "torch.compile on both": dict(
        name="ensure_contiguous", forward='torch.compile(backend="eager")', backward='torch.compile(backend="eager")'
    ),
    "custom_fwd/custom_bwd under an imported wrapper": dict(
        name="ensure_contiguous",
        forward='ensure_contiguous\n    @torch.amp.custom_fwd(device_type="cpu")',
        backward='ensure_contiguous\n    @torch.amp.custom_bwd(device_type="cpu")',
    ),
}


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _pair(case: str) -> tuple[types.ModuleType, types.ModuleType]:
    source = BODY.format(**CASES[case], pragma="")
    result = flatten(source, path="split_decorators.py", module="split_decorators", sources=SOURCES.get)
    assert "Fn" in result.flattened, [d.format() for d in result.diagnostics]
    slug = "".join(c if c.isalnum() else "_" for c in case)
    return load_module(source, f"split_decorators_original_{slug}"), load_module(
        result.source, f"split_decorators_flat_{slug}"
    )


def _inputs():
    torch.manual_seed(0)
    # a transposed (non-contiguous) x: what the contiguity wrappers are for
    x = torch.randn(3, 4).t().requires_grad_()
    return x, torch.randn(4, 3, requires_grad=True)


def _body(module: types.ModuleType):
    fn = module.Fn
    apply = fn.apply if isinstance(fn, type) else fn

    def body(x, w):
        return apply(x * 1, w) * 2

    return body


def _run(module: types.ModuleType, compiled: bool, fullgraph: bool = False, autocast: bool = False) -> dict:
    torch._dynamo.reset()
    counters.clear()
    body = _body(module)
    call = torch.compile(body, backend="aot_eager", fullgraph=fullgraph) if compiled else body
    results = []
    for _ in range(cc.CALLS):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            results.append(cc.call_and_differentiate(call, _inputs()))
    return {"results": results, "breaks": sum(counters["graph_break"].values())}


def _same(a: dict, b: dict) -> bool:
    return all(
        cc.same(x[0], y[0], 1e-2, 1e-2) and cc.same(x[1], y[1], 1e-2, 1e-2)
        for x, y in zip(a["results"], b["results"], strict=True)
    )


@pytest.mark.parametrize("case", CASES)
def test_a_decorated_function_takes_the_split_path(case):
    original, flat = _pair(case)
    # torch's own decorators around pure bodies: the graph path (one node) as before
    want = "graph" if case == "custom_fwd(cast_inputs)/custom_bwd" else "split"
    assert flat.Fn.compile_path == want, (flat.Fn.compile_kind, flat.Fn.compile_reason)
    for autocast in (False, True):
        eager = _run(original, compiled=False, autocast=autocast)
        compiled_original = _run(original, compiled=True, autocast=autocast)
        compiled_flat = _run(flat, compiled=True, autocast=autocast)
        assert _same(compiled_flat, eager), f"outputs or custom gradients differ from eager (autocast {autocast})"
        assert _same(compiled_original, eager)
        assert compiled_flat["breaks"] <= compiled_original["breaks"]


@pytest.mark.parametrize("case", CASES)
def test_fullgraph_compiles_the_rewrite_where_it_compiles_the_original(case):
    original, flat = _pair(case)
    eager = _run(original, compiled=False)
    try:
        _run(original, compiled=True, fullgraph=True)
    except Exception:
        pytest.skip("the original does not compile whole either")
    assert _same(_run(flat, compiled=True, fullgraph=True), eager)


@pytest.mark.parametrize("case", CASES)
def test_no_higher_order_op_in_the_rewrite_s_graphs(case):
    """(input_guard's device context breaks the graph in the original too.)"""
    original, flat = _pair(case)
    found = cc.graphs_and_breaks(_body(flat), _inputs)
    assert found.ok, found.reason
    assert found.details["breaks"] == cc.graphs_and_breaks(_body(original), _inputs).details["breaks"]
    assert cc.higher_order_ops(found.details["graphs"]) == []


def test_an_imported_backward_decorator_runs_on_every_backward():
    """The engine cannot see into it: the decorated backward runs through call_bwd, for
    real, on every compiled backward (and the forward decorator on every forward)."""
    calls: list[str] = []

    def counted(fn):
        @functools.wraps(fn)
        def wrapper(ctx, *args):
            calls.append(fn.__name__)
            return fn(ctx, *args)

        return wrapper

    SUPPORT.counted = counted
    source = BODY.format(name="counted", forward="counted", backward="counted", pragma=_OPT_IN)
    result = flatten(source, path="split_decorators.py")
    original, flat = (
        load_module(source, "split_decorators_original_counted"),
        load_module(result.source, "split_decorators_flat_counted"),
    )
    assert flat.Fn.compile_path == "split"
    want = []
    for module in (original, flat):
        calls.clear()
        _run(module, compiled=module is flat)
        want.append(list(calls))
    calls.clear()
    _run(original, compiled=False)
    assert want[1] == calls == ["forward", "backward"] * cc.CALLS


def _hand_written(**keywords):
    from inliner.runtime import custom_vjp

    def fwd(x):
        return x * 2, (x,)

    def bwd(residuals, g):
        return (g * 3,)

    return custom_vjp(
        fwd,
        bwd,
        name="HandWritten",
        forward_decorators=(ensure_contiguous,),
        compile_kind="opaque",
        compile_reason="forward's decorator ensure_contiguous is replayed around it",
        backward_kind="traceable",
        **keywords,
    )


def test_code_emitted_before_keeps_a_decorated_function_an_island():
    """Without ``split_decorators`` (rewritten before the split path carried decorators)
    the call stays the eager island it was; with it, the split path."""
    old = _hand_written()
    assert old.compile_path == "island"
    assert old._inliner_fallback == "decorators are replayed around its forward or backward"
    new = _hand_written(split_decorators=True)
    assert new.compile_path == "split"
    x = torch.randn(4, 3).t().requires_grad_()
    compiled = torch.compile(lambda t: new(t) + 1, backend="aot_eager", fullgraph=True)
    out = compiled(x)
    out.sum().backward()
    assert torch.equal(out, x * 2 + 1) and torch.equal(x.grad, torch.full_like(x, 3.0))


def test_a_same_file_decorator_that_writes_outside_state_keeps_the_island():
    """Walked like a forward helper: its append to a module list is an effect dynamo would
    guard and recompile on, so the call stays eager (and the keyword is not emitted)."""
    source = """\
import functools
import torch

CALLS = []


def counted(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        CALLS.append(1)
        return fn(ctx, *args)

    return wrapper


class Fn(torch.autograd.Function):
    @staticmethod
    @counted
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""
    result = flatten(source, path="split_decorators.py")
    assert 'compile_kind="side_effecting"' in result.source
    assert load_module(result.source, "split_decorators_flat_same_file").Fn.compile_path == "island"


@pytest.mark.parametrize("member", ["forward", "backward"])
def test_a_body_dynamo_is_disabled_on_stays_an_island_as_the_original_breaks_there(member):
    """``torch.compiler.disable``: dynamo breaks the original's graph at the Function, and
    the rewrite's island breaks it once too, with the eager original's results."""
    decorators = {"forward": "NONE", "backward": "NONE", member: "torch.compiler.disable"}
    source = BODY.format(name="ensure_contiguous", pragma="", **decorators).replace("    @NONE\n", "")
    result = flatten(source, path="split_decorators.py", module="split_decorators", sources=SOURCES.get)
    assert "Fn" in result.flattened, [d.format() for d in result.diagnostics]
    assert "split_decorators" not in result.source
    original = load_module(source, f"split_decorators_original_disabled_{member}")
    flat = load_module(result.source, f"split_decorators_flat_disabled_{member}")
    assert flat.Fn.compile_path == "island"
    compiled_original, compiled_flat = _run(original, compiled=True), _run(flat, compiled=True)
    assert _same(compiled_flat, _run(original, compiled=False))
    assert compiled_flat["breaks"] == compiled_original["breaks"] > 0
