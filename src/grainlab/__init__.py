"""grainlab: what retrieval granularity does to search.

Layers (lower never import higher): ``settings``/``errors``/``cache``/``spec`` →
``data`` and ``models`` → ``chunking`` → ``retrieval`` → ``evaluation`` →
``experiments`` → ``plots``/``reproduce``/``cli``.
"""

__version__ = "0.1.0"
