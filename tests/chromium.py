"""A tiny headless-Chromium driver for the page tests and the page benchmark: the DevTools protocol
over ``--remote-debugging-pipe`` (JSON messages ending in a NUL byte on file descriptors 3 and 4),
the standard library only (no selenium, no websocket package, no browser download).

    with Chromium() as browser:
        page = browser.open("file:///tmp/view.html#s=3")
        page.evaluate("document.title")
        page.key("j"); page.screenshot("shot.png")
        assert not page.errors()
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars"]
"""The flags of every start; without the background-networking ones its connections are refused on a closed network."""


class BrowserError(RuntimeError):
    """The browser died, timed out, or answered a command with an error."""


class Chromium:
    """One headless Chromium process, started with a fresh ``--user-data-dir``; a context manager."""

    def __init__(self, binary: str = CHROMIUM, width: int = 1200, height: int = 800, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.events: list[dict] = []
        self._buf = b""
        self._id = 0
        self._profile = tempfile.mkdtemp(prefix="chromium-profile-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def child_fds() -> None:  # the browser reads commands on fd 3 and writes answers on fd 4
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self._profile}", f"--window-size={width},{height}",
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, preexec_fn=child_fds,
            close_fds=False)  # keeps fds 3 and 4; Python's own fds are never inherited (PEP 446)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.version = self.call("Browser.getVersion")["product"]

    # -- the protocol -----------------------------------------------------------------------------

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode("utf-8") + b"\0"
        try:
            while data:
                data = data[os.write(self._to_browser, data):]
        except OSError as e:
            raise BrowserError(f"the browser is gone ({e}); its log: {self.log()[-2000:]}") from None
        return self._id

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise BrowserError("no answer from the browser in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError(f"the browser closed its pipe; its log: {self.log()[-2000:]}")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def _handle_event(self, msg: dict) -> None:
        self.events.append(msg)
        if msg.get("method") == "Page.javascriptDialogOpening":  # never let a dialog block the page
            self.send("Page.handleJavaScriptDialog", {"accept": False}, msg.get("sessionId"))

    def call(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float | None = None) -> dict:
        """Send one command and wait for its result (events that come first are kept in ``events``)."""
        want = self.send(method, params, session)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = self._receive(deadline)
            if "id" not in msg:
                self._handle_event(msg)
            elif msg["id"] == want:
                if "error" in msg:
                    raise BrowserError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def wait_event(self, method: str, session: str | None = None, since: int = 0, timeout: float | None = None) -> dict:
        """The first event ``method`` (of ``session``) at index ``since`` or later in ``events``; waits for it."""
        deadline = time.monotonic() + (timeout or self.timeout)
        i = since
        while True:
            for ev in self.events[i:]:
                if ev.get("method") == method and (session is None or ev.get("sessionId") == session):
                    return ev
            i = len(self.events)
            msg = self._receive(deadline)
            if "id" not in msg:
                self._handle_event(msg)

    # -- pages ------------------------------------------------------------------------------------

    def open(self, url: str, width: int = 1200, height: int = 800) -> "Page":
        """A new tab showing ``url``, returned once its load event has fired."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=session)
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False}, session)
        page.navigate(url)
        return page

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call("Browser.close", timeout=5)
            except BrowserError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    """One tab: evaluate JS, press keys, type, take screenshots, read its console errors."""

    def __init__(self, browser: Chromium, target: str, session: str) -> None:
        self.browser, self.target, self.session = browser, target, session
        self._since = len(browser.events)

    def call(self, method: str, params: dict | None = None, timeout: float | None = None) -> dict:
        return self.browser.call(method, params, self.session, timeout)

    def navigate(self, url: str) -> float:
        """Load ``url`` and wait for its load event; returns the seconds from the command to that event."""
        mark = len(self.browser.events)
        t0 = time.perf_counter()
        result = self.call("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"cannot open {url}: {result['errorText']}")
        self.browser.wait_event("Page.loadEventFired", self.session, since=mark)
        return time.perf_counter() - t0

    def evaluate(self, expression: str):
        """The value of a JS expression (promises awaited); BrowserError if it throws."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            what = d.get("exception", {}).get("description") or d.get("text")
            raise BrowserError(f"{expression[:80]!r} threw: {what}")
        return r["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 10.0):
        """Poll until the expression is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            v = self.evaluate(expression)
            if v:
                return v
            if time.monotonic() > deadline:
                raise BrowserError(f"{expression!r} still false after {timeout} s")
            time.sleep(0.02)

    _KEYS = {"ArrowRight": 39, "ArrowLeft": 37, "ArrowUp": 38, "ArrowDown": 40, "Escape": 27, "Enter": 13}

    def key(self, key: str) -> None:
        """Press and release one key as a user would (``j``, ``/``, ``ArrowRight``, ...)."""
        params = {"key": key}
        if key in self._KEYS:
            params.update(code=key, windowsVirtualKeyCode=self._KEYS[key])
        else:
            params.update(text=key, windowsVirtualKeyCode=ord(key.upper()) if key.isalpha() else ord(key))
        self.call("Input.dispatchKeyEvent", {"type": "keyDown", **params})
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", **{k: v for k, v in params.items() if k != "text"}})

    def type(self, text: str) -> None:
        """Type text into the focused element."""
        self.call("Input.insertText", {"text": text})

    def screenshot(self, path: str) -> int:
        """Save a PNG of the viewport; returns its size in bytes."""
        data = base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])
        with open(path, "wb") as f:
            f.write(data)
        return len(data)

    def events(self, method: str) -> list[dict]:
        return [e for e in self.browser.events[self._since:] if e.get("method") == method
                and e.get("sessionId") == self.session]

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries of this tab so far."""
        out = [" ".join(str(a.get("value", a.get("description", ""))) for a in e["params"].get("args", []))
               for e in self.events("Runtime.consoleAPICalled") if e["params"]["type"] in ("error", "assert")]
        out += [e["params"]["exceptionDetails"].get("exception", {}).get("description")
                or e["params"]["exceptionDetails"].get("text", "") for e in self.events("Runtime.exceptionThrown")]
        out += [e["params"]["entry"].get("text", "") for e in self.events("Log.entryAdded")
                if e["params"]["entry"].get("level") == "error"]
        return out

    def dialogs(self) -> list[str]:
        """Messages of the JS dialogs (alert, confirm) the page opened."""
        return [e["params"].get("message", "") for e in self.events("Page.javascriptDialogOpening")]

    def close(self) -> None:
        self.browser.call("Target.closeTarget", {"targetId": self.target})
