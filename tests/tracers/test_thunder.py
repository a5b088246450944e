"""Thunder tier of the tracer matrix: ``thunder.jit`` and ``thunderfx`` on the rewrite.

Runs only where lightning-thunder imports (``bash scripts/thunder_env.sh`` builds a
venv with torch 2.9.1 + lightning-thunder 0.2.6; then
``/tmp/thunder-venv/bin/python -m pytest -m thunder tests/tracers/test_thunder.py``).
Elsewhere every test here is skipped.

| row | the rewrite must |
| --- | --- |
| ``thunder_jit`` | gradients equal eager; every call is a thunder symbol named after the original whose subsymbols spell out the forward's body; no ``autograd_function_apply`` in any trace; every trace a program (below) |
| ``thunderfx`` | gradients equal eager; no ``autograd_function_apply`` in any graph or trace thunder receives; the flat callable runs inside thunder, not split out to its fallback (except ``SPLIT_OUT_BY_DESIGN``); every trace a program |

"A program" (tests/support/thunder_programs.py): every name a forward or backward trace calls is
bound by its ``python_ctx()``, the builtins or the program itself, and the initial
computation trace, run under ``thunder.jit``, gives eager's outputs (its body, without
``no_grad``, eager's gradients). Asserted for the rewrite; thunder's own lookaside for
``autograd.Function`` fails it (``test_original``), a plain torch function passes it.

How the rewrite gets there: ``inliner.runtime._thunder`` (loaded when thunder is) gives every
flat callable a thunder lookaside built like thunder's own for the
``autograd_function_apply`` op: it traces ``fwd`` into one symbol named after the
original (bound, in the trace's context, to the flat callable) and registers ``bwd``'s
trace as that symbol's grad rule. It also sets
``thunder_supported`` on the flat callable, which thunderfx's splitter honours, so the
call node dynamo hands thunder runs inside thunder.

Known failures of the rewrite are listed with the measured reason in
``REWRITE_KNOWN_FAILURES`` and asserted, so a thunder upgrade that fixes one shows up.
"""

from __future__ import annotations

import functools
import inspect
import warnings

import pytest

from inliner.engine import flatten
from tests.support import dump_originals
from tests.support import thunder_programs as tp
from tests.support import tracer_cases as tc
from tests.support.harness import load_module

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    thunder = pytest.importorskip("thunder", reason="lightning-thunder is not installed (scripts/thunder_env.sh)")

