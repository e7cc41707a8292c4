"""A user's own documents: a folder of ``.md``/``.txt``/``.html``/``.pdf`` files or a
``documents.jsonl``, extracted to text with exact offsets.

Every document keeps its id, its **revision** and its extracted ``text`` — the string every
character offset (gold spans, chunks, citations) indexes. Extraction:

- ``.md``, ``.txt``: the file as it is (UTF-8, universal newlines).
- ``.html``/``.htm``: the visible text, with structure written the way the ``structure`` chunker
  reads it — ``<h1>``…``<h6>`` as Markdown headings (``#`` × level), ``<li>`` as ``- `` items,
  table rows as ``| a | b |`` lines (a ``| --- |`` rule after a header row of ``<th>``), blocks
  separated by blank lines; scripts, styles, comments and attributes are dropped (so evidence
  that lives only there is lost in extraction, which ``raw`` lets a diagnosis see).
- ``.pdf``: each page's text through pypdf, pages joined by a blank line; ``page_starts`` holds
  each page's first offset, so a character locator maps to a page.
- ``documents.jsonl``: one JSON object per line with ``id``, ``text`` and optional ``revision``
  and ``title``; the text is taken as it is.

In a folder, a document's id is its path relative to the folder without the extension
(``manuals/setup``); a file named ``name@REV.ext`` is revision ``REV`` of document ``name``, so
two revisions of one document can sit side by side (the old one a distractor). A document's key
in the corpus is ``id@revision`` when it has a revision, else ``id``.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from grainlab.errors import DatasetNotFound, MalformedData

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
HTML_SUFFIXES = (".html", ".htm")
PDF_SUFFIXES = (".pdf",)
SUFFIXES = TEXT_SUFFIXES + HTML_SUFFIXES + PDF_SUFFIXES
REVISION_IN_NAME = re.compile(r"^(?P<name>.+)@(?P<revision>[^@/]+)$")


@dataclass(frozen=True)
class SourceDocument:
    """One extracted document: ``text`` is what offsets index; ``raw`` the source as read
    (markup included; ``None`` for a PDF), ``page_starts`` each page's first offset (PDFs)."""

    doc_id: str
    revision: str
    text: str
    title: str = ""
    kind: str = "txt"
    path: str = ""
    raw: str | None = None
    page_starts: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        """The document's id in a corpus: ``id@revision``, or ``id`` without a revision."""
        return f"{self.doc_id}@{self.revision}" if self.revision else self.doc_id

    def pages(self, start: int, end: int) -> list[int]:
        """The 1-based pages a character range ``[start, end)`` touches (``[]`` unless a PDF)."""
        if not self.page_starts:
            return []
        first = bisect.bisect_right(self.page_starts, start) - 1
        last = bisect.bisect_right(self.page_starts, max(start, end - 1)) - 1
        return list(range(first + 1, last + 2))


