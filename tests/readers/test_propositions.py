"""The Dense X propositionizer's prompt and its robust JSON parsing."""

import json

from hypothesis import given
from hypothesis import strategies as st

from grainlab.readers.propositions import (
    EXAMPLE_OUTPUT,
    INSTRUCTIONS,
    parse_propositions,
    proposition_prompt,
    propositionizer_input,
)

SENTENCE = st.lists(st.sampled_from(["The", "cell", "Müller", "1678", "was", "a", "quote\"d", "x", "end."]),
                    min_size=2, max_size=12).map(" ".join)


def test_input_format_is_the_papers():
    assert propositionizer_input("Ēostre", "Some text.", "History") == "Title: Ēostre. Section: History. Content: Some text."
    assert propositionizer_input("Ēostre", "Some text.") == "Title: Ēostre. Content: Some text."


def test_prompt_is_instructions_one_shot_then_the_passage():
    turns = proposition_prompt("Super Bowl 50", "The Broncos won.")
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[0]["content"].startswith(INSTRUCTIONS) and "Easter Hare" in turns[0]["content"]
    assert json.loads(turns[1]["content"]) == EXAMPLE_OUTPUT
    assert turns[2]["content"] == "Input: Title: Super Bowl 50. Content: The Broncos won.\nOutput:"


@given(st.lists(SENTENCE, min_size=1, max_size=8))
def test_a_json_list_parses_back_without_repeats(propositions):
    parsed = parse_propositions("Sure: " + json.dumps(propositions) + " trailing")
    assert parsed.status == "json"
    assert list(parsed.propositions) == list(dict.fromkeys(propositions))
    assert parsed.repeats == len(propositions) - len(set(propositions))


def test_a_list_cut_before_its_end_is_repaired():
    parsed = parse_propositions('["Hares were seen in gardens.", "Hares laid eggs.", "German immig')
    assert parsed.status == "repaired"
    assert parsed.propositions[:2] == ("Hares were seen in gardens.", "Hares laid eggs.")


def test_output_without_strings_fails():
    for text in ("", "Title: Super_Bowl_50. Content: it echoes the input", "[]", "[1, 2]"):
        assert parse_propositions(text).status == "failed", text


def test_an_encoder_decoder_propositionizer_reads_the_papers_input(tmp_path):
    """A tiny random T5 (with MiniLM's tokenizer, all offline) stands in for the paper's Flan-T5
    propositionizer: it is loaded as seq2seq and given `Title: … Content: …`, not the chat prompt."""
    import pytest

    transformers = pytest.importorskip("transformers")
    from grainlab.cache import ArtifactCache
    from grainlab.errors import ModelNotAvailable
    from grainlab.models.resolve import resolve_model
    from grainlab.readers import CausalLMReader, propositionize

    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(resolve_model("sentence-transformers/all-MiniLM-L6-v2").path))
    except ModelNotAvailable as exc:
        pytest.skip(str(exc))
    config = transformers.T5Config(vocab_size=len(tokenizer), d_model=16, d_kv=8, d_ff=32, num_layers=1,
                                   num_decoder_layers=1, num_heads=2, pad_token_id=tokenizer.pad_token_id,
                                   eos_token_id=tokenizer.sep_token_id, decoder_start_token_id=tokenizer.pad_token_id)
    import torch

    torch.manual_seed(0)  # random weights: seeded, so the tiny model's output (and this test) is deterministic
    transformers.T5ForConditionalGeneration(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    reader = CausalLMReader(str(tmp_path), max_new_tokens=5, stop_at_newline=False, stop_chars="]",
                            response_prefix='["', cache=ArtifactCache(tmp_path / "cache"))
    assert reader.is_seq2seq and not reader.chat_template
    assert reader.format("Title: T. Content: c") == "Title: T. Content: c"
    ((parsed, raw, generation),) = propositionize(reader, [("Super Bowl 50", "The Broncos won.")], progress=False)
    assert reader._cache.load_json("generations", reader._key("Title: Super Bowl 50. Content: The Broncos won.")) is not None
    assert 0 < generation.new_tokens <= 5 and raw == generation.text and parsed.status in {"json", "repaired", "failed"}


def test_quotes_inside_a_proposition_are_repaired_not_split():
    text = ('["The league emphasized the "golden anniversary" with gold-themed initiatives.", '
            '"Super Bowl 50 was played in Santa Clara."]')
    parsed = parse_propositions(text)
    assert parsed.status == "repaired"
    assert parsed.propositions == ('The league emphasized the "golden anniversary" with gold-themed initiatives.',
                                   "Super Bowl 50 was played in Santa Clara.")


def test_a_bracket_inside_a_string_does_not_cut_the_list():
    parsed = parse_propositions('["Its code [ISO 3166] is DE.", "Berlin is its capital."] trailing')
    assert parsed.status == "json" and len(parsed.propositions) == 2


def test_quotes_in_the_passage_reach_the_model_as_typographic_quotes():
    from grainlab.readers.propositions import proposition_prompt, typographic_quotes

    assert typographic_quotes('the "golden anniversary" and "gold"') == "the “golden anniversary” and “gold”"
    assert typographic_quotes("no quotes") == "no quotes"
    prompt = proposition_prompt("Super Bowl 50", 'It stressed the "golden anniversary".')
    assert prompt[-1]["content"].endswith("It stressed the “golden anniversary”.\nOutput:")