pytestmark = [
    pytest.mark.thunder,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

DRIVERS = sorted(tc.DRIVERS)
ROWS = ["thunder_jit", "thunderfx"]
#: golden compile_record_split's Functions: ctx records with numpy forwards or backwards
RECORD_SPLIT = ("MaybeUnmaterialized", "NumpyBackward", "NumpyTanh", "TopIndex")

REWRITE_KNOWN_FAILURES: dict[tuple[str, str], str] = {
    # thunder has no None gradients (an unused output's grad is zeros), so a backward
    # relying on set_materialize_grads(False) is refused with this message rather than
    # run with the wrong grads (the original fails too: thunder's ctx lacks the method)
    ("thunder_jit", "materialize_grads"): "set_materialize_grads(False)",
    # mark_dirty is refused too: thunder cannot make a dirtied view's base take the custom
    # backward (tests/tracers/test_thunder.py: test_mark_dirty_is_refused_not_wrong); the original
    # fails as well (thunder's ctx has no mark_dirty)
    **{(row, d): "modifies an input in place (mark_dirty)" for row in ROWS for d in ("mark_dirty", "hop_dump_dirty")},
    # autocast around a custom Function: thunder's autocast exit symbol fails (the original too)
    ("thunder_jit", "amp_decorators/autocast"): "autocast_exit",
    ("thunder_jit", "decorator_amp_aliases/Mm"): "autocast_exit",
    # thunderfx: a thunder region whose call returns a non-tensor (an int) makes thunder's
    # splitter fail on the inductor region that unpacks it (the original fails the same way)
    ("thunderfx", "list_and_nontensor_outputs/WithInt"): "BackendCompilerFailed",
    # @torch.compile on a body: thunder cannot interpret dynamo's wrapper (the original
    # fails this row too, as reported by test_original); under thunderfx the Function is an
    # eager island (compile kind opaque), so dynamo runs it outside every graph
    ("thunder_jit", "decorator_compile/Square"): "AssertionError",
    # forward computes a gradient (requires_grad_ and torch.autograd.grad under
    # @torch.enable_grad()); thunder's proxies have no requires_grad_ (the original fails too)
    ("thunder_jit", "decorator_grad_mode/GradInForward"): "Unknown attribute requires_grad_",
    # a checkpoint-style backward calls requires_grad_, which thunder does not implement
    # (under thunderfx the ctx record makes it an eager island, outside thunder)
    ("thunder_jit", "record_callable_on_ctx/Recompute"): "requires_grad_",
    # Functions whose bodies leave torch or take objects: thunder.jit fails on them as it
    # fails on the original (test_original pins thunder's messages there): an object
    # argument other than a dataclass (a module, a function) is refused by a message naming
    # the Function (thunder cannot make a proxy of it; a dataclass is laid out flat:
    # test_dataclass_arguments_are_laid_out_flat), numpy and tolist need fake-tensor registrations (thunder's error gets a note
    # naming the Function: test_an_untraceable_body_is_named), and a list the forward
    # appends to is a variable thunder refuses to overwrite
    **{
        ("thunder_jit", d): "is an object of type"
        for d in (
            "compile_lambda_argument",
            "compile_module_argument/LinearOfModule",
            "compile_module_argument/RunModule",
            "node_attributes/AdjointStep",  # the step function it is handed
        )
    },
    ("thunder_jit", "compile_list_argument"): "is being overwritten this is not allowed",
    ("thunder_jit", "compile_forward_sets/RecordLast"): "is an object of type",  # the recorder it sets
    # a method of a module argument called in forward: the module is an object thunder
    # cannot make a proxy of (the original fails on it too)
    ("thunder_jit", "compile_forward_effects_split/MeteredScale"): "is an object of type",
    # forward calls an aten overload (torch.ops.aten.mul.Tensor), which thunder.jit does not
    # map (the original fails the same way); under thunderfx the allowed class goes to
    # thunder's fallback, as the allowed original does (SPLIT_OUT_BY_DESIGN)
    ("thunder_jit", "allow_in_graph_class/FusedScale"): "torch._ops.aten.",
    # a branch on a tensor's value: thunder traces one program for every input and has no
    # data-dependent control flow (the original fails the same way)
    ("thunder_jit", "data_dependent_forward/ClipLarge"): "casting a TensorProxy to a Python boolean",
    ("thunder_jit", "compile_numpy_body"): "automatic registration for numpy",
    ("thunder_jit", "compile_rejects_fake_tensors"): "automatic registration for tolist",
    **{("thunder_jit", f"compile_record_split/{name}"): "automatic registration for numpy" for name in RECORD_SPLIT},
}

#: Flat callables that thunderfx's splitter keeps out of thunder, by design
#: (``inliner.runtime._thunder``: ``thunder_supported`` is False): forward decorators (custom_fwd
#: enters autocast contexts thunder cannot trace inside one symbol; any other decorator
#: may do what thunder cannot see per call), thunder cannot honour
#: set_materialize_grads(False), and object arguments reach the flat callable through a
#: shim thunder does not trace. Opaque and side-effecting Functions (a replayed wrapper that
#: is not pass-through, ``@torch.compile`` on a body, a ctx record) are eager islands: dynamo
#: runs them outside every graph, so no split lists them. Every other flat callable runs
#: inside thunder.
SPLIT_OUT_BY_DESIGN: dict[str, list[str]] = {
    "amp_decorators": ["Mm"],
    "amp_decorators/autocast": ["Mm"],
    "cuda_amp_decorators": ["Mm"],
    "materialize_grads": ["TwoOut"],
    "decorator_amp_aliases/Mm": ["Mm"],
    "decorator_amp_aliases/Scale": ["Scale"],
    "decorator_amp_aliases/Picked": ["Picked"],
    "decorator_grad_mode/NoGrad": ["NoGrad"],
    "factory_decorators": ["Scale"],  # NoGrad's shape, made by a factory
    "decorator_pass_through/Logged": ["Logged"],
    "decorator_pass_through/Scale": ["Scale"],
    "decorator_pass_through/Sine": ["Sine"],
    # a class the user allows in dynamo's graph: thunderfx never runs the allowed original's
    # call (trampoline_autograd_apply) inside thunder, nor the rewrite's (inliner.runtime._allowed)
    "allow_in_graph_class/ClampGrad": ["ClampGrad"],
    "allow_in_graph_class/FusedScale": ["FusedScale"],
    "compile_dataclass_argument": ["Affine"],
    "record_decorators/ChunkAttention": ["ChunkAttention"],
}

# The original's measured outcome (torch 2.9.1, thunder 0.2.6): drivers listed fail
# with that text; every other original passes. Recorded drivers whose original is a
# dumped graph have no original to run.
ORIGINAL_FAILS: dict[str, dict[str, str]] = {
    "thunder_jit": {
        "amp_decorators/autocast": "autocast_exit",
        "attrs_and_rebinding": "UnboundLocalError",  # a tensor kept as a plain ctx attribute
        "mark_dirty": "AttributeError: mark_dirty",
        "materialize_grads": "AttributeError: set_materialize_grads",
        "multi_output_nondiff": "AttributeError: mark_non_differentiable",
        "needs_input_grad": "AttributeError: needs_input_grad",
        "saved_read_on_some_paths/EarlyReturn": "AttributeError: needs_input_grad",
        "saved_read_on_some_paths/ReadInBranch": "AttributeError: needs_input_grad",
        "saved_read_on_some_paths/GroupAfterReturn": "AttributeError: needs_input_grad",
        "saved_read_on_some_paths/SetupEarlyReturn": "takes 2 positional arguments, but 3 were given",  # setup_context style
        "setup_context_style": "AttributeError",
        "vjp_and_self": "You must implement either the backward or vjp method",
        "plain_def_members/Pivoted": "has 2 proxies but expected 1",  # an integer output
        "record_ctx_truth_test/Matmul": "__bool__ is not implemented",  # thunder's ctx proxy
        "record_ctx_truth_test/Checked": "__bool__ is not implemented",
        "list_and_nontensor_outputs/WithInt": "replace_name",
        "same_tensor_twice": "Trying to add the name grad_",
        # one tensor for several parameters: thunder's lookaside prints `def Mul(t_0, t_0):`
        **{f"repeated_inputs/{n}": "duplicate argument" for n in ("Attend", "AttendKeysAreValues", "KeepFirst", "Mul")},
        "getattr_with_default/MaybeResidual": "UnboundLocalError",  # getattr(ctx, name, default)
        "jvp_combined_style": "AttributeError: save_for_forward",
        "jvp_forward_mode/Cube": "takes 1 positional arguments, but 2 were given",
        "decorator_amp_aliases/Scale": "'floating' object has no attribute 'name'",  # torch.cuda.amp's custom_fwd
        "decorator_amp_aliases/Mm": "autocast_exit",
        "decorator_compile/Square": "AssertionError",  # a @torch.compile'd backward
        "decorator_grad_mode/GradInForward": "Unknown attribute requires_grad_",
        "decorator_grad_mode/NoGrad": "does not require grad and does not have a grad_fn",
        "factory_decorators": "does not require grad and does not have a grad_fn",
        # ctx dynamics the rewrite keeps as a ctx record: thunder's ctx for a Function has
        # no such methods, and its trace breaks on attributes written in backward
        "record_backward_writes/Caches": "is being overwritten",
        "record_backward_writes/DropsBlocks": "KeyError",
        "record_callable_on_ctx/Activation": "'function' object has no attribute 'name'",
        "record_callable_on_ctx/Recompute": "requires_grad_",
        "record_ctx_helper/Rows": "AttributeError: needs_input_grad",
        "record_marks/MarksComputed": "AttributeError: mark_non_differentiable",
        "record_marks/MaybeMaterialize": "proxies but expected 1",
        "record_marks/SortedRanks": "AttributeError: mark_non_differentiable",
        "record_needs_input_grad_forward": "AttributeError: needs_input_grad",
        "record_save_for_forward_conditional": "AttributeError: save_for_forward",
        "record_setup_context": "takes 3 positional arguments, but 4 were given",
        "record_tuple_targets/Centered": "UnboundLocalError",
        "record_tuple_targets/Split": "UnboundLocalError",
        "tidy_generated_code/Mul": "AttributeError: save_for_forward",
        # object arguments have no proxy name; numpy and tolist need fake-tensor
        # registrations; a list the forward appends to is a variable thunder will not overwrite
        "compile_dataclass_argument": "object has no attribute 'name'",
        "compile_lambda_argument": "object has no attribute 'name'",
        "compile_module_argument/LinearOfModule": "object has no attribute 'name'",
        "compile_module_argument/RunModule": "object has no attribute 'name'",
        "node_attributes/AdjointStep": "object has no attribute 'name'",  # the step function it is handed
        "node_attributes/Blend": "takes 2 positional arguments, but 3 were given",  # setup_context style
        "compile_list_argument": "is being overwritten this is not allowed",
        "compile_forward_sets/RecordLast": "object has no attribute 'name'",  # the recorder it sets
        # an in-place add into the forward's own clone: thunder's lookaside names the
        # clone's proxy twice (the rewrite runs: fwd is traced as plain torch)
        "rebound_arguments/WeightedLogSumExp": "is being overwritten",
        "compile_forward_effects_split/MeteredScale": "object has no attribute 'name'",  # a module argument
        "allow_in_graph_class/FusedScale": "torch._ops.aten.",  # an aten overload thunder does not map
        "compile_numpy_body": "automatic registration for numpy",
        "compile_rejects_fake_tensors": "automatic registration for tolist",
        **{f"compile_record_split/{name}": "automatic registration for numpy" for name in RECORD_SPLIT},
        "compile_record_split/NumpyBackward": "AttributeError: needs_input_grad",
        "data_dependent_forward/ClipLarge": "casting a TensorProxy to a Python boolean",
        # .item() read in forward and kept on ctx: thunder's ctx loses the number (the
        # rewrite runs: the number is a residual, a proxy of the value each call reads)
        "data_dependent_forward/ScaleByNorm": "UnboundLocalError",
    },
    "thunderfx": {
        # every original reaches thunder as torch.ops.higher_order.autograd_function_apply ...
        **{d: "autograd_function_apply reaches thunder" for d in DRIVERS},
        # ... except where dynamo or thunder fails first, or dynamo falls back to eager
        "amp_decorators/autocast": "Expected dtype",
        "decorator_amp_aliases/Mm": "Expected dtype",
        "return_input": "KeyError: 'autograd_function_apply'",
        "list_and_nontensor_outputs/WithInt": "BackendCompilerFailed",
        "same_tensor_twice": "AssertionError",
        # thunder's lookaside for the op also names one proxy twice in a signature
        **{f"repeated_inputs/{n}": "duplicate argument" for n in ("Attend", "AttendKeysAreValues", "KeepFirst", "Mul")},
        "vjp_and_self": None,  # dynamo does not support `vjp`; the call runs eagerly
        # allowed in dynamo's graph: the call reaches thunder's splitter as
        # trampoline_autograd_apply, which thunder has no mapping for: it runs in the fallback
        "allow_in_graph_class/ClampGrad": None,
        "allow_in_graph_class/FusedScale": None,
        # dynamo falls back to eager for a classmethod backward and for Functions with a jvp
        "classmethod_backward/Halve": None,
        "classmethod_backward/UsesCls": None,
        # ... for classmethod members and a class attribute read in forward (torch 2.9: it cannot
        # trace `mul` of a tensor and the attribute), and a forward returning its input fails as in return_input
        "kept_class_helpers/Scale": None,
        "kept_class_helpers/ScaledSoftplus": None,
        **{f"kept_class_subclass/{name}": None for name in ("_Activation", "_Cube", "_Shifted", "_Square", "_Steeper")},
        "kept_class_symbolic/_CopyToModelParallelRegion": "KeyError: 'autograd_function_apply'",
        "jvp_combined_style": None,
        "jvp_forward_mode/Cube": None,
        "jvp_forward_mode/Scale": None,
        # a decorator with Python side effects (or grad-mode changes) makes dynamo run the
        # original eagerly
        "decorator_counted": None,
        "decorator_imported": None,
        "decorator_grad_mode/GradInForward": None,
        "decorator_grad_mode/NoGrad": None,
        "factory_decorators": None,
        "record_save_for_forward_conditional": None,
        # dynamo falls back to eager for these ctx dynamics too (and runs the original as is)
        "record_backward_writes/Forgets": None,
        "record_callable_on_ctx/Recompute": None,
        "record_marks/MarksComputed": "from user code",
        "tidy_generated_code/Mul": None,
        # side effects, numpy, tolist and a mutated list argument: dynamo runs the original
        # around a graph break, so thunder never sees the higher-order op
        **{
            d: None
            for d in (
                "compile_list_argument",
                "compile_numpy_body",
                "compile_rejects_fake_tensors",
                *(f"compile_record_split/{name}" for name in RECORD_SPLIT),
                "compile_side_effect_backward",
                "compile_side_effect_both",
                "compile_side_effect_forward",
                "compile_factory_local_class",  # forward builds an object of a local class
                "compile_forward_effects_split/MeteredScale",  # a list append in a module's method
                "compile_forward_effects_split/WarnedScale",  # warnings.warn in forward
                "compile_with_block_backward",  # a context manager with side effects in backward
                "saved_read_after_side_effect/Logged",
                "data_dependent_forward/ClipLarge",  # a branch on a tensor's value
                "data_dependent_forward/ScaleByNorm",  # .item()
            )
        },
        # forward effects on module-level or argument state: dynamo on torch 2.9 runs the
        # original around a graph break ("Unsafe side effect" in the HOP)
        "compile_forward_sets/CachedScale": None,
        "compile_forward_sets/RecordLast": None,
        # thunder's lookaside for the op fails on the forward's in-place add into its clone
        "rebound_arguments/WeightedLogSumExp": "Detected a cycle while swapping",
        # a dataclass or module argument: thunder's splitter loses the closure's tensors
        "compile_dataclass_argument": "missing 1 required positional arguments",
        "compile_module_argument/LinearOfModule": "missing 2 required positional arguments",
        "compile_module_argument/RunModule": "missing 2 required positional arguments",
    },
}


def _params():
    return [pytest.param(row, driver, id=f"{row}-{driver}") for row in ROWS for driver in DRIVERS]


@functools.cache
def _outcome(row: str, driver: str, rewritten: bool) -> tc.Outcome:
    """One run of a row, shared by the tests that look at it."""
    return tc.run(row, driver, rewritten=rewritten)


def _reported(outcome: tc.Outcome | None) -> str:
    if outcome is None:
        return "n/a: no Function original"
    return "runs" if outcome.ok else f"fails: {outcome.reason}"


@pytest.mark.parametrize("row,driver", _params())
def test_rewrite(row, driver, record_property):
    """The rewrite's result, asserted, beside thunder's on the original, reported (in the
    test's properties: ``--junitxml``); where thunder runs the original, the rewrite
    must run too."""
    outcome = _outcome(row, driver, True)
    original = _outcome(row, driver, False) if tc.has_original(driver) else None
    record_property("thunder_on_the_original", _reported(original))
    record_property("thunder_on_the_rewrite", _reported(outcome))
    if original is not None and original.ok:
        assert outcome.ok, f"thunder runs the original and not the rewrite: {outcome.reason}"
    known = REWRITE_KNOWN_FAILURES.get((row, driver))
    if known is not None:
        assert not outcome.ok and known in outcome.reason, outcome.reason
        return
    assert outcome.ok, f"{row} on {driver}: {outcome.reason}"
    # every trace is a program whose every called name its python_ctx() binds
    assert not outcome.details["unresolved"], outcome.details["unresolved"]
    if row == "thunder_jit":
        assert all(outcome.details["spelled_out"].values())
        # the initial trace, run as a program, reproduces eager (custom backward included)
        assert outcome.details["program"] == "ok", outcome.details["program"]
    else:
        assert outcome.details["split_out"] == SPLIT_OUT_BY_DESIGN.get(driver, []), outcome.details
        # each thunder graph's initial trace, run as a program, reproduces the graph
        assert outcome.details["program"] == "ok", outcome.details["program"]


@pytest.mark.parametrize("row,driver", _params())
def test_original(row, driver):
    if not tc.has_original(driver):
        pytest.skip("the original is a dumped graph calling autograd_function_apply, not a Function")
    outcome = _outcome(row, driver, False)
    expected = ORIGINAL_FAILS[row].get(driver)
    if expected is None:
        assert outcome.ok, outcome.reason
    else:
        assert not outcome.ok and expected in outcome.reason, outcome.reason
    if row == "thunder_jit" and outcome.ok:
        # thunder's own autograd.Function lookaside registers its symbol as
        # Name_<id>_<n>, which the trace's python_ctx() does not bind: no trace of the
        # original is a program that runs (the check can fail)
        assert outcome.details["unresolved"], outcome.details
        assert "NameError" in outcome.details["program"], outcome.details["program"]


def test_jit_trace_spells_out_the_forward():
    """The basic_linear trace: one MyLinear symbol whose subsymbols are the matmul and the scale."""
    outcome = tc.run("thunder_jit", "basic_linear", rewritten=True)
    assert outcome.ok, outcome.reason
    trace = outcome.details["trace"]
    assert outcome.details["symbols"] == ["MyLinear"], outcome.details["symbols"]
    assert " = MyLinear(x, w, 0.5)" in trace, trace
    assert "ltorch.matmul" in trace and "autograd_function_apply" not in trace


def test_a_plain_function_passes_the_program_check():
    """No Function at all: thunder's traces of plain torch code are programs, and the
    initial one run under thunder.jit gives eager's outputs (and its body eager's gradients)."""
    import torch

    def f(x, w):
        y = x @ w
        return torch.sin(y) * 3.0 + y.cos()

    x, w = torch.randn(3, 4, requires_grad=True), torch.randn(4, 2, requires_grad=True)
    jf = thunder.jit(f)
    jf(x, w)
    traces = list(thunder.last_traces(jf)) + list(thunder.last_backward_traces(jf))
    assert len(traces) > 2 and not tp.unresolved_by_trace(traces)
    (got,) = tp.run_initial_trace(jf, x, w)
    torch.testing.assert_close(got, f(x, w).detach())
    (body,) = tp.run_initial_trace(jf, x, w, decorators=False)
    torch.testing.assert_close(torch.autograd.grad(body.sum(), (x, w)), torch.autograd.grad(f(x, w).sum(), (x, w)))


def test_unresolved_names_sees_a_name_nothing_binds():
    """The check itself: a called name that neither the context, the builtins nor the
    program binds is reported; names the program binds, imports or gets from builtins are not."""

    class Trace:
        def python(self):
            return (
                "import torch\n"
                "from m import helper\n"
                "@torch.no_grad()\n"
                "def computation(x):\n"
                "  (a, b) = helper(x)\n"
                "  c = len(a) + ScaledSin_1_0(b) + ctx_fn(a)\n"
                "  return c\n"
            )

        def python_ctx(self):
            return {"ctx_fn": print}

    assert tp.unresolved_names(Trace()) == {"ScaledSin_1_0"}


SCALED_SIN = """
import torch


class ScaledSin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x) * 3.0

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.cos(x) * 3.0
"""

#: Another Function named ScaledSin (another module), with another lie in its backward.
OTHER_SCALED_SIN = SCALED_SIN.replace("* 3.0\n\n", "* 5.0\n\n").replace("torch.cos(x) * 3.0", "x * 7.0")


def _two_scaled_sins(first, second):
    def run(x):
        a = first(x)
        b = second(a)
        return first(b) + 1

    return run


def test_symbols_are_named_after_the_function_and_point_at_their_call():
    """ScaledSin twice and another ScaledSin once: the symbols print as ``ScaledSin`` (both
    calls of the first) and ``ScaledSin_1``, the same on every run; each symbol's source
    comment is the line that called it; the traces are programs; the gradients are the
    custom backwards'."""
    import torch

    sources = enumerate((SCALED_SIN, OTHER_SCALED_SIN))
    originals, flats = zip(
        *(
            (
                load_module(src, f"scaled_sin_original_{i}").ScaledSin.apply,
                load_module(flatten(src).source, f"scaled_sin_flat_{i}").ScaledSin,
            )
            for i, src in sources
        )
    )
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    expected_out = _two_scaled_sins(*originals)(x)
    (expected,) = torch.autograd.grad(expected_out.sum(), x)

    printed = []
    for _ in range(2):
        jf = thunder.jit(_two_scaled_sins(*flats))
        out = jf(x)
        (got,) = torch.autograd.grad(out.sum(), x)
        torch.testing.assert_close(out, expected_out)
        torch.testing.assert_close(got, expected)
        traces = list(thunder.last_traces(jf)) + list(thunder.last_backward_traces(jf))
        assert not tp.unresolved_by_trace(traces)
        (ran,) = tp.run_initial_trace(jf, x)
        torch.testing.assert_close(ran, expected_out.detach())
        printed.append(str(thunder.last_traces(jf)[0]))

    initial = printed[0]
    assert printed[1] == initial  # stable across runs: no object ids, no random names
    calls = [line.strip() for line in initial.splitlines() if "ScaledSin" in line and not line.strip().startswith("#")]
    assert [c.split(" = ")[1].split("(")[0] for c in calls] == ["ScaledSin", "ScaledSin_1", "ScaledSin"], initial
    lines = initial.splitlines()
    comments = [lines[i - 1].strip() for i, line in enumerate(lines) if line.strip() in calls]
    run_source = inspect.getsource(_two_scaled_sins)
    for comment, call_site in zip(comments, ("a = first(x)", "b = second(a)", "return first(b) + 1")):
        assert comment.startswith("# ") and comment.endswith(call_site), (comment, initial)
        assert call_site in run_source
    assert "grad_output" not in initial and "torch.cos" not in initial


NONDIFF_FLOAT_OUTPUT = """
import torch


class Split(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        a, b = x * 2, x * 3
        ctx.mark_non_differentiable(b)
        return a, b

    @staticmethod
    def backward(ctx, ga, gb):
        return ga * 5 + gb * 7
"""

#: Two-output Functions whose eager gradient routing thunder's own would get wrong, with
#: the loss taken inside the traced function and the outputs weighted unequally.
TWO_OUTPUTS = {
    # one tensor at two positions: eager gives the last position the gradient of both,
    # the first zero
    "same_tensor_twice": ((tc.GOLDEN / "same_tensor_twice" / "input.py").read_text(), "Twice"),
    # a float output marked non-differentiable takes no gradient, even when the loss uses it
    "nondiff_float_output": (NONDIFF_FLOAT_OUTPUT, "Split"),
}


@pytest.mark.parametrize("case", sorted(TWO_OUTPUTS))
@pytest.mark.parametrize("row", ROWS)
def test_two_outputs_get_eager_gradient_routing(row, case):
    import torch
    from thunder.dynamo import thunderfx

    source, name = TWO_OUTPUTS[case]
    original = getattr(load_module(source, f"{case}_original"), name).apply
    flat = getattr(load_module(flatten(source).source, f"{case}_flat"), name)

    def loss(fn, x):
        a, b = fn(x)
        return (a * 1.0).sum() + (b * 10.0).sum()

    x = torch.randn(3, requires_grad=True)
    (expected,) = torch.autograd.grad(loss(original, x), x)
    compile_ = thunder.jit if row == "thunder_jit" else thunderfx
    (got,) = torch.autograd.grad(compile_(lambda t: loss(flat, t))(x), x)
    torch.testing.assert_close(got, expected)


def test_a_tensor_passed_by_keyword_gets_its_gradient():
    """``SaveInputs.apply(x, w=w)`` gives ``w`` the gradient backward returns for it in
    eager on torch 2.13 (torch 2.9's ``apply`` takes no keywords: the positional call
    stands in; for the same reason dynamo, running the call on fake tensors, rejects it,
    so there is no thunderfx variant here)."""
    import torch

    source = "import torch\n\n\n" + inspect.getsource(dump_originals.SaveInputs)
    original = load_module(source, "keyword_original").SaveInputs.apply
    flat = load_module(flatten(source).source, "keyword_flat").SaveInputs
    x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    expected = torch.autograd.grad(original(x, w).sum(), (x, w))
    got = torch.autograd.grad(thunder.jit(lambda a, b: flat(a, w=b))(x, w).sum(), (x, w))
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("row", ROWS)
def test_needs_input_grad_of_an_intermediate_input(row):
    """An input computed inside the traced function (``a * 1``) needs a gradient; thunder's
    proxy of it says ``requires_grad=False`` at trace time, which must not drop it."""
    import torch
    from thunder.dynamo import thunderfx

    source = (tc.GOLDEN / "needs_input_grad" / "input.py").read_text()
    original = load_module(source, "nig_original").Mul.apply
    flat = load_module(flatten(source).source, "nig_flat").Mul

    def loss(fn, a, w):
        return fn(a * 1, w).sum()

    a, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    expected = torch.autograd.grad(loss(original, a, w), (a, w))
    compile_ = thunder.jit if row == "thunder_jit" else thunderfx
    got = torch.autograd.grad(compile_(lambda x, y: loss(flat, x, y))(a, w), (a, w))
    torch.testing.assert_close(got, expected)


TOO_FEW_GRADS = """
import torch


class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        return x * w

    @staticmethod
    def backward(ctx, g):
        return g * 7
"""


INPUT_AS_IS = (tc.GOLDEN / "return_input" / "input.py").read_text()


@pytest.mark.parametrize("row", ROWS)
def test_an_input_returned_as_is_keeps_the_custom_backward(row):
    """The jitted function returns what the Function returned as-is (its input): eager
    sends the output's gradient through the custom backward (``g * 0.25``). thunder runs
    a shallow copy as the identity and hands back the input itself, detached from every
    backward (its gradient was ``g``): the lookaside returns a view instead."""
    import torch
    from thunder.dynamo import thunderfx

    original = load_module(INPUT_AS_IS, "as_is_original").ScaleGrad.apply
    flat = load_module(flatten(INPUT_AS_IS).source, "as_is_flat").ScaleGrad
    x = torch.randn(3, requires_grad=True)
    (expected,) = torch.autograd.grad(original(x, 0.25).sum(), x)
    compile_ = thunder.jit if row == "thunder_jit" else thunderfx
    out = compile_(lambda t: flat(t, 0.25))(x)
    torch.testing.assert_close(out, x.detach())
    (got,) = torch.autograd.grad(out.sum(), x)
    torch.testing.assert_close(got, expected)


def test_an_item_read_in_forward_is_read_on_every_call():
    """``.item()`` in forward (ScaleByNorm) is a number proxy in the trace, read from each
    call's data: three calls of one jitted function, on different data, give eager's
    outputs and gradients (a value baked into the cached trace would give the first's)."""
    import torch

    original, rewritten = tc.modules("data_dependent_forward")
    jitted = thunder.jit(lambda t: rewritten.ScaleByNorm(t))
    for scale in (1.0, 5.0, 0.1):
        x = (torch.randn(4) * scale).requires_grad_()
        expected = original.ScaleByNorm.apply(x)
        got = jitted(x)
        torch.testing.assert_close(got, expected)
        torch.testing.assert_close(torch.autograd.grad(got.sum(), x), torch.autograd.grad(expected.sum(), x))


def _notes(exc: BaseException | None) -> list[str]:
    """The notes on ``exc`` and on the exceptions it was raised from."""
    notes: list[str] = []
    while exc is not None:
        notes += getattr(exc, "__notes__", [])
        exc = exc.__cause__ or exc.__context__
    return notes


@pytest.mark.parametrize(
    "driver,name,body",
    [
        ("compile_numpy_body", "NumpySin", "forward"),  # numpy needs a registration thunder lacks
        ("compile_rejects_fake_tensors", "NormalizeByMax", "forward"),  # .tolist(): data thunder has not
        ("record_callable_on_ctx/Recompute", "Recompute", "backward"),  # requires_grad_ in backward
    ],
)
def test_an_untraceable_body_is_named(driver, name, body):
    """thunder's error keeps its type and message (code may catch it) and gains a note
    naming the Function and the body thunder could not trace."""
    with pytest.raises(Exception) as info:
        tc.grads_of(thunder.jit(tc.body(driver, True)), tc.make_inputs(driver))
    note = f"raised while thunder traced the {body} of custom Function {name} (flattened by inliner)"
    assert note in _notes(info.value), _notes(info.value)


@pytest.mark.parametrize("driver", ["compile_lambda_argument", "compile_module_argument/LinearOfModule"])
def test_an_object_argument_is_refused_by_name(driver):
    (name,) = tc.functions(driver, True)
    with pytest.raises(
        Exception, match=rf"{name}: thunder cannot run this custom Function: its argument 1 is an object"
    ):
        tc.grads_of(thunder.jit(tc.body(driver, True)), tc.make_inputs(driver))


def test_too_few_gradients_raise_like_eager():
    import torch

    original = load_module(TOO_FEW_GRADS, "few_original").Mul.apply
    flat = load_module(flatten(TOO_FEW_GRADS).source, "few_flat").Mul
    x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        original(x, w).sum().backward()
    with pytest.raises(Exception, match=r"MulBackward returned an incorrect number of gradients \(expected 2, got 1\)"):
        thunder.jit(lambda a, b: flat(a, b))(x, w)


@pytest.mark.parametrize("row", ROWS)
def test_mark_dirty_is_refused_not_wrong(row):
    """A dirtied view of a larger tensor: eager gives the view's elements of the base the
    custom backward's gradient. thunder cannot express that, so the call is refused."""
    import torch
    from thunder.dynamo import thunderfx

    source = (tc.GOLDEN / "mark_dirty" / "input.py").read_text()
    original = load_module(source, "dirty_original").AddOneInplace.apply
    flat = load_module(flatten(source).source, "dirty_flat").AddOneInplace

    def loss(fn, a):
        b = a * 1
        fn(b[:2])
        return b.sum()

    a = torch.ones(4, requires_grad=True)
    (expected,) = torch.autograd.grad(loss(original, a), a)
    assert expected.tolist() == [2.0, 2.0, 1.0, 1.0]  # the custom backward (g * 2) on the view
    compile_ = thunder.jit if row == "thunder_jit" else thunderfx
    with pytest.raises(Exception, match="modifies an input in place"):
        compile_(lambda t: loss(flat, t))(a)


DATACLASS_ARGUMENTS = """
from dataclasses import dataclass

import torch


@dataclass
class Inner:
    scale: torch.Tensor


@dataclass
class Params:
    weight: torch.Tensor
    shift: float
    inner: Inner


class Affine(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, params):
        ctx.save_for_backward(params.weight, params.inner.scale)
        return x * params.weight * params.inner.scale + params.shift

    @staticmethod
    def backward(ctx, grad):
        weight, scale = ctx.saved_tensors
        return grad * weight * scale * 2, None  # twice the true derivative


class GradForParams(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, params):
        return x * params.weight

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


@dataclass
class WithFunction:
    fn: object


class CallsField(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, holder):
        return holder.fn(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, None
"""


def _dataclass_modules():
    return load_module(DATACLASS_ARGUMENTS, "dc_original"), load_module(flatten(DATACLASS_ARGUMENTS).source, "dc_flat")


def _params(module, torch):
    weight = torch.randn(4, requires_grad=True)  # eager gives it no gradient through the Function
    return module.Params(weight, 0.5, module.Inner(torch.randn(4)))


@pytest.mark.parametrize("row", ROWS)
def test_dataclass_arguments_are_laid_out_flat(row):
    """A dataclass argument (nested, a tensor field that requires grad, a number): the
    rewrite under thunder gives eager's values and custom gradients, sees a field set to
    another tensor on the next call, and its trace is a program calling ``Affine`` on the
    leaves. thunder on the original is recorded, not pinned."""
    import torch
    from thunder.dynamo import thunderfx

    original, flat = _dataclass_modules()
    torch.manual_seed(0)
    x = torch.randn(4, requires_grad=True)
    params = _params(original, torch)
    flat_params = flat.Params(params.weight, params.shift, flat.Inner(params.inner.scale))

    def run(fn, p):
        return lambda t: fn(t * 1, p) * 3

    compile_ = thunder.jit if row == "thunder_jit" else thunderfx
    jitted = compile_(run(flat.Affine, flat_params))
    for step in range(2):
        expected = run(original.Affine.apply, params)(x)
        (expected_grad,) = torch.autograd.grad(expected.sum(), x)
        got = jitted(x)
        assert torch.allclose(got, expected), step
        got_x, got_w = torch.autograd.grad(got.sum(), [x, params.weight], allow_unused=True)
        assert torch.allclose(got_x, expected_grad), step  # the custom backward (twice the derivative)
        assert got_w is None or not got_w.any(), step  # no gradient through the Function, as eager
        params.inner.scale = flat_params.inner.scale = torch.randn(4)  # seen on the next call
    if row == "thunder_jit":
        trace = thunder.last_traces(jitted)[0]
        (call,) = [b for b in trace.bound_symbols if b.sym.name == "Affine"]
        assert call.subsymbols  # the forward spelled out
        assert not tp.unresolved_by_trace([*thunder.last_traces(jitted), *thunder.last_backward_traces(jitted)])
        program_out = tp.run_initial_trace(jitted, x)  # with the scale set last
        assert torch.allclose(tp.flat_outputs(program_out)[0], run(original.Affine.apply, params)(x))
        try:
            thunder.jit(run(original.Affine.apply, params))(x)
            print("thunder on the original: runs")
        except Exception as exc:  # recorded, not pinned
            print(f"thunder on the original: {type(exc).__name__}: {exc}")


def test_a_gradient_for_a_dataclass_argument_raises_like_eager():
    import torch

    original, flat = _dataclass_modules()
    x = torch.randn(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="at position 2, but the corresponding forward input was not a Variable"):
        original.GradForParams.apply(x, _params(original, torch)).sum().backward()
    params = _params(flat, torch)
    with pytest.raises(RuntimeError, match="at position 2, but the corresponding forward input was not a Variable"):
        thunder.jit(lambda t: flat.GradForParams(t, params))(x)


def test_a_dataclass_holding_a_function_is_refused_by_name():
    import torch

    _, flat = _dataclass_modules()
    holder = flat.WithFunction(lambda t: t * 3)
    with pytest.raises(
        Exception, match="CallsField: thunder cannot run this custom Function: its argument 1 is an object"
    ):
        thunder.jit(lambda t: flat.CallsField(t, holder))(torch.randn(4, requires_grad=True))


def _thunderfx_graphs(compiled):
    """(graphs dynamo made, code of the inductor regions, every trace of the thunder regions)."""
    infos = compiled._backend.subgraph_infos
    inductor = [
        gm.code
        for info in infos
        for gm, fn in info.submodule_to_compiled_functions.items()
        if not str(fn.compiler).endswith("THUNDER")
    ]
    traces = [
        trace
        for info in infos
        for fn in info.thunder_compiled_fns
        for trace in (*thunder.last_traces(fn), *thunder.last_backward_traces(fn))
    ]
    return len(infos), inductor, traces


@pytest.mark.parametrize(
    "driver,name",
    [
        ("compile_numpy_body", "NumpySin"),  # numpy forward, traceable backward
        ("compile_side_effect_backward", "CountedTanh"),  # a backward run for real (call_bwd)
        ("compile_lambda_argument", "ApplyFn"),  # a function argument, called by both bodies
        ("compile_module_argument/RunModule", "RunModule"),  # a module argument, called by forward
    ],
)
def test_thunderfx_runs_the_split_path_inside_thunder(driver, name):
    """thunderfx on a Function dynamo traces through the split path: one dynamo graph (no
    break at the call), ``attach`` inside thunder as one symbol named after the original
    (its grad rule the custom backward: bwd's trace, or the ``call_bwd`` operator run on
    every backward), never in an inductor region; eager's gradients on three calls, with
    the backward's side effect on each."""
    import torch._dynamo
    from thunder.dynamo import thunderfx

    module = tc.modules(tc.DRIVERS[driver].case)[1]
    reset = getattr(module, "reset_side_effects", lambda: None)
    log = getattr(module, "side_effect_log", lambda: [])
    expected = [tc.reference(driver)[1]] * 3
    reset()
    eager_log = []
    for _ in range(3):
        tc.grads_of(tc.body(driver, True), tc.make_inputs(driver))
        eager_log.append(log())
    reset()
    torch._dynamo.reset()
    try:
        compiled = thunderfx(tc.body(driver, True))
        got, got_log = [], []
        for _ in range(3):
            got.append(tc.grads_of(compiled, tc.make_inputs(driver))[1])
            got_log.append(log())
        n_graphs, inductor, traces = _thunderfx_graphs(compiled)
    finally:
        torch._dynamo.reset()
    assert n_graphs == 1  # no graph break at the call
    assert not any("attach" in code for code in inductor), inductor
    assert any(b.sym.name == name for t in traces for b in t.bound_symbols), [str(t) for t in traces]
    assert tc.same(got, expected, False), "gradients differ from eager (custom backward)"
    assert got_log == eager_log
    assert not tp.unresolved_by_trace(traces)


@pytest.mark.parametrize("driver", ["compile_numpy_body", "compile_side_effect_backward"])
def test_torch_compile_keeps_the_split_path_where_thunder_is_loaded(driver):
    """Loading thunder does not change what torch.compile's own backends get: the split
    path (``attach`` behind one node returning a tuple, traced through by AOTAutograd),
    ``fullgraph=True`` included, with eager's custom gradients."""
    import torch
    import torch._dynamo

    torch._dynamo.reset()
    try:
        compiled = torch.compile(tc.body(driver, True), backend="aot_eager", fullgraph=True)
        _, got = tc.grads_of(compiled, tc.make_inputs(driver))
    finally:
        torch._dynamo.reset()
    assert tc.compare_grads(driver, got).ok
