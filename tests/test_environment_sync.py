"""environment.yml (conda users) lists the same packages and pins as pyproject.toml."""

import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def names_and_specs(requirements):
    out = {}
    for req in requirements:
        match = re.match(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$", req)
        out[match.group(1).lower().replace("_", "-")] = match.group(3).replace(" ", "")
    return out


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = names_and_specs(project["dependencies"] + project["optional-dependencies"]["offline-models"]
                             + project["optional-dependencies"]["dev"])
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_block = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    listed = names_and_specs([p for p in pip_block if not p.startswith("-")])
    assert listed == wanted
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert python.replace(" ", "") == "python" + project["requires-python"].replace(" ", "")


def test_torch_is_pinned_to_the_local_cpu_wheel():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "torch==2.13.0" in project["dependencies"]


def test_a_bare_pytest_leaves_the_long_tests_out():
    """pyproject's ``addopts`` deselects ``long`` (hour-long gates); ``-m long`` still selects them."""
    import subprocess
    import sys

    def collected(*args: str) -> str:
        run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                              "tests/retrieval/test_fusion.py", *args], cwd=REPO, capture_output=True, text=True)
        return run.stdout

    bare, long = collected(), collected("-m", "long")
    assert "deselected" in bare and "test_fusion.py::" in bare
    assert "deselected" in long
    bare_ids = {line for line in bare.splitlines() if "::" in line}
    long_ids = {line for line in long.splitlines() if "::" in line}
    assert long_ids and not bare_ids & long_ids
