"""Prompt templates of Liu et al. (Lost in the Middle), reproduced character for character.

Multi-document QA: the instruction, a blank line, one ``Document [i](Title: t) text`` line per
document, a blank line, ``Question: q`` and ``Answer:``. Closed-book: ``Question: q\\nAnswer:``.
Oracle: the multi-document prompt with the gold document alone. Key–value retrieval: the JSON
object written one record per line, then the key and ``Corresponding value:``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from grainlab.errors import ConfigError
from grainlab.models.tokenizers import first_tokens, get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER

QA_INSTRUCTION = ("Write a high-quality answer for the given question using only the provided search "
                  "results (some of which might be irrelevant).")
RANDOM_ORDER_NOTE = " The search results are ordered randomly."
KV_INSTRUCTION = "Extract the value corresponding to the specified key in the JSON object below."


def format_documents(documents: Sequence[tuple[str, str]]) -> str:
    """``(title, text)`` pairs as the paper's numbered search results, one per line."""
    return "\n".join(f"Document [{i}](Title: {title}) {text}" for i, (title, text) in enumerate(documents, start=1))


def qa_prompt(question: str, documents: Sequence[tuple[str, str]], mention_random_ordering: bool = False,
              query_aware: bool = False) -> str:
    """The multi-document QA prompt (``query_aware``: the question also before the documents)."""
    if not question:
        raise ConfigError("a QA prompt needs a question")
    if not documents:
        raise ConfigError("a multi-document QA prompt needs documents: use closedbook_prompt() for none")
    if mention_random_ordering and query_aware:
        raise ConfigError("the paper has no template that both mentions random ordering and is query-aware")
    instruction = QA_INSTRUCTION + (RANDOM_ORDER_NOTE if mention_random_ordering else "")
    before = f"Question: {question}\n\n" if query_aware else ""
    return f"{instruction}\n\n{before}{format_documents(documents)}\n\nQuestion: {question}\nAnswer:"


def closedbook_prompt(question: str) -> str:
    if not question:
        raise ConfigError("a closed-book prompt needs a question")
    return f"Question: {question}\nAnswer:"


def kv_prompt(records: Sequence[tuple[str, str]], key: str, query_aware: bool = False) -> str:
    """The key–value retrieval prompt over ``records`` (in the order given)."""
    keys = [k for k, _ in records]
    if len(records) < 2:
        raise ConfigError("key–value retrieval needs at least 2 records")
    if len(set(keys)) != len(keys):
        raise ConfigError("key–value records have duplicate keys")
    if key not in keys:
        raise ConfigError(f"key {key!r} is not among the records")
    lines = []
    for index, (k, v) in enumerate(records):
        opener = "{" if index == 0 else " "
        closer = "}" if index == len(records) - 1 else ","
        lines.append(f'{opener}"{k}": "{v}"{closer}')
    query = f'Key: "{key}"'
    before = f"{query}\n\n" if query_aware else ""
    return f"{KV_INSTRUCTION}\n\n{before}JSON data:\n" + "\n".join(lines) + f"\n\n{query}\nCorresponding value:"


# LongRAG (Jiang et al. 2024): the NQ reader prompt of the official code, and its second step that
# derives a short answer from a long one. The demonstrations of the short-answer step are ours
# (the paper's come from NQ train); the instruction is the paper's.
LONGRAG_SHORT_ANSWER_INSTRUCTION = (
    "As an AI assistant, you have been provided with a question and its long answer. Your task is to derive a "
    "very concise short answer, extracting a substring from the given long answer. Short answer is typically an "
    "entity without any other redundant words.It's important to ensure that the output short answer remains as "
    "simple as possible.")
SHORT_ANSWER_DEMOS = (
    ("who sang the theme song for the tv show friends",
     "The theme song of Friends, \"I'll Be There for You\", was performed by The Rembrandts.", "The Rembrandts"),
    ("when did the first world war end", "The First World War ended with the armistice of 11 November 1918.",
     "11 November 1918"),
    ("how many players does a basketball team have on the court",
     "Each basketball team has five players on the court at a time.", "five"),
    ("what is the capital city of australia", "Canberra is the capital of Australia, not Sydney.", "Canberra"),
)


def longrag_prompt(question: str, documents: Sequence[tuple[str, str]]) -> str:
    """The LongRAG NQ reader prompt over ``(title, text)`` documents (titles listed, then the
    documents as title and text fields)."""
    if not question:
        raise ConfigError("a LongRAG prompt needs a question")
    titles = ", ".join(title for title, _ in documents)
    context = "\n\n".join(f"Title: {title}\nText: {text}" for title, text in documents)
    return ("Go through the following context and then extract the answer of the question from the context. "
            f"The context is a list of Wikipedia documents, ordered by title: {titles}. "
            "Each Wikipedia document contains a title field and a text field. "
            f"The context is: {context}. "
            f"Find the useful documents from the context, then extract the answer to answer the question: {question}."
            "Answer the question directly. Your response should be very concise. ")


def short_answer_prompt(question: str, long_answer: str) -> str:
    """LongRAG's extraction step: instruction, demonstrations, then the question and long answer."""
    demos = "".join(f"Question: {q}\nLong Answer: {long}\nShort Answer: {short}\n\n"
                    for q, long, short in SHORT_ANSWER_DEMOS)
    return (f"{LONGRAG_SHORT_ANSWER_INSTRUCTION}\n\nHere are some examples: {demos}"
            f"Question: {question}\nLong Answer: {long_answer}\nShort Answer: ")


_AFTER_ANSWER = re.compile(r"(?i)(?<=\banswer:\s).*")


def after_answer_label(text: str) -> str:
    """LongRAG's post-processing of every model output: the text after ``answer: `` when the output
    has that label (case-insensitive), else the output unchanged."""
    match = _AFTER_ANSWER.search(text)
    return match.group(0) if match else text


def within_budget(documents: Iterable[tuple[str, str]], budget_tokens: int,
                  tokenizer: str = DEFAULT_TOKENIZER) -> list[tuple[str, str]]:
    """``(title, text)`` documents in the given order until ``budget_tokens`` tokens are used; the
    document that crosses the budget is cut at a token boundary and nothing after it is read."""
    tok, left, picked = get_tokenizer(tokenizer), budget_tokens, []
    for title, text in documents:
        if left <= 0:
            break
        kept, used = first_tokens(tok, text, left)
        picked.append((title, kept))
        left -= used
    return picked
