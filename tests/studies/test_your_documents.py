"""`grainlab compare` on hand-made documents whose right answers are known (issue 38).

BM25 (no model) keeps these fast and deterministic; the encoder is a parameter like any other."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from grainlab.cache import ArtifactCache
from grainlab.chunking import get_chunker
from grainlab.chunking.citations import citation_records
from grainlab.data.documents import SourceDocument, html_to_text, load_documents
from grainlab.data.evidence import evidence_dataset, load_questions
from grainlab.errors import ConfigError, MalformedData
from grainlab.evaluation.spans import boundary_cut
from grainlab.studies import question_generation as qg
from grainlab.studies import your_documents as yd
from grainlab.types import Chunk, Document
from tests.scripted_reader import ScriptedReader
from tests.studies.your_documents_fixture import (
    EVIDENCE,
    FILLER,
    POLICY_2024,
    write_documents,
    write_questions,
)

FIXED, SECTIONS = "fixed_tokens(size=64,overlap=0)", "structure(size=200)"
CANDIDATES = {"fixed 64": FIXED, "sections 200": SECTIONS}


def questions_rows():
    start = POLICY_2024.index(EVIDENCE)
    return [
        {"id": "refund", "question": "Is it 30 days to return an unopened item for a refund?", "document_id": "policy",
         "start": start, "end": start + len(EVIDENCE), "category": "single paragraph"},
        {"id": "ship", "question": "How fast do orders ship?", "document_id": "policy",
         "answer": "Orders ship within two business days", "category": "version-specific"},
        {"id": "password", "question": "How do I reset my password?", "document_id": "faq",
         "answer": "open Settings and choose Reset password"},
        {"id": "premium", "question": "What is the price of the Premium plan?", "document_id": "faq",
         "answer": "| Premium | 12 pounds |", "category": "table or list"},
        {"id": "saturday", "question": "Opening hours on Saturday?", "document_id": "faq",
         "answer": "Saturday: 10 to 14", "category": "table or list"},
        {"id": "escalation", "question": "What is the escalation code for locked accounts?", "document_id": "faq",
         "answer": "ZX-42"},
        {"id": "ceo", "question": "Who is the chief executive?", "document_id": "policy", "answer": "Jane Smith"},
        {"id": "depot", "question": "Which city hosts the depot?", "document_id": "policy",
         "answer": "central warehouse in Leeds"},
        {"id": "gift", "question": "Do you sell gift cards?", "answerable": False},
    ]


@pytest.fixture
def inputs(tmp_path):
    docs = write_documents(tmp_path / "docs")
    questions = write_questions(tmp_path / "questions.jsonl", questions_rows())
    return yd.load_inputs(docs, questions, keep_unlocated=True)


@pytest.fixture
def comparison(inputs, tmp_path):
    return yd.compare(inputs, CANDIDATES, "bm25", k=1, tune_share=0.3, out=tmp_path / "out",
                      cache=ArtifactCache(tmp_path / "cache"), progress=False, n_resamples=200)


# ---------------------------------------------------------------- extraction and questions


def test_html_extraction_keeps_headings_lists_and_tables_as_the_structure_chunker_reads_them():
    text = html_to_text("<h2>Hours</h2><p>We are <b>open</b>:</p><ul><li>Mon: 9</li><li>Sat: 10</li></ul>"
                        "<!-- secret --><script>var x = 1;</script>"
                        "<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Basic</td><td>5</td></tr></table>")
    assert text == "## Hours\n\nWe are open:\n\n- Mon: 9\n- Sat: 10\n\n| Plan | Price |\n| --- | --- |\n| Basic | 5 |\n"
    chunks = get_chunker("structure(size=100)").chunk(Document("d", text))
    assert all(c.metadata["headings"] == ["Hours"] for c in chunks)


def test_offsets_are_exact_through_markdown_html_and_pdf_extraction(tmp_path):
    from fpdf import FPDF

    folder = write_documents(tmp_path / "docs")
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for page in ("Installation guide. Unpack the device and connect the power cable.",
                 "Maintenance. Clean the filter every three months with warm water."):
        pdf.add_page()
        pdf.multi_cell(0, 8, page)
    pdf.output(str(folder / "manual.pdf"))
    docs = {d.key: d for d in load_documents(folder)}
    assert set(docs) == {"faq", "manual", "policy@2023", "policy@2024"}
    assert docs["policy@2024"].text == POLICY_2024 and docs["faq"].kind == "html" and docs["manual"].kind == "pdf"
    rows = [{"id": "md", "question": "q", "document_id": "policy", "answer": "30 days of delivery"},
            {"id": "html", "question": "q", "document_id": "faq", "answer": "| Premium | 12 pounds |"},
            {"id": "pdf", "question": "q", "document_id": "manual", "answer": "every three months"}]
    questions = load_questions(write_questions(tmp_path / "q.jsonl", rows), list(docs.values()))
    for question, row in zip(questions, rows, strict=True):
        key, start, end = question.spans[0]
        assert docs[key].text[start:end] == row["answer"]
    manual = docs["manual"]
    _, start, end = questions[2].spans[0]
    assert manual.pages(start, end) == [2] and manual.pages(0, 10) == [1] and manual.pages(0, end) == [1, 2]
    chunker = get_chunker("fixed_tokens(size=16,overlap=0)")
    chunks = chunker.chunk(Document(manual.key, manual.text))
    for record in citation_records(manual, chunks, chunker):
        assert manual.text[record["start"]:record["end"]] == record["text"]
        assert record["pages"] == manual.pages(record["start"], record["end"])


def test_a_question_without_revision_reads_the_last_revision_and_an_old_one_can_be_named(tmp_path):
    docs = load_documents(write_documents(tmp_path / "docs"))
    rows = [{"id": "new", "question": "q", "document_id": "policy", "answer": "30 days"},
            {"id": "old", "question": "q", "document_id": "policy", "revision": "2023", "answer": "14 days"}]
    new, old = load_questions(write_questions(tmp_path / "q.jsonl", rows), docs)
    assert new.spans[0][0] == "policy@2024" and old.spans[0][0] == "policy@2023"


@pytest.mark.parametrize(("row", "message"), [
    ({"id": "x", "document_id": "policy", "answer": "30 days"}, "field 'question' is required"),
    ({"id": "x", "question": "q", "document_id": "nope", "answer": "a"}, "field 'document_id': no document 'nope'"),
    ({"id": "x", "question": "q", "document_id": "policy", "answer": "business days"}, "occurs 2 times"),
    ({"id": "x", "question": "q", "document_id": "policy", "start": 5, "end": 99999}, "not a range inside"),
    ({"id": "x", "question": "q", "document_id": "policy", "start": 5}, "'start' and 'end' go together"),
    ({"id": "x", "question": "q", "document_id": "policy", "relevance": "high", "answer": "30 days"},
     "field 'relevance' must be int"),
    ({"id": "x", "question": "q", "document_id": "faq", "answer": "ZX-42"},
     "in the file's source but not in the extracted text"),
    ({"id": "x", "question": "q", "document_id": "policy", "answer": "Jane Smith"}, "it is not in the document"),
])
def test_every_question_error_names_the_file_line_and_field(tmp_path, row, message):
    docs = load_documents(write_documents(tmp_path / "docs"))
    path = write_questions(tmp_path / "q.jsonl", [{"id": "ok", "question": "q", "answerable": False}, row])
    with pytest.raises(MalformedData, match="q.jsonl:2: ") as error:
        load_questions(path, docs)
    assert message in str(error.value)


def test_documents_jsonl_errors_name_the_line(tmp_path):
    path = tmp_path / "documents.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', encoding="utf-8")
    with pytest.raises(MalformedData, match=r"documents.jsonl:2: id 'a' revision '' repeats line 1"):
        load_documents(path)
    path.write_text('{"id": "a", "text": 3}\n', encoding="utf-8")
    with pytest.raises(MalformedData, match=r"documents.jsonl:1: field 'text' must be a non-empty string"):
        load_documents(path)


# ---------------------------------------------------------------- the decision table


def test_the_table_is_the_one_these_documents_imply(comparison):
    rows = comparison.per_question.set_index(["candidate", "qid"])
    policy = Document("policy@2024", POLICY_2024)
    span = ("policy@2024", POLICY_2024.index(EVIDENCE), POLICY_2024.index(EVIDENCE) + len(EVIDENCE))
    assert boundary_cut(get_chunker(FIXED).chunk(policy), span)  # the window cuts the refund sentence...
    assert not boundary_cut(get_chunker(SECTIONS).chunk(policy), span)  # ...the section keeps it
    assert rows.loc[("fixed 64", "refund"), "SpanHit@1"] == 1 and rows.loc[("fixed 64", "refund"), "SpanCovered@1"] == 0
    assert rows.loc[("sections 200", "refund"), "SpanCovered@1"] == 1
    decision = comparison.decision.set_index("chunker")
    assert list(comparison.decision.columns[:12]) == ["chunker", *yd.decision_columns(1)]
    confirm = comparison.per_question.query("check == 'system' and split == 'confirm' and answerable")
    for label in CANDIDATES:
        mine = confirm[confirm["candidate"] == label]
        assert decision.loc[label, "hit@1"] == pytest.approx(mine["SpanHit@1"].mean())
        assert decision.loc[label, "boundary_retention"] == pytest.approx(mine["SpanCovered@1"].mean())
        missed = set(mine.loc[mine["SpanHit@1"] == 0, "qid"])
        assert set(filter(None, decision.loc[label, "hit@1_missed_ids"].split(";"))) == missed
        assert decision.loc[label, "hit@1_misses"] == len(missed)
    assert decision.loc["fixed 64", "boundary_retention"] < decision.loc["sections 200", "boundary_retention"]
    assert decision.loc["fixed 64", "duplication"] == pytest.approx(0.0)  # windows without overlap index each token once
    assert decision.loc["sections 200", "duplication"] > 0  # heading paths are indexed again with each chunk
    assert decision.loc["fixed 64", "cost"] == pytest.approx(decision.loc["fixed 64", "embed_tokens"] * 0.02 / 1e6)
    assert {"pass_hit@1>=0.92", "pass_boundary_retention>=0.9", "pass_mean_tokens<=3000"} <= set(decision.columns)
    assert decision["pass_mean_tokens<=3000"].all() and not decision["pass_hit@1>=0.92"].any()
    assert comparison.recommended in CANDIDATES and comparison.recommended in comparison.recommendation


def test_each_failure_is_attributed_to_the_stage_that_lost_it(comparison):
    stages = comparison.failures.set_index(["chunker", "question_id"])["stage"]
    for label in CANDIDATES:
        assert stages[(label, "escalation")] == "extraction"  # only in an HTML comment
        assert stages[(label, "ceo")] == "source"  # in no file at all
        assert stages[(label, "depot")] == "embedding"  # BM25 shares no word with "central warehouse in Leeds"
        assert stages[(label, "ship")] == "embedding"
    retrieved = comparison.failures.set_index(["chunker", "question_id"])["retrieved"]
    assert all(retrieved[(label, "ship")].startswith("policy@2023#") for label in CANDIDATES)  # the old revision
    assert "gift" not in set(comparison.failures["question_id"])  # unanswerable: a false hit or not, never a miss


def test_unanswerable_questions_count_as_false_hits_above_the_threshold(inputs, tmp_path):
    common = dict(k=1, tune_share=0.3, cache=ArtifactCache(tmp_path / "cache"), progress=False, n_resamples=100)
    low = yd.compare(inputs, {"s": SECTIONS}, "bm25", threshold=-1e9, out=tmp_path / "a", **common)
    high = yd.compare(inputs, {"s": SECTIONS}, "bm25", threshold=1e9, out=tmp_path / "b", **common)
    assert low.decision.loc[0, "unanswerable_false_hits"] == 1.0 and low.decision.loc[0, "false_hit_ids"] == "gift"
    assert high.decision.loc[0, "unanswerable_false_hits"] == 0.0 and high.decision.loc[0, "false_hits"] == 0


def test_the_outputs_are_written_and_say_who_wrote_the_questions(comparison, tmp_path):
    out = tmp_path / "out"
    for name in ("decision.csv", "tuning.csv", "by_category.csv", "failures.csv", "paired.csv", "per_question.csv",
                 "chunks.jsonl", "report.html", "summary.json"):
        assert (out / name).is_file(), name
    assert (pd.read_csv(out / "decision.csv")["questions_from"] == "yours").all()
    failures = pd.read_csv(out / "failures.csv")
    assert {"question_id", "chunker", "stage", "evidence"} <= set(failures.columns)
    assert set(failures["stage"]) <= set(yd.STAGES)
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Use " in report and "Failures by first stage" in report and "escalation" in report
    records = [json.loads(line) for line in (out / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
    docs = {d.key: d for d in load_documents(tmp_path / "docs")}
    for record in records:
        key = f"{record['document_id']}@{record['revision']}" if record["revision"] else record["document_id"]
        assert docs[key].text[record["start"]:record["end"]] == record["text"]
    by_category = pd.read_csv(out / "by_category.csv")
    assert {"category", "document_kind"} == set(by_category["breakdown"])
    assert {"table or list", "single paragraph"} <= set(by_category["group"])


def test_failure_stages_reach_index_and_search_when_those_stages_exist():
    from grainlab.data.evidence import EvidenceQuestion

    text = "alpha beta gamma. delta epsilon zeta."
    spans = {"index": (("d", 0, 5),), "search": (("d", 0, 5),), "embedding": (("d", 0, 5),),
             "chunking": (("d", 3, 25),), "ok": (("d", 0, 5),)}
    questions = [EvidenceQuestion(q, q, s, document="d") for q, s in spans.items()]
    dataset = evidence_dataset("t", [SourceDocument("d", "", text)], questions)
    units = [Chunk("d#0", "d", text[:17], 0, 17, 4, 0), Chunk("d#1", "d", text[18:], 18, len(text), 4, 1)]
    hits = {  # SpanHit@1 per check: system, exact, first stage (approximate)
        "index": (0, 1, 0), "search": (0, 1, 1), "embedding": (0, 0, 0), "chunking": (0, 0, 0), "ok": (1, 1, 1)}
    rows = pd.DataFrame([{"candidate": "c", "check": check, "staged": True, "qid": q, "SpanHit@1": float(h),
                          "answerable": True, "split": "confirm", "category": "x", "document": "d"}
                         for q, values in hits.items() for check, h in zip(("system", "exact", "first"), values,
                                                                          strict=True)])
    found = yd.failure_stages(rows, dataset, {"c": units}, 1).set_index("question_id")["stage"].to_dict()
    assert found == {"index": "index", "search": "search", "embedding": "embedding", "chunking": "chunking"}


def test_an_approximate_or_staged_search_brings_its_exact_twin():
    systems = yd.candidate_systems({"a": FIXED}, "dense(model=sentence-transformers/all-MiniLM-L6-v2,index=hnsw)")
    assert [dict(s.tags)["check"] for s in systems] == ["system", "exact"]
    assert "index" not in systems[1].retriever
    staged = yd.candidate_systems({"a": FIXED}, ["bm25", "dense(model=sentence-transformers/all-MiniLM-L6-v2)"])
    assert [dict(s.tags)["check"] for s in staged] == ["system", "exact"] and staged[0].stages.fusion == "rrf"
    assert [dict(s.tags)["check"] for s in yd.candidate_systems({"a": FIXED}, "bm25")] == ["system"]
    with pytest.raises(ConfigError, match="parent–child candidate returns parents itself"):
        yd.candidate_systems({"d": yd.DEFAULT_CANDIDATES["D: 256 → parent ≤ 1200"]}, "bm25", reranker="x/y")


# ---------------------------------------------------------------- the decision rule


def test_the_stop_rule_keeps_the_cheaper_candidate_within_one_point():
    tuning = pd.DataFrame({"chunker": ["A", "B", "C"], "hit@5": [0.90, 0.895, 0.80], "embed_tokens": [1000, 400, 100]})
    assert yd.recommend(tuning, 5)[0] == "B"  # 0.5 points below A at 40% of its index
    tuning.loc[1, "embed_tokens"] = 600  # within a point but more than half A's index: keep the best
    assert yd.recommend(tuning, 5)[0] == "A"
    tuning.loc[1, ["hit@5", "embed_tokens"]] = [0.88, 100]  # cheap but 2 points below: keep the best
    assert yd.recommend(tuning, 5)[0] == "A"


def test_acceptance_criteria_are_parsed_checked_and_applied():
    criteria = yd.parse_criteria("hit@{k}>=0.9, mean_tokens<=3000", k=5)
    assert [c.name for c in criteria] == ["pass_hit@5>=0.9", "pass_mean_tokens<=3000"]
    assert criteria[0].passes(0.9) and not criteria[0].passes(0.89) and not criteria[0].passes(math.nan)
    with pytest.raises(ConfigError, match="no column 'recall'"):
        yd.parse_criteria("recall>=0.5")
    with pytest.raises(ConfigError, match="write it as column>=value"):
        yd.parse_criteria("hit@5 about 0.9")


def test_the_tuning_split_is_stable_when_questions_are_added():
    first = yd.tuning_split([f"q{i}" for i in range(500)], 0.2)
    more = yd.tuning_split([f"q{i}" for i in range(1000)], 0.2)
    assert all(more[q] == split for q, split in first.items())
    assert 0.15 < sum(s == "tune" for s in more.values()) / 1000 < 0.25


def test_candidates_parse_labels_and_bare_specs():
    assert yd.parse_candidates(["A=fixed_tokens(size=256,overlap=32)", "structure(size=800)"]) == {
        "A": "fixed_tokens(size=256,overlap=32)", "structure(size=800)": "structure(size=800)"}
    assert yd.parse_candidates(None) == yd.DEFAULT_CANDIDATES
    with pytest.raises(ConfigError, match="unknown chunker"):
        yd.parse_candidates(["A=nope(size=3)"])


# ---------------------------------------------------------------- citations


def test_citation_ids_survive_a_paragraph_inserted_at_the_top():
    body = "## Refunds\n\nRefunds take five days.\n\n## Shipping\n\nOrders ship in two days.\n\n## Returns\n\nBoxes only.\n"
    before = SourceDocument("guide", "3", body)
    after = SourceDocument("guide", "3", "Welcome to the guide, read it all.\n\n" + body)
    chunker = get_chunker("structure(size=50)")
    old = citation_records(before, chunker.chunk(Document(before.key, before.text)), chunker)
    new = citation_records(after, chunker.chunk(Document(after.key, after.text)), chunker)
    assert [r["chunk_id"] for r in old] != [r["chunk_id"] for r in new[1:]]  # ordinal ids shift...
    assert [r["id"] for r in old] == [r["id"] for r in new[1:]]  # ...citation ids do not
    assert new[1]["prev_id"] == new[0]["id"] and new[1]["next_id"] == new[2]["id"]
    assert all(r["id"].startswith("guide@3#") and r["splitter_version"] == chunker.version_string for r in new)
    assert new[2]["headings"] == ["Shipping"] and len(new[2]["sha256"]) == 64


def test_parent_child_records_name_their_parent_citation():
    doc = SourceDocument("g", "", "## A\n\n" + "One two three four five six seven. " * 30)
    chunker = get_chunker("parent_child(child_size=32,parent_size=200,parents=structure)")
    parents = chunker.parents_of(Document(doc.key, doc.text))
    records = citation_records(doc, chunker.chunk(Document(doc.key, doc.text)), chunker, parents)
    parent_ids = set(r["id"] for r in citation_records(doc, parents, chunker))
    assert records and all(r["parent_id"] in parent_ids for r in records)


# ---------------------------------------------------------------- generated questions


def test_generated_questions_keep_only_verbatim_evidence_and_drop_near_duplicates():
    doc = SourceDocument("policy", "2024", POLICY_2024)
    replies = iter([
        "Question: How long is the return window?\nEvidence: \"within 30 days of delivery for a full refund\"",
        "Question: How long is the return window?\nEvidence: within 30 days of delivery",  # a duplicate question
        "Question: What is the refund period?\nEvidence: one month after it arrives",  # a paraphrase
        "I cannot answer that.",
        "Question: The return window is long.\nEvidence: within 30 days of delivery",  # not a question
    ])
    reader = ScriptedReader(lambda prompt: next(replies), model_id="test/qwen", max_new_tokens=160)
    passages = [(doc, 0, len(POLICY_2024))] * 5
    original = qg.sample_passages
    qg.sample_passages = lambda documents, n, seed=0, **options: passages
    try:
        kept, report = qg.generate_questions([doc], reader, n=5, progress=False)
    finally:
        qg.sample_passages = original
    assert report.as_dict() == {"asked": 5, "kept": 1, "yield": 0.2, "dropped": {
        "near-duplicate question": 1, "evidence not verbatim in the passage": 1,
        "no question and evidence in the reply": 1, "not a question": 1}, "language": "en"}
    (question,) = kept
    key, start, end = question.spans[0]
    assert key == "policy@2024" and POLICY_2024[start:end] == "within 30 days of delivery for a full refund"
    assert question.generated and question.extra["model"] == "test/qwen"


def test_statements_and_copied_sentences_are_not_kept_as_questions():
    passage = "新索引は旧索引と並行構築し、aliasを切り替えます。旧索引は期間だけ残します。"
    assert qg.is_question("旧索引はいつまで残しますか？", "ja") and qg.is_question("旧索引はどう扱う", "ja")
    assert qg.is_question("旧索引は残しますか。", "ja") and qg.is_question("How long is it kept?")
    assert not qg.is_question("検索品質の問題に見えるため、利用者へ対象外範囲を示します。", "ja")
    assert not qg.is_question("The old index is kept for a while.")
    assert qg.copies_passage("新索引は旧索引と並行構築し、aliasを切り替えます。", passage, "ja")
    assert not qg.copies_passage("新索引はどのように構築しますか？", passage, "ja")
    assert qg.restates_evidence("余分なモデルや前処理は必要ないか？", "余分なモデルや前処理は必要ない。", "ja")
    assert qg.restates_evidence("Is the old index kept readable for the recovery period?",
                                "The old index is kept readable for the recovery period.")
    assert not qg.restates_evidence("旧索引はいつまで読取可能ですか？", "旧索引は復旧目標の期間だけ読取可能に残します。", "ja")
    assert not qg.restates_evidence("How long is the old index kept?", "The old index stays for the recovery period.")
    english = "The old index stays readable for the recovery period."
    assert qg.copies_passage("The old index stays readable?", english)
    assert not qg.copies_passage("How long does the old index stay readable?", english)


def test_passages_are_taken_from_every_document_in_turn():
    docs = [SourceDocument(f"d{i}", "", "\n\n".join(f"## S{j}\n\nSentence number {j} of doc {i} has words." for j in range(5)))
            for i in range(3)]
    picked = qg.sample_passages(docs, 6)
    assert [d.doc_id for d, _, _ in picked] == ["d0", "d1", "d2"] * 2
    assert all(d.text[a:b].strip() for d, a, b in picked)


# ---------------------------------------------------------------- the command


def test_the_compare_command_writes_the_decision(tmp_path, capsys, monkeypatch):
    from grainlab.cli import main

    monkeypatch.setenv("GRAINLAB_CACHE", str(tmp_path / "cache"))
    docs = write_documents(tmp_path / "docs")
    questions = write_questions(tmp_path / "questions.jsonl", questions_rows())
    status = main(["compare", str(docs), str(questions), "--chunkers", f"fixed={FIXED}", SECTIONS,
                   "--retriever", "bm25", "--k", "1", "--tune-share", "0.3", "--keep-unlocated", "--out",
                   str(tmp_path / "out")])
    printed = capsys.readouterr().out
    assert status == 0 and "failures by stage" in printed and "Use " in printed
    assert list(pd.read_csv(tmp_path / "out" / "decision.csv")["chunker"]) == ["fixed", SECTIONS]
    assert main(["compare", str(docs), str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o2")]) == 2
    assert "no questions file" in capsys.readouterr().err


def test_span_hit_and_rr_equal_ir_measures_on_the_units_that_overlap_the_evidence():
    """An independent computation: qrels over unit ids (a unit is relevant when it overlaps a gold
    span), scored by ir-measures' Success@k and RR@10, equal SpanHit@k and SpanRR@10."""
    import random

    import ir_measures

    from grainlab.data.types import Dataset
    from grainlab.evaluation.spans import overlaps
    from grainlab.experiments.scoring import MeasureSet, Scorer

    rng = random.Random(3)
    text = "".join(f"Sentence {i} says something. " for i in range(200))
    doc = Document("d", text)
    units = get_chunker("fixed_tokens(size=16,overlap=4)").chunk(doc)
    spans, run = {}, {}
    for q in range(40):
        start = rng.randrange(0, len(text) - 80)
        spans[f"q{q}"] = [("d", start, start + rng.randrange(5, 80))]
        order = rng.sample(units, 12)
        run[f"q{q}"] = [(u.chunk_id, 1.0 - i / 100) for i, u in enumerate(order)]
    dataset = Dataset("t", {"d": doc}, {q: q for q in spans}, {q: {"d": 1} for q in spans},
                      {q: ["x"] for q in spans}, {"gold_spans": spans})
    rows = Scorer(dataset, MeasureSet.parse(["SpanHit@5", "SpanRR@10", "CitationMatch@5"])).rows(
        run, {u.chunk_id: u for u in units}).pivot(index="qid", columns="measure", values="value")
    qrels = [ir_measures.Qrel(q, u.chunk_id, int(overlaps(u, spans[q][0]))) for q in spans for u in units]
    scored = [ir_measures.ScoredDoc(q, uid, score) for q, ranking in run.items() for uid, score in ranking]
    for measure, ours in ((ir_measures.Success @ 5, "SpanHit@5"), (ir_measures.RR @ 10, "SpanRR@10"),
                          (ir_measures.P @ 5, "CitationMatch@5")):
        reference = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, scored)}
        assert {q: pytest.approx(v) for q, v in reference.items()} == rows[ours].to_dict(), ours
    assert 0 < rows["SpanHit@5"].mean() < 1  # the draw has hits and misses


