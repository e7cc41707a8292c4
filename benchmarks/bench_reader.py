"""Reader throughput on this machine, one run, the same Lost-in-the-Middle 10-document prompts
(~1,300 tokens) for every model and runtime: prompt (prefill) tokens/s and generated tokens/s.

- SmolLM2-135M-Instruct under transformers (fp32, de-quantised from its GGUF) and under llama.cpp
  (the same Q4_1 GGUF), then Qwen2.5-Coder-0.5B- and 1.5B-Instruct (Q4_K_M) under llama.cpp (the
  1.5B when installed: ``make models-large``). Target: llama.cpp ≥ 3× transformers in generated
  tokens/s on SmolLM2.
- A Lost-in-the-Middle batch (each question at gold positions 1, 5 and 10, in that order) with and
  without llama.cpp's prompt-prefix KV-cache reuse (``cache_prompt``), on two disjoint question
  sets (llama.cpp also keeps earlier prompts' states in RAM, so one set run twice would measure
  that cache, not the prefix reuse).

transformers: prefill is one forward pass; generation is ``NEW_TOKENS`` greedy steps forced past
any stop token, minus the prefill. llama.cpp: its own timings (``ignore_eos``, no prompt cache).
"""

from __future__ import annotations

import sys
import time

from common import mirror, save, timer

SMOLLM = "HuggingFaceTB/SmolLM2-135M-Instruct"
QWEN = ["Qwen/Qwen2.5-Coder-0.5B-Instruct", "Qwen/Qwen2.5-Coder-1.5B-Instruct"]
NEW_TOKENS = 32


def prompts(n: int) -> tuple[list, list]:
    from grainlab.data import load_dataset
    from grainlab.readers import qa_prompt
    from grainlab.studies.multidoc import build_multidoc_examples

    pool = load_dataset("nq_open_oracle", mirror=mirror())
    examples = build_multidoc_examples(pool, n_distractors=9, question_ids=list(pool.queries)[:3 * n])
    same = [qa_prompt(e.question, e.documents(10, 4)) for e in examples[:n]]
    # two disjoint question sets, so the second pass cannot reuse what the first left in the cache
    positions = [[qa_prompt(e.question, e.documents(10, gold)) for e in part for gold in (0, 4, 9)]
                 for part in (examples[n:2 * n], examples[2 * n:])]
    return same, positions


def transformers_row(items: list) -> dict:
    import torch

    from grainlab.readers import CausalLMReader

    reader = CausalLMReader(SMOLLM, max_new_tokens=NEW_TOKENS, batch_size=1)
    t = {"prefill_s": 0.0, "generate_s": 0.0}
    prompt_tokens = 0
    with torch.inference_mode():
        for prompt in items:
            inputs = reader.tokenizer(reader.format(prompt), return_tensors="pt", add_special_tokens=False)
            prompt_tokens += inputs["input_ids"].shape[1]
            step: dict[str, float] = {}
            with timer(step, "prefill"):
                reader.model(**inputs)
            with timer(step, "generate"):
                reader.model.generate(**inputs, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False,
                                      pad_token_id=reader.tokenizer.pad_token_id)
            t["prefill_s"] += step["prefill"]
            t["generate_s"] += step["generate"]
    decode_s = max(t["generate_s"] - t["prefill_s"], 1e-9)
    return {"model": SMOLLM, "runtime": f"transformers (fp32, {torch.get_num_threads()} threads)",
            "mean_prompt_tokens": round(prompt_tokens / len(items)),
            "prompt_tokens_per_s": round(prompt_tokens / t["prefill_s"], 1),
            "generated_tokens_per_s": round(NEW_TOKENS * len(items) / decode_s, 1)}


def llama_reader(model: str):
    from grainlab.errors import ModelNotAvailable
    from grainlab.readers import get_reader

    try:
        return get_reader(model, backend="llama.cpp", max_new_tokens=NEW_TOKENS)
    except ModelNotAvailable as exc:
        print(f"skipping {model}: {exc}")
        return None


def llama_row(model: str, items: list) -> dict | None:
    reader = llama_reader(model)
    if reader is None:
        return None
    prompt_n = prompt_ms = predicted_n = predicted_ms = 0.0
    for prompt in items:
        response = reader.server.post("/completion", {"prompt": reader.format(prompt), "n_predict": NEW_TOKENS,
                                                      "ignore_eos": True, "temperature": 0.0, "top_k": 1,
                                                      "cache_prompt": False})
        timings = response["timings"]
        prompt_n += timings["prompt_n"]
        prompt_ms += timings["prompt_ms"]
        predicted_n += timings["predicted_n"]
        predicted_ms += timings["predicted_ms"]
    from grainlab.readers.llama import default_threads

    return {"model": model, "runtime": f"llama.cpp ({default_threads()} threads, {reader.file.path.name})",
            "mean_prompt_tokens": round(prompt_n / len(items)),
            "prompt_tokens_per_s": round(1000 * prompt_n / prompt_ms, 1),
            "generated_tokens_per_s": round(1000 * predicted_n / predicted_ms, 1)}


def reuse_rows(model: str, sets: list) -> list[dict]:
    reader = llama_reader(model)
    rows = []
    for reuse, items in zip((False, True), sets):
        evaluated, tick = 0, time.perf_counter()
        for prompt in items:
            response = reader.server.post("/completion", {"prompt": reader.format(prompt), "n_predict": 8,
                                                          "temperature": 0.0, "top_k": 1, "cache_prompt": reuse})
            evaluated += response["timings"]["prompt_n"]
        rows.append({"model": model, "runtime": f"llama.cpp, prompt cache {'on' if reuse else 'off'}",
                     "prompts": len(items), "prompt_tokens_evaluated": int(evaluated),
                     "batch_s": round(time.perf_counter() - tick, 1)})
    return rows


def main(n_prompts: int = 4) -> None:
    same, positions = prompts(n_prompts)
    rows = [transformers_row(same), llama_row(SMOLLM, same)] + [llama_row(m, same) for m in QWEN]
    rows = [r for r in rows if r is not None]
    ratio = rows[1]["generated_tokens_per_s"] / rows[0]["generated_tokens_per_s"]
    rows += reuse_rows(QWEN[0], positions)
    save("reader", {"prompts": len(same), "new_tokens_per_prompt": NEW_TOKENS,
                    "smollm_llama_cpp_over_transformers_generated": round(ratio, 2), "rows": rows})


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
