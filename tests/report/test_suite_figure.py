"""The suite's CD diagram as a paper needs it: TrueType fonts in its PDF, the CD drawn at its true length, a size."""

from __future__ import annotations

import re

import matplotlib
import pandas as pd
import pytest
from matplotlib.figure import Figure

import headtohead
from headtohead.config.suite import figure_size, suite_from_dict
from headtohead.errors import ConfigError
from headtohead.report.plots import model_styles
from headtohead.report.plots_suite import WIDTH, critical_difference_figure, default_height

# Three models on two data sets: Nemenyi's CD is 2.34 ranks, longer than the axis's 2 (ranks 1…3).
TWO_DATASETS = pd.DataFrame({"dataset": ["a", "b"], "x": [0.9, 0.8], "y": [0.85, 0.7], "z": [0.5, 0.6]})
FOUR_MODELS = pd.DataFrame(
    {
        "dataset": list("abcdefgh"),
        "w": [0.91, 0.82, 0.77, 0.95, 0.66, 0.88, 0.79, 0.84],
        "x": [0.90, 0.80, 0.75, 0.93, 0.65, 0.86, 0.78, 0.83],
        "y": [0.85, 0.78, 0.70, 0.90, 0.61, 0.80, 0.74, 0.80],
        "z": [0.70, 0.60, 0.62, 0.75, 0.50, 0.66, 0.61, 0.69],
    }
)


def _line(figure: Figure, gid: str):
    (line,) = [artist for artist in figure.axes[0].get_lines() if artist.get_gid() == gid]
    return line


def _label(figure: Figure) -> str:
    (text,) = [t for t in figure.axes[0].texts if t.get_gid() == "cd-label"]
    return text.get_text()


def _drawn_in_ranks(figure: Figure, k: int) -> float:
    """The CD scale's length read back from the figure, in ranks of the drawn rank axis (1 … k)."""
    axis = _line(figure, "rank-axis").get_xdata()
    per_rank = (axis[1] - axis[0]) / (k - 1)
    scale = _line(figure, "cd-scale").get_xdata()
    return float((scale[1] - scale[0]) / per_rank)


def _figure(result, size=None) -> Figure:
    return critical_difference_figure(
        result.average_ranks,
        result.nemenyi_cd,
        result.cliques,
        model_styles(result.models),
        alpha=result.alpha,
        size=size,
    )


@pytest.mark.parametrize(("table", "longer"), [(TWO_DATASETS, True), (FOUR_MODELS, False)])
def test_the_cd_is_drawn_at_the_length_its_label_says(table, longer):
    """The issue's case (labelled 2.34, drawn 2.0) and an ordinary one: label, drawn length and record agree."""
    result = headtohead.suite(scores=table).result
    k = len(result.models)
    assert (result.nemenyi_cd > k - 1) is longer
    figure = _figure(result)
    labelled = float(re.match(r"CD = (\d+\.\d+) \(Nemenyi", _label(figure)).group(1))
    assert labelled == round(result.nemenyi_cd, 2)
    assert _drawn_in_ranks(figure, k) == pytest.approx(result.nemenyi_cd, rel=1e-9)
    assert ("longer than the axis, no two average ranks can be this far apart" in _label(figure)) is longer
    scale_end = max(_line(figure, "cd-scale").get_xdata())
    assert 0.0 < scale_end < 1.0  # on the figure, not clipped at its edge
    if not longer:
        assert round(result.nemenyi_cd, 2) == round(2.569 * (20 / 48) ** 0.5, 2)  # q_0.05(4)·√(k(k+1)/6N), N = 8


def test_every_pdf_embeds_truetype_fonts_and_leaves_the_users_settings_alone(tmp_path):
    """IEEE's PDF checker refuses Type 3 fonts: the CD diagram's PDF embeds Type 42 (TrueType) ones."""
    before = dict(matplotlib.rcParams)
    # uncompressed, so the font dictionaries can be read from the bytes
    with matplotlib.rc_context({"pdf.compression": 0, "pdf.fonttype": 3}):  # a user's global Type 3 setting
        headtohead.suite(scores=FOUR_MODELS, baseline="z", out_dir=tmp_path)
        assert matplotlib.rcParams["pdf.fonttype"] == 3
    pdf = (tmp_path / "cd.pdf").read_bytes()
    assert b"/Subtype /Type3" not in pdf
    assert b"/Subtype /TrueType" in pdf or b"/Subtype /CIDFontType2" in pdf
    assert b"/FontFile2" in pdf  # the TrueType program itself is embedded
    assert dict(matplotlib.rcParams) == before


