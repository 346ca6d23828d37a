"""The console's screenshot in the README (docs/console.png): the smart-grid example followed
live in headless Chromium, its events pushed over a few seconds so the chart has a shape.

    .venv/bin/python docs/console_screenshot.py [OUT.png]

starts ``spaseq serve --kb`` the example's KB and Debian's ``chromium`` (``make browser``);
tests/server/test_browser.py runs ``capture`` on its own server and browser and checks the
page it leaves."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
SG = ROOT / "fixtures" / "smartgrid"
SIZE = (1360, 1000)


def capture(driver: Any, url: str, out: Path, batches: list[tuple[str, bytes]], pace: float = 1.0,
            settle: float = 1.2) -> str:
    """Register the smart-grid query, follow it in the console at ``url``, push ``batches``
    (stream, TriG body) ``pace`` seconds apart, wait for its matches and the automaton, and save
    the screenshot to ``out`` ``settle`` seconds later (the chart then shows the burst). The
    query's id."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    registered = httpx.post(url + "/queries", content=(SG / "query.rq").read_bytes(),
                            headers={"Content-Type": "application/sparql-query"})
    registered.raise_for_status()
    qid = registered.json()["id"]
    driver.set_window_size(*SIZE)
    driver.get(url + "/")
    wait = WebDriverWait(driver, 20)
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f'#queries tr[data-query="{qid}"] button.follow')).click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#automaton svg g.state"))
    for stream, body in batches:
        httpx.post(url + "/events", params={"stream": stream}, content=body,
                   headers={"Content-Type": "application/trig"}).raise_for_status()
        time.sleep(pace)
    expected = httpx.get(f"{url}/queries/{qid}").json()["results"]
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#matches tr.match")) == expected)
    time.sleep(settle)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(out))
    return qid


def main(argv: list[str]) -> int:
    """Start a server and a browser, capture, stop both."""
    sys.path.insert(0, str(ROOT))
    from tests.server.conftest import SG_KB, smartgrid_batches, start_server
    from tests.server.test_browser import chromium

    out = Path(argv[0]) if argv else ROOT / "docs" / "console.png"
    server = start_server("--kb", SG_KB)
    driver = chromium()
    try:
        capture(driver, server.url, out, smartgrid_batches())
    finally:
        driver.quit()
        server.stop()
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
