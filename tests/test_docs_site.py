"""The documentation site builds with MkDocs in strict mode, and a broken link fails the build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=root,
                          capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, timeout=300)


def test_the_site_builds_strictly_with_every_page_in_its_navigation(tmp_path):
    run = build(REPO, tmp_path / "site")
    assert run.returncode == 0, run.stderr[-2000:]
    pages = {p.relative_to(REPO / "docs").with_suffix("").as_posix() for p in (REPO / "docs").rglob("*.md")}
    built = {p.parent.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("index.html")}
    assert {p.removesuffix("index").rstrip("/") or "." for p in pages} <= built | {"."}


def test_a_broken_link_in_the_docs_fails_the_build(tmp_path):
    sys.path.insert(0, str(REPO / "scripts"))
    from mkdocs_hooks import LINK, repository_path

    copy = tmp_path / "repo"
    shutil.copytree(REPO / "docs", copy / "docs")
    for name in ("mkdocs.yml", "scripts/mkdocs_hooks.py"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, copy / name)
    for page in (REPO / "docs").rglob("*.md"):  # the repository files the pages link to, out of docs/
        for match in LINK.finditer(page.read_text()):
            path = repository_path(match["target"], page, REPO / "docs")
            if path:
                (copy / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(REPO / path, copy / path)
    assert build(copy, tmp_path / "intact").returncode == 0
    page = copy / "docs" / "cli.md"
    page.write_text(page.read_text() + "\nSee [the missing page](no_such_page.md).\n")
    run = build(copy, tmp_path / "site")
    assert run.returncode != 0 and "no_such_page.md" in run.stderr
