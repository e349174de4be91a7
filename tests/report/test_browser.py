"""The HTML report in a real browser: headless Chromium renders it offline, requests nothing, runs nothing.

Skipped only where Chromium is absent (``apt-get install chromium``; ``.ci/run`` installs it).
Network requests are read from Chromium's net log: a request the *page* made carries the
page's ``file://`` origin in its network isolation key, unlike the browser's own background
traffic (update checks and the like). A control page with a remote image proves the check
catches a real request.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from sim.sample import sample_run

from headtohead.report.words.verdict import build_verdict
from headtohead.report.write import write_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)


def chromium(page: Path, tmp_path: Path, *args: str) -> tuple[str, Path]:
    """Run Chromium on ``page`` with a fresh profile and a net log; returns (stdout, net log path)."""
    netlog = tmp_path / f"netlog-{page.stem}.json"
    profile = tmp_path / f"profile-{page.stem}"
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--log-net-log={netlog}", *args, page.resolve().as_uri()],
        capture_output=True,
        text=True,
        check=False,  # no timeout: the browser ends by itself, however loaded the machine is
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, netlog


def page_requests(netlog: Path) -> list[str]:
    """URLs (other than file: and data:) that the page itself asked for."""
    text = netlog.read_text()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # a log cut short lacks its closing brackets
        log = json.loads(text.rstrip().rstrip(",") + "]}")
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log.get("events", []):
        params = event.get("params", {})
        if event["type"] == start_job and str(params.get("network_isolation_key", "")).startswith("file://"):
            if not params["url"].startswith(("file:", "data:")):
                urls.append(params["url"])
    return urls


@pytest.fixture(scope="module")
def sample():
    return sample_run({"bert": 0.84, "roberta": 0.92}, n_examples=600, n_resamples=200)


def test_report_renders_offline_with_verdict_and_every_image(sample, tmp_path):
    result, predictions = sample
    page = write_html(result, tmp_path / "report.html", predictions=predictions)
    dom, netlog = chromium(page, tmp_path, "--dump-dom")
    for line in build_verdict(result).headline:
        assert html.escape(line.text, quote=False) in dom
    images = re.findall(r"<img [^>]*src=\"([^\"]+)\"", dom)
    assert len(images) == 7 and all(src.startswith("data:image/svg+xml;base64,") for src in images)  # 6 + slices
    assert page_requests(netlog) == []


def test_the_network_check_catches_a_page_that_loads_something(tmp_path):
    page = tmp_path / "leaky.html"
    page.write_text('<!DOCTYPE html><html><body><p>x</p><img src="http://h2h-test.invalid/pixel.png"></body></html>')
    _, netlog = chromium(page, tmp_path, "--dump-dom")
    assert page_requests(netlog) == ["http://h2h-test.invalid/pixel.png"]


def test_a_label_that_is_a_script_shows_as_text_and_does_not_run(tmp_path):
    script = "<script>document.title='pwned'</script>"
    handler = "<img src=x onerror=\"document.body.setAttribute('data-pwned', 1)\">"
    result, predictions = sample_run(
        {handler: 0.9, "b": 0.8},
        label_names=["<script>alert(1)</script>", script],
        n_examples=200,
        speed=False,
        n_resamples=200,
    )
    page = write_html(result, tmp_path / "evil.html", predictions=predictions)
    dom, _ = chromium(page, tmp_path, "--dump-dom")
    assert "pwned" not in dom.split("</title>")[0] and "data-pwned=" not in dom
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom  # shown literally, as text
    assert not re.search(r"<script", dom, re.IGNORECASE)
    assert not re.search(r"<img src=\"x\"", dom)


def test_screenshot_of_the_report_is_not_blank(sample, tmp_path):
    from PIL import Image

    result, predictions = sample
    page = write_html(result, tmp_path / "shot.html", predictions=predictions)
    shot = tmp_path / "shot.png"
    chromium(page, tmp_path, f"--screenshot={shot}", "--window-size=1280,2400")
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 2400)
    colours = image.getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 200  # text, tables and charts, not an empty page


def test_the_notebook_view_of_a_run_renders_offline_and_runs_nothing(tmp_path):
    from headtohead.report.notebook import run_html

    handler = "<img src=x onerror=\"document.body.setAttribute('data-pwned', 1)\">"
    result, _ = sample_run(
        {handler: 0.9, "b": 0.8},
        label_names=["<script>alert(1)</script>", "yes"],
        n_examples=200,
        speed=False,
        n_resamples=200,
    )
    page = tmp_path / "cell.html"  # a notebook puts the fragment into its own page, as here
    page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{run_html(result)}</body></html>')
    dom, netlog = chromium(page, tmp_path, "--dump-dom")
    for line in build_verdict(result).headline:
        assert html.escape(line.text, quote=False) in dom
    assert "accuracy ↑" in dom and "data-pwned=" not in dom and not re.search(r"<script", dom, re.IGNORECASE)
    assert page_requests(netlog) == []


def test_the_suite_report_renders_offline_with_its_diagram_and_links(tmp_path):
    """suite.html in Chromium: the verdict, the CD diagram inline, each data set linked to its own report,
    nothing requested, and a model named like markup shown as text."""
    import headtohead
    from headtohead.report.write import write_reports
    from headtohead.results import save_result

    handler = "<img src=x onerror=\"document.body.setAttribute('data-pwned', 1)\">"
    paths = []
    for i, name in enumerate(["sst2", "snips", "wine", "iris"]):
        result, predictions = sample_run(
            {handler: 0.9, "b": 0.8, "c": 0.85}, n_examples=300, seed=i, speed=False, n_resamples=100, name=name
        )
        (tmp_path / name).mkdir()
        save_result(result, tmp_path / name / "results.json")
        write_reports(result, tmp_path / name, predictions=predictions)
        paths.append(tmp_path / name / "results.json")
    outcome = headtohead.suite(paths, out_dir=tmp_path)
    dom, netlog = chromium(tmp_path / "suite.html", tmp_path, "--dump-dom")
    for line in outcome.result.verdict:
        assert html.escape(line, quote=False) in dom
    images = re.findall(r"<img [^>]*src=\"([^\"]+)\"", dom)
    assert len(images) == 1 and images[0].startswith("data:image/svg+xml;base64,")  # the CD diagram
    for name in ("sst2", "snips", "wine", "iris"):
        assert f'<a href="{name}/report.html">{name}</a>' in dom
    assert "data-pwned=" not in dom and not re.search(r"<script", dom, re.IGNORECASE)
    assert page_requests(netlog) == []
    shot = tmp_path / "suite.png"
    chromium(tmp_path / "suite.html", tmp_path, f"--screenshot={shot}", "--window-size=1280,1800")
    from PIL import Image

    colours = Image.open(shot).convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 100


def _widths(page: Path, tmp_path: Path, width: int, *, printed: bool = False) -> dict[str, int]:
    """The page's and each table's scrollWidth, and each table's container width, as Chromium lays them out.

    The report forbids scripts (its CSP); this copy drops the policy and adds one that writes the widths into
    the DOM. ``printed`` applies the print rules on screen, at the width of A4 paper inside its margins."""
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text())
    if printed:
        text = text.replace("@media print {", "@media all {")
    probe = (
        "<script>window.addEventListener('load', () => { const out = {page: document.documentElement.scrollWidth};"
        " document.querySelectorAll('table').forEach(t => { const id = t.closest('section').id;"
        " out[id] = t.scrollWidth; out[id + ' box'] = t.parentElement.clientWidth; });"
        " const p = document.createElement('pre'); p.id = 'widths'; p.textContent = JSON.stringify(out);"
        " document.body.appendChild(p); });</script>"
    )
    copy = tmp_path / f"probe-{width}{'-print' if printed else ''}.html"
    copy.write_text(text.replace("</body>", probe + "</body>"))
    dom, _ = chromium(copy, tmp_path, "--dump-dom", f"--window-size={width},2000", "--virtual-time-budget=5000")
    found = re.findall(r'<pre id="widths">([^<]*)</pre>', dom)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found[-1]))


def test_the_suite_tables_fit_a_1280_px_page_with_six_models_and_print_whole(tmp_path):
    """Six models with long names, each data set's own tests marking most cells: the grid, the pairs and the
    baseline's table fit a 1280 px window without scrolling, and in print (the print rules, A4's 718 px) too."""
    import headtohead
    from headtohead.results import save_result

    models = {
        "distilbert-base-uncased": 0.70,
        "roberta-large-mnli": 0.76,
        "deberta-v3-base": 0.82,
        "logistic-regression": 0.86,
        "naive-bayes-tfidf": 0.90,
        "gpt-4o-mini-zero-shot": 0.94,
    }
    paths = []
    for i, name in enumerate(["sst2", "snips", "ag_news", "trec-coarse", "yelp_polarity"]):
        result, _ = sample_run(models, n_examples=400, seed=i, speed=False, n_resamples=100, name=name)
        (tmp_path / name).mkdir()
        save_result(result, tmp_path / name / "results.json")
        paths.append(tmp_path / name / "results.json")
    outcome = headtohead.suite(paths, out_dir=tmp_path / "suite", baseline="distilbert-base-uncased")
    from headtohead.report.rows.suite import grid_rows

    marks = [row.get(m).aside for row in grid_rows(outcome.result) for m in outcome.result.models]
    assert sum(bool(mark) for mark in marks) >= 20
    page = tmp_path / "suite" / "suite.html"
    for width, printed in ((1280, False), (718, True)):
        widths = _widths(page, tmp_path, width, printed=printed)
        assert widths["page"] <= width, widths
        for table in ("ranks", "datasets", "pairs", "baseline"):
            assert widths[table] <= widths[f"{table} box"], (width, widths)
