"""The import hook: flattening at import time, scoped to the named packages, cached,
with tracebacks on the user's own lines, and never breaking an import."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import traceback
import uuid
from importlib.machinery import SourceFileLoader
from pathlib import Path

import pytest
import torch

import inliner
import inliner.engine
import inliner.hook
import inliner.hook._bases
from inliner.hook import InlinerHookWarning, _cache
from inliner.hook._cache import TAG, cache_path
from inliner.hook._linemap import compile_mapped
from inliner.hook._pth import PTH_LINE, PTH_NAME
from tests.support.golden import GOLDEN
from tests.support.harness import assert_same, run_all
from tests.support.subclass_tree import outcomes, write_tree

SETUP_CONTEXT_MESSAGE = "must override the setup_context staticmethod"

SEVEN = '''\
"""Combined-style Functions: torch.func rejects them as written."""
import torch


class Seven(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 7  # deliberately not the true derivative, cos(x)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


def f(x):
    return Scale.apply(Seven.apply(x), 1.0).sum()
'''

BOOM = '''\
import torch


class Boom(torch.autograd.Function):
    """Raises where it is told to."""

    @staticmethod
    def forward(ctx, x, fail_forward):
        ctx.save_for_backward(x)
        if fail_forward:
            raise ValueError("forward boom")
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        raise ValueError("backward boom")
'''

PARTLY = """\
import torch


STASHED = []


def stash(ctx, x):
    ctx.save_for_backward(x)
    STASHED.append(ctx)  # ctx outlives the call: no rewrite can follow it