def test_a_quote_of_a_line_wrapped_sentence_is_verbatim_with_the_passages_own_offsets():
    passage = "Intro.\nThe refund is paid\nto the original   card. Other text."
    start, end = qg.verbatim_offsets(passage, "The refund is paid to the original card.")
    assert passage[start:end] == "The refund is paid\nto the original   card."
    assert qg.verbatim_offsets(passage, "The refund goes to the original card.") is None  # a word changed
    assert qg.verbatim_offsets(passage, "   ") is None


# ---------------------------------------------------------------- Japanese documents, two retrievers

JA_TOPICS = [("返品", "未開封の商品は配達から30日以内であれば全額返金の対象になります。"),
             ("配送", "注文は中央倉庫から2営業日以内に発送され、速達は翌営業日に届きます。"),
             ("会員", "パスワードを再設定するには、設定画面を開いて再設定を選びます。"),
             ("料金", "基本プランは月額500円で、上位プランは月額1200円です。"),
             ("保証", "部品の保証期間は2年間で、工賃は最初の1年間のみ保証されます。"),
             ("窓口", "問い合わせ窓口は平日の午前9時から午後5時まで受け付けています。")]


def japanese_inputs(tmp_path):
    folder = tmp_path / "ja_docs"
    folder.mkdir()
    rows = []
    for i, (title, evidence) in enumerate(JA_TOPICS):
        filler = "当社の店舗では多くの地域のお客様に対応しており、すべての注文は担当者が確認します。" * 3
        (folder / f"doc{i}.md").write_text(f"# {title}\n\n{filler}\n\n{evidence}\n\n{filler}\n", encoding="utf-8")
        question = {"返品": "未開封の商品はいつまで返金されますか？", "配送": "注文はいつ発送されますか？",
                    "会員": "パスワードはどうやって再設定しますか？", "料金": "基本プランの月額はいくらですか？",
                    "保証": "部品の保証期間は何年ですか？", "窓口": "問い合わせ窓口は何時から受け付けていますか？"}[title]
        for j in range(3):
            rows.append({"id": f"q{i}_{j}", "question": question, "document_id": f"doc{i}", "answer": evidence})
    questions = write_questions(tmp_path / "ja_questions.jsonl", rows)
    return folder, questions


