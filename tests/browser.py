"""What the browser tests share (Debian's headless Chromium through Selenium): a wait for the page, re-tried while
it re-renders, and a screenshot kept for a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

WAIT = 60  # seconds; a generous bound for a loaded 2-core machine, not a timing assertion


def screenshot(driver: Any, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(folder / name))
    return folder / name


def wait_for(driver: Any, condition: Any) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def attempt(_: Any) -> Any:
        try:
            return condition()
        except (StaleElementReferenceException, WebDriverException):  # re-rendered; not clickable yet
            return False

    return WebDriverWait(driver, WAIT).until(attempt)
