"""Questions with gold evidence spans over a user's own documents (``questions.jsonl``), and the
dataset they make with those documents.

One JSON object per line: ``id``, ``question``, ``document_id`` and either ``start``/``end``
(character offsets into the document's text *as grainlab extracts it*, see ``data.documents``)
or ``answer`` (a string located in that text: it must occur exactly once); optional
``revision`` (default: the document's last revision listed), ``relevance`` (grade, default 1),
``category`` (e.g. ``single paragraph``, ``two paragraphs``, ``table or list``, ``cross-section``,
``version-specific``, ``unanswerable``), ``answerable`` (default true; an unanswerable question
needs no document or span), ``generated`` (true for questions a model wrote) and ``model`` (which). Every error
names the file, the line and the field.

An ``answer`` that is not in the extracted text is an error, unless ``keep_unlocated``: then the
question is kept without a span and marked with the stage that lost it — ``extraction`` when the
string is in the file's source (markup included) but not in its extracted text, ``source`` when
it is in neither.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grainlab.data.documents import SourceDocument
from grainlab.data.normalise import attaches, find_all
from grainlab.data.types import Dataset, Document
from grainlab.errors import DatasetNotFound, MalformedData

UNLABELLED = "unlabelled"


@dataclass(frozen=True)
class EvidenceQuestion:
    """A question, its gold spans ``(document key, start, end)`` and how it is labelled;
    ``lost_at`` names the stage that lost an answer that could not be located (else ``None``)."""

    qid: str
    question: str
    spans: tuple[tuple[str, int, int], ...] = ()
    relevance: int = 1
    category: str = UNLABELLED
    answerable: bool = True
    generated: bool = False
    lost_at: str | None = None
    document: str = ""
    extra: dict[str, object] = field(default_factory=dict, compare=False)


def _document_for(documents: Sequence[SourceDocument], doc_id: str, revision: str | None) -> SourceDocument | None:
    matches = [d for d in documents if d.doc_id == doc_id or d.key == doc_id]
    if revision is not None:
        matches = [d for d in matches if d.revision == revision]
    return matches[-1] if matches else None


def locate_answer(doc: SourceDocument, answer: str) -> list[int]:
    """Every offset where ``answer`` occurs in the document's extracted text."""
    found, at = [], doc.text.find(answer)
    while at >= 0:
        found.append(at)
        at = doc.text.find(answer, at + 1)
    return found


def locate_spans(doc: SourceDocument, answer: str) -> list[tuple[int, int]]:
    """Every ``(start, end)`` of ``answer`` in the extracted text: as written, else compared under
    Unicode NFKC normalisation (full- and half-width forms, NFC against NFD), in the text's own
    offsets (``data.normalise``)."""
    exact = [(at, at + len(answer)) for at in locate_answer(doc, answer)]
    return exact or find_all(doc.text, answer)


def _has_crlf(doc: SourceDocument) -> bool:
    """Whether the document's file was saved with CRLF line ends (read back as ``\n``)."""
    if doc.kind not in ("md", "txt") or not doc.path:
        return False
    try:
        return b"\r\n" in Path(doc.path).read_bytes()
    except OSError:
        return False


def _offset_convention(doc: SourceDocument, start: int, answer: str) -> str:
    """Why a span that disagrees with its answer may have been counted another way: on the file with
    CRLF line ends, or in UTF-16 code units (as JavaScript counts); empty when neither explains it."""
    for at, _ in locate_spans(doc, answer):
        if at + doc.text.count("\n", 0, at) == start and _has_crlf(doc):
            return (f"; it looks counted on the file with CRLF line ends, but grainlab reads line ends as one "
                    f"character: the answer starts at {at}")
        if at + sum(1 for c in doc.text[:at] if ord(c) > 0xFFFF) == start and at != start:
            return (f"; it looks counted in UTF-16 code units (as JavaScript counts), but grainlab counts "
                    f"characters (code points): the answer starts at {at}")
    return ""


