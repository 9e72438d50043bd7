"""The HTML report: one self-contained file (no external resource, no script, SVG inline), its
tables carry the evaluation's numbers, its viewer every episode, and nothing in it is markup
that the results file put there."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from report_results import results_document

from servicebench_support_queue.agents.output import Redactor
from servicebench_support_queue.report import render_html, write_html_report

URL_ATTRIBUTES = {"src", "href", "xlink:href", "action", "data", "poster", "srcset"}


class Inventory(HTMLParser):
    """Every tag, every URL-bearing attribute, and the text of <td> cells."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_style = tag == "style"
        self.urls.extend(value or "" for name, value in attrs if name in URL_ATTRIBUTES)
        self.styles.extend(value or "" for name, value in attrs if name == "style")

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)
            self._in_style = False


def inventory(html: str) -> Inventory:
    parser = Inventory()
    parser.feed(html)
    return parser


def test_the_report_is_self_contained() -> None:
    html = render_html(results_document(families=True))
    found = inventory(html)
    assert found.urls and all(url.startswith("#") for url in found.urls), found.urls
    for tag in ("script", "link", "img", "iframe", "object", "embed"):
        assert tag not in found.tags
    assert not any("url(" in style and "url(#" not in style for style in found.styles)
    assert "@import" not in html
    # a chart per table (task, family, split, environment), the pass^k curves, the histogram
    assert found.tags.count("svg") == 6 and html.count("<svg") == 6
    assert "<metadata>" not in html


def test_the_tables_show_the_evaluations_numbers() -> None:
    html = render_html(results_document())
    # t_a: mean 7/15, s.e. 11/30, success rate 2/6, pass^1..3 = 1/3, 1/6, 0
    assert "<th>t_a</th><td>servicebench</td>" in html
    row = html[html.index("<th>t_a</th>") :].split("</tr>")[0]
    assert [cell.split(">")[-1] for cell in row.split("</td>")[:-1]][1:] == [
        "2", "6", "0.467", "0.367", "0.333", "0.333", "0.167", "0.000",
    ]  # fmt: skip
    assert "0.683 ± 0.183" in html  # the overall mean and its error, in the facts


def test_a_split_run_has_its_family_and_split_tables() -> None:
    html = render_html(results_document(families=True))
    assert "<h2>Score per family</h2>" in html and "<h2>Score per split</h2>" in html
    assert "<th>f1</th><td>servicebench</td><td>test</td>" in html
    assert "<th>test</th><td>servicebench</td><td class='num'>" in html  # no second split column
    assert "split test · family f1" in html  # an episode's line names both


def test_every_episode_folds_out_with_its_steps_and_outcome() -> None:
    document = results_document()
    html = render_html(document)
    found = inventory(html)
    assert found.tags.count("details") == len(document["tasks"]) == 12
    assert "Collateral damage" in html and "✘ not met" in html  # ServiceBench's end-state check
    assert "orders ORD-1.status" in html and "order_found" in html
    assert "Ticket SQ-9: reward 0.475" in html  # a Support Queue ticket's grading
    assert "invoice number" in html and "asks_for_password" in html and "−0.200" in html


def test_values_from_the_results_file_are_text_never_markup() -> None:
    html = render_html(results_document())
    assert "<b>ORD-1</b>" not in html and "&lt;b&gt;ORD-1&lt;/b&gt;" in html
    assert "<script>alert" not in html


def test_the_same_results_give_the_same_bytes() -> None:
    assert render_html(results_document()) == render_html(results_document())


def test_a_secret_in_the_results_never_reaches_the_file(tmp_path: Path) -> None:
    document = results_document()
    document["model"] = "model hf_SECRET_token_1234 & co"
    path = write_html_report(tmp_path / "r.html", document, Redactor(["hf_SECRET_token_1234"]))
    text = path.read_text()
    assert "hf_SECRET_token_1234" not in text and "model *** &amp; co" in text


def test_a_single_try_run_says_the_curve_needs_repeats() -> None:
    document = results_document()
    document["tasks"] = [t for t in document["tasks"] if t["repeat"] == 0]
    document["repeats"] = 1
    html = render_html(document)
    assert "Run with --repeats K" in html and "pass^2" not in html
