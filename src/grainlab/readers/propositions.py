"""Dense X propositionizer (Chen et al., arXiv 2312.06648): passage → list of propositions.

The paper's model is ``chentong00/propositionizer-wiki-flan-t5-large`` (a seq2seq model reading
``Title: … Section: … Content: …`` and writing a JSON list of strings); given it (online, or as a
local folder), the reader loads it as an encoder–decoder and feeds it exactly that input. It is
not installable offline, so any instruct causal LM can stand in: it is prompted with the paper's decomposition
instructions and its one-shot example (the GPT-4 prompt the paper used to build its training
data) as a first chat exchange, its answer is started with ``["``, and its output is parsed
robustly (exact repeats removed and counted):

- ``json``     the text holds a valid JSON list of strings;
- ``repaired`` no valid list, but quoted strings could be recovered (e.g. generation stopped
  before the closing bracket);
- ``failed``   nothing usable: the caller falls back to the passage's sentences and counts it.

Every generation is cached by the reader (prompt + model identity).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from grainlab.readers import limits
from grainlab.readers.base import Generation, Reader

PROPOSITIONIZER_MODEL = "chentong00/propositionizer-wiki-flan-t5-large"

INSTRUCTIONS = """Decompose the "Content" into clear and simple propositions, ensuring they are interpretable out of context.
1. Split compound sentence into simple sentences. Maintain the original phrasing from the input whenever possible.
2. For any named entity that is accompanied by additional descriptive information, separate this information into its own distinct proposition.
3. Decontextualize the proposition by adding necessary modifier to nouns or entire sentences and replacing pronouns (e.g., "it", "he", "she", "they", "this", "that") with the full name of the entities they refer to.
4. Present the results as a list of strings, formatted in JSON."""

EXAMPLE_INPUT = (
    "Title: Ēostre. Section: Theories and interpretations, Connection to Easter Hares. Content: The earliest "
    "evidence for the Easter Hare (Osterhase) was recorded in south-west Germany in 1678 by the professor of "
    "medicine Georg Franck von Franckenau, but it remained unknown in other parts of Germany until the 18th "
    "century. Scholar Richard Sermon writes that \"hares were frequently seen in gardens in spring, and thus may "
    "have served as a convenient explanation for the origin of the colored eggs hidden there for children. "
    "Alternatively, there is a European tradition that hares laid eggs, since a hare's scratch or form and a "
    "lapwing's nest look very similar, and both occur on grassland and are first seen in the spring. In the "
    "nineteenth century the influence of Easter cards, toys, and books was to make the Easter Hare/Rabbit "
    "popular throughout Europe. German immigrants then exported the custom to Britain and America where it "
    "evolved into the Easter Bunny.")
EXAMPLE_OUTPUT = [
    "The earliest evidence for the Easter Hare was recorded in south-west Germany in 1678 by Georg Franck von "
    "Franckenau.",
    "Georg Franck von Franckenau was a professor of medicine.",
    "The evidence for the Easter Hare remained unknown in other parts of Germany until the 18th century.",
    "Richard Sermon was a scholar.",
    "Richard Sermon writes a hypothesis about the possible explanation for the connection between hares and the "
    "tradition during Easter",
    "Hares were frequently seen in gardens in spring.",
    "Hares may have served as a convenient explanation for the origin of the colored eggs hidden in gardens for "
    "children.",
    "There is a European tradition that hares laid eggs.",
    "A hare's scratch or form and a lapwing's nest look very similar.",
    "Both hares and lapwing's nests occur on grassland and are first seen in the spring.",
    "In the nineteenth century the influence of Easter cards, toys, and books was to make the Easter Hare/Rabbit "
    "popular throughout Europe.",
    "German immigrants exported the custom of the Easter Hare/Rabbit to Britain and America.",
    "The custom of the Easter Hare/Rabbit evolved into the Easter Bunny in Britain and America.",
]
QUOTED = re.compile(r'"((?:[^"\\]|\\.)+)"')

# GBNF (llama.cpp's grammar language) for the rest of a JSON list of strings after the ``["`` the
# answer is started with: every output constrained by it parses. Every string starts with a visible
# character other than a quote or ``]``, so a model cannot loop on empty or blank strings
# (``" ," " ,"``) nor end the list inside a string (``]`` is also the reader's stop character).
JSON_LIST_AFTER_PREFIX = r"""root ::= item "\"" more* " "? "]"
more ::= " "? "," " "? "\"" item "\""
item ::= first char*
first ::= [^"\\\]\x7F\x00-\x20] | escape
char ::= [^"\\\x7F\x00-\x1F] | escape
escape ::= "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])
"""


def propositionizer_input(title: str, content: str, section: str = "") -> str:
    """The paper's input format: ``Title: t. Section: s. Content: c`` (no section part when empty)."""
    section_part = f" Section: {section}." if section else ""
    return f"Title: {title}.{section_part} Content: {content}"


def typographic_quotes(text: str) -> str:
    """Straight double quotes as alternating “ and ”: a model copying a quoted phrase into a JSON
    string then writes characters that need no escaping (small models don't escape)."""
    parts = text.split('"')
    return "".join(part + ("“" if i % 2 == 0 else "”") for i, part in enumerate(parts[:-1])) + parts[-1]


def proposition_prompt(title: str, content: str, section: str = "") -> list[dict[str, str]]:
    """The paper's instructions and one-shot example as a first exchange, then the passage to
    decompose (a chat model given the example inside one turn tends to copy it back); straight
    double quotes in the passage are shown as “…” (``typographic_quotes``)."""
    passage = propositionizer_input(typographic_quotes(title), typographic_quotes(content), section)
    return [{"role": "user", "content": f"{INSTRUCTIONS}\n\nInput: {EXAMPLE_INPUT}\nOutput:"},
            {"role": "assistant", "content": json.dumps(EXAMPLE_OUTPUT, ensure_ascii=False)},
            {"role": "user", "content": f"Input: {passage}\nOutput:"}]


@dataclass(frozen=True)
class ParsedPropositions:
    """Propositions recovered from one generation, how (``json``/``repaired``/``failed``), and how
    many exact repeats were removed (small models loop)."""

    propositions: tuple[str, ...]
    status: str
    repeats: int = 0


def _clean(items: Sequence[object]) -> tuple[str, ...]:
    return tuple(s for s in (" ".join(str(i).split()) for i in items if isinstance(i, (str, int, float))) if s)


def _unique(items: tuple[str, ...], status: str) -> ParsedPropositions:
    unique = tuple(dict.fromkeys(items))
    return ParsedPropositions(unique, status, len(items) - len(unique))


def escape_inner_quotes(candidate: str) -> str:
    """A JSON list whose strings quote something (``"the "golden" game"``) with the inner quotes
    escaped: a quote is structural only right after ``[`` or ``,`` or right before ``,`` or ``]``
    (spaces aside)."""
    out = []
    for i, char in enumerate(candidate):
        if char == '"' and (i == 0 or candidate[i - 1] != "\\"):
            before, after = candidate[:i].rstrip()[-1:], candidate[i + 1:].lstrip()[:1]
            if before not in ("[", ",") and after not in (",", "]", ""):
                out.append("\\")
        out.append(char)
    return "".join(out)


def _json_list(candidate: str) -> tuple[str, ...] | None:
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value) and _clean(value):
        return _clean(value)
    return None


def parse_propositions(text: str) -> ParsedPropositions:
    """The JSON list in a generation (``json``); the same list once quotes inside its strings are
    escaped, or its quoted strings when the list is broken (``repaired``); else ``failed``."""
    start = text.find("[")
    if start >= 0:
        ends = dict.fromkeys(e for e in (text.find("]", start), text.rfind("]")) if e > start)  # first, last
        candidates = [text[start:e + 1] for e in ends] or [text[start:]]
        for candidate in candidates:
            strict = _json_list(candidate)
            if strict is not None:
                return _unique(strict, "json")
        for candidate in candidates:
            escaped = _json_list(escape_inner_quotes(candidate))
            if escaped is not None:
                return _unique(escaped, "repaired")
    strings = []
    for match in QUOTED.finditer(text[max(start, 0):]):
        try:
            strings.append(json.loads(f'"{match.group(1)}"'))
        except json.JSONDecodeError:
            strings.append(match.group(1))
    cleaned = tuple(s for s in _clean(strings) if len(s.split()) >= 2)
    return _unique(cleaned, "repaired") if cleaned else ParsedPropositions((), "failed")


def propositionize(reader: Reader, passages: Sequence[tuple[str, str]], progress: bool = True,
                   constrain: bool = True) -> list[tuple[ParsedPropositions, str, Generation]]:
    """``(title, text)`` passages → (parsed propositions, raw output, generation) each, in order.
    The paper's seq2seq propositionizer reads its own input format; an instruct LLM gets the
    instruction prompt, and its ``response_prefix`` (``["`` starts the JSON list) is part of the raw output.

    With ``constrain`` and a reader that takes grammars (llama.cpp), a passage whose free output is
    not a valid JSON list is generated again under :data:`JSON_LIST_AFTER_PREFIX`; its generation
    says ``constrained=True``, so how often the constraint was needed is counted. An output that
    used the whole token budget is not generated again: greedy decoding under the grammar follows
    the same path (a model that loops on one proposition loops again) and ends at the same limit."""
    if reader.is_seq2seq:
        prompts, prefix = [propositionizer_input(title, text) for title, text in passages], ""
    else:
        prompts, prefix = [proposition_prompt(title, text) for title, text in passages], reader.response_prefix
    generations = limits.generate(reader, prompts, progress=progress)
    results = [(parse_propositions(prefix + g.text), prefix + g.text, g) for g in generations]
    if constrain and reader.supports_grammar and prefix == '["':
        retry = [i for i, (parsed, _, generation) in enumerate(results)
                 if parsed.status != "json" and generation.new_tokens < reader.max_new_tokens]
        again = limits.generate(reader, [prompts[i] for i in retry], progress=progress, grammar=JSON_LIST_AFTER_PREFIX)
        for i, generation in zip(retry, again):
            results[i] = (parse_propositions(prefix + generation.text), prefix + generation.text, generation)
    return results
