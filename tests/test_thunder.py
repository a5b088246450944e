"""Thunder tier of the tracer matrix: ``thunder.jit`` and ``thunderfx`` on the rewrite.

Runs only where lightning-thunder imports (``bash scripts/thunder_env.sh`` builds a
venv with torch 2.9.1 + lightning-thunder 0.2.6; then
``/tmp/thunder-venv/bin/python -m pytest -m thunder tests/test_thunder.py``).
Elsewhere every test here is skipped.

| row | the rewrite must |
| --- | --- |
| ``thunder_jit`` | gradients equal eager; every call is a thunder symbol named after the original whose subsymbols spell out the forward's body; no ``autograd_function_apply`` in any trace |
| ``thunderfx`` | gradients equal eager; no ``autograd_function_apply`` in any graph or trace thunder receives |

How the rewrite gets there: under ``thunder.jit`` the flat callable sees thunder
proxies and applies its thunder carrier (a combined-style twin that saves every
tensor residual), which thunder traces through its own ``autograd.Function``
support. Under ``thunderfx`` dynamo hands thunder one plain call node per flat
callable; thunder 0.2.6 has no mapping for it, so its splitter runs that node
through its fallback (inductor) and thunder gets the rest.

Known failures of the rewrite are listed with the measured reason in
``REWRITE_KNOWN_FAILURES`` and asserted, so a thunder upgrade that fixes one shows up.
"""

from __future__ import annotations

import warnings

import pytest

import tracer_cases as tc

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

_ONE_OUTPUT = "has 2 proxies but expected 1"
REWRITE_KNOWN_FAILURES: dict[tuple[str, str], str] = {
    # thunder 0.2.6's Function support (jit_ext.py grad_transform) checks that a
    # custom Function has exactly one output.
    ("thunder_jit", "materialize_grads"): _ONE_OUTPUT,
    ("thunder_jit", "multi_output_nondiff"): _ONE_OUTPUT,
    ("thunder_jit", "hop_dump_instantiated"): _ONE_OUTPUT,
    ("thunder_jit", "hop_dump_local_alias"): _ONE_OUTPUT,
    ("thunder_jit", "hop_dump_self_arguments"): _ONE_OUTPUT,
    # ... and does not accept a non-tensor output or one tensor returned twice
    ("thunder_jit", "list_and_nontensor_outputs/WithInt"): "'int' object has no attribute 'replace_name'",
    ("thunder_jit", "same_tensor_twice"): "Trying to add the name grad_",
    # a setup_context-style Function with two outputs and a jvp: thunder generates a
    # backward with a duplicate parameter name (the original fails earlier, see below)
    ("thunder_jit", "jvp_forward_mode/Cube"): "duplicate argument",
    # in-place on an input inside a custom Function: thunder's alias pass loops
    ("thunder_jit", "mark_dirty"): "Cycle detected in swap map for aliases updates",
    # autocast around a custom Function: thunder's autocast exit symbol fails (the original too)
    ("thunder_jit", "amp_decorators/autocast"): "autocast_exit",
    # thunderfx: the flat call runs in the fallback (inductor) region; an in-place
    # (mark_dirty) op on that region's *input* loses the custom backward in
    # AOTAutograd on torch 2.9.1 (see test_tracers' mark_dirty compiled-input test)
    ("thunderfx", "mark_dirty"): "custom backward dropped",
    ("thunderfx", "hop_dump_dirty"): "gradients differ from eager",
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
        "setup_context_style": "AttributeError",
        "vjp_and_self": "You must implement either the backward or vjp method",
        "list_and_nontensor_outputs/WithInt": "replace_name",
        "same_tensor_twice": "Trying to add the name grad_",
        "getattr_with_default/MaybeResidual": "UnboundLocalError",  # getattr(ctx, name, default)
        "jvp_combined_style": "AttributeError: save_for_forward",
        "jvp_forward_mode/Cube": "takes 1 positional arguments, but 2 were given",
    },
    "thunderfx": {
        # every original reaches thunder as torch.ops.higher_order.autograd_function_apply ...
        **{d: "autograd_function_apply reaches thunder" for d in DRIVERS},
        # ... except where dynamo or thunder fails first, or dynamo falls back to eager
        "amp_decorators/autocast": "Expected dtype",
        "return_input": "KeyError: 'autograd_function_apply'",
        "list_and_nontensor_outputs/WithInt": "BackendCompilerFailed",
        "same_tensor_twice": "AssertionError",
        "vjp_and_self": None,  # dynamo does not support `vjp`; the call runs eagerly
        # dynamo falls back to eager for a classmethod backward and for Functions with a jvp
        "classmethod_backward": None,
        "jvp_combined_style": None,
        "jvp_forward_mode/Cube": None,
        "jvp_forward_mode/Scale": None,
    },
}


def _params():
    return [pytest.param(row, driver, id=f"{row}-{driver}") for row in ROWS for driver in DRIVERS]


@pytest.mark.parametrize("row,driver", _params())
def test_rewrite(row, driver):
    outcome = tc.run(row, driver, rewritten=True)
    known = REWRITE_KNOWN_FAILURES.get((row, driver))
    if known is not None:
        assert not outcome.ok and known in outcome.reason, outcome.reason
        return
    assert outcome.ok, f"{row} on {driver}: {outcome.reason}"
    if row == "thunder_jit":
        assert all(outcome.details["spelled_out"].values())


@pytest.mark.parametrize("row,driver", _params())
def test_original(row, driver):
    if not tc.has_original(driver):
        pytest.skip("the original is a dumped graph calling autograd_function_apply, not a Function")
    outcome = tc.run(row, driver, rewritten=False)
    expected = ORIGINAL_FAILS[row].get(driver)
    if expected is None:
        assert outcome.ok, outcome.reason
    else:
        assert not outcome.ok and expected in outcome.reason, outcome.reason


def test_jit_trace_spells_out_the_forward():
    """The basic_linear trace: one MyLinear symbol whose subsymbols are the matmul and the scale."""
    outcome = tc.run("thunder_jit", "basic_linear", rewritten=True)
    assert outcome.ok, outcome.reason
    trace = outcome.details["trace"]
    assert "MyLinear_" in trace and "ltorch.matmul" in trace and "autograd_function_apply" not in trace
