#!/usr/bin/env python3
"""Renders gpusel HTML reports in headless Chromium and checks them.

    report_in_browser.py --out DIR [--gpusel BIN] [--sample BIN] JOB...

A JOB is `example:FILE` (`gpusel --force report FILE -o DIR/NAME.html`) or `sample:N`
(`gpusel_sample_report N DIR/sample-N.html`, a hand-built plan). For each report the test drives
Chromium over the DevTools protocol (--remote-debugging-pipe) and fails when:

  - the page logs a console error or warning, throws, or reports a Log.entryAdded error;
  - the page requests anything that is not the file itself (network, fonts, scripts);
  - the document has a <script>, the page is wider than the A4-sized window (1240 px), or a
    table, figure or paragraph sticks out of the text column;
  - a role with ranked candidates lacks any of its three charts (scatter, memory, cost; a fourth,
    the tornado, where the plan has a robustness analysis), or a chart is smaller
    than 300 × 150 px or its pixels are nearly uniform (chart areas need ink: at least 3 % of
    the pixels away from the background, a luminance standard deviation of at least 12 and
    at least 4 distinct colours);
  - in the print layout at A4 width (703 px) anything sticks out of the page, or printing to A4
    does not start every role on a new page (at least roles + 1 pages).

It writes DIR/NAME.png (the whole page), DIR/NAME-<chart id>.png (each chart), DIR/NAME-print.png
(the print layout at A4 width) and DIR/NAME.pdf (the A4 print) for people to look at. Exit 0 pass, 1 fail, 77 skip (no Chromium installed).
Only the Python standard library is used (PNG decoded with zlib).
"""

