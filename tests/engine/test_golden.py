"""Golden cases: the text is pinned, and every case is executed original-vs-rewritten.

A rewrite that differentiates through the forward instead of calling the custom
backward must fail here: every case's backward is deliberately not the true
derivative, and ``test_case_detects_ignored_backward`` proves the comparison would
notice.
"""

from __future__ import annotations

import libcst as cst
import pytest
import torch

import inliner.runtime
from inliner import flatten
from tests.support.golden import case_dirs, render, side_effects
from tests.support.harness import TORCH_VERSION, assert_same, differs, load_module, run_all

CASES = case_dirs()
IDS = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_text_matches_golden(case):
    output, diagnostics = render(case)
    assert output == (case / "output.py").read_text(), "run scripts/update_golden.py and review the diff"
    assert diagnostics == (case / "diagnostics.txt").read_text()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_second_pass_changes_nothing(case):
    output = (case / "output.py").read_text()
    cst.parse_module(output)
    again = flatten(output, path="output.py")
    assert again.source == output


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_refusals_leave_file_and_name_class(case):
    source = (case / "input.py").read_text()
    result = flatten(source, path="input.py")
    for name in result.refused:
        assert any(d.name == name and d.code != "INL001" and name in d.message for d in result.diagnostics)
    if not result.flattened:
        assert result.source == source


def _original_source(case) -> str:
    """The input, or for a dumped graph (not runnable as printed) the eager code it came from."""
    reference = case / "reference.py"
    return (reference if reference.is_file() else case / "input.py").read_text()


def _comparable(case, results: dict) -> dict:
    """An op call has no Function name of its own (the op's eager path names its node
    ``ApplyTemplateBackward``; a dump names the original only in comments), so backward
    node names are compared for Function subclasses only."""
    if not case.name.startswith("hop_"):
        return results

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "grad_fn"}
        if isinstance(value, (list, tuple)):
            return type(value)(strip(v) for v in value)
        return value

    return strip(results)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_rewritten_behaves_like_original(case):
    source = (case / "input.py").read_text()
    if TORCH_VERSION < (2, 10) and not (case / "reference.py").is_file() and "saved_for_backward_idx" in source:
        pytest.skip("the original calls the torch 2.13 form of autograd_function_apply (this is torch <= 2.9)")
    original = load_module(_original_source(case), f"{case.name}_original", case)
    rewritten = load_module((case / "output.py").read_text(), f"{case.name}_rewritten", case)
    original_results = run_all(original)
    assert original_results, f"{case.name} defines no scenario_* function"
    assert_same(_comparable(case, original_results), _comparable(case, run_all(rewritten)), case.name)


def _differentiate_through_fwd(fwd, bwd, *, name, **spec):
    """A deliberately wrong runtime: ignores bwd and lets autograd trace fwd."""

    def flat(*args, **kwargs):
        if spec.get("fwd_needs_input_grad"):
            kwargs["needs_input_grad"] = tuple(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        with_grad = fwd(*args, **kwargs)[0]
        return with_grad

    flat.apply = flat
    return flat


@pytest.mark.parametrize(
    "case", [c for c in CASES if (c / "output.py").read_text() != (c / "input.py").read_text()], ids=lambda c: c.name
)
def test_case_detects_ignored_backward(case, monkeypatch):
    """The comparison above can fail: a runtime that skips the custom backward is caught."""
    original = run_all(load_module(_original_source(case), f"{case.name}_original", case))
    monkeypatch.setattr(inliner.runtime, "custom_vjp", _differentiate_through_fwd)
    broken = run_all(load_module((case / "output.py").read_text(), f"{case.name}_broken", case))
    assert differs(original, broken), (
        f"{case.name}: its backward equals the true derivative; make it deliberately different"
    )


def _logged_cases() -> list:
    return [c for c in CASES if side_effects(load_module(_original_source(c), f"{c.name}_probe", c)) is not None]


LOGGED = _logged_cases()


@pytest.mark.parametrize("case", LOGGED, ids=[c.name for c in LOGGED])
def test_side_effects_match_the_original(case):
    """The rewrite changes Python state as the original does, call for call (eager)."""
    logs = []
    for label, text in (("original", _original_source(case)), ("rewritten", (case / "output.py").read_text())):
        module = load_module(text, f"{case.name}_{label}_log", case)
        reset, log = side_effects(module)
        reset()
        run_all(module)
        logs.append(log())
    assert logs[0], f"{case.name}: its scenarios change nothing the log records"
    assert_same(logs[0], logs[1], f"{case.name} side effects")


def _bodies_run_twice(fwd, bwd, **spec):
    """A deliberately wrong runtime: every body runs once more than it should (as if traced first)."""

    def twice(body):
        def run(*args, **kwargs):
            body(*args, **kwargs)
            return body(*args, **kwargs)

        return run

    return _REAL_CUSTOM_VJP(twice(fwd), twice(bwd), **spec)


def _bodies_keep_their_first_arguments(fwd, bwd, **spec):
    """A deliberately wrong runtime for effects that are plain sets, which a second run
    repeats to the same state: every body runs on its first call's arguments, as an
    effect traced once keeps the values it was traced with."""

    def stale(body):
        first: list = []

        def run(*args, **kwargs):
            first.append((args, kwargs))
            args, kwargs = first[0]
            return body(*args, **kwargs)

        return run

    return _REAL_CUSTOM_VJP(stale(fwd), stale(bwd), **spec)


_REAL_CUSTOM_VJP = inliner.runtime.custom_vjp


@pytest.mark.parametrize("case", LOGGED, ids=[c.name for c in LOGGED])
def test_side_effect_comparison_can_fail(case, monkeypatch):
    """A runtime that runs the bodies one extra time, or on stale arguments, gives other
    logs: the comparison above has teeth."""
    original = load_module(_original_source(case), f"{case.name}_original_log", case)
    reset, log = side_effects(original)
    reset()
    run_all(original)
    broken_logs = []
    for label, runtime in (("twice", _bodies_run_twice), ("stale", _bodies_keep_their_first_arguments)):
        monkeypatch.setattr(inliner.runtime, "custom_vjp", runtime)
        broken = load_module((case / "output.py").read_text(), f"{case.name}_{label}", case)
        reset_broken, log_broken = side_effects(broken)
        reset_broken()
        run_all(broken)
        broken_logs.append(log_broken())
    assert any(differs(log(), broken_log) for broken_log in broken_logs)
