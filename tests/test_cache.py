import numpy as np
import pytest

from grainlab.cache import ArtifactCache, content_key, hash_texts
from grainlab.files import atomic_write_text


def test_content_key_is_order_independent_and_sensitive():
    assert content_key(a=1, b=[1, 2]) == content_key(b=[1, 2], a=1)
    assert content_key(a=1) != content_key(a=2)
    assert hash_texts([("1", "ab")]) != hash_texts([("1a", "b")])


def test_array_computed_once(tmp_path):
    cache = ArtifactCache(tmp_path)
    calls = []

    def compute():
        calls.append(1)
        return np.arange(6, dtype=np.float32).reshape(2, 3)

    first = cache.array("emb", "k" * 64, compute)
    second = cache.array("emb", "k" * 64, compute)
    assert calls == [1] and np.array_equal(first, second)


def test_interrupted_write_leaves_nothing(tmp_path):
    cache = ArtifactCache(tmp_path)

    def explode():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.array("emb", "a" * 64, explode)
    assert cache.load_array("emb", "a" * 64) is None

    class Boom:
        def __array__(self, *args, **kwargs):
            raise RuntimeError("half-way")

    with pytest.raises(RuntimeError):
        cache.save_array("emb", "b" * 64, Boom())
    assert not any(p.is_file() for p in (tmp_path / "emb").rglob("*"))


def test_atomic_text(tmp_path):
    path = tmp_path / "deep" / "x.txt"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two" and list(path.parent.iterdir()) == [path]


# -- issue 35: files colleagues can read --------------------------------------------------------------
@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_atomic_writes_honour_the_umask(umask, expected, tmp_path):
    import os
    import stat

    from grainlab.cache import ArtifactCache
    from grainlab.files import atomic_write_dir, atomic_write_text

    previous = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "table.csv", "a,b\n")
        ArtifactCache(tmp_path / "cache").save_array("embeddings", "ab" * 32, np.zeros(3, dtype=np.float32))
        atomic_write_dir(tmp_path / "index", lambda folder: (folder / "part").write_text("x"))
    finally:
        os.umask(previous)
    entries = [tmp_path / "table.csv", *(tmp_path / "cache").rglob("*.npy*")]
    assert {stat.S_IMODE(p.stat().st_mode) for p in entries} == {expected}
    assert stat.S_IMODE((tmp_path / "index").stat().st_mode) == expected | ((expected & 0o444) >> 2)
