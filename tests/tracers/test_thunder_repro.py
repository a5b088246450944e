"""Thunder tier, issue 3: flatten real ``thunderfx`` reproducer scripts.

Small functions and a Module call custom ``autograd.Function``s whose backward is
deliberately *not* the derivative of their forward. Each is compiled with
``thunder.dynamo.thunderfx``; ``ThunderCompiler.save_reproducer_to_folder`` (thunder
0.2.6 keeps it on the backend, ``thunderfx(fn)._backend``) writes one
``graph0_thunder_0_repro.py`` per thunder region. Such a script holds a
``class DynamoModule(torch.nn.Module)`` whose ``forward`` calls
``torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, ...,
args_tensor_mask=[...], non_differentiable_idx=[...])`` on nested
``class fwd_body_0(torch.nn.Module)`` bodies (torch 2.9 ABI: a leading ``ctx``
parameter), reached through ``fwd_body_0 = self.fwd_body_0()``; its own entry point
is ``def test_graph0_thunder_0()`` (``thunder.jit(DynamoModule())`` forward and
backward against eager of the same module), also run under ``__main__``.

For every case the test flattens the script, writes ``*_repro_flat.py`` next to it
and checks:

- the reproducer has the shape above, the engine flattens every call and refuses nothing;
- the scripts' own test functions, run with ``python -m pytest`` in a fresh process,
  pass for the original and for the flattened script;
- ``thunder.jit`` of the flattened ``DynamoModule`` gives the values and gradients of
  eager of the original Function (its custom backward: differentiating through the
  forward gives other gradients), and no thunder trace of it (``last_traces`` /
  ``last_backward_traces``) contains the op;
- every such trace is a program (tests/support/thunder_programs.py), which the original's are not.

Runs only where lightning-thunder imports (``bash scripts/thunder_env.sh``; then
``/tmp/thunder-venv/bin/python -m pytest -m thunder tests/tracers/test_thunder_repro.py``).
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    thunder = pytest.importorskip("thunder", reason="lightning-thunder is not installed (scripts/thunder_env.sh)")
    import torch
    from thunder.dynamo import thunderfx
    from torch import nn

from inliner.engine import flatten
from tests.support import thunder_programs as tp

pytestmark = [
    pytest.mark.thunder,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

# --------------------------------------------------------------------------- originals
# Every backward is a deliberate lie (an extra factor), so a run that loses it shows.

from tests.support.dump_originals import (  # noqa: E402
    Scaled,
    f_attr,
    f_intermediate,
    f_nested,
    f_save_inputs,
    f_two_functions,
    f_two_outputs,
)
from tests.support.dump_originals import through_forward as _through_forward  # noqa: E402

# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    target: Callable[[], Callable]  # builds the function or Module
    n_inputs: int
    flat_names: tuple[str, ...]  # the flat callables the engine must define


CASES: dict[str, Case] = {
    "saved_inputs": Case(lambda: f_save_inputs, 2, ("SaveInputs",)),
    "saved_intermediate": Case(lambda: f_intermediate, 1, ("SaveIntermediate",)),
    "nontensor_ctx_attr": Case(lambda: f_attr, 1, ("NonTensorAttr",)),
    "two_outputs_one_nondiff": Case(lambda: f_two_outputs, 1, ("TwoOutputs",)),
    "module_with_parameter": Case(Scaled, 1, ("SaveInputs",)),
    "two_functions_one_graph": Case(lambda: f_two_functions, 2, ("SaveInputs", "SaveIntermediate")),
    "three_nested_calls": Case(lambda: f_nested, 2, ("SaveInputs", "SaveIntermediate", "NonTensorAttr")),
}
IDS = list(CASES)
SCRIPT = "graph0_thunder_0_repro.py"
FLAT_SCRIPT = "graph0_thunder_0_repro_flat.py"


# --------------------------------------------------------------------------- fixtures


@dataclass
class Generated:
    folder: Path
    fn: Callable
    inputs: list[torch.Tensor]
    original: str  # the reproducer script thunder wrote
    result: Any  # the engine's FlattenResult

    @property
    def script(self) -> Path:
        return self.folder / SCRIPT

    @property
    def flat_script(self) -> Path:
        return self.folder / FLAT_SCRIPT


def _leaves(gen: Generated) -> list[torch.Tensor]:
    params = list(gen.fn.parameters()) if isinstance(gen.fn, nn.Module) else []
    return [*gen.inputs, *params]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, Generated]:
    """Run every case under thunderfx, save its reproducer and flatten it."""
    root = tmp_path_factory.mktemp("thunder_repros")
    out = {}
    for name, case in CASES.items():
        torch.manual_seed(0)
        fn = case.target()
        inputs = [torch.randn(4, requires_grad=True) for _ in range(case.n_inputs)]
        torch._dynamo.reset()
        try:
            compiled = thunderfx(fn)
            compiled(*inputs).backward()
            folder = root / name
            compiled._backend.save_reproducer_to_folder(folder)
        finally:
            torch._dynamo.reset()
        for leaf in [*inputs, *(fn.parameters() if isinstance(fn, nn.Module) else ())]:
            leaf.grad = None  # the tests differentiate with autograd.grad
        scripts = sorted(p.name for p in folder.glob("*.py"))
        assert scripts == [SCRIPT], scripts  # one graph, not split: one thunder region
        original = (folder / SCRIPT).read_text()
        result = flatten(original, path=str(folder / SCRIPT))
        (folder / FLAT_SCRIPT).write_text(result.source)
        out[name] = Generated(folder, fn, inputs, original, result)
    return out


@pytest.fixture(scope="module")
def own_tests(generated) -> dict[str, tuple[bool, str]]:
    """The scripts' own test functions, run by ``python -m pytest`` in one fresh process.

    Maps ``<case>/<script>`` to (passed, short failure message).
    """
    root = next(iter(generated.values())).folder.parent
    (root / "pytest.ini").write_text("[pytest]\n")  # not this repository's settings
    scripts = [f"{name}/{s}" for name in generated for s in (SCRIPT, FLAT_SCRIPT)]
    env = {**os.environ, "COLUMNS": "1000", "PYTHONWARNINGS": "ignore"}
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-rA", "--tb=no", "-p", "no:cacheprovider",
            "--import-mode=importlib", "-c", str(root / "pytest.ini"), "--rootdir", str(root),
            *scripts,
        ],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    results: dict[str, tuple[bool, str]] = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"^(PASSED|FAILED|ERROR) (\S+?)(?:::\S+)?(?: - (.*))?$", line)
        if m:
            results[m.group(2)] = (m.group(1) == "PASSED", m.group(3) or "")
    missing = [s for s in scripts if s not in results]
    assert not missing, f"no result for {missing}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return results


_loaded = itertools.count()


def _load(path: Path, warm: bool):
    """Import a reproducer script as a fresh module; ``warm`` builds the flat callables'
    carriers first, as an eager call would (the cold path is the script's own test)."""
    spec = importlib.util.spec_from_file_location(f"_thunder_repro_{next(_loaded)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if warm:
        for value in list(vars(module).values()):
            if callable(value) and hasattr(value, "carriers") and hasattr(value, "fwd"):
                value.carriers()
    return module


def _graph_args(gen: Generated, module) -> list[torch.Tensor]:
    """The original's tensors in the order of the DynamoModule's placeholders
    (``l_x_`` -> ``x``, ``l_self_parameters_weight_`` -> ``self.weight``)."""
    fn = gen.fn
    names = list(inspect.signature(fn.forward if isinstance(fn, nn.Module) else fn).parameters)
    by_name = dict(zip(names, gen.inputs))
    if isinstance(fn, nn.Module):
        by_name.update({f"self_parameters_{n}": p for n, p in fn.named_parameters()})
    placeholders = list(inspect.signature(module.DynamoModule.forward).parameters)[1:]
    return [by_name[re.fullmatch(r"l_(.*)_", p).group(1)] for p in placeholders]


def _grads(out: torch.Tensor, leaves: list[torch.Tensor]) -> tuple:
    return torch.autograd.grad(out, leaves, allow_unused=True)


def _symbol_names(traces) -> set[str]:
    names: set[str] = set()

    def walk(bsyms):
        for b in bsyms:
            names.add(b.sym.name)
            walk(b.subsymbols)

    for trace in traces:
        walk(trace.bound_symbols)
    return names


def _jit_run(gen: Generated, path: Path, warm: bool = True):
    module = _load(path, warm=warm)
    jitted = thunder.jit(module.DynamoModule())
    args = _graph_args(gen, module)
    out = jitted(*args)
    grads = _grads(out, _leaves(gen))
    traces = list(thunder.last_traces(jitted)) + list(thunder.last_backward_traces(jitted))
    return out, grads, traces


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("name", IDS)
def test_reproducer_holds_the_op(generated, name):
    """What thunder 0.2.6 writes: a DynamoModule calling the torch 2.9 op on nested bodies."""
    src = generated[name].original
    assert "class DynamoModule(torch.nn.Module):" in src
    assert "torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, " in src
    assert "fwd_body_0 = self.fwd_body_0()" in src
    assert "    class fwd_body_0(torch.nn.Module):" in src and "    class bwd_body_0(torch.nn.Module):" in src
    assert "def forward(self, ctx : torch.autograd.function.Function, " in src  # the leading ctx
    assert "args_tensor_mask = [" in src
    assert "def test_graph0_thunder_0():" in src
    assert "compiled_model = thunder.jit(model, " in src
    assert 'if __name__ == "__main__":\n    test_graph0_thunder_0()' in src
    assert src.count("autograd_function_apply(") == len(CASES[name].flat_names)


@pytest.mark.parametrize("name", IDS)
def test_engine_flattens_the_reproducer(generated, name):
    gen = generated[name]
    result = gen.result
    assert not result.refused, [d.format() for d in result.diagnostics]
    assert tuple(result.flattened) == CASES[name].flat_names
    src = result.source
    assert "autograd_function_apply(" not in src and "higher_order" not in src
    assert "fwd_body_" not in src and "bwd_body_" not in src
    assert "from inliner.runtime import custom_vjp" in src
    assert "def test_graph0_thunder_0():" in src  # the script's own entry points are kept
    assert flatten(src).source == src
    assert gen.flat_script.read_text() == src


@pytest.mark.parametrize("name", IDS)
def test_original_script_own_test(own_tests, name):
    passed, message = own_tests[f"{name}/{SCRIPT}"]
    assert passed, message


@pytest.mark.parametrize("name", IDS)
def test_flattened_script_own_test(own_tests, name):
    """``python -m pytest graph0_thunder_0_repro_flat.py`` in a fresh process (a cold start:
    thunder.jit meets the flat callables before anything ran them eagerly)."""
    passed, message = own_tests[f"{name}/{FLAT_SCRIPT}"]
    assert passed, message


@pytest.mark.parametrize("name", IDS)
def test_flattened_script_own_test_warm(generated, name):
    """The script's own test function, in this process, after the carriers are built eagerly."""
    module = _load(generated[name].flat_script, warm=True)
    module.test_graph0_thunder_0()


@pytest.mark.parametrize("name", IDS)
def test_flattened_module_under_thunder_jit(generated, name):
    """thunder.jit of the flattened DynamoModule: eager values and custom-backward gradients
    of the original Function; no symbol of any thunder trace is the op."""
    gen = generated[name]
    leaves = _leaves(gen)
    expected_out = gen.fn(*gen.inputs)
    expected = _grads(expected_out, leaves)
    true = _grads(_through_forward(gen.fn, gen.inputs), leaves)
    assert any(not torch.allclose(t, e) for t, e in zip(true, expected)), "the backward must be custom"

    # the original script under thunder.jit: the op reaches thunder as a symbol
    _, original_grads, original_traces = _jit_run(gen, gen.script, warm=False)
    assert any("autograd_function_apply" in n for n in _symbol_names(original_traces))
    for g, e in zip(original_grads, expected):
        torch.testing.assert_close(g, e)

    out, got, traces = _jit_run(gen, gen.flat_script)
    torch.testing.assert_close(out, expected_out)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e)
    assert any(not torch.allclose(t, g) for t, g in zip(true, got))

    assert traces and len(traces) >= 2  # forward traces and the backward trace
    symbols = _symbol_names(traces)
    assert not [n for n in symbols if "autograd_function_apply" in n or "higher_order" in n], symbols
    for flat in CASES[name].flat_names:
        assert flat in symbols, (flat, symbols)  # named after the original Function
    text = "\n".join(str(t) for t in traces)
    assert "higher_order" not in text and "autograd_function_apply(" not in text


@pytest.mark.parametrize("name", IDS)
def test_no_trace_text_mentions_the_op(generated, name):
    """The issue's literal wording: no thunder trace of the rewritten module *mentions*
    ``autograd_function_apply``, not even as a variable name."""
    _, _, traces = _jit_run(generated[name], generated[name].flat_script)
    text = "\n".join(str(t) for t in traces)
    # every mention is the variable name: never called, never a symbol
    assert not re.search(r"\bautograd_function_apply(_\d+)?\(", text)
    assert not [n for n in _symbol_names(traces) if "autograd_function_apply" in n]
    assert "autograd_function_apply" not in text


@pytest.mark.parametrize("name", IDS)
def test_flattened_module_traces_are_programs(generated, name):
    """Every thunder trace of the flattened DynamoModule is a program: each name it calls
    is bound in its ``python_ctx()``; the initial trace, run as one (under thunder.jit),
    gives eager's outputs, and its body the custom backward's gradients. The original
    script's traces are not: thunder's lookaside for the op registers a symbol
    (``higher_order_autograd_function_apply_<random>_<id>_<n>``) nothing binds."""
    gen = generated[name]
    leaves = _leaves(gen)
    expected_out = gen.fn(*gen.inputs)
    expected = _grads(expected_out, leaves)

    original = _load(gen.script, warm=False)
    jitted = thunder.jit(original.DynamoModule())
    jitted(*_graph_args(gen, original))
    missing = tp.unresolved_by_trace(list(thunder.last_traces(jitted)) + list(thunder.last_backward_traces(jitted)))
    assert any("autograd_function_apply" in n for names in missing.values() for n in names), missing

    module = _load(gen.flat_script, warm=True)
    jitted = thunder.jit(module.DynamoModule())
    args = _graph_args(gen, module)
    jitted(*args)
    traces = list(thunder.last_traces(jitted)) + list(thunder.last_backward_traces(jitted))
    assert not tp.unresolved_by_trace(traces)
    (out,) = tp.flat_outputs(tp.run_initial_trace(jitted, *args))
    torch.testing.assert_close(out, expected_out.detach())
    (body,) = tp.flat_outputs(tp.run_initial_trace(jitted, *args, decorators=False))
    for g, e in zip(_grads(body, leaves), expected):
        torch.testing.assert_close(g, e)