def _check_span(doc: SourceDocument, start: int, end: int, answer: str | None, where: str) -> None:
    """A span must cut between characters, agree with its answer when one is given, and — on a file
    whose offsets could have been counted two ways (CRLF line ends, characters beyond U+FFFF) — come
    with the answer that says which."""
    text = doc.text
    for name, at in (("start", start), ("end", end)):
        if 0 < at < len(text) and attaches(text[at]):
            raise MalformedData(f"{where}: field {name!r} ({at}) splits {text[at - 1]!r} from the mark "
                                f"U+{ord(text[at]):04X} that belongs to it; move it to a character boundary")
    if answer is not None:
        quoted = text[start:end]
        if quoted != answer and unicodedata.normalize("NFKC", quoted) != unicodedata.normalize("NFKC", answer):
            raise MalformedData(f"{where}: fields 'start'/'end' ({start}, {end}) hold {quoted[:40]!r}, not the "
                                f"'answer' {answer[:40]!r}{_offset_convention(doc, start, answer)}")
        return
    if _has_crlf(doc) and "\n" in text[:end]:
        raise MalformedData(f"{where}: {doc.key!r} was saved with CRLF line ends, so 'start'/'end' could count them "
                            "as two characters or one (grainlab: one); add the 'answer' text to say which span")
    if any(ord(c) > 0xFFFF for c in text[:end]):
        raise MalformedData(f"{where}: {doc.key!r} has characters beyond U+FFFF before the span, which UTF-16 "
                            "counts twice and grainlab once; add the 'answer' text to say which span")


def _field(record: dict, name: str, kind: type | tuple[type, ...], where: str, default: object = None) -> object:
    value = record.get(name, default)
    if value is None:
        return default
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise MalformedData(f"{where}: field {name!r} must be {names}, got {value!r:.40}")
    return value


def parse_question(record: object, documents: Sequence[SourceDocument], where: str,
                   keep_unlocated: bool = False) -> EvidenceQuestion:
    """One line of ``questions.jsonl`` checked against the documents (see the module docstring)."""
    if not isinstance(record, dict):
        raise MalformedData(f"{where}: expected a JSON object, got {type(record).__name__}")
    qid = _field(record, "id", (str, int), where)
    question = _field(record, "question", str, where)
    if qid is None or question is None or not str(question).strip():
        raise MalformedData(f"{where}: field {'id' if qid is None else 'question'!r} is required")
    answerable = _field(record, "answerable", bool, where, True)
    relevance = _field(record, "relevance", int, where, 1)
    category = _field(record, "category", str, where, UNLABELLED if answerable else "unanswerable")
    generated = _field(record, "generated", bool, where, False)
    model = _field(record, "model", str, where)
    common = dict(qid=str(qid), question=str(question), relevance=int(relevance), category=str(category),
                  answerable=bool(answerable), generated=bool(generated), extra={"model": model} if model else {})
    doc_id = _field(record, "document_id", str, where)
    if not answerable:
        return EvidenceQuestion(**common, document=str(doc_id or ""))
    if doc_id is None:
        raise MalformedData(f"{where}: field 'document_id' is required for an answerable question")
    revision = _field(record, "revision", (str, int), where)
    doc = _document_for(documents, str(doc_id), None if revision is None else str(revision))
    if doc is None:
        known = sorted({d.key for d in documents})
        raise MalformedData(f"{where}: field 'document_id': no document {doc_id!r}"
                            f"{'' if revision is None else f' at revision {revision!r}'}; known: {known[:8]}")
    start, end = _field(record, "start", int, where), _field(record, "end", int, where)
    if (start is None) != (end is None):
        raise MalformedData(f"{where}: fields 'start' and 'end' go together; give both or neither")
    answer = _field(record, "answer", str, where)
    if start is not None:
        if not 0 <= start < end <= len(doc.text):  # type: ignore[operator]
            raise MalformedData(f"{where}: fields 'start'/'end' ({start}, {end}) are not a range inside "
                                f"{doc.key!r} (0 ≤ start < end ≤ {len(doc.text)})")
        _check_span(doc, start, end, answer, where)  # type: ignore[arg-type]
        return EvidenceQuestion(**common, spans=((doc.key, start, end),), document=doc.key)  # type: ignore[arg-type]
    if not answer:
        raise MalformedData(f"{where}: an answerable question needs 'start'/'end' or 'answer'")
    found = locate_spans(doc, answer)
    if len(found) == 1:
        return EvidenceQuestion(**common, spans=((doc.key, *found[0]),), document=doc.key)
    if len(found) > 1:
        raise MalformedData(f"{where}: field 'answer' {answer[:40]!r} occurs {len(found)} times in {doc.key!r} "
                            f"(offsets {[at for at, _ in found[:5]]}); give 'start'/'end' to say which")
    lost_at = "extraction" if doc.raw is not None and doc.raw != doc.text and answer in doc.raw else "source"
    if not keep_unlocated:
        hint = ("it is in the file's source but not in the extracted text (extraction dropped it)"
                if lost_at == "extraction" else "it is not in the document, not even under Unicode NFKC "
                "normalisation (full/half width, NFC/NFD)")
        raise MalformedData(f"{where}: field 'answer' {answer[:40]!r} is not in the text of {doc.key!r}: {hint}; "
                            "fix the question, or pass keep_unlocated (--keep-unlocated) to count it as a failure "
                            f"at the {lost_at} stage")
    return EvidenceQuestion(**common, lost_at=lost_at, document=doc.key)


