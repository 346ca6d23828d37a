"""The console (``GET /`` with Accept: text/html) in headless Chromium (Debian's, driven by
selenium; ``make test`` installs both), asserting on the DOM: the query list with its counts,
a followed query's matches as values with the query's prefixes, the chart and the automaton,
register / push / delete / SPARQL from the page, ``/docs`` rendered with no network, and
``--token-reads`` asking for the token. One browser and one server for the module."""

from __future__ import annotations

import importlib.util
import re
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import ROOT, SG_KB, Server, smartgrid_batches, start_server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="needs Debian's chromium and chromium-driver (make test installs them)")

XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


def chromium() -> Any:
    """Headless Chromium under selenium (also docs/console_screenshot.py's browser)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1360,1100"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(30)
    return driver


@pytest.fixture(scope="module")
def page_server() -> Iterator[Server]:
    server = start_server("--kb", SG_KB)
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = chromium()
    yield driver
    driver.quit()


def _wait(driver: Any, timeout: float = 20) -> Any:
    """A wait that tries again when the page re-rendered what it was reading (the query list
    and the chart are redrawn on every poll, so an element found may be gone a moment later)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,))


def _css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def _cells(row: Any) -> list[str]:
    return [c.text for c in row.find_elements("tag name", "td")]


def _col(driver: Any, qid: str, col: str) -> str:
    cells = _css(driver, f'#queries tr[data-query="{qid}"] td[data-col="{col}"]')
    return cells[0].text if cells else ""


def _set(driver: Any, element_id: str, value: str) -> None:
    """Fill a form field as typing would (the value, then an input event)."""
    driver.execute_script("const e = document.getElementById(arguments[0]); e.value = arguments[1];"
                          "e.dispatchEvent(new Event('input'))", element_id, value)


def test_the_console_and_its_assets_come_from_the_server(page_server: Server) -> None:
    html = httpx.get(page_server.url + "/", headers={"Accept": "text/html"})
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assets = re.findall(r'(?:src|href)="([^"]+)"', html.text)
    assert set(assets) == {"data:,", "console/console.css", "console/console.js", "docs"}, assets
    for path, media in (("/console/console.js", "javascript"), ("/console/console.css", "text/css"),
                        ("/console/swagger/swagger-ui-bundle.js", "javascript"),
                        ("/console/swagger/swagger-ui.css", "text/css")):
        got = httpx.get(page_server.url + path)
        assert got.status_code == 200 and media in got.headers["content-type"], path
    css = httpx.get(page_server.url + "/console/console.css").text
    assert "url(" not in css and "@import" not in css
    assert "fetch(\"http" not in httpx.get(page_server.url + "/console/console.js").text
    assert httpx.get(page_server.url + "/").json()["sparql"] == "/sparql"  # other clients: JSON


