"""A ctx record on the split path (docs/compile.md, "The paths"): a Function whose ctx the
engine keeps as a record, and whose forward or backward dynamo may trace only as Python
(numpy), compiles as the original does, with fullgraph, the original's values and
custom gradients over three calls (aot_eager and inductor); what the split path does not
carry (a record marking an input dirty or gradients unmaterialized, a backward that may
write to the record) runs as an eager island with the eager original's results.

The Functions are golden case ``compile_record_split``'s, rewritten by the engine here.
"""

from __future__ import annotations

import types
import warnings
from pathlib import Path

import pytest
import torch
import torch._dynamo

from inliner import flatten
from inliner.runtime import CompileFallbackWarning, _split
from tests.support import compile_checks as cc
from tests.support.harness import load_module

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    # torch 2.9's dynamo cannot read these objects' attributes: the calls stay islands there
    # (test_split_records.test_without_dynamo_reading_object_attributes_records_and_decorators_stay_islands)
    pytest.mark.skipif(not _split.READS_OBJECT_ATTRIBUTES, reason="torch < 2.13: records and decorators stay islands"),
]

CASE = Path(__file__).parents[2] / "golden" / "compile_record_split" / "input.py"

#: Function -> the shapes of its inputs (each requires grad unless a test says otherwise)
SHAPES = {
    "NumpyTanh": [(4,)],
    "NumpyBackward": [(2, 3), (2, 3)],
    "TopIndex": [(5,)],
    "MaybeUnmaterialized": [(2,)],
}


@pytest.fixture(scope="module")
def modules() -> tuple[types.ModuleType, types.ModuleType]:
    source = CASE.read_text()
    result = flatten(source, path=str(CASE))
    assert set(SHAPES) <= set(result.flattened), [d.format() for d in result.diagnostics]
    return load_module(source, "split_records_original"), load_module(result.source, "split_records_flat")


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _body(module: types.ModuleType, name: str, requires_grad: tuple[bool, ...] | None = None):
    fn = getattr(module, name)
    apply = fn.apply if isinstance(fn, type) else fn

    def body(*xs):
        return apply(*(x * 1 for x in xs))

    def make_inputs(shapes=SHAPES[name]):
        torch.manual_seed(len(shapes))
        flags = requires_grad or (True,) * len(shapes)
        return tuple(torch.randn(*s, requires_grad=f) for s, f in zip(shapes, flags))

    return body, make_inputs


@pytest.mark.parametrize("name", SHAPES)
def test_a_record_function_takes_the_split_path_and_compiles_whole(modules, name):
    original, flat = modules
    assert getattr(flat, name).compile_path == "split"
    body, make_inputs = _body(original, name)
    expected, _ = cc.eager_calls(body, make_inputs, None)
    for module in (original, flat):
        run, _ = _body(module, name)
        result = cc.compiled_calls(run, make_inputs, "aot_eager", expected, fullgraph=True)
        assert result.ok, (module.__name__, result.reason)


def test_needs_input_grad_and_attributes_on_some_paths_reach_the_backward(modules):
    """NumpyBackward's forward records ``needs_input_grad[1]`` and sets ``rows`` only for a
    matrix: a vector input whose weight needs no gradient gives None for it, in each
    layout, as in eager."""
    original, flat = modules
    for shapes in ([(3,), (3,)], [(2, 3), (2, 3)]):
        body, _ = _body(original, "NumpyBackward", (True, False))
        _, make_inputs = _body(original, "NumpyBackward", (True, False))

        def make(shapes=shapes, make_inputs=make_inputs):
            return make_inputs(shapes)

        expected, _ = cc.eager_calls(body, make, None)
        run, _ = _body(flat, "NumpyBackward", (True, False))
        result = cc.compiled_calls(run, make, "aot_eager", expected, fullgraph=True)
        assert result.ok, result.reason


def test_inductor_compiles_a_record_function_whole(modules):
    original, flat = modules
    body, make_inputs = _body(original, "NumpyTanh")
    expected, _ = cc.eager_calls(body, make_inputs, None)
    run, _ = _body(flat, "NumpyTanh")
    result = cc.inductor_calls(run, make_inputs, expected, fullgraph=True)
    assert result.ok, result.reason
    assert not result.details["hops"]


