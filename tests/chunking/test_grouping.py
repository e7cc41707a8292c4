"""LongRAG grouping by hand, and its invariants on random graphs (hypothesis)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from grainlab.chunking.grouping import group_documents, symmetric


def test_worked_example():
    # a—b—c chain plus isolated d; sizes in tokens
    sizes = {"a": 1000, "b": 1500, "c": 3000, "d": 10}
    adjacency = symmetric({"a": ["b"], "b": ["c"], "c": [], "d": []})
    # visit order by degree: d (0), a (1), c (1), b (2)
    # d alone; a alone (b not grouped yet); c alone; b merges {a} (1000 ≤ 4000 − 1500), then {c} (3000 > 1500): stop
    assert group_documents(sizes, adjacency, max_size=4000) == [["a", "b"], ["c"], ["d"]]
    # with a bigger budget b takes both neighbours' groups
    assert group_documents(sizes, adjacency, max_size=6000) == [["a", "b", "c"], ["d"]]


def test_smallest_neighbour_group_first_and_stop_at_first_misfit():
    sizes = {"x": 100, "big": 3000, "small": 200, "hub": 500}
    adjacency = symmetric({"hub": ["big", "small", "x"]})
    # leaves first (degree 1): x, big, small alone; hub merges small (200), x (100)... sorted by size: x, small, big
    assert group_documents(sizes, adjacency, max_size=1000) == [["x", "small", "hub"], ["big"]]


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdefghij"), st.integers(1, 3000), min_size=1),
       st.lists(st.tuples(st.sampled_from("abcdefghij"), st.sampled_from("abcdefghij")), max_size=30))
def test_partition_and_budget(sizes, edges):
    neighbours = {n: [b for a, b in edges if a == n and b in sizes] for n in sizes}
    groups = group_documents(sizes, symmetric(neighbours), max_size=4000)
    flat = [n for g in groups for n in g]
    assert sorted(flat) == sorted(sizes)  # every document in exactly one group
    for group in groups:
        assert len(group) == 1 or sum(sizes[n] for n in group) <= 4000