def test_register_push_and_follow_the_matches_as_values(page_server: Server, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    browser.get(page_server.url + "/")
    wait = _wait(browser)
    browser.find_element(By.ID, "register").click()  # the page's example query
    wait.until(ec.text_to_be_present_in_element((By.ID, "registered"), "Registered as query q1"))
    wait.until(lambda d: d.find_element(By.ID, "follow-id").text == "q1")
    browser.find_element(By.ID, "push").click()  # the page's example events
    wait.until(ec.text_to_be_present_in_element((By.ID, "pushed"), "3 event(s) accepted"))
    wait.until(lambda d: len(_css(d, "#matches tr.match")) == 2)
    assert [th.text for th in _css(browser, "#matches thead th")] == ["#", "time", "start", "?company", "?p1", "?p2"]
    rows = [_cells(r) for r in _css(browser, "#matches tr.match")]
    assert rows == [["2", "180", "60", ":ACME", "10.5", "12"],   # newest first, prefixes applied,
                    ["1", "180", "0", ":ACME", "10", "12"]], rows  # literals as their values
    p2 = _css(browser, "#matches tr.match td.literal")[-1]
    assert p2.get_attribute("title") == f'"12"^^<{XSD_INTEGER}>'  # the N-Triples on hover
    # the query list, polled: its streams and counts
    wait.until(lambda d: _col(d, "q1", "events") == "3" and _col(d, "q1", "results") == "2")
    assert _col(browser, "q1", "streams") == "S" and _col(browser, "q1", "late") == "0"
    # pushed again, the events before the query's clock (180) are late: dropped, said and counted
    browser.find_element(By.ID, "push").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "pushed"), "3 event(s) accepted, 2 late, dropped by q1"))
    wait.until(lambda d: _col(d, "q1", "late") == "2" and _col(d, "q1", "events") == "6")
    # the chart: the burst of events shows above the zero line (y = 150 in a 170 high chart)
    def peak(d: Any) -> float:
        points = _css(d, "#chart svg.chart polyline.series.events")[0].get_attribute("points").split()
        return min((float(p.split(",")[1]) for p in points), default=150.0)
    wait.until(lambda d: peak(d) < 149)
    assert _css(browser, '#queries tr[data-query="q1"] svg.spark polyline.series')
    # the automaton of SEQ (A; B): x0 -> x1 (A), a skip loop on x1, x1 -> x2 (B)
    states = [s.text for s in _css(browser, "#automaton svg g.state text")]
    assert states == ["x0", "x1", "x2"]
    edges = sorted((e.get_attribute("data-source"), e.get_attribute("data-target"), e.get_attribute("data-kind"))
                   for e in _css(browser, "#automaton svg g.edge"))
    assert edges == [("x0", "x1", "take"), ("x1", "x1", "skip"), ("x1", "x2", "take")]


def test_language_tags_custom_datatypes_times_and_delete(page_server: Server, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select

    browser.get(page_server.url + "/")
    wait = _wait(browser)
    _set(browser, "query", """PREFIX : <http://example.org/>
PREFIX u: <http://example.org/unit#>
SELECT ?item ?label ?w ?other WITHIN 1 MINUTE FROM STREAM T <http://example.org/labels>
WHERE { SEQ(A) DEFINE GPM A ON T { ?item :label ?label ; :weight ?w ; :other ?other } }""")
    browser.find_element(By.ID, "register").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "registered"), "Registered as query q2"))
    wait.until(lambda d: d.find_element(By.ID, "follow-id").text == "q2")
    _set(browser, "stream", "http://example.org/labels")
    Select(browser.find_element(By.ID, "format")).select_by_value("text/turtle")
    _set(browser, "time", "2026-01-01T10:00:00Z")
    _set(browser, "events", '<http://example.org/box> <http://example.org/label> "boîte"@fr ; '
                            '<http://example.org/weight> "5"^^<http://example.org/unit#kg> ; '
                            '<http://example.org/other> <http://elsewhere.org/x> .')
    browser.find_element(By.ID, "push").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "pushed"), "1 event(s) accepted"))
    row = wait.until(lambda d: _css(d, "#matches tr.match"))[0]
    assert _cells(row) == ["1", "2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z", ":box", "boîte@fr", "5^^u:kg",
                           "<http://elsewhere.org/x>"]
    # deleted from its row: gone from the list and from the server, and no longer followed
    wait.until(lambda d: _css(d, '#queries tr[data-query="q2"] button.delete'))[0].click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "registered"), "Deleted query q2"))
    wait.until(lambda d: not _css(d, '#queries tr[data-query="q2"]'))
    assert browser.find_element(By.ID, "follow").get_attribute("hidden") is not None
    assert [q["id"] for q in httpx.get(page_server.url + "/queries").json()] == ["q1"]