def test_unmaterialized_gradients_set_through_the_record_run_as_an_eager_island(modules):
    """set_materialize_grads(False) on a call the split path cannot carry: that call breaks
    the graph with one warning naming the Function, and gives eager's results."""
    original, flat = modules
    body, make_inputs = _body(original, "MaybeUnmaterialized")

    def four():
        return make_inputs([(4,)])

    expected, _ = cc.eager_calls(body, four, None)
    run, _ = _body(flat, "MaybeUnmaterialized")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = cc.compiled_calls(run, four, "aot_eager", expected)
    assert result.ok, result.reason
    assert result.details["breaks"] >= 1
    fallbacks = [w for w in caught if issubclass(w.category, CompileFallbackWarning)]
    assert fallbacks and all("MaybeUnmaterialized" in str(w.message) for w in fallbacks)
    assert "set_materialize_grads(False)" in str(fallbacks[0].message)
    assert not cc.fullgraph(run, four, expected[0]).ok


DIRTY = """
import numpy as np
import torch


def scale_in_place(ctx, x):
    x.mul_(2)
    ctx.mark_dirty(x)


class Doubles(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        scale_in_place(ctx, x)
        ctx.save_for_backward(w)
        return x, torch.from_numpy(np.cos(w.detach().numpy()))

    @staticmethod
    def backward(ctx, gx, gw):
        (w,) = ctx.saved_tensors
        return gx * 3, gw * 5 + w
"""