def load_questions(path: str | Path, documents: Sequence[SourceDocument],
                   keep_unlocated: bool = False) -> list[EvidenceQuestion]:
    """Every question of a ``questions.jsonl`` (see the module docstring); ids must be unique."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise DatasetNotFound(f"{path}: no questions file; write one JSON object per line with id, question, "
                              "document_id and start/end (or answer) — or let grainlab generate questions")
    out: list[EvidenceQuestion] = []
    seen: dict[str, int] = {}
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{path}:{number}"
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise MalformedData(f"{where}: not UTF-8 (byte {exc.start} of the line is {raw[exc.start]:#04x}); "
                                    "save the file as UTF-8") from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MalformedData(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
            try:
                json.dumps(record, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError as exc:
                raise MalformedData(f"{where}: a lone surrogate {exc.object[exc.start]!r} (half of a UTF-16 pair) "
                                    "is not text; write the character itself or its full pair") from None
            question = parse_question(record, documents, where, keep_unlocated)
            if question.qid in seen:
                raise MalformedData(f"{where}: field 'id' {question.qid!r} repeats line {seen[question.qid]}")
            seen[question.qid] = number
            out.append(question)
    if not out:
        raise MalformedData(f"{path}: no questions")
    return out


def question_record(question: EvidenceQuestion, documents: dict[str, SourceDocument]) -> dict[str, object]:
    """A question as a ``questions.jsonl`` line (the first span's offsets)."""
    record: dict[str, object] = {"id": question.qid, "question": question.question}
    if question.spans:
        key, start, end = question.spans[0]
        doc = documents[key]
        record.update(document_id=doc.doc_id, start=start, end=end, answer=doc.text[start:end])
        if doc.revision:
            record["revision"] = doc.revision
    record.update(relevance=question.relevance, category=question.category, answerable=question.answerable,
                  generated=question.generated, **question.extra)
    return record


def evidence_dataset(name: str, documents: Sequence[SourceDocument], questions: Sequence[EvidenceQuestion]) -> Dataset:
    """The corpus (keyed ``id@revision``) and questions as a grainlab dataset: qrels and gold spans
    for answerable questions with a span; every question is searched. ``info`` keeps each question's
    category, answerability, stage lost (``lost_at``), whether it was generated, and each document's
    kind and revision."""
    corpus = {d.key: Document(d.key, d.text, d.title) for d in documents}
    located = [q for q in questions if q.answerable and q.spans]
    if not located:
        raise MalformedData(f"{name}: no answerable question with a located span; nothing to evaluate")
    return Dataset(
        name=name, corpus=corpus, queries={q.qid: q.question for q in questions},
        qrels={q.qid: {key: q.relevance for key, _, _ in q.spans} for q in located},
        answers={q.qid: [corpus[key].text[s:e] for key, s, e in q.spans] for q in located},
        info={"gold_spans": {q.qid: [list(s) for s in q.spans] for q in located},
              "category": {q.qid: q.category for q in questions},
              "answerable": {q.qid: q.answerable for q in questions},
              "lost_at": {q.qid: q.lost_at for q in questions if q.lost_at},
              "generated": {q.qid: q.generated for q in questions},
              "document_of": {q.qid: q.document for q in questions},
              "kind": {d.key: d.kind for d in documents},
              "revision": {d.key: d.revision for d in documents},
              "source": name})