import argparse
import base64
import fcntl
import json
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SKIP = 77
WINDOW_WIDTH = 1240   # A4 at 150 dpi: 1240 × 1754
WINDOW_HEIGHT = 1754
PRINT_WIDTH = 703     # A4 (210 mm) less two 12 mm margins, at 96 px per inch
TIMEOUT_S = 60


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """Chromium over --remote-debugging-pipe: JSON messages separated by NUL on fds 3 and 4."""

    def __init__(self, executable, log_path):
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        # The child's ends move above 9, so that placing them on 3 and 4 cannot clobber each other.
        for name in ("to_browser_read", "from_browser_write"):
            low = locals()[name]
            high = fcntl.fcntl(low, fcntl.F_DUPFD, 10)
            os.close(low)
            if name == "to_browser_read":
                to_browser_read = high
            else:
                from_browser_write = high
        self.profile = tempfile.mkdtemp(prefix="gpusel-chromium-")
        self.log = open(log_path, "wb")

        args = [executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--disable-default-apps", "--hide-scrollbars", "--mute-audio",
                "--user-data-dir=" + self.profile, "--remote-debugging-pipe",
                "--window-size={},{}".format(WINDOW_WIDTH, WINDOW_HEIGHT), "about:blank"]
        # Chromium reads commands from fd 3 and answers on fd 4; a shell puts the pipes there.
        wiring = 'exec "$0" "$@" 3<&{0} 4>&{1} {0}<&- {1}>&-'.format(to_browser_read, from_browser_write)
        self.process = subprocess.Popen(["bash", "-c", wiring] + args, stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=self.log, pass_fds=(to_browser_read, from_browser_write))
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no answer from Chromium within {} s".format(TIMEOUT_S))
            ready, _, _ = select.select([self.from_browser], [], [], remaining)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe (exit {})".format(self.process.poll()))
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None):
        self.next_id += 1
        request = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            request["sessionId"] = session
        os.write(self.to_browser, json.dumps(request).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            message = self._read_message(deadline)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError("{}: {}".format(method, message["error"]))
                return message.get("result", {})
            self.events.append(message)

    def wait_for_event(self, method, session):
        deadline = time.monotonic() + TIMEOUT_S
        for event in self.events:
            if event.get("method") == method and event.get("sessionId") == session:
                return event
        while True:
            message = self._read_message(deadline)
            self.events.append(message)
            if message.get("method") == method and message.get("sessionId") == session:
                return message


# ---- PNG (8-bit RGB/RGBA, non-interlaced, as Chromium writes it) ------------------------

def decode_png(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    position = 8
    idat = b""
    width = height = channels = None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace != 0 or colour not in (2, 6):
                raise ValueError("unsupported PNG: depth {} colour {} interlace {}".format(depth, colour, interlace))
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * channels
    rows = []
    previous = bytearray(stride)
    offset = 0
    for _ in range(height):
        kind = raw[offset]
        line = bytearray(raw[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + predictor) & 0xFF
        elif kind != 0:
            raise ValueError("bad PNG filter {}".format(kind))
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def pixel_statistics(png):
    """Share of pixels away from white, luminance standard deviation (0-255), distinct colours."""
    width, height, channels, rows = decode_png(png)
    count = 0
    inked = 0
    total = 0.0
    total_squared = 0.0
    colours = set()
    for row in rows:
        for i in range(0, width * channels, channels):
            r, g, b = row[i], row[i + 1], row[i + 2]
            luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
            count += 1
            total += luminance
            total_squared += luminance * luminance
            if luminance < 235:
                inked += 1
            if len(colours) < 64:
                colours.add((r >> 4, g >> 4, b >> 4))
    mean = total / count
    variance = max(0.0, total_squared / count - mean * mean)
    return inked / count, variance ** 0.5, len(colours)


# ---- the checks -------------------------------------------------------------------------

PAGE_FACTS = r"""
JSON.stringify({
  scripts: document.querySelectorAll('script').length,
  externals: [...document.querySelectorAll('[src], link[href], image, use')]
      .map(e => e.getAttribute('src') || e.getAttribute('href') || '')
      .filter(u => u && !u.startsWith('#') && !u.startsWith('data:')),
  scrollWidth: document.documentElement.scrollWidth,
  overflowing: (() => {
      const style = getComputedStyle(document.body);
      const right = document.body.getBoundingClientRect().right - parseFloat(style.paddingRight) + 1;
      return [...document.querySelectorAll('table, figure, svg, p, h1, h2, h3')]
          .filter(e => e.getBoundingClientRect().right > right)
          .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' +
                    Math.round(e.getBoundingClientRect().right - right) + ' px');
  })(),
  scrollHeight: document.documentElement.scrollHeight,
  roles: [...document.querySelectorAll('section.role')].map(section => ({
      id: section.id,
      ranked: section.querySelectorAll('table').length > 1,
      charts: [...section.querySelectorAll('svg.chart')].map(svg => {
          const r = svg.getBoundingClientRect();
          return {id: svg.id, x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width,
                  height: r.height, elements: svg.querySelectorAll('*').length,
                  text: svg.querySelectorAll('text').length};
      })
  }))
})
"""


def check_report(browser, html_path, out_dir, name, failures):
    def fail(message):
        failures.append("{}: {}".format(name, message))

    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(domain + ".enable", session=session)
    browser.send("Emulation.setDeviceMetricsOverride",
                 {"width": WINDOW_WIDTH, "height": WINDOW_HEIGHT, "deviceScaleFactor": 1, "mobile": False},
                 session=session)
    url = "file://" + os.path.abspath(html_path)
    browser.send("Page.navigate", {"url": url}, session=session)
    browser.wait_for_event("Page.loadEventFired", session)

    facts = json.loads(browser.send("Runtime.evaluate", {"expression": PAGE_FACTS, "returnByValue": True},
                                    session=session)["result"]["value"])
    if facts["scripts"]:
        fail("the document has {} <script> element(s)".format(facts["scripts"]))
    if facts["externals"]:
        fail("external references: {}".format(facts["externals"]))
    if facts["scrollWidth"] > WINDOW_WIDTH:
        fail("page is {} px wide, wider than the {} px window".format(facts["scrollWidth"], WINDOW_WIDTH))
    if facts["overflowing"]:
        fail("wider than the text column: {}".format(", ".join(facts["overflowing"])))
    if not facts["roles"]:
        fail("no role sections")
    chart_count = 0
    for role in facts["roles"]:
        kinds = sorted(chart["id"].rsplit("-", 1)[-1] for chart in role["charts"])
        if role["ranked"] and kinds not in (["cost", "memory", "scatter"], ["cost", "memory", "scatter", "tornado"]):
            fail("{} has charts {}, expected scatter, memory, cost and, with a robustness analysis, tornado".format(
                role["id"], kinds))
        for chart in role["charts"]:
            chart_count += 1
            label = "{} chart {}".format(role["id"], chart["id"])
            if chart["width"] < 300 or chart["height"] < 150:
                fail("{} is {:.0f} × {:.0f} px".format(label, chart["width"], chart["height"]))
                continue
            if chart["elements"] < 20 or chart["text"] < 5:
                fail("{} has only {} elements, {} texts".format(label, chart["elements"], chart["text"]))
            shot = browser.send("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": chart["x"], "y": chart["y"], "width": chart["width"], "height": chart["height"],
                         "scale": 1}}, session=session)
            png = base64.b64decode(shot["data"])
            with open(os.path.join(out_dir, "{}-{}.png".format(name, chart["id"])), "wb") as file:
                file.write(png)
            inked, deviation, colours = pixel_statistics(png)
            print("  {:<22} {:4.0f} × {:3.0f} px  ink {:5.1%}  luminance sd {:5.1f}  colours {}".format(
                chart["id"], chart["width"], chart["height"], inked, deviation, colours))
            if inked < 0.03 or deviation < 12 or colours < 4:
                fail("{} looks empty: ink {:.1%}, luminance sd {:.1f}, {} colours".format(
                    label, inked, deviation, colours))

    page = browser.send("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": WINDOW_WIDTH, "height": facts["scrollHeight"], "scale": 1}},
        session=session)
    with open(os.path.join(out_dir, name + ".png"), "wb") as file:
        file.write(base64.b64decode(page["data"]))

    # Print layout at the width of A4 less 12 mm margins (186 mm = 703 px): nothing may stick out.
    browser.send("Emulation.setEmulatedMedia", {"media": "print"}, session=session)
    browser.send("Emulation.setDeviceMetricsOverride",
                 {"width": PRINT_WIDTH, "height": WINDOW_HEIGHT, "deviceScaleFactor": 1, "mobile": False},
                 session=session)
    printed = json.loads(browser.send("Runtime.evaluate", {"expression": PAGE_FACTS, "returnByValue": True},
                                      session=session)["result"]["value"])
    if printed["overflowing"] or printed["scrollWidth"] > PRINT_WIDTH:
        fail("printed on A4, wider than the page ({} px): {}".format(PRINT_WIDTH, ", ".join(printed["overflowing"])))
    page = browser.send("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": PRINT_WIDTH, "height": printed["scrollHeight"], "scale": 1}},
        session=session)
    with open(os.path.join(out_dir, name + "-print.png"), "wb") as file:
        file.write(base64.b64decode(page["data"]))
    browser.send("Emulation.setEmulatedMedia", {"media": ""}, session=session)

    pdf = base64.b64decode(browser.send("Page.printToPDF", {
        "paperWidth": 8.27, "paperHeight": 11.69, "preferCSSPageSize": True, "printBackground": True},
        session=session)["data"])
    with open(os.path.join(out_dir, name + ".pdf"), "wb") as file:
        file.write(pdf)
    pages = len(re.findall(rb"/Type\s*/Page(?![s\w])", pdf))
    print("  {} roles, {} charts, {} px tall, {} A4 pages when printed".format(
        len(facts["roles"]), chart_count, facts["scrollHeight"], pages))
    if pages < len(facts["roles"]) + 1:
        fail("printed on {} A4 pages; every role should start a new page ({} roles)".format(
            pages, len(facts["roles"])))

    for event in browser.events:
        if event.get("sessionId") != session:
            continue
        method = event.get("method")
        params = event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
            fail("console {}: {}".format(params["type"], [a.get("value") for a in params.get("args", [])]))
        elif method == "Runtime.exceptionThrown":
            fail("exception: {}".format(params.get("exceptionDetails", {}).get("text")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            entry = params["entry"]
            fail("log {} ({}): {}".format(entry.get("level"), entry.get("source"), entry.get("text")))
        elif method == "Network.requestWillBeSent":
            requested = params.get("request", {}).get("url", "")
            if requested != url and not requested.startswith("data:"):
                fail("requested {}".format(requested))
        elif method == "Network.loadingFailed":
            fail("loading failed: {}".format(params.get("errorText")))
    browser.events = [event for event in browser.events if event.get("sessionId") != session]
    browser.send("Target.closeTarget", {"targetId": target})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder for the reports, screenshots and PDFs")
    parser.add_argument("--gpusel", help="the gpusel binary (for example: jobs)")
    parser.add_argument("--sample", help="the gpusel_sample_report binary (for sample: jobs)")
    parser.add_argument("jobs", nargs="+", help="example:FILE or sample:N")
    options = parser.parse_args()

    chromium = find_chromium()
    if chromium is None:
        print("SKIP: Chromium not found (chromium, chromium-browser, google-chrome); "
              "install the Debian package `chromium` (scripts/bootstrap.sh does)")
        return SKIP

    os.makedirs(options.out, exist_ok=True)
    reports = []
    for job in options.jobs:
        kind, _, value = job.partition(":")
        if kind == "example":
            name = os.path.splitext(os.path.basename(value))[0]
            html_path = os.path.join(options.out, name + ".html")
            command = [options.gpusel, "--force", "report", value, "-o", html_path]
        elif kind == "sample":
            name = "sample-" + value
            html_path = os.path.join(options.out, name + ".html")
            command = [options.sample, value, html_path]
        else:
            print("unknown job {!r}".format(job))
            return 2
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            print("FAIL: {} exited {}\n{}{}".format(" ".join(command), result.returncode, result.stdout,
                                                    result.stderr))
            return 1
        reports.append((name, html_path))

    failures = []
    browser = Browser(chromium, os.path.join(options.out, "chromium.log"))
    try:
        for name, html_path in reports:
            print("{} ({})".format(name, html_path))
            check_report(browser, html_path, options.out, name, failures)
    finally:
        browser.close()
    for failure in failures:
        print("FAIL: " + failure)
    if not failures:
        print("PASS: {} report(s) rendered by {} without errors; screenshots in {}".format(
            len(reports), chromium, options.out))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
