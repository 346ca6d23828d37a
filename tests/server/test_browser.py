"""The browser page (``GET /`` with Accept: text/html) in headless Chromium (Debian's, driven by
selenium; ``make test`` installs both): register the page's example query, push its example
events, and see the match arrive in the table by SSE; run a SPARQL query over the stored
matches; an error is shown, not swallowed."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import httpx
import pytest

from tests.server.conftest import Server, start_server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="needs Debian's chromium and chromium-driver (make test installs them)")


@pytest.fixture(scope="module")
def page_server() -> Iterator[Server]:
    server = start_server()
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def test_the_page_is_html_for_a_browser_and_json_otherwise(page_server: Server) -> None:
    html = httpx.get(page_server.url + "/", headers={"Accept": "text/html"})
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "<script>" in html.text and "<script src" not in html.text and "<link" not in html.text  # self-contained
    assert httpx.get(page_server.url + "/").json()["sparql"] == "/sparql"


def test_register_push_and_watch_a_match_arrive(page_server: Server, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(page_server.url + "/")
    wait = WebDriverWait(browser, 20)
    browser.find_element(By.ID, "register").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "registered"), "Registered as query"))
    browser.find_element(By.ID, "push").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "pushed"), "3 event(s) accepted"))
    rows = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#matches tr.match"))
    cells = [c.text for c in rows[0].find_elements(By.TAG_NAME, "td")]
    assert cells[:3] == ["1", "180", "0"], cells
    assert '?p2 = "12"' in cells[3] and "?company = <http://example.org/ACME>" in cells[3], cells
    # pushing the same events again: those before the query's clock (180) are late, and the page
    # says they were dropped, and by which query
    browser.find_element(By.ID, "push").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "pushed"), "3 event(s) accepted, 2 late, dropped by q1"))


def test_sparql_from_the_page(page_server: Server, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(page_server.url + "/")
    box = browser.find_element(By.ID, "sparql")
    box.clear()
    box.send_keys("SELECT ?x WHERE { VALUES ?x { 1 2 } }")
    browser.find_element(By.ID, "run").click()
    text = WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "results").text)
    assert text.splitlines()[0] == "x" and len(text.splitlines()) == 3, text
    box.clear()
    box.send_keys("SELECT nonsense")
    browser.find_element(By.ID, "run").click()
    WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "results").text.startswith("Error 400"))
