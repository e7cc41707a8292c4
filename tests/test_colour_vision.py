"""Every figure's legend colours stay apart under deuteranopia and protanopia (issue 57).

Colour-blind safety is checked by simulation (colorspacious' CVD model, full severity), not by
the choice of palette: each registered figure is drawn from the committed tables, the colours of
its legend entries are simulated as a deuteranope and a protanope see them, and every two that
differ must stay at least ``MIN_DISTANCE`` apart in CAM02-UCS (ΔE ≈ 10 is two colours a reader
names differently; a mid grey and Okabe–Ito's bluish green come to 7)."""

import itertools
from pathlib import Path

import numpy as np
import pytest

colorspacious = pytest.importorskip("colorspacious")

from matplotlib.colors import to_rgb  # noqa: E402

from grainlab.figures import FIGURES  # noqa: E402
from grainlab.figures.registry import draw_figure  # noqa: E402
from grainlab.plots import NEUTRAL, OKABE_ITO  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MIN_DISTANCE = 10.0
DEFICIENCIES = ("deuteranomaly", "protanomaly")


def seen_as(colour, deficiency: str) -> np.ndarray:
    model = {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}
    return np.clip(colorspacious.cspace_convert(np.array(to_rgb(colour)), model, "sRGB1"), 0, 1)


def distance(a, b) -> float:
    convert = colorspacious.cspace_convert
    return float(np.linalg.norm(convert(a, "sRGB1", "CAM02-UCS") - convert(b, "sRGB1", "CAM02-UCS")))


def too_close(colours: dict[str, tuple]) -> list[str]:
    """Each pair of distinct legend colours closer than MIN_DISTANCE for a deficiency."""
    found = []
    for deficiency in DEFICIENCIES:
        for (a_label, a), (b_label, b) in itertools.combinations(colours.items(), 2):
            if np.allclose(a, b):
                continue  # one colour for several entries: told apart by marker or dash
            d = distance(seen_as(a, deficiency), seen_as(b, deficiency))
            if d < MIN_DISTANCE:
                found.append(f"{a_label!r} and {b_label!r}: ΔE {d:.1f} ({deficiency})")
    return found


def legend_colours(fig) -> dict[str, tuple]:
    """Each labelled legend entry's colour (line, patch or marker)."""
    out = {}
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    for legend in legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            for getter in ("get_color", "get_facecolor", "get_markerfacecolor"):
                value = getattr(handle, getter, lambda: None)()
                if value is not None and np.ndim(value) == 2:
                    value = value[0]
                try:
                    colour = to_rgb(value)
                except (TypeError, ValueError):
                    continue
                if text.get_text():
                    out[text.get_text()] = colour
                break
    return out


def test_the_shared_palette_and_the_neutral_grey_stay_apart():
    colours = {c: to_rgb(c) for c in (*OKABE_ITO, NEUTRAL) if c != "#F0E442"}  # yellow: never a marker or line
    assert too_close(colours) == []
    assert too_close({"mid grey": to_rgb("0.55"), "bluish green": to_rgb("#009E73")})  # the test can fail


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figures_legend_colours_stay_apart_for_colour_blind_readers(name):
    import matplotlib.pyplot as plt

    results = ROOT / "results" / FIGURES[name].study / "full"
    if not results.is_dir():
        pytest.skip("no committed results here")
    for stem, fig in draw_figure(name, results).items():
        problems = too_close(legend_colours(fig))
        plt.close(fig)
        assert not problems, f"{stem}: " + "; ".join(problems)
