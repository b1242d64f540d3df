"""The guide: it builds with zero Sphinx warnings, and renders in a real browser.

The site is built once per session into docs/_build/html with a fresh environment (-E -a), so
warnings of unchanged pages are reported too. The browser test opens it in headless Chromium
(Debian's package, driven by Playwright without downloading a browser), checks that a chapter
shows its included code and that switching a C++/Python tab works, and saves screenshots to
docs/_build/screenshots/.
"""

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading

import pytest
from playwright.sync_api import sync_playwright

from conftest import ROOT

SITE = ROOT / "docs" / "_build" / "html"
SHOTS = ROOT / "docs" / "_build" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="session")
def site():
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-a", "-q", "-b", "html",
         str(ROOT / "docs"), str(SITE)],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"sphinx-build failed or warned:\n{result.stderr}"
    return SITE


def test_site_builds_without_warnings(site):
    chapters = sorted(page.stem for page in (ROOT / "docs").glob("*.md"))
    assert len(chapters) > 25 and "opinfo-report" in {p.stem for p in site.glob("*.html")}
    for chapter in chapters:
        assert (site / f"{chapter}.html").exists(), chapter


def test_listings_are_real_code(site):
    page = (site / "device.html").read_text()
    assert "OpenRegGuardImpl" in page and "LITERALINCLUDE" not in page
    tools = (site / "tools.html").read_text()
    assert "openreg kernel" in tools and "CPU fallback" in tools  # the captured output


@pytest.fixture(scope="session")
def server(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        # The browser is not under test: under scripts/sanitize.sh it must not inherit the
        # sanitizer runtimes preloaded for Python (Chromium spins with them).
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, env=env,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
                  "--disable-background-networking", "--disable-component-update"])
        yield browser
        browser.close()


def test_chapter_renders_code_and_tabs_switch(server, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/device.html")
    assert "device guard" in page.title()

    cpp_tab = page.locator("button.sphinx-tabs-tab", has_text="C++").first
    python_tab = page.locator("button.sphinx-tabs-tab", has_text="Python").first
    cpp_panel = page.locator(f"#{cpp_tab.get_attribute('aria-controls')}")
    python_panel = page.locator(f"#{python_tab.get_attribute('aria-controls')}")

    assert cpp_panel.is_visible() and not python_panel.is_visible()
    assert "check_device_index" in cpp_panel.inner_text()
    cpp_tab.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "device-cpp-tab.png"))

    python_tab.click()
    python_panel.wait_for(state="visible")
    assert not cpp_panel.is_visible()
    assert "def set_device" in python_panel.inner_text()
    assert python_tab.get_attribute("aria-selected") == "true"
    page.screenshot(path=str(SHOTS / "device-python-tab.png"))
    page.close()


def test_search_page_and_diagram(server, browser):
    page = browser.new_page()
    page.goto(f"{server}/overview.html")
    assert page.locator("img[src$='.svg'], object[data$='.svg'], svg").count() > 0
    assert page.locator("form[action*='search'] input").count() > 0
    page.goto(f"{server}/search.html?q=allocator")
    page.wait_for_selector("ul.search li", timeout=15000)
    assert page.locator("ul.search li").count() > 0
    page.close()
