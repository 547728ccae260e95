"""Open report pages in a real headless Chromium over the DevTools protocol and tell what a person would
see: every console message (errors, warnings, Vega's own warnings, uncaught exceptions), the marks each
chart container drew, network requests, element boxes and screenshots."""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import websocket

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0"]

# Per chart container: how many marks its SVG drew (paths, lines, rects, symbols, text inside Vega's mark
# groups) and whether any attribute of the drawing says NaN.
CHARTS_PROBE = """(() => Array.from(document.querySelectorAll('div.chart')).map(container => {
  const svg = container.querySelector('svg');
  const marks = svg ? Array.from(svg.querySelectorAll('.role-mark > *')) : [];
  return {
    id: container.id,
    svg: !!svg,
    marks: marks.length,
    markKinds: Array.from(new Set(marks.map(mark => mark.parentNode.getAttribute('class').split(' ')[0]))),
    nan: svg ? /NaN/.test(svg.outerHTML) : false,
    text: container.textContent.slice(0, 300),
  };
}))()"""


# Per chart container: pairs of text labels that overprint or touch each other (boxes less than 3 px apart side by
# side while overlapping by more than a pixel up and down): axis labels within one axis, and the chart's own text
# marks (rule labels, knee labels) among themselves. Labels Vega hid (opacity 0) do not count.
OVERLAP_PROBE = """(() => {
  const visible = t => getComputedStyle(t).opacity !== '0' && t.getAttribute('opacity') !== '0' && t.textContent.trim();
  const overlapping = (texts) => {
    const boxes = texts.filter(visible).map(t => ({text: t.textContent, box: t.getBoundingClientRect()}));
    const pairs = [];
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i].box, b = boxes[j].box;
      if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > -3 &&
          Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1) pairs.push([boxes[i].text, boxes[j].text]);
    }
    return pairs;
  };
  return Array.from(document.querySelectorAll('div.chart')).map(container => {
    const axes = Array.from(container.querySelectorAll('.role-axis'))
      .map(axis => overlapping(Array.from(axis.querySelectorAll('.role-axis-label text'))));
    const marks = overlapping(Array.from(container.querySelectorAll('.mark-text.role-mark text')));
    return {id: container.id, pairs: [].concat(...axes, marks)};
  }).filter(chart => chart.pairs.length);
})()"""


class DevTools:
    """The DevTools protocol calls the tests need, over one page's websocket; every event is kept."""

    def __init__(self, websocket_url: str):
        self.connection = websocket.create_connection(websocket_url, timeout=60, suppress_origin=True)
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
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluating {expression[:80]!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        self.connection.close()


@dataclass
class Loaded:
    """A page after load and after its charts settled."""
    url: str
    console: list[dict]      # every console message, log entry and uncaught exception
    requests: list[str]      # every URL the page asked for
    charts: list[dict]       # CHARTS_PROBE's answer
    charts_state: str | None  # 'drawn' or 'failed' (the page's own report), None for a page without charts


def console_messages(events: list[dict]) -> list[dict]:
    """Every message a person would see in the browser's console: console.* calls of any level (Vega warns
    through console.warn), browser log entries and uncaught exceptions."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled":
            found.append({"type": params["type"], "text": " ".join(str(arg.get("value", arg.get("description", "")))
                                                                   for arg in params.get("args", []))})
        elif method == "Runtime.exceptionThrown":
            found.append({"type": "exception", "text": json.dumps(params["exceptionDetails"])[:1000]})
        elif method == "Log.entryAdded":
            found.append({"type": f"log-{params['entry']['level']}", "text": params["entry"].get("text", "")})
    return found


class Browser:
    """One headless Chromium with a fresh profile, and one page (tab) in it that the tests navigate."""

    def __init__(self, profile: Path, width: int = 1400, height: int = 900):
        self.devtools = None
        profile.mkdir(parents=True, exist_ok=True)
        port_file = profile / "DevToolsActivePort"
        port_file.unlink(missing_ok=True)  # a reused profile keeps the last browser's port
        self.stderr_path = profile.parent / f"{profile.name}.stderr"
        with self.stderr_path.open("w") as stderr:
            self.process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}",
                                             f"--window-size={width},{height}", "about:blank"],
                                            stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            self._connect(port_file, width, height)
        except BaseException:
            self.close()
            raise

    def _connect(self, port_file: Path, width: int, height: int) -> None:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chromium did not start: {self.stderr_path.read_text()[-2000:]}")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            targets = json.load(response)
        self.devtools = DevTools(next(target["webSocketDebuggerUrl"] for target in targets if target["type"] == "page"))
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.devtools.call(f"{domain}.enable")
        self.size = (width, height)
        self.resize(width, height)

    def resize(self, width: int, height: int) -> None:
        """The page's viewport, width x height CSS pixels (the layout reflows at once)."""
        self.devtools.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                           mobile=False)

    def open(self, page: Path, timeout_s: float = 60) -> Loaded:
        """Navigate to a file, wait for its load and for its charts to be drawn (or to fail)."""
        self.devtools.events.clear()
        self.devtools.call("Page.navigate", url=page.as_uri())
        self.devtools.wait_for_event("Page.loadEventFired", timeout_s=timeout_s)
        deadline = time.monotonic() + timeout_s
        state = None
        while time.monotonic() < deadline:  # vega-embed draws asynchronously after load
            state = self.devtools.evaluate("document.documentElement.dataset.charts || null")
            if state or not self.devtools.evaluate("document.querySelector('div.chart') !== null"):
                break
            time.sleep(0.1)
        time.sleep(0.3)  # let late console messages arrive
        charts = self.devtools.evaluate(CHARTS_PROBE)
        requests = [event["params"]["request"]["url"] for event in self.devtools.events
                    if event.get("method") == "Network.requestWillBeSent"]
        return Loaded(page.as_uri(), console_messages(self.devtools.events), requests, charts, state)

    def evaluate(self, expression: str):
        return self.devtools.evaluate(expression)

    def overprinted_labels(self) -> list[dict]:
        """The charts of the open page with labels that overprint each other: [{id, pairs of label texts}]."""
        return self.evaluate(OVERLAP_PROBE)

    def box(self, selector: str) -> dict | None:
        """The element's box in the viewport (top, bottom, left, right in CSS pixels), scrolled to the top."""
        return self.evaluate(f"""(() => {{ window.scrollTo(0, 0);
          const element = document.querySelector({json.dumps(selector)}); if (!element) return null;
          const box = element.getBoundingClientRect();
          return {{top: box.top, bottom: box.bottom, left: box.left, right: box.right}}; }})()""")

    def screenshot(self, path: Path) -> Path:
        """A PNG of the first screen (the viewport, scrolled to the top)."""
        self.evaluate("window.scrollTo(0, 0)")
        path.write_bytes(base64.b64decode(self.devtools.call("Page.captureScreenshot", format="png")["data"]))
        return path

    def close(self) -> None:
        if self.devtools is not None:
            self.devtools.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