class _HTMLText(HTMLParser):
    """Visible text of an HTML page with headings, list items and table rows kept as lines."""

    BLOCKS = {"p", "div", "section", "article", "header", "footer", "main", "aside", "blockquote", "pre",
              "ul", "ol", "table", "tr", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "title"}
    SKIP = {"script", "style", "head", "noscript", "template"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.line: list[str] = []
        self.prefix = ""
        self.skip = 0
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.row_is_header = False
        self.table_rows = 0

    def _flush(self) -> None:
        text = " ".join("".join(self.line).split())
        if text:
            self.blocks.append(self.prefix + text)
        self.line, self.prefix = [], ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skip += 1
            return
        if self.skip:
            return
        if tag == "table":
            self._flush()
            self.table_rows = 0
        elif tag == "tr":
            self.row, self.row_is_header = [], False
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []
            self.row_is_header |= tag == "th"
        elif tag in self.BLOCKS:
            self._flush()
            if tag[0] == "h" and tag[1:].isdigit():
                self.prefix = "#" * int(tag[1]) + " "
            elif tag == "li":
                self.prefix = "- "

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag in ("td", "th") and self.row is not None and self.cell is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row:
                self.blocks.append("| " + " | ".join(self.row) + " |")
                if self.row_is_header and self.table_rows == 0:
                    self.blocks.append("| " + " | ".join("---" for _ in self.row) + " |")
                self.table_rows += 1
            self.row = None
        elif tag == "table":
            self.blocks.append("")  # a blank line closes the table
        elif tag in self.BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        (self.cell if self.cell is not None else self.line).append(data)

    def text(self) -> str:
        self._flush()
        out: list[str] = []
        for block in self.blocks:  # table rows and list items stay on consecutive lines; blocks get a blank line
            if out and block[:2] in ("| ", "- ") and out[-1][:2] == block[:2]:
                out.append(block)
            elif block:
                out.extend(["", block] if out else [block])
        return "\n".join(out).strip("\n") + "\n"


def html_to_text(html: str) -> str:
    """The text grainlab indexes for an HTML page (see the module docstring)."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    return parser.text()


def pdf_text(path: Path) -> tuple[str, tuple[int, ...]]:
    """A PDF's text (pages joined by a blank line) and each page's first offset, via pypdf."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:  # pragma: no cover - pypdf is a dependency
        raise MalformedData(f"{path}: reading PDFs needs pypdf (pip install pypdf)") from None
    try:
        reader = PdfReader(str(path))
        pages = [(page.extract_text() or "").strip("\n") for page in reader.pages]
    except (PdfReadError, OSError, ValueError) as exc:
        raise MalformedData(f"{path}: not a readable PDF ({type(exc).__name__}: {exc})") from None
    starts, parts, cursor = [], [], 0
    for page in pages:
        starts.append(cursor)
        parts.append(page)
        cursor += len(page) + 2
    return "\n\n".join(parts), tuple(starts)


def _read_text(path: Path) -> str:
    """A UTF-8 text file's text; a byte-order mark is dropped (it would hide a first heading)."""
    try:
        with path.open(encoding="utf-8-sig", newline=None) as handle:
            return handle.read()
    except UnicodeDecodeError as exc:
        raise MalformedData(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def _id_and_revision(relative: Path) -> tuple[str, str]:
    stem = relative.with_suffix("").as_posix()
    if match := REVISION_IN_NAME.match(stem):
        return match.group("name"), match.group("revision")
    return stem, ""


def read_document(path: Path, root: Path) -> SourceDocument:
    """One file of a documents folder, extracted (see the module docstring)."""
    doc_id, revision = _id_and_revision(path.relative_to(root))
    suffix = path.suffix.lower()
    if suffix in PDF_SUFFIXES:
        text, starts = pdf_text(path)
        return SourceDocument(doc_id, revision, text, doc_id, "pdf", str(path), None, starts)
    raw = _read_text(path)
    if suffix in HTML_SUFFIXES:
        return SourceDocument(doc_id, revision, html_to_text(raw), doc_id, "html", str(path), raw)
    return SourceDocument(doc_id, revision, raw, doc_id, suffix.lstrip(".").replace("markdown", "md"), str(path), raw)


def read_documents_jsonl(path: Path) -> list[SourceDocument]:
    """``documents.jsonl``: one ``{"id", "text", "revision"?, "title"?}`` per line; errors name the line."""
    out: list[SourceDocument] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MalformedData(f"{path}:{number}: not JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(record, dict):
            raise MalformedData(f"{path}:{number}: expected an object with id and text, got {type(record).__name__}")
        for field, required in (("id", True), ("text", True), ("revision", False), ("title", False)):
            value = record.get(field)
            if value is None and not required:
                continue
            if field == "revision" and isinstance(value, int) and not isinstance(value, bool):
                value = record[field] = str(value)
            if not isinstance(value, str) or (required and not value.strip()):
                raise MalformedData(f"{path}:{number}: field {field!r} must be a non-empty string, got {value!r:.40}")
        key = (record["id"], record.get("revision") or "")
        if key in seen:
            raise MalformedData(f"{path}:{number}: id {key[0]!r} revision {key[1]!r} repeats line {seen[key]}")
        seen[key] = number
        out.append(SourceDocument(record["id"], key[1], record["text"], record.get("title") or "", "jsonl",
                                  f"{path}:{number}", record["text"]))
    if not out:
        raise MalformedData(f"{path}: no documents (expected one JSON object per line with id and text)")
    return out


LARGE_FILE_BYTES = 20_000_000  # a file this large is named before it is read: extraction takes a while


class SkippedInputWarning(UserWarning):
    """A file under the documents folder that is not indexed, or indexed with nothing in it."""


def _walk(root: Path) -> list[Path]:
    """Every path under ``root``, sorted, following linked folders once each: a link back to a
    folder already walked (a loop) is named and not followed."""
    seen, out = {root.resolve()}, []
    for folder, subfolders, names in os.walk(root, followlinks=True):
        kept = []
        for sub in sorted(subfolders):
            resolved = (Path(folder) / sub).resolve()
            if resolved in seen:
                warnings.warn(f"{Path(folder) / sub}: a link back to a folder already read (a loop); not followed",
                              SkippedInputWarning, stacklevel=4)
                continue
            seen.add(resolved)
            kept.append(sub)
        subfolders[:] = kept
        out += [Path(folder) / name for name in names]
    return sorted(out)


def _folder_files(path: Path, exclude: Sequence[Path]) -> list[Path]:
    """The document files under a folder (hidden parts and ``exclude`` folders left out), naming
    every one skipped: a link that leads nowhere (or into a loop), a file under an excluded folder."""
    excluded = [e.resolve() for e in exclude]
    files = []
    for candidate in _walk(path):
        if candidate.suffix.lower() not in SUFFIXES or any(
                part.startswith(".") for part in candidate.relative_to(path).parts):
            continue
        try:
            resolved = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            warnings.warn(f"{candidate}: a link that leads nowhere (or into a loop); skipped", SkippedInputWarning,
                          stacklevel=3)
            continue
        if any(resolved == e or e in resolved.parents for e in excluded):
            warnings.warn(f"{candidate}: under the output folder; skipped (grainlab's own output is not a document)",
                          SkippedInputWarning, stacklevel=3)
            continue
        if candidate.is_file():
            files.append(candidate)
    return files


def load_documents(path: str | Path, exclude: Sequence[str | Path] = ()) -> list[SourceDocument]:
    """A folder's documents (every ``.md``/``.txt``/``.html``/``.pdf`` under it, sorted by path),
    the files a glob pattern matches (``docs/*.txt``; ids relative to the folder before the first
    wildcard) or a ``documents.jsonl``'s; a missing path or an empty folder is an error saying what
    to pass. Files under ``exclude`` folders (``compare --out``) are skipped; every file skipped,
    empty (no text: a zero-byte file, a PDF without a text layer) or large is named in a
    :class:`SkippedInputWarning`, and an empty document is not indexed."""
    pattern = str(path)
    if any(c in pattern for c in "*?["):
        parts = Path(pattern).expanduser().parts
        fixed = next(i for i, part in enumerate(parts) if any(c in part for c in "*?["))
        path = Path(*parts[:fixed]) if fixed else Path(".")
        files = sorted(p for p in path.glob(str(Path(*parts[fixed:])))
                       if p.is_file() and p.suffix.lower() in SUFFIXES)
        if not files:
            raise DatasetNotFound(f"{pattern}: matches no {', '.join(SUFFIXES)} file")
    else:
        path = Path(path).expanduser()
        if path.is_file() and path.suffix == ".jsonl":
            return read_documents_jsonl(path)
        if not path.is_dir():
            raise DatasetNotFound(f"{path}: not a folder of documents nor a documents.jsonl; pass a folder holding "
                                  f"{', '.join(SUFFIXES)} files, a glob pattern, or a JSON-lines file with id and "
                                  "text per line")
        files = _folder_files(path, [Path(e).expanduser() for e in exclude])
        if not files:
            raise DatasetNotFound(f"{path}: no {', '.join(SUFFIXES)} files under it")
    for file in files:
        size = file.stat().st_size
        if size >= LARGE_FILE_BYTES:
            warnings.warn(f"{file}: {size / 1e6:.0f} MB; extracting and chunking it takes a while (move it out of "
                          "the folder if it is not a document)", SkippedInputWarning, stacklevel=2)
    documents = []
    for file in files:
        doc = read_document(file, path)
        if doc.text.strip():
            documents.append(doc)
        else:
            why = "a PDF without a text layer (scan it with OCR first)" if file.suffix.lower() in PDF_SUFFIXES \
                else "empty"
            warnings.warn(f"{file}: {why}; not indexed", SkippedInputWarning, stacklevel=2)
    if not documents:
        raise DatasetNotFound(f"{path}: every document is empty")
    keys: dict[str, str] = {}
    for doc in documents:
        if doc.key in keys:
            raise MalformedData(f"{doc.path}: document {doc.key!r} is also {keys[doc.key]}; rename one")
        keys[doc.key] = doc.path
    return documents
