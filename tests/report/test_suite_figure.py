"""The suite's CD diagram as a paper needs it: TrueType fonts in its PDF."""

from __future__ import annotations

import matplotlib
import pandas as pd

import headtohead

FOUR_MODELS = pd.DataFrame(
    {
        "dataset": list("abcdefgh"),
        "w": [0.91, 0.82, 0.77, 0.95, 0.66, 0.88, 0.79, 0.84],
        "x": [0.90, 0.80, 0.75, 0.93, 0.65, 0.86, 0.78, 0.83],
        "y": [0.85, 0.78, 0.70, 0.90, 0.61, 0.80, 0.74, 0.80],
        "z": [0.70, 0.60, 0.62, 0.75, 0.50, 0.66, 0.61, 0.69],
    }
)


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
