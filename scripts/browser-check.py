#!/usr/bin/env python3
"""Open fedtopo's report.html pages in a real browser (headless Chromium)
and check what a reader gets.

Usage: scripts/browser-check.py [--chromium PATH] [--screenshot-dir DIR]
                                [--self-test] [--no-map PAGE.html] PAGE.html...

For every page:

1. it loads without console errors, uncaught exceptions or error log
   entries, and requests nothing but itself (no network, no other file:
   the page is self-contained);
2. a full-page screenshot shows the first map: at the pixel where each
   silo marker should be, computed from the SVG coordinates in the page
   file (`<circle class="silo" cx cy>`, read here, not by the browser) and
   the map element's box in the laid-out page, the screenshot has the
   marker colour; at points spread over the map away from every marker it
   mostly has not (so a blank or misplaced map fails).

The browser is driven over the Chrome DevTools Protocol on a pipe
(`--remote-debugging-pipe`: file descriptors 3 and 4, messages separated by
NUL bytes), so nothing beyond Debian's `chromium` package and the Python
standard library is needed. `--self-test` first opens a page that logs an
error, throws and fetches from the network, and fails unless all three are
caught: the checks above cannot pass vacuously.

Exit status 0 when every page passes; the screenshots (the whole page,
and the map's box that was checked, `*-map.png`) are written to
--screenshot-dir (default: next to each page, as report.png).
"""

import argparse
import base64
import html.parser
import json
import os
import select
import struct
import subprocess
import sys
import tempfile
import time
import zlib

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]
WIDTH = 1280
MARKER = (0x1F, 0x3B, 0x73)  # silo marker fill (src/report/map.rs)
TIMEOUT_S = 60


