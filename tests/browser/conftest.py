"""The built book (_build/html) as readers meet it: served on 127.0.0.1, read by headless Chromium.

These tests need the book built first (`make book`) and, for test_pages.py, Debian's `chromium`
and `chromium-driver`. Without them they skip, saying why; under CI (CI=true) a missing book or
browser is a failure instead, so CI never passes by skipping. Run them with `make browser-test`.
"""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import socketserver
import tempfile
import threading
from pathlib import Path

import pytest

from builtbook import HTML, ROOT, SCREENSHOTS, require


# ---------------------------------------------------------------------------------------------
# The built site and a local server for it.

@pytest.fixture(scope="session")
def site() -> Path:
    """_build/html, after checking the book was built."""
    if not (HTML / "index.html").exists():
        require(f"no built book at {HTML.relative_to(ROOT)}: run `make book` first")
    return HTML


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves _build/html; remembers every request and its status instead of printing it."""

    requests: list[tuple[str, int]]

    def log_message(self, format, *args):  # noqa: A002 (the name http.server uses)
        pass

    def log_request(self, code="-", size="-"):
        self.server.requests.append((self.path, int(code) if str(code).isdigit() else 0))


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


@pytest.fixture(scope="session")
def server(site: Path):
    """http://127.0.0.1:<random free port> serving _build/html from a thread."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = _Server(("127.0.0.1", 0), handler)
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, name="book-server", daemon=True)
    thread.start()
    httpd.base_url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield httpd
    httpd.shutdown()
    httpd.server_close()


# ---------------------------------------------------------------------------------------------
# Headless Chromium, with the network cut off.

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--no-default-browser-check",
    "--window-size=1280,1000", "--hide-scrollbars", "--force-device-scale-factor=1",
    # No network but 127.0.0.1: every other request goes to a closed port (and resolves nowhere);
    # the tests also assert that no page even tried.
    "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def _find(env: str, *names: str) -> str | None:
    if os.environ.get(env):
        return os.environ[env]
    for name in names:
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="session")
def browser(server):
    """A selenium-driven headless Chromium with a fresh profile; logs browser and network events."""
    chromium = _find("CHROMIUM", "chromium", "chromium-browser", "google-chrome")
    driver_path = _find("CHROMEDRIVER", "chromedriver")
    if not chromium or not driver_path:
        require("Chromium not found: install Debian's `chromium` and `chromium-driver` "
                "(or set CHROMIUM and CHROMEDRIVER)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        require("selenium is not installed (it is pinned in requirements.txt)")
    profile = tempfile.mkdtemp(prefix="book-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    # An explicit driver path: selenium-manager (which would download one) never runs.
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": ERROR_RECORDER})
    driver.get("about:blank")
    driver.get_log("browser"), driver.get_log("performance")  # forget the start-up
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


#: Runs before any script of each page: keeps uncaught errors and unhandled promise rejections.
ERROR_RECORDER = """
window.__pageErrors = [];
window.addEventListener('error', function (e) {
  var where = e.filename ? ' (' + e.filename + ':' + e.lineno + ')' : '';
  if (e.message) window.__pageErrors.push(e.message + where);
}, true);
window.addEventListener('unhandledrejection', function (e) {
  var r = e.reason;
  window.__pageErrors.push('unhandled rejection: ' + (r && (r.stack || r.message) || String(r)));
});
"""

@pytest.fixture(autouse=True)
def desktop_after(request):
    """After each test that drove the browser: the desktop window it started with (1280 x 1000,
    no device emulation), whatever the test left. A test that reads a page as it opens (a
    page's report) must not inherit the phone an earlier test of its worker ended on."""
    yield
    if "browser" in request.fixturenames:
        browser = request.getfixturevalue("browser")
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.set_window_size(1280, 1000)


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


# ---------------------------------------------------------------------------------------------
# The order the files run in.

#: The files that take longest, slowest first (seconds on this project's 2-core machine, summed
#: over their tests: 185, 102, 100, 74, 70). `make browser-test` hands whole files to two workers
#: (--dist loadfile) and passes --no-loadscope-reorder, so that this order is the one they run
#: in: pytest-xdist's own puts the files with the most tests first, and the training widget's
#: file (14 tests, three minutes) then came ninth, and one worker ran it alone at the end.
SLOWEST_FIRST = ("test_training_widget.py", "test_live_widgets.py", "test_frames_widgets.py",
                 "test_reading.py", "test_training_widget_form.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of SLOWEST_FIRST first, in that order; then the others, as collected."""
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return SLOWEST_FIRST.index(name) if name in SLOWEST_FIRST else len(SLOWEST_FIRST)
    items.sort(key=rank)  # stable: a file's tests keep their order
