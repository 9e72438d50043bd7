"""The browser pages' routes (server/web/): what each serves, under which headers, and that
everything a page loads is this server's own, at the root and under each prefix."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from fastapi.testclient import TestClient

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.web import static
from servicebench_support_queue.server.web.home import render_home, task_table

WEB = Path(static.__file__).parent
APP = create_app(Settings())
PREFIXES = ("", "/servicebench", "/support_queue")
PAGES = ("/", "/web/", *(f"{p}/docs" for p in PREFIXES), *(f"{p}/redoc" for p in PREFIXES))
STRICT_PAGES = ("/", "/web/")
"""Pages whose own markup sets no style: their policy refuses inline styles too."""


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(APP)


class Page(HTMLParser):
    """What a page loads (scripts, stylesheets, icons, the spec), and any inline code."""

    LOADS = {
        ("script", "src"),
        ("link", "href"),
        ("redoc", "spec-url"),
        ("div", "data-openapi-url"),
    }

    def __init__(self, html: str) -> None:
        super().__init__()
        self.loads: list[str] = []
        self.inline: list[str] = []
        self._in_script = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if (tag, name) in self.LOADS and value:
                self.loads.append(value)
            if name.startswith("on") or name == "style":
                self.inline.append(f"<{tag} {name}=...>")
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append(data.strip()[:60])


@pytest.mark.parametrize("path", PAGES)
def test_a_page_loads_only_files_of_this_server_and_each_of_them_is_served(
    client: TestClient, path: str
) -> None:
    page = client.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    parsed = Page(page.text)
    assert parsed.loads and not parsed.inline, parsed.inline
    for reference in parsed.loads:
        if reference == "data:,":  # the empty icon, so the browser asks for no /favicon.ico
            continue
        url = urljoin(f"http://testserver{path}", reference)
        assert urlsplit(url).netloc == "testserver", reference
        loaded = client.get(url)
        assert loaded.status_code == 200, url
        kind = loaded.headers["content-type"]
        expected = {".js": "text/javascript", ".css": "text/css", ".json": "application/json"}
        assert kind.startswith(expected[Path(urlsplit(url).path).suffix]), (url, kind)


@pytest.mark.parametrize("path", PAGES)
def test_every_page_and_file_has_a_policy_that_allows_only_this_server(
    client: TestClient, path: str
) -> None:
    page = client.get(path)
    parsed = Page(page.text)
    loaded = [urljoin(f"http://testserver{path}", ref) for ref in parsed.loads if ref != "data:,"]
    for response in [page, *(client.get(u) for u in loaded if not u.endswith(".json"))]:
        policy = dict(
            directive.strip().split(" ", 1)
            for directive in response.headers["content-security-policy"].split(";")
        )
        assert policy["default-src"] == "'none'"
        assert policy["script-src"] == "'self'"  # no inline script, no eval, no other host
        assert policy["connect-src"] == "'self'" and policy["base-uri"] == "'none'"
        assert "https://huggingface.co" in policy["frame-ancestors"]  # the Space page frames it
        for directive, sources in policy.items():
            assert "http:" not in sources.split() and "*" not in sources.split(), directive
            for source in sources.split():
                assert (
                    source.startswith("'")
                    or source in {"data:", "blob:"}
                    or directive == "frame-ancestors"
                )
        if path in STRICT_PAGES:
            assert policy["style-src"] == "'self'"
        assert response.headers["x-content-type-options"] == "nosniff"


def test_the_pages_own_files_name_no_other_host() -> None:
    """Nothing of ours points outside: no CDN, no web font, no analytics."""
    for path in sorted(WEB.iterdir()):
        if path.suffix in {".html", ".js", ".css"}:
            assert not re.search(r"(https?:)?//[\w.-]+\.\w", path.read_text(encoding="utf-8")), (
                path.name
            )
    assert "@import" not in (WEB / "site.css").read_text(encoding="utf-8")


def test_web_redirects_to_the_playground_relative_to_where_it_was_asked(client: TestClient) -> None:
    redirect = client.get("/web", follow_redirects=False)
    assert redirect.status_code == 307 and redirect.headers["location"] == "web/"
    assert urljoin("https://x.hf.space/web", "web/") == "https://x.hf.space/web/"
    assert urljoin("https://proxy.example/some/prefix/web", "web/").endswith("/some/prefix/web/")
    page = client.get("/web", follow_redirects=True)
    assert page.url.path == "/web/" and 'src="playground.js"' in page.text
    assert client.head("/web/").status_code == 200
    with_query = client.get("/web?__theme=dark&x=a%20b", follow_redirects=False)
    assert with_query.headers["location"] == "web/?__theme=dark&x=a%20b"


def test_files_are_revalidated_by_etag(client: TestClient) -> None:
    first = client.get("/web/playground.js")
    again = client.get("/web/playground.js", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert client.get("/web/nope.js").status_code == 404
    assert client.get("/web/../server/app.py").status_code == 404


def test_the_home_page_names_the_host_the_request_reached_in_its_curl_lines() -> None:
    page = TestClient(APP, base_url="https://someone-env.hf.space").get("/")
    assert page.status_code == 200
    base = (
        '<span class="base">https://someone-env.hf.space</span>'  # home.js rewrites it in a browser
    )
    assert (
        f"{base}/reset" in page.text
        and f"{base}/step" in page.text
        and f"{base}/state" in page.text
    )
    assert "localhost" not in page.text
    assert 'href="web/"' in page.text  # the playground
    for card in TestClient(APP).get("/tasks").json()["tasks"]:
        assert card["id"] in page.text


def test_a_hostile_host_is_shown_as_text() -> None:
    """The base URL comes from the request's Host header: whatever it holds stays text."""
    page = render_home(task_table([]), 'http://x"><script>alert(1)</script>')
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page


def test_openenvs_web_interface_flag_still_serves_this_playground(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`openenv push` sets ENABLE_WEB_INTERFACE=true: the Space then opens /web, ours."""
    monkeypatch.setenv("ENABLE_WEB_INTERFACE", "true")
    app = create_app(Settings.from_env())
    page = TestClient(app).get("/web/")
    assert page.status_code == 200 and 'src="playground.js"' in page.text
    paths = {getattr(route, "path", "") for route in app.routes}
    assert not {path for path in paths if "gradio" in path or path.startswith("/web/gradio")}


def test_the_pages_stay_out_of_the_api_schema(client: TestClient) -> None:
    for prefix in PREFIXES:
        paths = client.get(f"{prefix}/openapi.json").json()["paths"]
        assert not {
            p for p in paths if p in {"/", "/docs", "/redoc"} or p.startswith(("/web", "/docs/"))
        }