def test_sparql_results_as_a_table(page_server: Server, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.get(page_server.url + "/")
    wait = _wait(browser)
    _set(browser, "sparql", 'PREFIX : <http://example.org/>\nSELECT ?x ?y WHERE { VALUES (?x ?y) { (:a 1) (:b "t"@en) } }')
    browser.find_element(By.ID, "run").click()
    wait.until(lambda d: d.find_element(By.ID, "sparql-status").text == "2 result(s)")
    assert [th.text for th in _css(browser, "#results thead th")] == ["?x", "?y"]
    assert [_cells(r) for r in _css(browser, "#results tbody tr")] == [[":a", "1"], [":b", "t@en"]]
    _set(browser, "sparql", "SELECT nonsense")
    browser.find_element(By.ID, "run").click()
    wait.until(lambda d: d.find_element(By.ID, "sparql-status").text.startswith("Error 400"))
    assert not _css(browser, "#results tbody tr")


def test_docs_render_with_no_network(page_server: Server, browser: Any) -> None:
    browser.get(page_server.url + "/docs")
    wait = _wait(browser)
    wait.until(lambda d: any("spaseq serve" in t.text for t in _css(d, ".swagger-ui .info .title")))
    paths = {e.get_attribute("data-path") for e in _css(browser, ".swagger-ui .opblock-summary-path")}
    assert {"/queries", "/queries/{qid}/automaton", "/events"} <= paths, paths
    fetched = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert fetched and all(u.startswith(page_server.url) for u in fetched), fetched


def test_the_screenshot_of_the_smart_grid_followed(page_server: Server, browser: Any, tmp_path: Path) -> None:
    """docs/console_screenshot.py's capture, on this module's server: the PNG the README shows
    is made from a page with the example's matches, automaton and chart."""
    spec = importlib.util.spec_from_file_location("console_screenshot", ROOT / "docs" / "console_screenshot.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "console.png"
    qid = script.capture(browser, page_server.url, out, smartgrid_batches(), pace=0.02, settle=0)
    expected = httpx.get(f"{page_server.url}/queries/{qid}").json()
    assert expected["results"] > 0 and len(_css(browser, "#matches tr.match")) == expected["results"]
    assert len(_css(browser, "#automaton svg g.state")) == 4  # SEQ (A; B+, C)
    house = _css(browser, "#matches tr.match td.iri")[0].text
    assert house.startswith(":H"), house  # the query's PREFIX : applied
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", out.read_bytes()[16:24])
    assert width == script.SIZE[0] and height > 600, (width, height)


@pytest.fixture(scope="module")
def token_server() -> Iterator[Server]:
    server = start_server("--token", "s3cret", "--token-reads")
    yield server
    assert server.stop() == 0


def test_token_reads_the_page_loads_and_asks_for_the_token(token_server: Server, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    url = token_server.url
    assert httpx.get(url + "/", headers={"Accept": "text/html"}).status_code == 200
    assert httpx.get(url + "/console/console.js").status_code == 200
    assert httpx.get(url + "/docs").status_code == 200  # open as before, with /openapi.json
    assert httpx.get(url + "/queries").status_code == 401  # the data is not open
    assert httpx.get(url + "/queries/q1/automaton").status_code == 401
    browser.get(url + "/")
    wait = _wait(browser)
    form = browser.find_element(By.ID, "token-form")
    wait.until(lambda d: form.is_displayed())
    assert "Bearer" in browser.find_element(By.ID, "token-why").text
    browser.find_element(By.ID, "token").send_keys("s3cret")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda d: not form.is_displayed())
    assert browser.execute_script("return sessionStorage.getItem('spaseq-token')") == "s3cret"
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, '#status dd[data-key="queries"]').text == "0")
    browser.find_element(By.ID, "register").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "registered"), "Registered as query q1"))
    browser.find_element(By.ID, "push").click()
    wait.until(lambda d: len(_css(d, "#matches tr.match")) == 2)  # followed with the token (SSE over fetch)
    wait.until(lambda d: len(_css(d, "#automaton svg g.state")) == 3)
    browser.get("about:blank")  # no follower left: the server stops at once
