"""Open a rendered host page in headless Chromium over the DevTools protocol: no console errors, no
network requests, and the latency chart is drawn with its marks."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import websocket


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed (apt-get install chromium)"),
]

CHART_PROBE = """(() => {
  const svg = document.querySelector('#latency-chart svg');
  if (!svg) return null;
  return {
    lines: svg.querySelectorAll('.mark-line.role-mark path').length,
    symbols: svg.querySelectorAll('.mark-symbol.role-mark path').length,
    rules: svg.querySelectorAll('.mark-rule.role-mark line').length,
    labels: Array.from(svg.querySelectorAll('.mark-text.role-mark text')).map(t => t.textContent),
    axisLabels: Array.from(svg.querySelectorAll('.role-axis-label text')).map(t => t.textContent),
  };
})()"""


class DevTools:
    """The few DevTools protocol calls the test needs, over one page's websocket."""

    def __init__(self, websocket_url: str):
        self.connection = websocket.create_connection(websocket_url, timeout=30, suppress_origin=True)
        self.ids = itertools.count(1)
        self.events: list[dict] = []

    def call(self, method: str, **params) -> dict:
        call_id = next(self.ids)
        self.connection.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.connection.recv())
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for_event(self, method: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        if any(event.get("method") == method for event in self.events):
            return
        while time.monotonic() < deadline:
            message = json.loads(self.connection.recv())
            self.events.append(message)
            if message.get("method") == method:
                return
        raise TimeoutError(f"no {method} within {timeout_s} s")

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def chromium(tmp_path):
    """A headless Chromium with remote debugging on a free port; yields the port."""
    profile = tmp_path / "chromium-profile"
    stderr_path = tmp_path / "chromium.stderr"
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
             f"--user-data-dir={profile}", "--no-first-run", "--window-size=1280,1600", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=stderr,
        )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chromium did not start: {stderr_path.read_text()[-2000:]}")
            time.sleep(0.1)
        yield int(port_file.read_text().split()[0])
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _page_websocket_url(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
        targets = json.load(response)
    return next(target["webSocketDebuggerUrl"] for target in targets if target["type"] == "page")


def test_the_host_page_renders_its_chart_without_errors(bundles, cli, chromium, tmp_path):
    bundles.write()
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0

    devtools = DevTools(_page_websocket_url(chromium))
    try:
        for domain in ("Runtime", "Log", "Page", "Network"):
            devtools.call(f"{domain}.enable")
        devtools.call("Page.navigate", url=(out / "node1.html").as_uri())
        devtools.wait_for_event("Page.loadEventFired", timeout_s=60)
        chart = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # vega-embed renders asynchronously after load
            chart = devtools.evaluate(CHART_PROBE)
            if chart and chart["lines"]:
                break
            time.sleep(0.2)
        time.sleep(0.5)  # let late console messages arrive
        devtools.evaluate("1")
    finally:
        devtools.close()

    errors = [
        event["params"] for event in devtools.events
        if event.get("method") == "Runtime.exceptionThrown"
        or (event.get("method") == "Runtime.consoleAPICalled" and event["params"]["type"] in ("error", "assert"))
        or (event.get("method") == "Log.entryAdded" and event["params"]["entry"]["level"] == "error")
    ]
    assert errors == []
    requested = [
        event["params"]["request"]["url"] for event in devtools.events
        if event.get("method") == "Network.requestWillBeSent"
    ]
    assert [url for url in requested if not url.startswith(("file:", "data:", "blob:"))] == []

    assert chart is not None, "no <svg> inside #latency-chart"
    page_policies = {point["params"]["page_policy"] for point in bundles.latency_points()}
    assert chart["lines"] >= 2 * len(page_policies)  # median and minimum per page policy
    assert chart["symbols"] >= len(bundles.latency_points())
    assert chart["rules"] == 3 and chart["labels"] == ["L1d", "L2", "L3"]
    assert {"4 KiB", "1 MiB", "256 MiB"} <= set(chart["axisLabels"])
