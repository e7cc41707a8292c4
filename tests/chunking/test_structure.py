"""Structure-aware and parent–child chunking: sections, heading paths, list lead-ins, table headers."""

import pytest

from grainlab.chunking import get_chunker, parse_sections
from grainlab.data import Document
from grainlab.errors import ConfigError

GUIDE = """# Guide
Intro paragraph one. It has two sentences.

## Install
You need these:
- python 3.11
- a C compiler
  with extras
- uv

### Linux
Use the package manager.

## Data
| name | size |
|------|------|
| scifact | 5183 |
| nfcorpus | 3633 |
| fiqa | 57638 |
"""

HTML = """<h1>Report</h1>
<p>Summary text.</p>
<h2>Numbers</h2>
<table>
<tr><th>model</th><th>nDCG</th></tr>
<tr><td>bm25</td><td>0.686</td></tr>
<tr><td>minilm</td><td>0.645</td></tr>
<tr><td>bge</td><td>0.709</td></tr>
</table>
"""


def test_sections_follow_the_heading_tree():
    sections = parse_sections(GUIDE)
    assert [s.path for s in sections] == [["Guide"], ["Guide", "Install"], ["Guide", "Install", "Linux"],
                                          ["Guide", "Data"]]
    kinds = [[b.kind for b in s.blocks] for s in sections]
    assert kinds[1] == ["heading", "paragraph", "list"] and kinds[3] == ["heading", "table"]
    install_list = sections[1].blocks[2]
    assert [GUIDE[s:e] for s, e in install_list.units] == ["- python 3.11", "- a C compiler\n  with extras", "- uv"]
    assert install_list.carry == "You need these:"
    assert sections[3].blocks[1].carry == "| name | size |\n|------|------|"


def test_html_headings_and_table_header():
    sections = parse_sections(HTML)
    assert [s.path for s in sections] == [["Report"], ["Report", "Numbers"]]
    table = sections[1].blocks[1]
    assert table.kind == "table" and table.carry == "<table>\n<tr><th>model</th><th>nDCG</th></tr>"


def test_chunks_never_cross_sections_and_carry_their_heading_path():
    doc = Document("g", GUIDE)
    chunks = get_chunker("structure(size=512)").chunk(doc)
    assert [c.text.split("\n")[0] for c in chunks] == ["# Guide", "## Install", "### Linux", "## Data"]
    # a chunk that starts with its own heading carries only the ancestors' path
    assert [c.context for c in chunks] == ["", "Guide", "Guide > Install", "Guide"]
    assert chunks[2].metadata["headings"] == ["Guide", "Install", "Linux"]


def test_small_limit_splits_lists_at_items_and_tables_at_rows_keeping_lead_in_and_header():
    doc = Document("g", GUIDE)
    chunks = get_chunker("structure(size=20)").chunk(doc)
    assert all(c.n_tokens <= 20 for c in chunks)
    list_pieces = [c for c in chunks if c.text.startswith("- ") and "You need these:" not in c.text]
    assert list_pieces and all(c.context.endswith("You need these:") for c in list_pieces)
    row_pieces = [c for c in get_chunker("structure(size=28)").chunk(doc)
                  if c.text.startswith("| ") and "|------|" not in c.text]
    assert row_pieces and all("| name | size |\n|------|------|" in c.context for c in row_pieces)
    assert all(c.index_text == f"{c.context}\n{c.text}" for c in row_pieces)


def test_html_rows_keep_header():
    chunks = get_chunker("structure(size=60)").chunk(Document("h", HTML))
    rows = [c for c in chunks if c.text.startswith("<tr><td>")]
    assert rows and all("<tr><th>model</th><th>nDCG</th></tr>" in c.context for c in rows)


def test_long_paragraph_splits_at_sentences():
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma"] * 4
    text = "# T\n" + " ".join(f"This sentence talks about {w} and nothing else." for w in words)
    chunks = get_chunker("structure(size=40)").chunk(Document("p", text))
    assert len(chunks) > 3
    assert all(c.text.endswith(".") for c in chunks)  # cut at sentence ends, not mid-sentence
    assert all(c.context in ("", "T") for c in chunks)


def test_parent_child_children_sit_inside_their_parents():
    doc = Document("g", GUIDE * 3)
    chunker = get_chunker("parent_child(child_size=16,parent_size=64)")
    parents = {p.chunk_id: p for p in chunker.parents_of(doc)}
    children = chunker.chunk(doc)
    assert len(children) > len(parents) > 1
    for child in children:
        parent = parents[child.parent_id]
        assert parent.start <= child.start and child.end <= parent.end and child.n_tokens <= 16
    assert [p.chunk_id for p in parents.values()] == [f"g#p{i}" for i in range(len(parents))]
    assert {c.parent_id for c in children} == set(parents)


@pytest.mark.parametrize("bad", ["structure(size=2)", "parent_child(child_size=64,parent_size=32)",
                                 "parent_child(parents=sentences)"])
def test_bad_parameters(bad):
    with pytest.raises(ConfigError):
        get_chunker(bad)


def test_wiki_and_pubmed_central_headings_open_sections():
    from grainlab.chunking.structure import heading_of

    assert heading_of(" = Valkyria Chronicles III = ") == (1, "Valkyria Chronicles III")
    assert heading_of(" = = = Music = = = ") == (3, "Music")
    assert heading_of("== History ==") == (2, "History")
    assert heading_of("==== Body") == (1, "Body")
    assert heading_of("a = b = c") is None and heading_of("=====") is None
    text = " = Game = \n Intro text here .\n = = Plot = = \n The plot is long .\n==== Refs\nRef one."
    chunks = get_chunker("structure(size=64)").chunk(Document("d", text))
    assert [c.metadata["headings"] for c in chunks] == [["Game"], ["Game", "Plot"], ["Refs"]]
