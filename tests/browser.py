"""Headless Chromium for the page tests, the docs check and the page benchmark, through Selenium with
Debian's browser and driver (``apt-get install chromium chromium-driver``): ``/usr/bin/chromium``
and ``/usr/bin/chromedriver``. Both paths are given, so Selenium Manager never runs and nothing is
downloaded (it is also refused outright, below).

    with Chromium() as browser:
        page = browser.open("file:///tmp/view.html#s=3")
        page.evaluate("document.title")
        page.key("j"); page.screenshot("shot.png")
        assert not page.errors()

Console errors come from Chrome's browser log (``goog:loggingPrefs``): ``console.error``,
``console.assert``, uncaught exceptions and failed loads all arrive there as ``SEVERE``.
"""

from __future__ import annotations

import os
import time
from typing import Any
from unittest import mock

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
]
"""The flags of every start; without the background-networking ones its connections are refused on a closed network."""


class BrowserError(RuntimeError):
    """The browser died, timed out, or a script threw."""


def missing() -> str | None:
    """Why the browser tests cannot run here, or None when the browser, the driver and selenium are there."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} not found (Debian: apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


class Chromium:
    """One headless Chromium under chromedriver, one fresh profile; a context manager. Each page is a tab."""

    def __init__(self, width: int = 1200, height: int = 800, timeout: float = 30.0) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.selenium_manager import SeleniumManager

        os.environ.setdefault("SE_AVOID_STATS", "true")  # Selenium Manager must neither run nor report
        os.environ.setdefault("SE_OFFLINE", "true")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in FLAGS + [f"--window-size={width},{height}"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        options.unhandled_prompt_behavior = "ignore"  # a dialog stays open: dialogs() reports it
        self.timeout = timeout
        self.width, self.height = width, height
        refuse = mock.patch.object(
            SeleniumManager,
            "binary_paths",
            side_effect=RuntimeError("Selenium Manager would look for (and download) a driver"),
        )
        with refuse:
            self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        self.driver.set_script_timeout(timeout)
        self.driver.set_page_load_timeout(timeout)
        self._blank = self.driver.current_window_handle
        self.version = f"Chromium {self.driver.capabilities.get('browserVersion', '?')}"
        self._log: list[dict] = []

    def drain_log(self) -> None:
        """Move the browser's log entries so far into ``self._log`` (chromedriver hands each out once)."""
        self._log += self.driver.get_log("browser")

    def open(self, url: str, width: int | None = None, height: int | None = None) -> Page:
        """A new tab showing ``url``, returned once its load event has fired."""
        self.drain_log()
        self.driver.switch_to.new_window("tab")
        page = Page(self, self.driver.current_window_handle, len(self._log))
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width or self.width, "height": height or self.height, "deviceScaleFactor": 1, "mobile": False},
        )
        page.navigate(url)
        return page

    def close(self) -> None:
        try:
            self.driver.quit()
        except Exception:  # the browser is gone already
            pass

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    """One tab: evaluate JS, press keys, type, take screenshots, read its console errors."""

    _KEYS = {
        "ArrowRight": "ARROW_RIGHT",
        "ArrowLeft": "ARROW_LEFT",
        "ArrowUp": "ARROW_UP",
        "ArrowDown": "ARROW_DOWN",
        "Escape": "ESCAPE",
        "Enter": "ENTER",
    }

    def __init__(self, browser: Chromium, handle: str, since: int) -> None:
        self.browser, self.driver, self.handle, self._since = browser, browser.driver, handle, since
        self._dialogs: list[str] = []

    def _focus(self) -> None:
        if self.driver.current_window_handle != self.handle:
            self.driver.switch_to.window(self.handle)

    def navigate(self, url: str) -> float:
        """Load ``url`` and wait for its load event; returns the seconds from the command to that event."""
        self._focus()
        t0 = time.perf_counter()
        self.driver.get(url)
        return time.perf_counter() - t0

    def evaluate(self, expression: str) -> Any:
        """The value of a JS expression or statements (global scope, as the console; promises awaited);
        BrowserError if it throws."""
        from selenium.common.exceptions import JavascriptException, UnexpectedAlertPresentException

        self._focus()
        try:
            return self.driver.execute_script("return (0, eval)(arguments[0]);", expression)
        except JavascriptException as e:
            raise BrowserError(f"{expression[:80]!r} threw: {e.msg}") from None
        except UnexpectedAlertPresentException as e:
            self.dialogs()  # records and dismisses it
            raise BrowserError(f"{expression[:80]!r}: the page opened a dialog ({e.alert_text!r})") from None

    def wait_for(self, expression: str, timeout: float = 10.0) -> Any:
        """Poll until the expression is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            v = self.evaluate(expression)
            if v:
                return v
            if time.monotonic() > deadline:
                raise BrowserError(f"{expression!r} still false after {timeout} s")
            time.sleep(0.02)

    def key(self, key: str) -> None:
        """Press and release one key as a user would (``j``, ``/``, ``ArrowRight``, ...), on the focused element."""
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        self._focus()
        ActionChains(self.driver).send_keys(getattr(Keys, self._KEYS[key]) if key in self._KEYS else key).perform()

    def type(self, text: str) -> None:
        """Type text into the focused element."""
        from selenium.webdriver.common.action_chains import ActionChains

        self._focus()
        ActionChains(self.driver).send_keys(text).perform()

    def screenshot(self, path: str) -> int:
        """Save a PNG of the viewport; returns its size in bytes."""
        self._focus()
        data = self.driver.get_screenshot_as_png()
        with open(path, "wb") as f:
            f.write(data)
        return len(data)

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads of this tab so far (the browser log's SEVERE)."""
        self.browser.drain_log()
        return [e.get("message", "") for e in self.browser._log[self._since :] if e.get("level") == "SEVERE"]

    def dialogs(self) -> list[str]:
        """Messages of the JS dialogs (alert, confirm) the page opened (each is dismissed)."""
        from selenium.common.exceptions import NoAlertPresentException

        self._focus()
        try:
            alert = self.driver.switch_to.alert
            self._dialogs.append(alert.text)
            alert.dismiss()
        except NoAlertPresentException:
            pass
        return list(self._dialogs)

    def close(self) -> None:
        self.browser.drain_log()
        self._focus()
        self.driver.close()
        self.driver.switch_to.window(self.browser._blank)