def test_the_figure_has_the_size_asked_for_from_the_library_the_suite_file_and_the_command_line(tmp_path):
    result = headtohead.suite(scores=FOUR_MODELS).result
    assert tuple(_figure(result).get_size_inches()) == (WIDTH, default_height(4, len(result.cliques)))
    assert tuple(_figure(result, (3.5, 1.6)).get_size_inches()) == (3.5, 1.6)
    assert tuple(_figure(result, (3.5, None)).get_size_inches()) == (3.5, default_height(4, len(result.cliques)))

    headtohead.suite(scores=FOUR_MODELS, out_dir=tmp_path / "sized", figure_size=(3.5, 1.6))
    svg = (tmp_path / "sized" / "cd.svg").read_text()
    assert 'width="252pt" height="115.2pt"' in svg  # 3.5 × 72, 1.6 × 72
    pdf = (tmp_path / "sized" / "cd.pdf").read_bytes()
    assert b"/MediaBox [ 0 0 252 115.2 ]" in pdf
    page = (tmp_path / "sized" / "suite.html").read_text()
    assert "data:image/svg+xml;base64," in page  # the page's own diagram keeps the screen size

    headtohead.suite(scores=FOUR_MODELS, out_dir=tmp_path / "default")
    assert f'width="{WIDTH * 72:g}pt"' in (tmp_path / "default" / "cd.svg").read_text()

    assert figure_size("3.5x1.6") == (3.5, 1.6) and figure_size("7.16×2") == (7.16, 2.0)
    suite = {
        "datasets": [{"name": "a", "data": {"path": "sklearn:iris"}}, {"name": "b", "data": {"path": "sklearn:wine"}}],
        "models": [
            {"name": "x", "kind": "sklearn", "source": "x.skops"},
            {"name": "y", "kind": "sklearn", "source": "y.skops"},
        ],
    }
    assert suite_from_dict(suite).across.figure.size is None
    assert suite_from_dict({**suite, "across": {"figure": {"width": 3.5, "height": 1.6}}}).across.figure.size == (
        3.5,
        1.6,
    )
    assert suite_from_dict({**suite, "across": {"figure": {"width": 3.5}}}).across.figure.size == (3.5, None)


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("3.5", "not a width and a height joined by 'x'"),
        ("3.5x1.6x2", "not a width and a height joined by 'x'"),
        ("0x1.6", "the width must be more than 0"),
        ("3.5x-1", "the height must be more than 0"),
        ("3.5xnan", "the height must be more than 0"),
        ("3.5x1e9", "at most 50 inches"),
        ("ax1", "the width 'a' is not a number"),
    ],
)
def test_a_bad_figure_size_is_refused_in_one_line(given, said):
    with pytest.raises(ConfigError, match=re.escape(said)) as info:
        figure_size(given)
    assert "\n" not in str(info.value) and "e.g. 3.5x1.6" in str(info.value)


def test_a_bad_figure_size_given_to_the_library_is_refused_before_anything_is_compared():
    for size in ((0, 1.6), (3.5, -1.0), ("wide", 1.0)):
        with pytest.raises(ConfigError, match=r"figure_size=.*give \(width, height\) in inches") as info:
            headtohead.suite(scores=FOUR_MODELS, figure_size=size)
        assert "\n" not in str(info.value)
    with pytest.raises(ConfigError, match=r"--figure-size '3\.5': not a width and a height joined by 'x'"):
        headtohead.suite(scores=FOUR_MODELS, figure_size="3.5")  # as the option takes it
    assert headtohead.suite(scores=FOUR_MODELS, figure_size="3.5x1.6").result.n_datasets == 8
