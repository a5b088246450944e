"""Differential fuzzing of dumped graphs with chained op calls, bounded CI profile.

``tests/support/fuzz_gen_dumps.py`` writes random dynamo dumps (torch 2.13 ``print_readable``
form, or the torch 2.9 form of a thunderfx reproducer) in which two to four
``autograd_function_apply`` calls feed each other's results, together with the eager
Functions they stand for; ``fuzz_oracle.check_dump`` flattens the dump and compares it
with those Functions. Fixed seed, no example database: CI is reproducible. More
examples: ``python scripts/fuzz_long.py --dumps``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import inliner.runtime
from tests.support.fuzz_gen import DataChooser
from tests.support.fuzz_gen_dumps import generate_dump, generate_dump_from_seed
from tests.support.fuzz_oracle import check_dump

pytestmark = pytest.mark.filterwarnings("ignore")


def _report(gen, outcome) -> str:
    failures = "\n\n".join(outcome.failures)
    return f"{failures}\n\n--- dump ---\n{gen.source}\n--- reference ---\n{gen.reference}\n--- rewrite ---\n{outcome.output}"


@settings(max_examples=60, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_generated_dumps_behave_like_their_functions(data):
    gen = generate_dump(DataChooser(data))
    outcome = check_dump(gen)
    assert not outcome.failures, _report(gen, outcome)


def _differentiate_through_fwd(fwd, bwd, *, name, **spec):
    """A deliberately wrong runtime: ignores bwd and lets autograd trace fwd."""

    def flat(*args, **kwargs):
        return fwd(*args, **kwargs)[0]

    flat.apply = flat
    return flat


def test_dump_oracle_catches_an_ignored_backward(monkeypatch):
    """Every generated backward is deliberately wrong, so skipping it must show up."""
    monkeypatch.setattr(inliner.runtime, "custom_vjp", _differentiate_through_fwd)
    for seed in range(6):
        gen = generate_dump_from_seed(seed)
        outcome = check_dump(gen)
        assert any(f.startswith("behaviour-differs") for f in outcome.failures), gen.source


def test_generator_covers_both_forms_and_chains():
    """The seeds CI runs reach what the generator is for."""
    features = set()
    for seed in range(40):
        features |= generate_dump_from_seed(seed).features
    wanted = {
        "abi_2.9",
        "abi_2.13",
        "thunderfx_repro",
        "one_nested_comment",
        "annotated_results",
        "lifted_operand",
        "local_return",
        "calls_4",
    }
    assert wanted <= features, wanted - features


def test_nested_applies_under_one_comment_are_named_in_call_order():
    """thunderfx prints one comment for ``C.apply(B.apply(A.apply(x)))`` and the calls in
    the order they run (A first); the backward node names show whether the flat
    callables got the right names. The hypothesis profile above rarely draws this layout."""
    seeds = [s for s in range(200) if "one_nested_comment" in generate_dump_from_seed(s).features][:4]
    assert len(seeds) == 4
    for seed in seeds:
        gen = generate_dump_from_seed(seed)
        outcome = check_dump(gen)
        assert not outcome.failures, _report(gen, outcome)
