"""Every user string (labels, model names, run names, paths, config values) is escaped in every format."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser

import pandas as pd
import pytest
from sim.sample import sample_run

from headtohead.report.formats.markdown import md_escape
from headtohead.report.write import render_csv, render_html, render_markdown

SCRIPT = "<script>alert(1)</script>"
TEMPLATE_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "p",
    "nav",
    "a",
    "main",
    "section",
    "ul",
    "li",
    "strong",
    "span",
    "br",
    "details",
    "summary",
    "div",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "dl",
    "dt",
    "dd",
    "code",
    "figure",
    "img",
    "figcaption",
    "caption",
    "pre",
    "footer",
}
IMG = '<img src=x onerror="alert(2)">'


@pytest.fixture(scope="module")
def evil():
    """A run whose label, model names, run name, data path and config carry markup."""
    result, predictions = sample_run(
        {IMG: 0.9, "=cmd|' /C calc'!A0": 0.8},
        label_names=[SCRIPT, "ok & fine", "x"],
        n_examples=300,
        name='run "</title><b>',
        n_resamples=200,
        texts=[f"sentence {i} <b>bold</b> {SCRIPT}" for i in range(300)],
    )
    dataset = result.dataset.model_copy(update={"source": "/data/<i>evil</i>.tsv"})
    experiment = dict(result.experiment, note="</pre><script>alert(3)</script>")
    return result.model_copy(update={"dataset": dataset, "experiment": experiment}), predictions


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)

    def handle_data(self, data):
        self.text.append(data)


def test_html_shows_markup_literally_and_contains_no_tag_from_user_input(evil):
    html = render_html(*evil[:1], predictions=evil[1])
    parsed = _Tags()
    parsed.feed(html)
    # only the template's own tags and attributes: nothing from user input became markup
    assert parsed.tags <= TEMPLATE_TAGS, parsed.tags - TEMPLATE_TAGS
    assert parsed.attributes <= {
        "lang",
        "charset",
        "http-equiv",
        "content",
        "name",
        "href",
        "class",
        "style",
        "id",
        "src",
        "alt",
        "colspan",
        "open",
    }
    text = "".join(parsed.text)
    assert SCRIPT in text and IMG in text and "/data/<i>evil</i>.tsv" in text  # shown literally
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the label, as text
    assert "&lt;img src=x onerror=&#34;alert(2)&#34;&gt;" in html  # the model name, as text
    assert "&lt;i&gt;evil&lt;/i&gt;" in html and "&lt;/pre&gt;&lt;script&gt;alert(3)" in html
    assert re.search(r"<title>run &#34;&lt;/title&gt;&lt;b&gt;</title>", html)
    assert "sentence 0 &lt;b&gt;bold&lt;/b&gt; &lt;script&gt;" in html or "&lt;b&gt;bold&lt;/b&gt;" in html  # inputs


def test_markdown_shows_markup_literally(evil):
    text, _ = render_markdown(evil[0], predictions=evil[1])
    # the experiment as run is a fenced code block, which Markdown shows verbatim, tags as text
    fences = re.findall(r"^(`{3,})text\n.*?^\1$", text, flags=re.M | re.S)
    assert fences and "</pre><script>alert(3)</script>" in text
    text = re.sub(r"^(`{3,})text\n.*?^\1$", "", text, flags=re.M | re.S)
    assert "<script" not in text and "<img" not in text and "<i>" not in text and "<b>" not in text
    assert "&lt;b&gt;bold&lt;/b&gt;" in text  # the disagreeing inputs, shown literally
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert md_escape("a|b *c* [d](e)") == "a\\|b \\*c\\* \\[d\\](e)"
    assert md_escape("# not a heading") == "\\# not a heading" and md_escape("1. x") == "1\\. x"


def test_csv_keeps_names_but_defuses_spreadsheet_formulas(evil):
    table = pd.read_csv(io.StringIO(render_csv(evil[0])))
    assert list(table["model"]) == [IMG, "'=cmd|' /C calc'!A0"]


def test_markdown_writes_comparisons_as_they_are(evil):
    assert md_escape("p < 0.001, a -> b, x & y") == "p < 0.001, a -> b, x & y"  # no &lt; where nothing is HTML
    assert md_escape("&amp; &#60;") == "&amp;amp; &amp;#60;"  # a character reference shows literally
    assert md_escape("> not a quote") == "\\> not a quote"
    assert md_escape("<b>x</b> p < 0.001") == "&lt;b&gt;x&lt;/b&gt; p < 0.001"
    text, _ = render_markdown(evil[0], predictions=evil[1])
    assert "p < 0.001" in text and "p &lt; 0.001" not in text
