"""LongRAG's document grouping (Jiang et al. 2024; official ``preprocess/group_documents.py``).

Nodes are visited in increasing order of degree. A node whose neighbours are not yet grouped
starts its own group; otherwise it forms a new group with the neighbours' groups, taken smallest
first, for as long as the next one still fits within ``max_size`` tokens (the first that does not
fit stops the merging). Groups absorbed into a new one cease to exist. Unlike the official script,
a node without neighbours is kept as a singleton group instead of being left out, and ties are
broken by input order so the result is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def group_documents(sizes: Mapping[str, int], adjacency: Mapping[str, set[str]], max_size: int = 4000
                    ) -> list[list[str]]:
    """Groups of node ids (each in input order), in order of their first member."""
    order = {node: i for i, node in enumerate(sizes)}
    group_of: dict[str, int] = {}
    members: dict[int, list[str]] = {}
    size_of: dict[int, int] = {}
    next_id = 0
    for node in sorted(sizes, key=lambda n: (len(adjacency.get(n, ())), order[n])):
        neighbour_groups = sorted({group_of[m] for m in adjacency.get(node, ()) if m in group_of},
                                  key=lambda g: (size_of[g], g))
        cluster, total = [node], sizes[node]
        for group in neighbour_groups:
            if size_of[group] > max_size - total:
                break
            cluster += members.pop(group)
            total += size_of.pop(group)
        next_id += 1
        members[next_id], size_of[next_id] = cluster, total
        for member in cluster:
            group_of[member] = next_id
    groups = [sorted(m, key=order.__getitem__) for m in members.values()]
    return sorted(groups, key=lambda g: order[g[0]])


def symmetric(neighbours: Mapping[str, Sequence[str]]) -> dict[str, set[str]]:
    """An undirected adjacency from directed neighbour lists (self-links dropped)."""
    adjacency: dict[str, set[str]] = {node: set() for node in neighbours}
    for node, others in neighbours.items():
        for other in others:
            if other != node:
                adjacency[node].add(other)
                adjacency.setdefault(other, set()).add(node)
    return adjacency
