"""The intra-op thread count torch computes with, carried from a driver to its Ray workers.

Ray gives a ``num_cpus=1`` task ``OMP_NUM_THREADS=1``, so a worker's matrix products would be split
differently from the driver's (two threads on this project's machines) and its float sums rounded
differently. Workers call :func:`pin_threads` with the driver's :func:`torch_threads`, so serial
and Ray runs use the same split; what still differs between CPUs is bounded in
``grainlab.experiments.agreement``."""

from __future__ import annotations


def torch_threads() -> int:
    """torch's intra-op thread count in this process."""
    import torch

    return int(torch.get_num_threads())


def pin_threads(threads: int | None) -> None:
    """Set torch's intra-op thread count (``None`` leaves it as it is)."""
    if threads:
        import torch

        torch.set_num_threads(int(threads))