class Browser:
    """A headless Chromium driven over the DevTools pipe."""

    def __init__(self, chromium):
        self.profile = tempfile.mkdtemp(prefix="fedtopo-chromium-")
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()

        def wire():
            # In the child: the command pipe on fd 3, the answer pipe on
            # fd 4 (copied out of the way first, in case either is 3 or 4).
            a, b = os.dup(cmd_r), os.dup(res_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            # The pipes' other ends are close-on-exec; fds 3 and 4 (made by
            # dup2) are inherited.
            close_fds=False,
            preexec_fn=wire,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(cmd_r)
        os.close(res_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        return self.wait(lambda m: m.get("id") == self.next_id)

    def wait(self, pred, timeout=TIMEOUT_S):
        """Reads messages until one satisfies `pred` (events are kept)."""
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                m = json.loads(raw)
                if "method" in m:
                    self.events.append(m)
                if pred(m):
                    if "error" in m:
                        raise RuntimeError(f"DevTools error: {m['error']}")
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from the browser")
            ready, _, _ = select.select([self.res_r], [], [], left)
            if ready:
                chunk = os.read(self.res_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("the browser closed the pipe")
                self.buf += chunk

    def close(self):
        try:
            os.write(self.cmd_w, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        subprocess.run(["rm", "-rf", self.profile], check=False)


def open_page(browser, url, height=900):
    """Loads `url` in a new tab; returns (session, problems)."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["result"]["targetId"]
    session = browser.send(
        "Target.attachToTarget", {"targetId": target, "flatten": True}
    )["result"]["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable", session=session)
    browser.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": False},
        session=session,
    )
    browser.events.clear()
    browser.send("Page.navigate", {"url": url}, session=session)
    browser.wait(lambda m: m.get("method") == "Page.loadEventFired" and m.get("sessionId") == session)
    # Let late console messages and requests arrive.
    browser.send("Runtime.evaluate", {"expression": "1"}, session=session)
    time.sleep(0.3)
    browser.send("Runtime.evaluate", {"expression": "1"}, session=session)
    problems = []
    for e in browser.events:
        if e.get("sessionId") != session:
            continue
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            problems.append(f"console {p['type']}: {args}")
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            problems.append(f"uncaught exception: {d.get('exception', {}).get('description', d.get('text'))}")
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            problems.append(f"log error: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        elif m == "Network.requestWillBeSent":
            u = p.get("request", {}).get("url", "")
            if u != url and not u.startswith("data:"):
                problems.append(f"request: {u}")
    return session, problems


def evaluate(browser, session, js):
    r = browser.send("Runtime.evaluate", {"expression": js, "returnByValue": True}, session=session)
    return r["result"]["result"].get("value")


def decode_png(data):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB/RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, [[tuple(r[x * bpp : x * bpp + 3]) for x in range(w)] for r in rows]


class FirstMap(html.parser.HTMLParser):
    """The silo markers of the first `<svg class="fedtopo-map">` of a page
    and its viewBox, read from the file."""

    def __init__(self):
        super().__init__()
        self.depth = 0  # inside the first map when > 0
        self.done = False
        self.view_box = None
        self.silos = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.done:
            return
        if tag == "svg":
            if self.depth == 0 and "fedtopo-map" in (a.get("class") or "").split():
                self.view_box = [float(v) for v in a["viewbox"].split()]
                self.depth = 1
            elif self.depth:
                self.depth += 1
        elif self.depth and tag == "circle" and "silo" in (a.get("class") or "").split():
            self.silos.append((a["data-silo"], float(a["cx"]), float(a["cy"]), float(a["r"])))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "svg" and self.depth:
            self.depth -= 1
            if self.depth == 0:
                self.done = True


def near(color, want, tol=40):
    return all(abs(c - w) <= tol for c, w in zip(color, want))


def save_page(browser, session, shot_path):
    """A screenshot of the whole page, for a reader (not decoded here)."""
    page_h = evaluate(browser, session, "document.documentElement.scrollHeight")
    full = browser.send(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": WIDTH, "height": page_h, "scale": 1},
        },
        session=session,
    )
    with open(shot_path, "wb") as f:
        f.write(base64.b64decode(full["result"]["data"]))


def check_map(browser, session, page_path, shot_path):
    """Problems with the first map of the page; writes the screenshot."""
    parser = FirstMap()
    with open(page_path, encoding="utf-8") as f:
        parser.feed(f.read())
    if not parser.silos:
        return ["no map with silo markers in the page"], None
    box = evaluate(
        browser,
        session,
        """(() => { const s = document.querySelector('svg.fedtopo-map');
              const r = s.getBoundingClientRect();
              return {x: r.left + window.scrollX, y: r.top + window.scrollY,
                      w: r.width, h: r.height,
                      page: document.documentElement.scrollHeight}; })()""",
    )
    save_page(browser, session, shot_path)
    # The map's box, decoded and checked.
    clip = {"x": box["x"], "y": box["y"], "width": box["w"], "height": box["h"], "scale": 1}
    shot = browser.send(
        "Page.captureScreenshot",
        {"format": "png", "captureBeyondViewport": True, "clip": clip},
        session=session,
    )
    png = base64.b64decode(shot["result"]["data"])
    with open(shot_path[: -len(".png")] + "-map.png", "wb") as f:
        f.write(png)
    w, h, px = decode_png(png)
    vb_w, vb_h = parser.view_box[2], parser.view_box[3]
    sx, sy = box["w"] / vb_w, box["h"] / vb_h

    def pixel_of(cx, cy):
        # In the map's screenshot, whose origin is the map's top left.
        return cx * sx, cy * sy

    def marker_at(x, y, reach=2):
        xi, yi = int(round(x)), int(round(y))
        for dy in range(-reach, reach + 1):
            for dx in range(-reach, reach + 1):
                if 0 <= xi + dx < w and 0 <= yi + dy < h and near(px[yi + dy][xi + dx], MARKER):
                    return True
        return False

    problems = []
    missing = [s[0] for s in parser.silos if not marker_at(*pixel_of(s[1], s[2]))]
    if missing:
        problems.append(f"{len(missing)} of {len(parser.silos)} silo markers not in the screenshot: {missing[:5]}")
    # Control: a grid of points over the map, each more than 12 px (in
    # SVG units) from every marker, should not look like markers.
    grid, hits = [], 0
    for gy in range(20):
        for gx in range(30):
            cx = vb_w * (gx + 0.5) / 30
            cy = vb_h * (gy + 0.5) / 20
            if all((cx - s[1]) ** 2 + (cy - s[2]) ** 2 > 144 for s in parser.silos):
                grid.append((cx, cy))
    for cx, cy in grid:
        if marker_at(*pixel_of(cx, cy), reach=0):
            hits += 1
    if grid and hits > 0.05 * len(grid):
        problems.append(f"{hits} of {len(grid)} points away from the markers have the marker colour")
    info = (
        f"{len(parser.silos)} silo markers found at their computed pixels; "
        f"{hits} of {len(grid)} control points away from them look like one; "
        f"map at ({box['x']:.0f}, {box['y']:.0f}) {box['w']:.0f} x {box['h']:.0f} px"
    )
    return problems, info


SELF_TEST_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>bad</title></head>
<body><p>deliberately broken</p>
<script>console.error("self-test console error"); notDefinedAnywhere();</script>
<img src="http://fedtopo-self-test.invalid/pixel.png"></body></html>
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="+")
    ap.add_argument("--chromium", default="chromium")
    ap.add_argument("--screenshot-dir")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument(
        "--no-map",
        action="append",
        default=[],
        metavar="PAGE",
        help="a page without a map (checked for errors and requests only)",
    )
    a = ap.parse_args()
    browser = Browser(a.chromium)
    failed = False
    try:
        if a.self_test:
            with tempfile.TemporaryDirectory() as d:
                bad = os.path.join(d, "bad.html")
                with open(bad, "w") as f:
                    f.write(SELF_TEST_PAGE)
                _, problems = open_page(browser, "file://" + bad)
            kinds = {p.split(":")[0] for p in problems}
            want = {"console error", "uncaught exception", "request"}
            if not want <= kinds:
                print(f"FAIL self-test: the broken page gave {problems}, missing {want - kinds}")
                failed = True
            else:
                print(f"ok   self-test: a broken page is caught ({len(problems)} problems)")
        for i, page in enumerate(a.pages + a.no_map):
            path = os.path.abspath(page)
            url = "file://" + path
            session, problems = open_page(browser, url)
            shot_dir = a.screenshot_dir or os.path.dirname(path)
            os.makedirs(shot_dir, exist_ok=True)
            stem = os.path.basename(os.path.dirname(path)) or f"page{i}"
            shot = os.path.join(shot_dir, f"{stem}.png" if a.screenshot_dir else "report.png")
            if page in a.no_map:
                save_page(browser, session, shot)
                map_problems, info = [], "no map expected"
            else:
                map_problems, info = check_map(browser, session, path, shot)
            problems += map_problems
            if problems:
                failed = True
                print(f"FAIL {page}")
                for p in problems:
                    print(f"     {p}")
            else:
                print(f"ok   {page}: no console error, no request; {info}; screenshot {shot}")
    finally:
        browser.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
