"""Evidence spans that would be accepted but wrong, and answers written another way.

Offsets index the text as grainlab extracts it; a span counted another way (on the file with CRLF
line ends, in UTF-16 code units), one that splits a letter from its accent, or one that disagrees
with its own answer is refused with a line that says which way it was probably counted. Answers
match under Unicode NFKC (full/half width, NFC/NFD) and keep the text's own offsets."""

import json

import pytest

from grainlab.data.documents import load_documents
from grainlab.data.evidence import load_questions
from grainlab.data.normalise import find_all
from grainlab.errors import MalformedData


def _questions(tmp_path, *records, raw: bytes | None = None):
    path = tmp_path / "q.jsonl"
    path.write_bytes(raw if raw is not None else
                     "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8"))
    return path


def _docs(tmp_path, name: str, data: bytes):
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(data)
    return load_documents(folder)


def test_a_span_counted_on_a_crlf_file_as_saved_is_refused_and_explained(tmp_path):
    docs = _docs(tmp_path, "a.txt", b"line one\r\nline two\r\nthe answer is here\r\n")
    text = docs[0].text
    at = text.index("the answer")
    crlf_start = at + text.count("\n", 0, at)  # counted on the bytes as saved
    q = {"id": "q", "question": "?", "document_id": "a", "start": crlf_start, "end": crlf_start + 10,
         "answer": "the answer"}
    with pytest.raises(MalformedData, match=f"CRLF line ends.*the answer starts at {at}"):
        load_questions(_questions(tmp_path, q), docs)
    with pytest.raises(MalformedData, match="saved with CRLF line ends.*add the 'answer'"):
        load_questions(_questions(tmp_path, {k: v for k, v in q.items() if k != "answer"}), docs)
    assert load_questions(_questions(tmp_path, {**q, "start": at, "end": at + 10}), docs)[0].spans[0][1:] == (at, at + 10)


def test_a_span_counted_in_utf16_code_units_is_refused_and_explained(tmp_path):
    docs = _docs(tmp_path, "e.md", "Emoji 😀😀 first, then the answer.\n".encode())
    at = docs[0].text.index("the answer")
    q = {"id": "q", "question": "?", "document_id": "e", "start": at + 2, "end": at + 12, "answer": "the answer"}
    with pytest.raises(MalformedData, match=f"UTF-16 code units.*the answer starts at {at}"):
        load_questions(_questions(tmp_path, q), docs)
    with pytest.raises(MalformedData, match="beyond U\\+FFFF"):
        load_questions(_questions(tmp_path, {k: v for k, v in q.items() if k != "answer"}), docs)


def test_a_span_that_splits_a_letter_from_its_accent_is_refused(tmp_path):
    docs = _docs(tmp_path, "n.md", "Cafe\u0301 au lait.\n".encode("utf-8"))
    with pytest.raises(MalformedData, match="'end' \\(4\\) splits 'e' from the mark U\\+0301"):
        load_questions(_questions(tmp_path, {"id": "q", "question": "?", "document_id": "n", "start": 0, "end": 4}),
                       docs)


def test_a_span_that_disagrees_with_its_answer_is_an_error(tmp_path):
    docs = _docs(tmp_path, "a.md", b"Refunds take five days. Shipping takes two.\n")
    q = {"id": "q", "question": "?", "document_id": "a", "start": 0, "end": 7, "answer": "Shipping"}
    with pytest.raises(MalformedData, match="hold 'Refunds', not the 'answer' 'Shipping'"):
        load_questions(_questions(tmp_path, q), docs)


def test_answers_match_under_nfkc_and_keep_the_texts_offsets(tmp_path):
    text = "Call the ＡＰＩ on the ｻｰﾊﾞｰ. Cafe\u0301 au lait.\n"
    docs = _docs(tmp_path, "w.md", text.encode("utf-8"))
    found = load_questions(_questions(tmp_path, *[{"id": str(i), "question": "?", "document_id": "w", "answer": a}
                                                  for i, a in enumerate(["API", "サーバー", "Café"])]), docs)
    assert [text[s:e] for q in found for _, s, e in q.spans] == ["ＡＰＩ", "ｻｰﾊﾞｰ", "Cafe\u0301"]
    assert find_all("ﬁle", "fi") == [(0, 1)] and find_all("ﬁle", "f") == []  # never half a character


@pytest.mark.parametrize("raw, message", [
    ('{"id": "q", "question": "caf\xe9?", "document_id": "a", "answer": "x"}\n'.encode("latin-1"), "not UTF-8"),
    (b'{"id": "q", "question": "\\ud800?", "document_id": "a", "answer": "x"}\n', "a lone surrogate"),
])
def test_a_questions_file_that_is_not_utf8_text_is_one_line(tmp_path, raw, message):
    docs = _docs(tmp_path, "a.md", b"x\n")
    with pytest.raises(MalformedData, match=message):
        load_questions(_questions(tmp_path, raw=raw), docs)


def test_normalised_matches_start_and_end_only_between_characters():
    """Hand-made cases from the mutation run's survivors: a match may not start or end inside a
    character whose NFKC form is several (ﬁ → fi), overlapping matches are all found, and a mark of
    combining class 1 (an overlay) attaches to its letter like any other mark."""
    from grainlab.data.normalise import clusters

    assert find_all("ﬁle", "ile") == [] and find_all("ﬁle", "le") == [(1, 3)]
    assert find_all("abcﬁle", "ile") == [] and find_all("abcﬁle", "cfi") == [(2, 4)]  # away from offset 1 too
    assert find_all("abcxﬁ", "abcxf") == [] and find_all("abcxﬁ", "abcxfi") == [(0, 5)]
    assert find_all("xﬁ", "xf") == [] and find_all("xﬁ", "xfi") == [(0, 2)]
    assert find_all("aaa", "aa") == [(0, 2), (1, 3)]
    assert clusters("a\u0334b") == [(0, 2), (2, 3)]
    assert find_all("a\u0334b", "b") == [(2, 3)] and find_all("a\u0334b", "a") == []