def test_japanese_documents_compare_two_retrievers_side_by_side(tmp_path, capsys, monkeypatch):
    """Morphological BM25 beside whitespace BM25 on the same Japanese questions: the contrast's
    numbers are the two runs' own, and morphemes find what whitespace words cannot."""
    from grainlab.cli import main

    monkeypatch.setenv("GRAINLAB_CACHE", str(tmp_path / "cache"))
    docs, questions = japanese_inputs(tmp_path)
    out = tmp_path / "out"
    assert main(["compare", str(docs), str(questions), "--chunkers", "fixed=fixed_tokens(size=48,overlap=8)",
                 "sentences=sentences(n=1)", "--retriever", "bm25(language=ja)", "--side-by-side", "bm25",
                 "--k", "1", "--tune-share", "0.3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "retrievers.csv" in printed
    contrast = pd.read_csv(out / "retrievers.csv")
    first, second = (pd.read_csv(folder / "per_question.csv") for folder in (out, out / "side_by_side"))
    assert set(pd.read_csv(out / "decision.csv")["language"]) == {"ja"}
    for _, row in contrast.iterrows():
        hits = [f.loc[(f["candidate"] == row["chunker"]) & (f["check"] == "system") & f["answerable"], "SpanHit@1"].mean()
                for f in (first, second)]
        assert row["SpanHit@1 · bm25(language=ja)"] == pytest.approx(hits[0])
        assert row["SpanHit@1 · bm25"] == pytest.approx(hits[1])
        assert row["delta"] == pytest.approx(hits[0] - hits[1]) and row["ci_low"] <= row["delta"] <= row["ci_high"]
    assert (contrast["SpanHit@1 · bm25(language=ja)"] > contrast["SpanHit@1 · bm25"]).all()


def test_japanese_documents_without_a_retriever_get_morphological_bm25(tmp_path, monkeypatch):
    """The README's default: Japanese documents and no --retriever are searched by bm25(language=ja)
    (the offline encoders are English-only); naming whitespace BM25 on them warns."""
    from grainlab.cli import main

    monkeypatch.setenv("GRAINLAB_CACHE", str(tmp_path / "cache"))
    docs, questions = japanese_inputs(tmp_path)
    assert main(["compare", str(docs), str(questions), "--chunkers", "s=sentences(n=1)", "--k", "1",
                 "--tune-share", "0.3", "--out", str(tmp_path / "out")]) == 0
    assert set(pd.read_csv(tmp_path / "out" / "decision.csv")["retriever"]) == {"bm25(language=ja)"}
    inputs = yd.load_inputs(docs, questions)
    with pytest.warns(UserWarning, match="splits Japanese text at spaces"):
        yd.compare(inputs, {"s": "sentences(n=1)"}, "bm25", k=1, tune_share=0.3, out=tmp_path / "ws",
                   cache=ArtifactCache(tmp_path / "cache"), progress=False, n_resamples=100)


def test_a_first_try_with_three_questions_runs_without_a_split_and_says_so(tmp_path):
    """Three questions, three Markdown files: a 0.2 tuning share leaves one split empty; the
    comparison runs on all of them for both roles and the recommendation says so (it ended in a
    KeyError)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    rows = []
    for i, (topic, fact) in enumerate([("refunds", "Refunds take five days."), ("shipping", "Orders ship daily."),
                                       ("support", "Support answers within one hour.")]):
        (docs / f"{topic}.md").write_text(f"# {topic.title()}\n\n{FILLER}{fact}\n", encoding="utf-8")
        rows.append({"id": f"q{i}", "question": f"What about {topic}?", "document_id": topic, "answer": fact})
    questions = write_questions(tmp_path / "questions.jsonl", rows)
    split = yd.tuning_split([r["id"] for r in rows], 0.2)
    assert not {"tune", "confirm"} <= set(split.values())  # the premise: one split is empty
    comparison = yd.compare(yd.load_inputs(docs, questions), {"s": "structure(size=200)"}, "bm25", k=1,
                            tune_share=0.2, out=tmp_path / "out", cache=ArtifactCache(tmp_path / "cache"),
                            progress=False, n_resamples=100)
    assert comparison.info["held_out"] is False
    assert "No held-out split: 3 questions are too few at tune_share=0.2" in comparison.recommendation
    assert int(comparison.decision["answerable"].iloc[0]) == 3


def test_failure_stages_of_staged_and_plain_candidates_by_hand():
    """The first stage that lost a question: chunking (no unit holds the evidence), embedding (exact
    search misses too), index (exact search finds it, the approximate first stage does not), search
    (the first stage finds it; fusion, reranking or the context cut dropped it). A staged candidate
    without a first-stage row lost it after its first stage: search, never index."""
    from grainlab.data import Dataset, Document

    text = "Refunds take five days. Shipping takes two."
    data = Dataset("f", {"d": Document("d", text)}, {q: "?" for q in "abcdef"}, {q: {"d": 1} for q in "abcdef"},
                   {}, info={"gold_spans": {q: [("d", 0, 22)] for q in "abcdef"}, "lost_at": {"f": "extraction"}})
    whole = [Chunk("d#0", "d", text[:23], 0, 23, 5, 0)]
    cut = [Chunk("d#0", "d", text[:10], 0, 10, 3, 0), Chunk("d#1", "d", text[10:], 10, len(text), 6, 1)]

    def rows(candidate, staged, checks):
        return [{"candidate": candidate, "check": check, "staged": staged, "qid": qid, "answerable": True,
                 "SpanHit@1": hit, "split": "confirm", "category": "c", "document": "d"}
                for check, hits in checks.items() for qid, hit in hits.items()]

    frame = pd.DataFrame(
        rows("plain", False, {"system": {"a": 0, "b": 0, "c": 0, "f": 0}, "exact": {"a": 0, "b": 1, "c": 1}})
        + rows("staged", True, {"system": {"a": 0, "b": 0, "d": 0, "e": 1}, "exact": {"a": 0, "b": 1, "d": 1},
                                "first": {"d": 0}})
        + rows("cut", False, {"system": {"a": 0}, "exact": {"a": 0}}))
    frame.loc[(frame["candidate"] == "plain") & (frame["qid"] == "c") & (frame["check"] == "exact"), "SpanHit@1"] = 1
    stages = yd.failure_stages(frame, data, {"plain": whole, "staged": whole, "cut": cut}, 1)
    got = {(r.chunker, r.question_id): r.stage for r in stages.itertuples()}
    assert got == {("plain", "a"): "embedding", ("plain", "b"): "index", ("plain", "c"): "index",
                   ("plain", "f"): "extraction",
                   ("staged", "a"): "embedding", ("staged", "b"): "search", ("staged", "d"): "index",
                   ("cut", "a"): "chunking"}


def test_a_beir_folder_takes_only_positive_judgments_as_evidence(tmp_path):
    from tests.conftest import write_beir

    corpus = {"d1": ("", "Refunds take five days."), "d2": ("", "Shipping is fast.")}
    write_beir(tmp_path / "mine", corpus, {"q1": "refunds?"}, [("q1", "d1", 1), ("q1", "d2", 0)])
    inputs = yd.load_inputs(tmp_path / "mine")
    assert inputs.dataset.info["gold_spans"]["q1"] == [("d1", 0, len("Refunds take five days."))]


def test_parent_child_candidates_run_and_return_their_sections(inputs, tmp_path):
    comparison = yd.compare(inputs, {"pc": "parent_child(child_size=32,parent_size=200,parents=structure)",
                                     "fixed": FIXED}, "bm25", k=1, tune_share=0.3, out=tmp_path / "pc",
                            cache=ArtifactCache(tmp_path / "cache"), progress=False, n_resamples=100)
    assert set(comparison.decision["chunker"]) == {"pc", "fixed"}
    chunks = [json.loads(line) for line in (tmp_path / "pc" / "chunks.jsonl").read_text().splitlines()]
    assert any(c.get("parent_id") for c in chunks if c["splitter"].startswith("parent_child"))


def test_the_unanswerable_threshold_is_fitted_on_the_tuning_split_only(comparison):
    """Each candidate's threshold is the 10th percentile of its tuning questions' top scores among
    the questions it found, recomputed here from the per-question table (``top_score``); held-out
    questions never move it."""
    rows = comparison.per_question
    hits = rows[(rows["check"] == "system") & rows["answerable"] & (rows["SpanHit@1"] > 0)]
    differs = 0
    for label, threshold in comparison.info["thresholds"].items():
        mine = hits[hits["candidate"] == label]
        tuned = mine[mine["split"] == "tune"]["top_score"]
        assert threshold == pytest.approx(float(np.quantile(tuned, yd.THRESHOLD_QUANTILE)))
        differs += not math.isclose(threshold, float(np.quantile(mine["top_score"], yd.THRESHOLD_QUANTILE)))
    assert differs  # the premise: fitting on every split would give another threshold here


def test_the_best_configuration_of_each_library_is_its_highest_held_out_hit():
    decision = pd.DataFrame({
        "chunker": ["lc small", "lc big", "ours", "semchunk 128"],
        "spec": ["langchain:RecursiveCharacterTextSplitter(chunk_size=500)",
                 "langchain:RecursiveCharacterTextSplitter(chunk_size=2000)", "fixed_tokens(size=256)",
                 "semchunk(chunk_size=128)"],
        "hit@5": [0.8, 0.9, 0.85, 0.9], "mrr@10": [0.5, 0.6, 0.7, 0.4], "boundary_retention": [0.1] * 4,
        "mean_tokens": [100, 400, 300, 50]})
    best = yd.best_per_library(decision)
    assert best[["library", "chunker"]].values.tolist() == [["LangChain", "lc big"], ["semchunk", "semchunk 128"],
                                                            ["grainlab", "ours"]]
    assert [yd.library_of(s) for s in ("llamaindex:SentenceSplitter(chunk_size=512)", "chonkie:RecursiveChunker()",
                                       "recursive(size=256)")] == ["LlamaIndex", "chonkie", "grainlab"]


def test_the_decision_a_person_reads_fits_the_screen_and_the_report_shows_its_figures(comparison, tmp_path):
    """The console and the report show pass/fail per criterion and the measures with human labels,
    formatted by kind (no internal name, no NaN, no negative duplication); model loading is timed
    apart; the report embeds Hit@k against tokens indexed."""
    from grainlab.figures.your_documents import report_with_figures

    view = yd.decision_view(comparison.decision, 1, comparison.criteria)
    text = view.to_string(index=False)
    assert list(view.columns[:1 + len(comparison.criteria)]) == ["chunker", "hit@1≥0.92", "boundary≥0.9",
                                                                   "tokens read≤3000"]
    assert not any(column.startswith("pass_") or "_" in column for column in view.columns)
    assert "nan" not in text.lower() and "-0.0" not in text and max(map(len, text.splitlines())) <= 160
    assert set(view["hit@1≥0.92"]) <= {"pass", "FAIL"}
    assert (comparison.decision["duplication"] >= 0).all()
    assert comparison.info["load_seconds"] >= 0
    report = report_with_figures(tmp_path / "out").read_text()
    assert "data:image/png;base64," in report and "<!-- figures -->" not in report
    assert "charged to no candidate" in report
