"""pyproject's runtime dependencies, environment.yml and binder/environment.yml name the same packages."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# conda-forge names that differ from PyPI's
CONDA_TO_PYPI = {"pytorch-cpu": "torch", "pytorch": "torch"}
CONDA_ONLY = {"python", "pip"}


def _names(specs):
    return {re.split(r"[<>=!~ \[:]", s.strip(), maxsplit=1)[0].lower() for s in specs}


def _conda_deps(path):
    deps, inside = [], False
    for line in path.read_text().splitlines():
        if line.startswith("dependencies:"):
            inside = True
            continue
        if inside:
            m = re.match(r"\s+-\s+(\S+)", line)
            if m:
                deps.append(m.group(1))
            elif line.strip() and not line.startswith(" "):
                inside = False
    return {CONDA_TO_PYPI.get(n, n) for n in _names(deps)} - CONDA_ONLY


def test_environment_files_agree_with_pyproject():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = _names(pyproject["project"]["dependencies"])
    assert _conda_deps(ROOT / "environment.yml") == runtime
    assert _conda_deps(ROOT / "binder" / "environment.yml") == runtime


def test_binder_is_cpu_only_and_installs_the_package():
    env = (ROOT / "binder" / "environment.yml").read_text()
    assert "pytorch-cpu" in env and "anywidget" in env and "python=3.11" in env
    post = (ROOT / "binder" / "postBuild").read_text()
    assert "set -e" in post and "pip install --no-deps -e ." in post
    assert (ROOT / "binder" / "start").read_text().rstrip().endswith('exec "$@"')


def test_readme_commands_match_ci():
    readme = (ROOT / "README.md").read_text()
    assert "make lab" in readme and "make test" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
    assert "mybinder.org/v2/" in readme and "00_welcome.ipynb" in readme
