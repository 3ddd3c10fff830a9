#!/usr/bin/env python3
"""Drives the status page in a real headless Chromium for tests/status_page.rs.

Usage: status_browser.py MODE URL SHOT_DIR WORK_DIR CHROMIUM CHROMEDRIVER

MODE `live`: Loads the page (127.0.0.1 only), reads its figures twice ~1.5 s apart, clicks Pause and waits
for the page to show `paused`, then Resume, then sets a rate factor of 2 from the rate field;
takes a screenshot and prints one JSON line
{"phase": "live", ...}. Then it waits for a line on stdin (the test has shut the server down),
waits for the page's "stopped answering" banner, takes a second screenshot and prints
{"phase": "ended", ...}. Every wait is bounded and the whole script ends itself within 50 s;
SIGTERM or SIGALRM quit the browser before exiting.

MODE `token` (the server wants the token in $STATUS_TOKEN): the page asks for it, it is typed
into the field, figures appear, Pause works; prints {"phase": "token", ...} with the page's URL
and what sessionStorage holds.
"""

import json
import os
import select
import signal
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT_S = 10
STDIN_WAIT_S = 20
OVERALL_S = 50

FIGURES = [
    "run_id", "name", "state", "seq", "adapter", "url", "source", "elapsed_s", "remaining_s",
    "rate_eps", "target_eps", "achieved_eps", "cumulative_target_eps", "cumulative_achieved_eps",
    "events_sent", "events_accepted", "events_failed", "backlog_events", "lag_ms_max",
    "intended_p50", "intended_p99", "intended_p99_9", "service_p50", "service_p99_cell",
    "service_p99_9", "reconnects", "connections_open", "stored_events_received",
]


class Stop(Exception):
    pass


def on_signal(signum, _frame):
    raise Stop(f"signal {signum}")


def emit(obj):
    print(json.dumps(obj), flush=True)


def browser(work_dir, chromium, chromedriver):
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--disable-extensions", "--disable-default-apps",
        "--no-default-browser-check", "--disable-client-side-phishing-detection",
        "--disable-features=Translate,OptimizationHints,MediaRouter",
        # No name resolves: the page is reached by its 127.0.0.1 address and nothing else is.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--window-size=1280,1800",
        "--user-data-dir=" + os.path.join(work_dir, "chromium-profile"),
    ]:
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=chromedriver,
                      log_output=os.path.join(work_dir, "chromedriver.log"))
    return webdriver.Chrome(service=service, options=opts)


def unstale(read):
    """Runs `read` again when the page replaced an element between finding and reading it
    (it re-renders every second); bounded to a few tries."""
    for attempt in range(5):
        try:
            return read()
        except StaleElementReferenceException:
            if attempt == 4:
                raise
            time.sleep(0.05)


def text(driver, element_id):
    """The element's text as the page set it (not as CSS shows it: the state pill is upper case)."""
    return unstale(
        lambda: driver.find_element(By.ID, element_id).get_attribute("textContent").strip())


def figures(driver):
    return unstale(lambda: read_figures(driver))


def read_figures(driver):
    out = {k: text(driver, k) for k in FIGURES}
    chart = driver.find_element(By.ID, "chart_eps")
    out["chart_eps_last_t"] = chart.get_attribute("data-last-t")
    out["chart_eps_points"] = chart.get_attribute("data-points")
    lines = chart.find_elements(By.CSS_SELECTOR, "polyline.achieved")
    out["chart_eps_achieved"] = lines[0].get_attribute("points") if lines else ""
    out["control_rows"] = text(driver, "control")
    return out


def wait_for(driver, what, cond):
    try:
        return WebDriverWait(driver, WAIT_S, poll_frequency=0.1,
                             ignored_exceptions=[StaleElementReferenceException]).until(cond)
    except TimeoutException:
        raise Stop(f"timed out after {WAIT_S} s waiting for {what}")


def console(driver):
    try:
        return [e.get("message", "") for e in driver.get_log("browser")
                if e.get("level") in ("SEVERE", "WARNING")]
    except Exception as e:  # the log is a nicety; never the reason to fail
        return [f"(console log unavailable: {e})"]


