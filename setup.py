"""One build step on top of pyproject.toml: ship ``inliner-hook.pth`` at the wheel's root.

Installed next to the packages in site-packages, its one line makes
``INLINER_HOOK=pkg python ...`` flatten ``pkg`` at import with no set-up step, the way
coverage tools ship a ``.pth`` for subprocess measurement. With ``INLINER_HOOK`` unset the
line costs one environment lookup (``scripts/bench_import.py --startup`` measures it).
The line's text lives in ``inliner/hook/_pth.py`` (``PTH_LINE``), read here without
importing the ``inliner`` package, whose dependencies a build environment does not have.

Regular wheels: the file is written into ``build_lib``'s root, which the wheel's root
mirrors. Editable installs (PEP 660): setuptools writes an editable wheel from an unpacked
directory that it names as the ``install`` command's ``install_lib``; the file is put
there, so it lands in site-packages too. Should a setuptools version not say where that
directory is, the editable wheel goes without the file and ``python -m inliner.hook
install-pth`` does the same job.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PTH_FILE = "inliner-hook.pth"


def _pth_line() -> str:
    spec = importlib.util.spec_from_file_location("_inliner_hook_pth", HERE / "inliner" / "hook" / "_pth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.SHIPPED_PTH_NAME == PTH_FILE
    return module.PTH_LINE


class build_py_with_pth(build_py):  # noqa: N801 (setuptools' command naming)
    def run(self) -> None:
        super().run()
        line = _pth_line()
        targets = [Path(self.build_lib)]
        if getattr(self, "editable_mode", False):
            # build_lib is thrown away for an editable wheel; the unpacked wheel is kept
            unpacked = getattr(self.get_finalized_command("install"), "install_lib", None)
            if unpacked and any(Path(unpacked).glob("*.dist-info")):
                targets.append(Path(unpacked))
        for directory in targets:
            directory.mkdir(parents=True, exist_ok=True)
            (directory / PTH_FILE).write_text(line, encoding="utf-8")

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / PTH_FILE)]


setup(cmdclass={"build_py": build_py_with_pth})