def test_a_record_that_marks_an_input_dirty_in_a_helper_runs_as_an_eager_island():
    """The engine cannot see which input the helper dirties; the split path finds out
    while tracing and breaks the graph there, so the call runs eagerly."""
    result = flatten(DIRTY, path="dirty_record.py")
    assert "Doubles" in result.flattened, [d.format() for d in result.diagnostics]
    original = load_module(DIRTY, "split_records_dirty_original")
    flat = load_module(result.source, "split_records_dirty_flat")
    assert flat.Doubles.compile_path == "split"

    def make_inputs():
        torch.manual_seed(0)
        return torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)

    def body_of(module):
        fn = module.Doubles
        apply = fn.apply if isinstance(fn, type) else fn
        return lambda x, w: apply(x * 1, w)

    expected, _ = cc.eager_calls(body_of(original), make_inputs, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = cc.compiled_calls(body_of(flat), make_inputs, "aot_eager", expected)
    assert result.ok, result.reason
    assert any("marks an input dirty" in str(w.message) for w in caught if w.category is CompileFallbackWarning)


WRITES = """
import numpy as np
import torch


def keep(ctx, x):
    ctx.save_for_backward(x)
    ctx.calls = 0


class Counts(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        keep(ctx, x)
        return torch.from_numpy(np.sin(x.detach().numpy()))

    @staticmethod
    def backward(ctx, g):
        ctx.calls += 1
        (x,) = ctx.saved_tensors
        return g * ctx.calls + x
"""


#: variants of ``WRITES``: a backward that deletes what it read, or that also logs to
#: module-level state; dynamo refuses either on the original's ctx and runs it eagerly
DELETES = WRITES.replace(
    "        ctx.calls += 1\n", "        calls = ctx.calls + 1\n        del ctx.calls\n        ctx.calls = calls\n"
)
LOGS = WRITES.replace("import torch\n", "import torch\n\nLOG = []\n").replace(
    "        ctx.calls += 1\n", "        ctx.calls += 1\n        LOG.append(ctx.calls)\n"
)


def _retained_grads(fn, compiled: bool) -> tuple[list, int]:
    """Three calls, each differentiated three times (retain_graph): the gradients, and
    dynamo's graph breaks."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    apply = fn.apply if isinstance(fn, type) else fn

    def body(t):
        return apply(t * 1)

    run = torch.compile(body, backend="aot_eager") if compiled else body
    grads = []
    for seed in range(cc.CALLS):
        torch.manual_seed(seed)
        x = torch.randn(4, requires_grad=True)
        out = run(x)
        grads += [torch.autograd.grad(out.sum(), x, retain_graph=True)[0] for _ in range(3)]
    return grads, sum(counters["graph_break"].values())


@pytest.mark.parametrize("source,path", [(WRITES, "split"), (DELETES, "island"), (LOGS, "island")])
def test_a_backward_that_writes_to_its_record_compiles_as_the_original_does(source, path):
    """Dynamo traces ``ctx.calls += 1`` in the original's backward once, so each compiled
    backward sees the ctx forward left, whatever an earlier backward (retain_graph) wrote:
    a record rebuilt for each backward, as the split path gives it, does the same, with the
    original's graph breaks. ``del ctx.calls``, or a write to module-level state beside the
    record's, makes dynamo run the original eagerly, its writes kept from one backward to
    the next: those stay islands, which do the same."""
    result = flatten(source, path="writes_record.py")
    assert "Counts" in result.flattened, [d.format() for d in result.diagnostics]
    original = load_module(source, f"split_records_writes_{path}_{len(source)}_original")
    flat = load_module(result.source, f"split_records_writes_{path}_{len(source)}_flat")
    assert flat.Counts.compile_path == path, flat.Counts.compile_reason
    want, want_breaks = _retained_grads(original.Counts, compiled=True)
    got, got_breaks = _retained_grads(flat.Counts, compiled=True)
    assert all(torch.allclose(a, b) for a, b in zip(got, want, strict=True))
    assert got_breaks == want_breaks
    eager, _ = _retained_grads(original.Counts, compiled=False)
    retained_alike = all(torch.allclose(a, b) for a, b in zip(eager, want, strict=True))
    assert retained_alike == (path == "island")  # the compiled original differs from the eager one


READS = """
import numpy as np
import torch

LOG = []


def keep(ctx, x, derivative):
    ctx.save_for_backward(x)
    ctx.derivative = derivative


class Logs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        keep(ctx, x, np.cos)
        return torch.from_numpy(np.sin(x.detach().numpy()))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        LOG.append(len(LOG))
        return g * torch.from_numpy(ctx.derivative(x.detach().numpy())) * 3
"""

#: the same, but the backward also changes a list forward kept on ctx
CHANGES = READS.replace(
    "    ctx.derivative = derivative\n", "    ctx.derivative = derivative\n    ctx.seen = []\n"
).replace("        LOG.append(len(LOG))\n", "        LOG.append(len(ctx.seen))\n        ctx.seen.append(1)\n")


def _log_and_grads(module: types.ModuleType, compiled: bool, fullgraph: bool = True) -> tuple[list, list]:
    """Three calls, each differentiated twice (retain_graph): the gradients and the log."""
    module.LOG.clear()
    fn = module.Logs
    apply = fn.apply if isinstance(fn, type) else fn

    def body(t):
        return apply(t * 1)

    run = torch.compile(body, backend="aot_eager", fullgraph=fullgraph) if compiled else body
    grads = []
    for seed in range(cc.CALLS):
        torch.manual_seed(seed)
        x = torch.randn(4, requires_grad=True)
        out = run(x)
        grads.append(torch.autograd.grad(out.sum(), x, retain_graph=True)[0])
        grads.append(torch.autograd.grad(out.sum(), x)[0])
    return grads, list(module.LOG)


@pytest.mark.parametrize("source,path", [(READS, "split"), (CHANGES, "island")])
def test_a_backward_that_only_reads_its_record_takes_the_split_path(source, path):
    """A backward with effects (a module-level log) that sets no attribute of the record
    and changes nothing forward kept: a record rebuilt for each compiled backward holds
    the same objects, so the effects and a second backward (retain_graph) are the eager
    original's. One that changes a list kept on the record stays an island: the split
    path would rebuild the list for each backward."""
    result = flatten(source, path="reads_record.py")
    assert "Logs" in result.flattened, [d.format() for d in result.diagnostics]
    original = load_module(source, "split_records_reads_original")
    flat = load_module(result.source, "split_records_reads_flat")
    assert flat.Logs.compile_path == path, flat.Logs.compile_reason
    want_grads, want_log = _log_and_grads(original, compiled=False)
    assert len(want_log) == 2 * cc.CALLS
    if path == "island":
        assert "rebuild" in flat.Logs.compile_reason
        with pytest.raises(Exception, match="rebuild"):
            _log_and_grads(flat, compiled=True)  # fullgraph names the reason
        got_grads, got_log = _log_and_grads(flat, compiled=True, fullgraph=False)
    else:
        got_grads, got_log = _log_and_grads(flat, compiled=True)
    assert got_log == want_log
    assert all(torch.allclose(a, b) for a, b in zip(got_grads, want_grads, strict=True))


CHECKPOINT = """
import numpy as np
import torch


def run(x):
    return torch.sin(x) * 5


class Recomputes(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.from_numpy(np.sin(x.detach().numpy())) * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            detached = x.detach().requires_grad_()
            out = run(detached)
        (grad,) = torch.autograd.grad(out, detached, g)
        return grad
"""


def test_a_checkpoint_style_backward_differentiates_inside_its_op():
    """A backward that recomputes under enable_grad and calls torch.autograd.grad runs in
    ``call_bwd``, whose kernel the dispatcher runs below autograd: it gets autograd back,
    as the original's backward had it (before, the compiled call raised "element 0 of
    tensors does not require grad")."""
    result = flatten(CHECKPOINT, path="checkpoint_backward.py")
    assert "Recomputes" in result.flattened, [d.format() for d in result.diagnostics]
    original = load_module(CHECKPOINT, "split_records_checkpoint_original")
    flat = load_module(result.source, "split_records_checkpoint_flat")
    assert flat.Recomputes.compile_path == "split"

    def body_of(module):
        fn = module.Recomputes
        apply = fn.apply if isinstance(fn, type) else fn
        return lambda x: apply(x * 1)

    def make_inputs():
        torch.manual_seed(0)
        return (torch.randn(4, requires_grad=True),)

    expected, _ = cc.eager_calls(body_of(original), make_inputs, None)
    result = cc.compiled_calls(body_of(flat), make_inputs, "aot_eager", expected, fullgraph=True)
    assert result.ok, result.reason


THROUGH_HELPER = """
import numpy as np
import torch


def remember(seen, value):
    seen.append(value)


class Remembers(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.seen = []
        return torch.from_numpy(np.sin(x.detach().numpy()))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        remember(ctx.seen, len(ctx.seen))
        return g * len(ctx.seen)
"""


def test_a_backward_changing_a_kept_list_through_a_helper_raises_rather_than_lose_the_change():
    """The engine does not see that ``remember`` appends to the list it is given; the
    split path's backward finds the list changed and says so, instead of letting the
    next backward see a rebuilt, unchanged list (a silent difference from the original)."""
    result = flatten(THROUGH_HELPER, path="through_helper.py")
    assert "Remembers" in result.flattened, [d.format() for d in result.diagnostics]
    flat = load_module(result.source, "split_records_through_helper_flat")
    assert flat.Remembers.compile_path == "split"
    run = torch.compile(lambda t: flat.Remembers(t * 1), backend="aot_eager", fullgraph=True)
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Remembers's backward changed a list its forward kept"):
        run(x).sum().backward()


def test_without_dynamo_reading_object_attributes_records_and_decorators_stay_islands(monkeypatch):
    """Where dynamo cannot read a record's attributes (torch 2.9), a ctx record and replayed
    decorators keep the call an island, as before the split path carried them."""
    monkeypatch.setattr(_split, "READS_OBJECT_ATTRIBUTES", False)
    source = CASE.read_text()
    flat = load_module(flatten(source, path=str(CASE)).source, "split_records_old_dynamo")
    assert flat.NumpyTanh.compile_path == "island"
    assert "cannot read the attributes of a ctx record" in flat.NumpyTanh._inliner_fallback
    decorated = """
import numpy as np
import torch


class Fn(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu")
    def forward(ctx, x):
        return torch.from_numpy(np.sin(x.detach().numpy()))

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""
    fn = load_module(flatten(decorated, path="old_dynamo_decorated.py").source, "split_records_old_dynamo_deco").Fn
    assert fn.compile_path == "island"
    assert "stand-in ctx" in fn._inliner_fallback
