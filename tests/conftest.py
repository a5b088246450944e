import pytest


def pytest_collection_modifyitems(config, items):
    """``slow`` tests (every inductor row beyond CI's subset, long property runs) are skipped,
    with the reason, unless ``-m`` names them (``python -m pytest -m slow ...``)."""
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _engine_internal_errors_fail_the_test(request, monkeypatch):
    """``flatten`` turns an engine bug into an INL002 (or INL003) result instead of raising, so a test
    that only checks the text could pass over one: any internal error fails the test
    (with the original exception) unless the test injects it (``@pytest.mark.engine_bug``)."""
    if request.node.get_closest_marker("engine_bug") is not None:
        yield
        return
    import inliner.engine
    import inliner.engine.function_class.lower_class
    import inliner.engine.lowering
    import inliner.engine.op_call.lower_call
    from inliner.engine.diagnostics import internal_error
    from inliner.engine.invariants import check_no_new_names

    seen: list[BaseException] = []

    def recording(exc: BaseException) -> str:
        seen.append(exc)
        return internal_error(exc)

    def checking(*args, **kwargs) -> None:
        try:
            check_no_new_names(*args, **kwargs)
        except Exception as exc:  # a Refuse: the rewrite failed the invariant (INL003)
            seen.append(exc)
            raise

    for module in (inliner.engine, inliner.engine.lowering):
        monkeypatch.setattr(module, "internal_error", recording)
    for module in (inliner.engine.function_class.lower_class, inliner.engine.op_call.lower_call):
        monkeypatch.setattr(module, "check_no_new_names", checking)
    yield
    if seen:
        raise AssertionError(f"the engine hit {len(seen)} internal error(s) (INL002/INL003); the first:") from seen[0]