def live_phase(driver, url, shot_dir):
    driver.set_page_load_timeout(WAIT_S)
    driver.get(url)
    wait_for(driver, "the first figures",
             lambda d: text(d, "run_id") not in ("", "—") and text(d, "events_sent") not in ("", "—"))
    first = figures(driver)
    time.sleep(1.5)
    second = figures(driver)
    wait_for(driver, "Pause to be enabled",
             lambda d: d.find_element(By.ID, "pause").is_enabled())
    driver.find_element(By.ID, "pause").click()
    wait_for(driver, "the state to show paused", lambda d: text(d, "state") == "paused")
    wait_for(driver, "the pause mark in the table", lambda d: "pause" in text(d, "control"))
    after = figures(driver)
    paused_message = text(driver, "control_message")
    resume_enabled = driver.find_element(By.ID, "resume").is_enabled()
    # A couple of paused seconds on the chart, then Resume and a rate factor from the field.
    time.sleep(2.2)
    driver.find_element(By.ID, "resume").click()
    wait_for(driver, "the state to show running", lambda d: text(d, "state") == "running")
    wait_for(driver, "Set rate to be enabled",
             lambda d: d.find_element(By.ID, "rate_set").is_enabled())
    driver.find_element(By.ID, "rate_value").send_keys("2")
    Select(driver.find_element(By.ID, "rate_kind")).select_by_value("factor")
    driver.find_element(By.ID, "rate_set").click()
    wait_for(driver, "the rate mark in the table", lambda d: "factor 2" in text(d, "control"))
    time.sleep(1.2)
    shot = os.path.join(shot_dir, "status_page_live.png")
    driver.save_screenshot(shot)
    return {
        "phase": "live",
        "title": driver.title,
        "first": first,
        "second": second,
        "after_pause": after,
        "control_message": paused_message,
        "resume_enabled": resume_enabled,
        "rate_eps_after_factor": text(driver, "rate_eps"),
        "console": console(driver),
        "screenshot": shot,
    }


def ended_phase(driver, shot_dir):
    ready, _, _ = select.select([sys.stdin], [], [], STDIN_WAIT_S)
    if not ready:
        raise Stop("the test never said the server was shut down")
    sys.stdin.readline()
    banner = driver.find_element(By.ID, "banner")
    wait_for(driver, "the stopped-answering banner",
             lambda d: banner.is_displayed() and banner.get_attribute("data-kind") == "lost")
    shot = os.path.join(shot_dir, "status_page_ended.png")
    driver.save_screenshot(shot)
    return {
        "phase": "ended",
        "banner": banner.text,
        "banner_kind": banner.get_attribute("data-kind"),
        "pause_enabled": driver.find_element(By.ID, "pause").is_enabled(),
        "screenshot": shot,
    }


def token_phase(driver, url, shot_dir):
    driver.set_page_load_timeout(WAIT_S)
    driver.get(url)
    form = driver.find_element(By.ID, "token_form")
    wait_for(driver, "the token field", lambda d: form.is_displayed())
    before = text(driver, "run_id")
    driver.find_element(By.ID, "token_input").send_keys(os.environ.get("STATUS_TOKEN", ""))
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(driver, "the figures after the token",
             lambda d: text(d, "run_id") not in ("", "—"))
    wait_for(driver, "Pause to be enabled",
             lambda d: d.find_element(By.ID, "pause").is_enabled())
    driver.find_element(By.ID, "pause").click()
    wait_for(driver, "the state to show paused", lambda d: text(d, "state") == "paused")
    driver.save_screenshot(os.path.join(shot_dir, "status_page_token.png"))
    return {
        "phase": "token",
        "run_id_before": before,
        "run_id": text(driver, "run_id"),
        "form_hidden": not form.is_displayed(),
        "url": driver.current_url,
        "stored": driver.execute_script("return sessionStorage.getItem('ingestbench.status.token')"),
        "console": console(driver),
    }


def page_state(driver):
    """What the page shows, for a failure message."""
    if driver is None:
        return {}
    try:
        return {
            "state": text(driver, "state"),
            "control_message": text(driver, "control_message"),
            "banner": text(driver, "banner"),
            "console": console(driver),
        }
    except Exception as e:
        return {"page_state": f"unavailable: {e}"}


def main():
    mode, url, shot_dir, work_dir, chromium, chromedriver = sys.argv[1:7]
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(OVERALL_S)
    driver = None
    try:
        driver = browser(work_dir, chromium, chromedriver)
        if mode == "token":
            emit(token_phase(driver, url, shot_dir))
        else:
            emit(live_phase(driver, url, shot_dir))
            emit(ended_phase(driver, shot_dir))
        return 0
    except Stop as e:
        emit({"phase": "error", "error": str(e), **page_state(driver)})
        return 1
    except Exception as e:
        emit({"phase": "error", "error": f"{type(e).__name__}: {e}"})
        return 1
    finally:
        signal.alarm(0)
        if driver is not None:
            try:
                driver.quit()
            except Exception:
                pass


if __name__ == "__main__":
    sys.exit(main())