class Helper(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        stash(ctx, x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


class Good(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""

PLAIN = "VALUE = 42\n"


@pytest.fixture
def make_package(tmp_path, monkeypatch):
    """Write packages under a fresh sys.path entry; forget them (and their modules) afterwards."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # the environment may set it
    made: list[str] = []

    def make(files: dict[str, str], name: str | None = None) -> tuple[str, Path]:
        name = name or f"inl_hook_{uuid.uuid4().hex[:8]}"
        package = root / name
        package.mkdir()
        (package / "__init__.py").write_text("")
        for module, text in files.items():
            (package / f"{module}.py").write_text(text)
        made.append(name)
        importlib.invalidate_caches()
        return name, package

    yield make
    for name in made:
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


def _forget(name: str) -> None:
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


# --- what the hook is for -------------------------------------------------------------


def test_torch_func_and_compile_work_under_the_hook(make_package):
    name, _ = make_package({"ops": SEVEN})
    x = torch.tensor([0.0, 1.0, 2.0])

    plain = importlib.import_module(f"{name}.ops")  # control: imported as written
    assert isinstance(plain.Seven, type)
    with pytest.raises(RuntimeError, match=SETUP_CONTEXT_MESSAGE):
        torch.func.grad(plain.f)(x)
    _forget(name)

    with inliner.hook.install([name]):
        ops = importlib.import_module(f"{name}.ops")
    assert not isinstance(ops.Seven, type), "flattened into a flat callable"
    torch.testing.assert_close(torch.func.grad(ops.f)(x), torch.full((3,), 7.0), rtol=0, atol=0)

    graphs = []
    compiled = torch.compile(ops.f, backend=lambda gm, ex: (graphs.append(gm), gm.forward)[1], fullgraph=True)
    xg = x.clone().requires_grad_()
    compiled(xg).backward()
    torch.testing.assert_close(xg.grad, torch.full((3,), 7.0), rtol=0, atol=0)
    assert graphs and all("higher_order" not in gm.code for gm in graphs)
    assert any("Seven" in gm.code for gm in graphs), "one plain call to the flat function"


@pytest.mark.parametrize("case", ["node_attributes", "node_attributes_record"])
def test_the_node_keeps_the_originals_attributes_under_the_hook(make_package, case):
    """Through the hook as in the golden case: ``out.grad_fn`` reads and writes what forward
    set on ctx, and backward sees the writes (torchdiffeq's own tests do this)."""
    name, _ = make_package({"ops": (GOLDEN / case / "input.py").read_text()})
    expected = run_all(importlib.import_module(f"{name}.ops"))
    _forget(name)
    with inliner.hook.install([name]):
        ops = importlib.import_module(f"{name}.ops")
    functions = [v for v in vars(ops).values() if isinstance(v, type) and issubclass(v, torch.autograd.Function)]
    assert not functions, "flattened into flat callables"
    assert_same(expected, run_all(ops), case)


def test_traceback_shows_the_users_file_lines_and_text(make_package):
    name, package = make_package({"boom": BOOM})
    path = package / "boom.py"
    lines = BOOM.splitlines()
    with inliner.hook.install([name]):
        boom = importlib.import_module(f"{name}.boom")
    x = torch.ones(2, requires_grad=True)

    for statement, run in [
        ('raise ValueError("backward boom")', lambda: torch.autograd.grad(boom.Boom.apply(x, False).sum(), x)),
        ('raise ValueError("forward boom")', lambda: boom.Boom.apply(x, True)),
    ]:
        lineno = next(i for i, line in enumerate(lines, start=1) if line.strip() == statement)
        with pytest.raises(ValueError) as info:
            run()
        frame = traceback.extract_tb(info.value.__traceback__)[-1]
        assert (frame.filename, frame.lineno, frame.line) == (str(path), lineno, statement)
        text = "".join(traceback.format_exception(info.value))
        assert f'File "{path}", line {lineno}, in boom_' in text
        assert f"    {statement}\n" in text


def test_a_module_the_engine_cannot_fully_flatten_warns_once_and_imports(make_package):
    name, _ = make_package({"partly": PARTLY})
    with inliner.hook.install([name]), pytest.warns(InlinerHookWarning) as record:
        partly = importlib.import_module(f"{name}.partly")
    ours = [w for w in record if issubclass(w.category, InlinerHookWarning)]
    assert len(ours) == 1
    message = str(ours[0].message)
    assert "Helper" in message and "INL102" in message and "the rest flattened" in message
    assert "Good" not in message.split(":")[1]  # only the refused class is named as untouched
    assert ours[0].filename.endswith("partly.py")
    assert isinstance(partly.Helper, type) and not isinstance(partly.Good, type)
    x = torch.ones(3, requires_grad=True)
    (g,) = torch.autograd.grad((partly.Helper.apply(x) + partly.Good.apply(x)).sum(), x)
    torch.testing.assert_close(g, torch.full((3,), 4.0))


@pytest.mark.engine_bug
def test_an_engine_internal_error_imports_the_module_as_written(make_package, monkeypatch):
    import inliner.engine.rewrite

    name, _ = make_package({"ops": SEVEN})

    real = inliner.engine.rewrite.rewrite_module

    def broken(source, **kwargs):
        if "autograd" in source:
            raise RuntimeError("kaboom")
        return real(source, **kwargs)

    monkeypatch.setattr(inliner.engine.rewrite, "rewrite_module", broken)
    with inliner.hook.install([name], cache=False), pytest.warns(InlinerHookWarning) as record:
        ops = importlib.import_module(f"{name}.ops")
    (warning,) = [w for w in record if issubclass(w.category, InlinerHookWarning)]
    message = str(warning.message)
    assert message.startswith(
        f"{name}.ops: inliner could not process this module: internal error: RuntimeError: kaboom"
    )
    assert message.endswith("please report this as an inliner bug; imported as written")
    assert isinstance(ops.Seven, type) and isinstance(ops.Scale, type)


@pytest.mark.engine_bug
def test_an_internal_error_in_one_class_imports_the_rest_flattened(make_package, monkeypatch):
    import inliner.engine.function_class.lower_class

    name, _ = make_package({"ops": SEVEN})
    real = inliner.engine.function_class.lower_class.lower_function_class

    def lowering(node, **kwargs):
        if node.name.value == "Seven":
            raise KeyError("kaboom")
        return real(node, **kwargs)

    monkeypatch.setattr(inliner.engine.function_class.lower_class, "lower_function_class", lowering)
    with inliner.hook.install([name], cache=False), pytest.warns(InlinerHookWarning) as record:
        ops = importlib.import_module(f"{name}.ops")
    (warning,) = [w for w in record if issubclass(w.category, InlinerHookWarning)]
    message = str(warning.message)
    assert "inliner left Seven untouched; imported with the rest flattened" in message
    assert ":5:7: INL002 class Seven: internal error (KeyError: 'kaboom' at test_hook.py:" in message
    assert warning.lineno == 5
    assert isinstance(ops.Seven, type) and not isinstance(ops.Scale, type)


def test_a_syntax_error_is_the_one_python_raises(make_package):
    name, _ = make_package({"bad": "import torch\nclass F(torch.autograd.Function):\n    def forward(ctx, x:\n"})
    with inliner.hook.install([name]), pytest.raises(SyntaxError):
        importlib.import_module(f"{name}.bad")


def test_an_undecodable_file_raises_what_python_raises(make_package):
    name, package = make_package({})
    (package / "latin.py").write_bytes(b"import torch\nclass F(torch.autograd.Function):\n    x = '\xff'\n")
    with pytest.raises(SyntaxError) as plain:
        importlib.import_module(f"{name}.latin")
    _forget(name)
    with inliner.hook.install([name]), pytest.raises(SyntaxError) as hooked:
        importlib.import_module(f"{name}.latin")
    assert type(hooked.value) is type(plain.value) and hooked.value.msg == plain.value.msg


# --- scope -----------------------------------------------------------------------------


def test_only_the_named_packages_get_the_hooks_loader(make_package):
    name, _ = make_package({"ops": SEVEN, "plain": PLAIN})
    neighbour, _ = make_package({"ops": SEVEN}, name=name + "x")  # shares the prefix only
    other, _ = make_package({"ops": SEVEN})
    with inliner.hook.install([f"{name}.ops"]) as handle:
        assert handle.installed and handle.packages == (f"{name}.ops",)
        ops = importlib.import_module(f"{name}.ops")
        plain = importlib.import_module(f"{name}.plain")
        near = importlib.import_module(f"{neighbour}.ops")
        far = importlib.import_module(f"{other}.ops")
    assert not handle.installed
    assert type(ops.__spec__.loader) is inliner.hook._Loader
    for module in (sys.modules[name], plain, near, far):
        assert type(module.__spec__.loader) is SourceFileLoader, module.__name__
    assert isinstance(near.Seven, type) and isinstance(far.Seven, type)
    assert not isinstance(ops.Seven, type)


def test_inliner_and_torch_are_never_hooked():
    with pytest.warns(InlinerHookWarning, match="not hooked: inliner, inliner.runtime, torch"):
        handle = inliner.hook.install(["inliner", "inliner.runtime", "torch"])
    with handle:
        assert handle.packages == ()
        assert handle._finder.find_spec("inliner.runtime", None) is None
        assert handle._finder.find_spec("colorsys", None) is None


def test_installing_after_an_import_warns(make_package):
    name, _ = make_package({"plain": PLAIN})
    importlib.import_module(f"{name}.plain")
    with pytest.warns(InlinerHookWarning, match="already imported"):
        inliner.hook.install([name]).uninstall()


def test_files_on_disk_are_never_changed(make_package):
    name, package = make_package({"ops": SEVEN, "partly": PARTLY})
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in package.glob("*.py")}
    with inliner.hook.install([name]), pytest.warns(InlinerHookWarning):
        importlib.import_module(f"{name}.ops")
        importlib.import_module(f"{name}.partly")
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in package.glob("*.py")} == before


# --- bases other modules of the package derive from -------------------------------------


def test_a_base_another_module_of_the_package_subclasses_stays_a_function(make_package):
    """The subclasses' modules import under the hook, and every call computes what it did."""
    original, package = make_package({})
    write_tree(package.parent, original)
    expected = outcomes(original)
    name, package = make_package({})
    write_tree(package.parent, name)
    with inliner.hook.install([name]), pytest.warns(InlinerHookWarning, match="INL113 class PreferenceBase"):
        got = outcomes(name)
    preference = sys.modules[f"{name}.preference"]
    assert issubclass(preference.PreferenceBase, torch.autograd.Function)
    assert not isinstance(preference.Scale, type), "the rest of the module is flattened"
    assert_same(expected, got, "the package under the hook")


def test_a_subclass_written_later_makes_its_base_rewritten_again(make_package):
    """Which classes are subclassed elsewhere is part of the cache key of the base's module."""
    name, package = make_package({})
    write_tree(package.parent, name, only=("__init__.py", "preference.py"))
    with inliner.hook.install([name]):
        alone = importlib.import_module(f"{name}.preference")
    assert not isinstance(alone.PreferenceBase, type), "flattened while nothing derives from it"
    _forget(name)
    inliner.hook._bases.package_subclassed.cache_clear()  # what a new process starts with
    write_tree(package.parent, name)
    with inliner.hook.install([name]), pytest.warns(InlinerHookWarning, match="INL113 class PreferenceBase"):
        outcomes(name)
    assert issubclass(sys.modules[f"{name}.preference"].PreferenceBase, torch.autograd.Function)


def test_the_pass_over_a_package_is_remembered_on_disk_until_a_file_changes(make_package, monkeypatch):
    name, package = make_package({})
    write_tree(package.parent, name)
    module, path = f"{name}.preference", str(package / "preference.py")
    first = inliner.hook._bases.subclassed_for(path, module)
    assert first == {f"{module}.PreferenceBase": f"{name}.losses.dpo.DPO"}
    assert (package / "__pycache__" / f"inliner-subclassed.{TAG}.json").is_file()

    def not_again(sources):
        raise AssertionError("the pass ran again")

    inliner.hook._bases.package_subclassed.cache_clear()  # a new process
    with monkeypatch.context() as patched:
        patched.setattr(inliner.hook._bases, "subclassed_in_sources", not_again)
        assert inliner.hook._bases.subclassed_for(path, module) == first
    (package / "losses" / "dpo.py").write_text("VALUE = 1\n")
    inliner.hook._bases.package_subclassed.cache_clear()
    assert inliner.hook._bases.subclassed_for(path, module) == {f"{module}.PreferenceBase": f"{name}.losses.mine.Mine"}


def test_a_failing_pass_over_the_package_imports_the_module_as_written(make_package, monkeypatch):
    def failing(path, module):
        raise RuntimeError("boom")

    monkeypatch.setattr(inliner.hook._bases, "subclassed_for", failing)
    name, _ = make_package({"ops": SEVEN})
    with inliner.hook.install([name]), pytest.warns(InlinerHookWarning, match="RuntimeError: boom"):
        ops = importlib.import_module(f"{name}.ops")
    assert isinstance(ops.Seven, type), "as written"


# --- the cache -------------------------------------------------------------------------


def test_cache_is_tagged_reused_and_invalidated_by_an_edit(make_package, monkeypatch):
    name, package = make_package({"ops": SEVEN})
    source = package / "ops.py"
    calls: list[str] = []
    real = inliner.engine.flatten

    def counting(text, **kwargs):
        if kwargs.get("path") == str(source):
            calls.append(kwargs["path"])
        return real(text, **kwargs)

    monkeypatch.setattr(inliner.engine, "flatten", counting)
    with inliner.hook.install([name]):
        importlib.import_module(f"{name}.ops")
    entry = Path(cache_path(str(source)))
    assert entry.parent == package / "__pycache__" and entry.is_file()
    assert sys.modules[f"{name}.ops"].__cached__ == str(entry)
    assert entry.name == f"ops.{sys.implementation.cache_tag}.inliner-{inliner.__version__}.pyc"
    assert f"inliner-{inliner.__version__}" == TAG
    assert calls == [str(source)]

    _forget(name)
    with inliner.hook.install([name]):
        ops = importlib.import_module(f"{name}.ops")
    assert calls == [str(source)], "a cache hit does not run the engine"
    assert not isinstance(ops.Seven, type)

    # an edit that keeps the size and the mtime (a coarse clock, a tool that restores it)
    before = source.stat()
    source.write_text(SEVEN.replace("g * 7", "g * 9"))
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (source.stat().st_size, source.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    _forget(name)
    with inliner.hook.install([name]):
        ops = importlib.import_module(f"{name}.ops")
    assert calls == [str(source)] * 2, "the source's hash, not its mtime and size, keys the entry"
    torch.testing.assert_close(torch.func.grad(ops.f)(torch.zeros(2)), torch.full((2,), 9.0))


def test_a_changed_engine_invalidates_the_cache(make_package, monkeypatch):
    name, package = make_package({"ops": SEVEN})
    source = package / "ops.py"
    calls: list[str] = []
    real = inliner.engine.flatten

    def counting(text, **kwargs):
        if kwargs.get("path") == str(source):
            calls.append(kwargs["path"])
        return real(text, **kwargs)

    monkeypatch.setattr(inliner.engine, "flatten", counting)
    fingerprint = _cache.engine_fingerprint()
    assert fingerprint is not None and _cache.engine_fingerprint() is fingerprint  # once per process
    for engine, expected in [(fingerprint, 1), (fingerprint, 1), (b"newer!!!", 2), (b"newer!!!", 2), (fingerprint, 3)]:
        monkeypatch.setattr(_cache, "engine_fingerprint", lambda engine=engine: engine)
        with inliner.hook.install([name]):
            ops = importlib.import_module(f"{name}.ops")
        _forget(name)
        assert len(calls) == expected, engine
        assert not isinstance(ops.Seven, type)

    # an engine whose files cannot be read caches nothing (rather than something stale)
    monkeypatch.setattr(_cache, "engine_fingerprint", lambda: None)
    Path(cache_path(str(source))).unlink()
    with inliner.hook.install([name]):
        importlib.import_module(f"{name}.ops")
    assert len(calls) == 4 and not Path(cache_path(str(source))).exists()


def test_the_engine_fingerprint_covers_every_module_but_the_surfaces(tmp_path):
    directory = Path(inliner.__file__).parent
    copy = tmp_path / "inliner"
    shutil.copytree(directory, copy, ignore=shutil.ignore_patterns("__pycache__"))
    original = _cache._compute_fingerprint(str(copy))
    assert original == _cache.engine_fingerprint() and len(original) == 8
    covered = [m for m in sorted(copy.rglob("*.py")) if m.relative_to(copy).parts[0] not in ("cli", "lsp")]
    assert {"engine", "hook", "runtime"} <= {m.relative_to(copy).parts[0] for m in covered}
    for module in covered:
        data = module.read_bytes()
        module.write_bytes(data.replace(b"\n", b" \n", 1) if b"\n" in data else b"#")  # one byte more
        assert _cache._compute_fingerprint(str(copy)) != original, module
        module.write_bytes(data)
    (copy / "cli" / "report.py").write_text("")  # a surface: its code is never cached
    assert _cache._compute_fingerprint(str(copy)) == original
    (copy / "engine" / "new_engine_module.py").write_text("")
    assert _cache._compute_fingerprint(str(copy)) != original


def test_a_cache_hit_repeats_the_warning(make_package):
    name, _ = make_package({"partly": PARTLY})
    for _ in range(2):
        with inliner.hook.install([name]), pytest.warns(InlinerHookWarning, match="Helper"):
            importlib.import_module(f"{name}.partly")
        _forget(name)


def test_a_cache_that_cannot_be_written_is_ignored(make_package):
    name, package = make_package({"ops": SEVEN})
    (package / "__pycache__").write_text("not a directory")
    with inliner.hook.install([name]):
        ops = importlib.import_module(f"{name}.ops")
    assert not isinstance(ops.Seven, type)
    assert (package / "__pycache__").read_text() == "not a directory"


# --- activation by environment variable, in fresh interpreters ---------------------------

PROBE = """
import json, sys
{activate}
import inliner.engine
calls = []
_real = inliner.engine.flatten
def _counting(text, **kwargs):
    calls.append(kwargs.get("path"))
    return _real(text, **kwargs)
inliner.engine.flatten = _counting
import torch
from {name} import ops
grad = torch.func.grad(ops.f)(torch.zeros(2)).tolist() if not isinstance(ops.Seven, type) else None
print(json.dumps({{"calls": len(calls), "grad": grad, "libcst": "libcst" in sys.modules,
                   "inliner": "inliner" in sys.modules, "engine": inliner.engine.__file__}}))
"""


def _run(code: str, root: Path, hook: str | None, first: Path | None = None) -> dict:
    """Run ``code`` in a fresh interpreter with ``root`` (and before it ``first``) on its path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "INLINER_HOOK")}
    path = [str(first)] if first is not None else []
    env["PYTHONPATH"] = os.pathsep.join([*path, str(root), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if hook is not None:
        env["INLINER_HOOK"] = hook
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, cwd=root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_env_var_activation_and_the_cache_across_processes(make_package, tmp_path):
    name, package = make_package({"ops": SEVEN})
    root = package.parent
    probe = PROBE.format(activate="import inliner.hook._startup  # what the .pth line runs", name=name)
    # a copy of inliner, to be "upgraded" below as a `git pull` would
    engine_root = tmp_path / "engine"
    shutil.copytree(
        Path(inliner.__file__).parent, engine_root / "inliner", ignore=shutil.ignore_patterns("__pycache__")
    )

    first = _run(probe, root, hook=f"{name}, unrelated", first=engine_root)
    assert first["engine"] == str(engine_root / "inliner" / "engine" / "__init__.py")
    assert first["grad"] == [7.0, 7.0] and first["calls"] == 2  # __init__ and ops

    second = _run(probe, root, hook=name, first=engine_root)
    assert second["grad"] == [7.0, 7.0]
    assert second["calls"] == 0 and not second["libcst"], "a cache hit never loads the engine"

    source = package / "ops.py"
    source.write_text(SEVEN.replace("g * 7", "g * 9"))
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))
    third = _run(probe, root, hook=name, first=engine_root)
    assert third["grad"] == [9.0, 9.0] and third["calls"] == 1

    # a newer engine under the same version number: nothing an older one cached is used
    emit = engine_root / "inliner" / "engine" / "emit.py"
    emit.write_text(emit.read_text() + "\n# a change in the engine\n")
    fourth = _run(probe, root, hook=name, first=engine_root)
    assert fourth["grad"] == [9.0, 9.0] and fourth["calls"] == 2 and fourth["libcst"], "a fresh rewrite"


def test_the_pth_line_installs_the_hook_only_when_asked(make_package, tmp_path):
    name, package = make_package({"ops": SEVEN})
    site_dir = tmp_path / "site-packages"
    assert inliner.hook.install_pth(site_dir) == site_dir / PTH_NAME
    assert (site_dir / PTH_NAME).read_text() == PTH_LINE
    activate = f"import site; site.addsitedir({str(site_dir)!r})  # how site-packages .pth files run"

    on = _run(PROBE.format(activate=activate, name=name), package.parent, hook=name)
    assert on["grad"] == [7.0, 7.0]

    cheap = f"import sys\n{activate}\nimport json\nprint(json.dumps({{'inliner': 'inliner' in sys.modules}}))"
    assert _run(cheap, package.parent, hook=None) == {"inliner": False}, "unset: inliner is not even imported"

    assert inliner.hook.uninstall_pth(site_dir) == site_dir / PTH_NAME
    assert not (site_dir / PTH_NAME).exists()


def test_a_line_installed_before_the_hook_became_a_package_still_starts_it(make_package):
    name, package = make_package({"ops": SEVEN})
    older_line = "import inliner.hook._startup  # what install-pth wrote before inliner.hook/"
    assert _run(PROBE.format(activate=older_line, name=name), package.parent, hook=name)["grad"] == [7.0, 7.0]


def test_install_pth_command(tmp_path, capsys):
    from inliner.hook._pth import main

    assert main(["install-pth", "--dir", str(tmp_path)]) == 0
    assert (tmp_path / PTH_NAME).read_text() == PTH_LINE
    assert main(["uninstall-pth", "--dir", str(tmp_path)]) == 0
    assert not (tmp_path / PTH_NAME).exists()
    assert "wrote" in capsys.readouterr().out


# --- the line map on the golden cases ------------------------------------------------------


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir() if (p / "output.py").exists()))
def test_golden_rewrites_compile_onto_their_inputs_lines(case):
    """Every golden rewrite compiles with the engine's line map; each of its code objects
    points at lines of the input (the map itself is tested in test_line_origin.py)."""
    original = (GOLDEN / case / "input.py").read_text()
    result = inliner.engine.flatten(original, path="input.py")
    code = compile_mapped(result, "input.py")
    count = len(original.splitlines())
    stack = [code]
    while stack:
        current = stack.pop()
        assert all(0 <= line <= count for _, _, line in current.co_lines() if line is not None), (case, current)
        stack.extend(c for c in current.co_consts if hasattr(c, "co_lines"))


def test_hook_module_has_no_heavy_imports():
    code = "import sys, inliner.hook; print(sorted(m for m in ('libcst', 'black', 'torch') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# --- a decorator imported from another module of the package ---------------------------

WRAPPERS = """\
import functools

CALLS = []


def pure(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper
"""

DECORATED = """\
import torch
from .wrappers import pure


class Doubled(torch.autograd.Function):
    @staticmethod
    @pure
    def forward(ctx, x):
        return torch.from_numpy((x.detach().numpy() * 2))

    @staticmethod
    def backward(ctx, g):
        return g * 7
"""


def test_an_imported_decorator_is_seen_into_and_its_edit_invalidates_the_cache(make_package):
    """The hook hands the engine the package's other modules: a wrapper that writes nothing
    outside puts the call on the split path; an edit that makes it append to a module list
    (an effect dynamo would guard) rewrites the importing module again, though its own
    bytes did not change: an island."""
    import torch._dynamo  # noqa: F401  (registers compile paths)

    name, package = make_package({"wrappers": WRAPPERS, "ops": DECORATED})
    with inliner.hook.install([name]):
        ops = importlib.import_module(f"{name}.ops")
    assert ops.Doubled.compile_path == "split"

    wrappers = package / "wrappers.py"
    wrappers.write_text(WRAPPERS.replace("        return fn(*args", "        CALLS.append(1)\n        return fn(*args"))
    _forget(name)
    with inliner.hook.install([name]):
        ops = importlib.import_module(f"{name}.ops")
    assert ops.Doubled.compile_path == "island"
    assert "side_effecting" in ops.Doubled.compile_kind
