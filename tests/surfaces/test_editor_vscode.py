"""The VS Code extension builds: ``npm ci`` and ``vsce package`` on a copy of editors/vscode.

The package must hold what VS Code loads: the client (``extension/extension.js``), the
manifest that says when to start it (``onLanguage:python``), and the runtime dependency
it requires (``vscode-languageclient``), but not the packaging tool itself. Skipped where
npm or a Node that the pinned ``@vscode/vsce`` supports is missing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import ROOT

EXTENSION = ROOT / "editors" / "vscode"
NPM, NODE, NPX = shutil.which("npm"), shutil.which("node"), shutil.which("npx")
NODE_NEEDED = 20  # @vscode/vsce 3.9 (package.json's devDependency) asks for Node >= 20
TIMEOUT = 600


def node_major() -> int:
    assert NODE is not None
    found = re.match(r"v(\d+)\.", subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout)
    return int(found.group(1)) if found else 0


def run(command: list[str], cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 0, f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.skipif(NPM is None or NODE is None or NPX is None, reason="npm (with node and npx) is not installed")
def test_vscode_extension_packages(tmp_path: Path) -> None:
    if node_major() < NODE_NEEDED:
        pytest.skip(f"@vscode/vsce needs Node {NODE_NEEDED}+; this node is {node_major()}")
    assert NPM is not None and NPX is not None
    work = tmp_path / "vscode"
    shutil.copytree(EXTENSION, work, ignore=shutil.ignore_patterns("node_modules", "*.vsix"))
    # npm ci installs exactly the committed lock (it fails when package.json and the lock disagree).
    run([NPM, "ci", "--no-audit", "--no-fund", "--prefer-offline"], work)
    vsix = tmp_path / "inliner.vsix"
    # --no: the pinned @vscode/vsce that npm ci installed, never one fetched on the fly.
    run([NPX, "--no", "vsce", "package", "--allow-missing-repository", "--skip-license", "--out", str(vsix)], work)

    with zipfile.ZipFile(vsix) as package:
        names = set(package.namelist())
        manifest = json.loads(package.read("extension/package.json"))
        vsixmanifest = package.read("extension.vsixmanifest").decode()
        assert "extension/extension.js" in names
        assert package.read("extension/extension.js") == (EXTENSION / "extension.js").read_bytes()
        package.extractall(tmp_path / "unpacked")
    assert manifest["main"] == "./extension.js"
    assert manifest["activationEvents"] == ["onLanguage:python"]
    assert 'Id="inliner-vscode"' in vsixmanifest
    assert not any(name.startswith("extension/node_modules/@vscode/vsce/") for name in names), "dev tools packaged"
    # What extension.js requires resolves inside the package, as it will in VS Code.
    unpacked = tmp_path / "unpacked" / "extension"
    assert NODE is not None
    resolve = "console.log(require.resolve('vscode-languageclient/node', {paths: [process.argv[1]]}))"
    found = run([NODE, "-e", resolve, str(unpacked)], tmp_path).strip()
    assert Path(found).is_relative_to(unpacked), found
