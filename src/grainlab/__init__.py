"""grainlab: what retrieval granularity does to search.

Layers (lower never import higher; checked by ``tests/test_layering.py``): ``errors``/``types``
→ ``settings``/``spec``/``sanity_gates``/``files``/``languages``/``formatting`` → ``cache``/``distributed`` → ``data`` and ``models`` → ``readers`` →
``chunking`` → ``retrieval`` → ``evaluation`` → ``experiments`` → ``studies``/``packing`` →
``plots``/``reproduce`` → ``publish``/``figures`` → ``replay`` (the main job) → ``cli``.
"""

import warnings

__version__ = "0.1.0"

# tqdm.auto in a notebook without ipywidgets falls back to text bars, which is what grainlab wants
warnings.filterwarnings("ignore", message="IProgress not found")
