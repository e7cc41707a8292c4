"""MkDocs hooks for grainlab's site (``mkdocs.yml``: ``hooks``).

A page's relative link out of ``docs/`` (to a committed table, report, figure or the README) names a
file of the repository that the site does not carry: on the site it reads as the link text and the
file's path in the repository. Only links whose target exists are rewritten, so a broken link, in
or out of ``docs/``, still fails the strict build (``tests/test_docs_site.py``); out-of-docs links
are also resolved by ``tests/test_readme.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]+)\]\((?P<target>[^)\s#]+)(?P<anchor>#[^)]*)?\)")


def repository_path(target: str, page: Path, docs: Path) -> str | None:
    """``target`` as a path from the repository root when it leaves ``docs`` and exists, else ``None``."""
    if re.match(r"^[a-z]+:", target) or target.startswith("/"):
        return None
    resolved = (page.parent / target).resolve()
    root = docs.parent.resolve()
    if resolved.is_relative_to(docs.resolve()) or not resolved.is_relative_to(root) or not resolved.exists():
        return None
    return resolved.relative_to(root).as_posix()


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs' hook signature
    docs = Path(config["docs_dir"])
    source = docs / page.file.src_path

    def rewrite(match: re.Match) -> str:
        path = repository_path(match["target"], source, docs)
        return match[0] if path is None else f"{match['text']} (`{path}` in the repository)"

    return LINK.sub(rewrite, markdown)
