"""Reader throughput on this machine: prompt (prefill) tokens per second and generated tokens per
second for the default reader, on Lost-in-the-Middle 10-document prompts (~1,500 tokens).

Prefill is timed as one forward pass over the prompt; generation as ``NEW_TOKENS`` greedy steps
forced past any stop token, minus the prefill."""

from __future__ import annotations

import sys

from common import mirror, save, timer

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
NEW_TOKENS = 32


def main(n_prompts: int = 4) -> None:
    import torch

    from grainlab.data import load_dataset
    from grainlab.readers import CausalLMReader, qa_prompt
    from grainlab.studies.multidoc import build_multidoc_examples

    pool = load_dataset("nq_open_oracle", mirror=mirror())
    examples = build_multidoc_examples(pool, n_distractors=9, question_ids=list(pool.queries)[:n_prompts])
    reader = CausalLMReader(MODEL, max_new_tokens=NEW_TOKENS, batch_size=1)
    texts = [reader.format(qa_prompt(e.question, e.documents(10, 4))) for e in examples]
    t: dict[str, float] = {"prefill_s": 0.0, "generate_s": 0.0}
    prompt_tokens = 0
    with torch.inference_mode():
        for text in texts:
            inputs = reader.tokenizer(text, return_tensors="pt", add_special_tokens=False).to(reader.device)
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
    save("reader", {"model": MODEL, "device": reader.device, "torch_threads": torch.get_num_threads(),
                    "prompts": len(texts), "mean_prompt_tokens": round(prompt_tokens / len(texts)),
                    "new_tokens_per_prompt": NEW_TOKENS, **{k: round(v, 3) for k, v in t.items()},
                    "prompt_tokens_per_s": round(prompt_tokens / t["prefill_s"], 1),
                    "generated_tokens_per_s": round(NEW_TOKENS * len(texts) / decode_s, 1)})


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
