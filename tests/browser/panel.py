#!/usr/bin/env python3
"""Drives the control panel of `ingestbench serve` in a real headless Chromium, for
tests/panel_browser.rs.

Usage: panel.py full URL SHOT_DIR WORK_DIR CHROMIUM CHROMEDRIVER CONFIGS_DIR SCENARIOS_DIR REPORTS_DIR
       panel.py token URL SHOT_DIR WORK_DIR CHROMIUM CHROMEDRIVER

Mode `token`: the server wants the token in $PANEL_TOKEN and has no --configs-dir. The page
asks for the token; it is typed in; the version and the reports appear; the Configs tab is
read-only and says why; a report opens and its JSON downloads (fetched with the header);
prints {"phase": "token", ...} with the URL and what sessionStorage holds.

Mode `full`: the server was started with those three directories (and a token it generated,
in $PANEL_OPEN_URL, the address it printed, which the script opens first); CONFIGS_DIR holds `panel-smoke.yaml`
(the built-in sink, 200 eps for 15 s, watching a `sleep` the test started). In order, each
step checking what the page shows:
  packs     — the catalog lists aws.cloudtrail; its event types, ATT&CK ids and a sample
              render; "New sample" renders with another seed.
  scenarios — the ATT&CK pickers (T1110 under TA0006), two stages authored in the builder,
              their YAML validated and previewed; an unknown technique's error listed and
              marked at its line; saved (the file appears in SCENARIOS_DIR).
  configs   — a config built in the form, saved (file written), broken and validated (the
              error listed at its line, the line marked), fixed and saved again, deleted
              (file gone).
  run       — panel-smoke.yaml validated and started; the figures grow; the watched process
              (the test's `sleep`) is charted; paused and resumed; a second start is
              refused (409); the rate set to 400 eps and the target follows; stopped; its
              report opens in Reports.
  reports   — a second, short run: panel-smoke.yaml's text pasted, at another rate, with the
              saved scenario (its stage events shown); both listed; compared (differences
              highlighted); JSON and CSV downloaded through the page.
Screenshots of the five tabs go to SHOT_DIR (panel-<tab>.png, 1280x800). Prints one JSON
line per step ({"phase": ...}); on failure one {"phase": "error", ...} line and exit 1.
Every wait is bounded (WAIT_S), and the whole script ends itself within OVERALL_S; SIGTERM
or SIGALRM quit the browser first. Only 127.0.0.1 is reachable from the browser.
"""

import json
import os
import signal
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT_S = 15
OVERALL_S = 150


class Stop(Exception):
    pass


def on_signal(signum, _frame):
    raise Stop(f"signal {signum}")


def emit(obj):
    print(json.dumps(obj), flush=True)


# ---- the browser ---------------------------------------------------------------------------

def browser(work_dir, chromium, chromedriver, downloads):
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--disable-extensions", "--disable-default-apps",
        "--no-default-browser-check", "--disable-client-side-phishing-detection",
        "--disable-features=Translate,OptimizationHints,MediaRouter",
        # No name resolves: the panel is reached by its 127.0.0.1 address and nothing else is.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--window-size=1280,800",
        "--force-device-scale-factor=1",
        "--user-data-dir=" + os.path.join(work_dir, "chromium-profile"),
    ]:
        opts.add_argument(arg)
    opts.add_experimental_option("prefs", {
        "download.default_directory": downloads,
        "download.prompt_for_download": False,
        "safebrowsing.enabled": False,
    })
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=chromedriver,
                      log_output=os.path.join(work_dir, "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=opts)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                           {"behavior": "allow", "downloadPath": downloads})
    # The page's viewport itself 1280x800, whatever the headless window's decorations take.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    driver.set_page_load_timeout(WAIT_S)
    driver.set_script_timeout(WAIT_S)
    return driver


def unstale(read):
    """Runs `read` again when the page replaced an element between finding and reading it
    (the Run tab re-renders every second); bounded to a few tries."""
    for attempt in range(5):
        try:
            return read()
        except StaleElementReferenceException:
            if attempt == 4:
                raise
            time.sleep(0.05)


def text(driver, element_id):
    """The element's text as the page set it (not as CSS shows it: pills are upper case)."""
    return unstale(
        lambda: driver.find_element(By.ID, element_id).get_attribute("textContent").strip())


def attr(driver, element_id, name):
    return unstale(lambda: driver.find_element(By.ID, element_id).get_attribute(name) or "")


def wait_for(driver, what, cond, within=WAIT_S):
    try:
        return WebDriverWait(driver, within, poll_frequency=0.1,
                             ignored_exceptions=[StaleElementReferenceException]).until(cond)
    except TimeoutException:
        raise Stop(f"timed out after {within} s waiting for {what}")


def click(driver, element_id):
    wait_for(driver, f"#{element_id} to be enabled",
             lambda d: d.find_element(By.ID, element_id).is_enabled())
    driver.find_element(By.ID, element_id).click()


def fill(driver, element_id, value):
    e = driver.find_element(By.ID, element_id)
    e.clear()
    if value:
        e.send_keys(value)


def set_value(driver, element, value):
    """Sets a textarea's whole value as typing would end (send_keys is slow for long text)."""
    driver.execute_script(
        "arguments[0].value = arguments[1];"
        "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));", element, value)


def number(s):
    s = s.replace(",", "").strip()
    try:
        return float(s)
    except ValueError:
        return None


def option_values(select_element):
    return [o.get_attribute("value") for o in select_element.find_elements(By.TAG_NAME, "option")]


def open_tab(driver, tab):
    driver.find_element(By.ID, "nav_" + tab).click()
    wait_for(driver, f"the {tab} tab", lambda d: d.find_element(By.ID, "tab_" + tab).is_displayed())
    if not driver.current_url.endswith("#" + tab):
        raise Stop(f"the URL does not name the tab: {driver.current_url}")


def shot(driver, shot_dir, tab):
    driver.execute_script("window.scrollTo(0, 0)")
    path = os.path.join(shot_dir, f"panel-{tab}.png")
    driver.save_screenshot(path)
    return path


def console(driver):
    try:
        return [e.get("message", "") for e in driver.get_log("browser")
                if e.get("level") in ("SEVERE", "WARNING")]
    except Exception as e:  # the log is a nicety; never the reason to fail
        return [f"(console log unavailable: {e})"]


def message(driver, element_id, want, what):
    """Waits for a message element to contain `want`; its text."""
    wait_for(driver, f"{what} ({element_id} to say {want!r})",
             lambda d: want in text(d, element_id))
    return text(driver, element_id)


def validated(driver, element_id, what):
    """Waits for a validation's result ("valid…" or "not valid: …"); True when valid."""
    wait_for(driver, f"{what}'s result",
             lambda d: text(d, element_id).startswith(("valid", "not valid")))
    return text(driver, element_id).startswith("valid")


def list_names(driver, list_id):
    return unstale(lambda: [li.get_attribute("data-name") for li in
                            driver.find_elements(By.CSS_SELECTOR, f"#{list_id} li[data-name]")])


def wait_file(path, present, what):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if os.path.exists(path) == present:
            return
        time.sleep(0.1)
    raise Stop(f"{what}: {path} {'never appeared' if present else 'is still there'}")


# ---- the steps ----------------------------------------------------------------------------

def header_step(driver, url):
    opened = ""
    open_url = os.environ.get("PANEL_OPEN_URL", "")
    if open_url:
        # The address `serve` printed, with its token after `#token=`: the page keeps the
        # token for the tab and takes it out of the address.
        driver.get(open_url)
        wait_for(driver, "the version after opening the printed address",
                 lambda d: text(d, "version").startswith("v"))
        opened = driver.current_url
    driver.get(url + "#run")
    wait_for(driver, "the version in the header", lambda d: text(d, "version").startswith("v"))
    return {"phase": "header", "version": text(driver, "version"), "title": driver.title,
            "opened_url": opened,
            "stored": driver.execute_script("return sessionStorage.getItem('ingestbench.panel.token')")}


def packs_step(driver, shot_dir):
    open_tab(driver, "packs")
    wait_for(driver, "aws.cloudtrail in the catalog",
             lambda d: d.find_elements(By.CSS_SELECTOR, "#pack_list tr[data-id='aws.cloudtrail']"))
    ids = [tr.get_attribute("data-id")
           for tr in driver.find_elements(By.CSS_SELECTOR, "#pack_list tr[data-id]")]
    driver.find_element(By.CSS_SELECTOR, "#pack_list tr[data-id='aws.cloudtrail']").click()
    wait_for(driver, "the pack's detail", lambda d: "aws.cloudtrail" in text(d, "pack_title"))
    wait_for(driver, "its event types",
             lambda d: len(d.find_elements(By.CSS_SELECTOR, "#pack_events tr td.num")) > 0)
    wait_for(driver, "a rendered sample",
             lambda d: d.find_elements(By.CSS_SELECTOR, "#pack_samples pre.sample"))
    seed1 = attr(driver, "pack_samples", "data-seed")
    sample1 = text(driver, "pack_samples")
    events = len(driver.find_elements(By.CSS_SELECTOR, "#pack_events tr"))
    mitre = [t.text for t in driver.find_elements(By.CSS_SELECTOR, "#pack_meta .tag")]
    click(driver, "pack_sample")
    wait_for(driver, "a sample with a new seed",
             lambda d: attr(d, "pack_samples", "data-seed") not in ("", seed1))
    seed2 = attr(driver, "pack_samples", "data-seed")
    sample2 = text(driver, "pack_samples")
    return {"phase": "packs", "ids": ids, "event_types": events, "mitre": mitre,
            "meta": text(driver, "pack_meta"), "seed1": seed1, "seed2": seed2,
            "sample1": sample1[:2000], "sample_changed": sample1 != sample2,
            "screenshot": shot(driver, shot_dir, "packs")}


def pick_stage(driver, row, tactic, technique, source):
    Select(row.find_element(By.CSS_SELECTOR, "select.tactic")).select_by_value(tactic)
    wait_for(driver, f"{technique} among {tactic}'s techniques",
             lambda d: technique in option_values(row.find_element(By.CSS_SELECTOR, "select.technique")))
    techniques = option_values(row.find_element(By.CSS_SELECTOR, "select.technique"))
    Select(row.find_element(By.CSS_SELECTOR, "select.technique")).select_by_value(technique)
    wait_for(driver, f"{source} among the sources",
             lambda d: source in option_values(row.find_element(By.CSS_SELECTOR, "select.source")))
    Select(row.find_element(By.CSS_SELECTOR, "select.source")).select_by_value(source)
    return techniques


def stage_fields(row, count, start, dur):
    for cls, v in (("count", count), ("start_offset", start), ("duration", dur)):
        e = row.find_element(By.CSS_SELECTOR, "input." + cls)
        e.clear()
        e.send_keys(v)


def author_scenario(driver):
    """Two stages through the builder's pickers, written as YAML: TA0006's techniques and it."""
    wait_for(driver, "the ATT&CK table", lambda d: "techniques" in text(d, "s_attack"))
    wait_for(driver, "a first stage row", lambda d: d.find_elements(By.CSS_SELECTOR, "#s_stages tr.stage"))
    fill(driver, "s_name", "ui-brute-force")
    fill(driver, "s_seed", "7")
    fill(driver, "s_anchor", "2024-06-03T13:00:00Z")
    fill(driver, "s_speed", "60x")
    driver.find_element(By.ID, "s_shared_user").click()
    driver.find_element(By.ID, "s_shared_host").click()
    row = driver.find_elements(By.CSS_SELECTOR, "#s_stages tr.stage")[0]
    techniques = pick_stage(driver, row, "TA0006", "T1110", "windows.security")
    stage_fields(row, "6", "0s", "2m")
    click(driver, "s_add")
    wait_for(driver, "a second stage row",
             lambda d: len(d.find_elements(By.CSS_SELECTOR, "#s_stages tr.stage")) == 2)
    row2 = driver.find_elements(By.CSS_SELECTOR, "#s_stages tr.stage")[1]
    pick_stage(driver, row2, "TA0002", "T1059.001", "windows.security")
    stage_fields(row2, "3", "2m", "1m")
    click(driver, "s_write")
    yaml = driver.find_element(By.ID, "scn_text").get_attribute("value")
    for want in ("technique: T1110", "technique: T1059.001", "shared: [user, host]", 'schema_version: "2.0"'):
        if want not in yaml:
            raise Stop(f"the builder's YAML lacks {want!r}:\n{yaml}")
    return techniques, yaml


def break_scenario(driver, yaml):
    """A technique that is not in the table: its error listed at the stage's line, marked."""
    set_value(driver, driver.find_element(By.ID, "scn_text"), yaml.replace("technique: T1110,", "technique: T9999,"))
    click(driver, "scn_validate")
    if validated(driver, "scn_message", "the broken scenario's validation"):
        raise Stop("a scenario with T9999 passed validation")
    wait_for(driver, "the scenario's error in the list",
             lambda d: d.find_elements(By.CSS_SELECTOR, "#scn_diags li.error"))
    bad = driver.find_element(By.CSS_SELECTOR, "#scn_diags li.error")
    lines = yaml.split("\n")
    return {"bad": bad.text, "bad_line": bad.get_attribute("data-line"),
            "bad_marked": [g.get_attribute("data-line") for g in
                           driver.find_elements(By.CSS_SELECTOR, "#scn_gutter div.err")],
            "want_line": str(lines.index(next(line for line in lines if "T1110" in line)) + 1)}


def scenarios_step(driver, shot_dir, scenarios_dir):
    open_tab(driver, "scenarios")
    techniques, yaml = author_scenario(driver)
    click(driver, "scn_validate")
    if not validated(driver, "scn_message", "the scenario's validation"):
        raise Stop("the authored scenario is not valid: " + text(driver, "scn_diags"))
    wait_for(driver, "the per-stage summary",
             lambda d: len(d.find_elements(By.CSS_SELECTOR, "#scn_summary tr.stage-summary")) == 2)
    summary = text(driver, "scn_summary")
    click(driver, "scn_preview")
    wait_for(driver, "the preview of each stage",
             lambda d: len(d.find_elements(By.CSS_SELECTOR, "#scn_previews .preview-stage")) == 2)
    preview = text(driver, "scn_previews")
    broken = break_scenario(driver, yaml)
    # The builder writes it again; valid, it is saved.
    click(driver, "s_write")
    click(driver, "scn_validate")
    if not validated(driver, "scn_message", "the rewritten scenario's validation"):
        raise Stop("the rewritten scenario is not valid: " + text(driver, "scn_diags"))
    fill(driver, "scn_name", "ui-brute-force")
    click(driver, "scn_save")
    message(driver, "scn_message", "saved ui-brute-force.yaml", "the scenario's save")
    wait_for(driver, "the saved scenario in the list",
             lambda d: "ui-brute-force.yaml" in list_names(d, "scn_list"))
    path = os.path.join(scenarios_dir, "ui-brute-force.yaml")
    wait_file(path, True, "the saved scenario")
    with open(path) as f:
        saved = f.read()
    return {"phase": "scenarios", "techniques_of_TA0006": len(techniques),
            "has_T1110": "T1110" in techniques, "yaml": yaml, "saved": saved,
            "summary": summary, "preview": preview[:3000],
            **broken,
            "screenshot": shot(driver, shot_dir, "scenarios")}


def build_config(driver):
    """Fills the builder, writes its YAML, validates it: the YAML and the summary shown."""
    wait_for(driver, "the builder's source picker",
             lambda d: "aws.cloudtrail" in option_values(d.find_element(By.ID, "b_source")))
    click(driver, "cfg_new")
    fill(driver, "b_name", "ui-made")
    Select(driver.find_element(By.ID, "b_adapter")).select_by_value("lphc")
    fill(driver, "b_url", "builtin")
    Select(driver.find_element(By.ID, "b_source")).select_by_value("aws.cloudtrail")
    fill(driver, "b_eps", "100")
    Select(driver.find_element(By.ID, "b_stop_kind")).select_by_value("after")
    fill(driver, "b_stop_value", "5s")
    fill(driver, "b_max_events", "20")
    click(driver, "b_write")
    built = driver.find_element(By.ID, "cfg_text").get_attribute("value")
    if "eps: 100" not in built or "url: builtin" not in built:
        raise Stop("the builder's YAML is not what the form says:\n" + built)
    click(driver, "cfg_validate")
    if not validated(driver, "cfg_message", "the built config's validation"):
        raise Stop("the built config is not valid: " + text(driver, "cfg_diags"))
    if attr(driver, "cfg_name", "value") != "ui-made.yaml":
        raise Stop("the file name was not taken from the builder's name: " + attr(driver, "cfg_name", "value"))
    return built, text(driver, "cfg_summary")


def save_config(driver, path, want, what):
    """Clicks Save; waits for the page to say so and for the file to hold `want`."""
    click(driver, "cfg_save")
    message(driver, "cfg_message", "saved " + os.path.basename(path), what)
    deadline = time.monotonic() + WAIT_S
    while not (os.path.exists(path) and want in open(path).read()):
        if time.monotonic() > deadline:
            raise Stop(f"{what}: {path} never held {want!r}")
        time.sleep(0.1)


def break_config(driver, built):
    """An unknown key on line 3, validated: the error listed, its line marked and jumped to."""
    lines = built.rstrip("\n").split("\n")
    set_value(driver, driver.find_element(By.ID, "cfg_text"),
              "\n".join(lines[:2] + ["bogus_key: 1"] + lines[2:]) + "\n")
    click(driver, "cfg_validate")
    if validated(driver, "cfg_message", "the broken config's validation"):
        raise Stop("a config with an unknown key passed validation")
    wait_for(driver, "an error in the list", lambda d: d.find_elements(By.CSS_SELECTOR, "#cfg_diags li.error"))
    diag = driver.find_element(By.CSS_SELECTOR, "#cfg_diags li.error")
    out = {"diag": diag.text, "diag_line": diag.get_attribute("data-line"),
           "marked_lines": [g.get_attribute("data-line") for g in
                            driver.find_elements(By.CSS_SELECTOR, "#cfg_gutter div.err")]}
    diag.click()
    out["selection_line"] = driver.execute_script(
        "const t = document.getElementById('cfg_text');"
        "return t.value.slice(0, t.selectionStart).split('\\n').length;")
    return out


def delete_config(driver, path):
    """Delete takes two clicks (the first asks); the file and its list entry go."""
    click(driver, "cfg_delete")
    message(driver, "cfg_message", "again", "the delete's confirmation")
    click(driver, "cfg_delete")
    message(driver, "cfg_message", "deleted " + os.path.basename(path), "the config's delete")
    wait_file(path, False, "the deleted config")
    name = os.path.basename(path)
    wait_for(driver, f"{name} gone from the list", lambda d: name not in list_names(d, "cfg_list"))


def configs_step(driver, shot_dir, configs_dir):
    open_tab(driver, "configs")
    wait_for(driver, "panel-smoke.yaml in the list",
             lambda d: "panel-smoke.yaml" in list_names(d, "cfg_list"))
    before = list_names(driver, "cfg_list")
    readonly_shown = driver.find_element(By.ID, "cfg_readonly").is_displayed()
    built, summary = build_config(driver)
    path = os.path.join(configs_dir, "ui-made.yaml")
    save_config(driver, path, "eps: 100", "the built config's save")
    wait_for(driver, "ui-made.yaml in the list", lambda d: "ui-made.yaml" in list_names(d, "cfg_list"))
    broken = break_config(driver, built)
    shot_path = shot(driver, shot_dir, "configs")
    # Fixed with another rate and saved again; opened again from the list, the editor and
    # the builder show the saved text.
    set_value(driver, driver.find_element(By.ID, "cfg_text"), built.replace("eps: 100", "eps: 150"))
    save_config(driver, path, "eps: 150", "the edited config's save")
    click(driver, "cfg_new")
    driver.find_element(By.CSS_SELECTOR, "#cfg_list li[data-name='ui-made.yaml']").click()
    wait_for(driver, "the reopened config",
             lambda d: "eps: 150" in d.find_element(By.ID, "cfg_text").get_attribute("value"))
    builder_eps = attr(driver, "b_eps", "value")
    delete_config(driver, path)
    return {"phase": "configs", "listed": before, "readonly_shown": readonly_shown, "built": built,
            "summary": summary, **broken, "builder_eps_after_reopen": builder_eps,
            "after_delete": list_names(driver, "cfg_list"), "screenshot": shot_path}


def run_figures(driver):
    return {k: text(driver, k) for k in (
        "run_state", "run_name", "run_id", "run_target_eps", "run_rate_eps", "run_achieved_eps",
        "run_events_sent", "run_events_accepted", "run_backlog", "run_intended", "run_seq")}


def pick_config(driver, name):
    open_tab(driver, "run")
    wait_for(driver, f"{name} in the run's config picker",
             lambda d: name in option_values(d.find_element(By.ID, "run_config")))
    Select(driver.find_element(By.ID, "run_config")).select_by_value(name)


def wait_report_opened(driver, not_name):
    wait_for(driver, "the Reports tab to open by itself",
             lambda d: d.find_element(By.ID, "tab_reports").is_displayed(), within=25)
    wait_for(driver, "the finished run's report",
             lambda d: attr(d, "rep_view", "data-name") not in ("", not_name)
             and d.find_element(By.ID, "rep_view").is_displayed(), within=WAIT_S)
    wait_for(driver, "the report's timeline chart",
             lambda d: int(attr(d, "rep_chart_eps", "data-points") or 0) > 0)
    return attr(driver, "rep_view", "data-name")


def run_step(driver, shot_dir):
    pick_config(driver, "panel-smoke.yaml")
    click(driver, "run_validate")
    if not validated(driver, "run_message", "the run config's validation"):
        raise Stop("panel-smoke.yaml is not valid: " + text(driver, "run_validation"))
    validation = text(driver, "run_validation")
    click(driver, "run_start")
    message(driver, "run_message", "started", "the run's start")
    wait_for(driver, "the state to show running", lambda d: text(d, "run_state") == "running")
    wait_for(driver, "the first events sent", lambda d: (number(text(d, "run_events_sent")) or 0) > 0)
    first = run_figures(driver)
    wait_for(driver, "events sent to grow",
             lambda d: (number(text(d, "run_events_sent")) or 0) > number(first["run_events_sent"]) + 100)
    wait_for(driver, "the achieved rate", lambda d: (number(text(d, "run_achieved_eps")) or 0) > 0)
    second = run_figures(driver)
    eps_points_before = int(attr(driver, "run_chart_eps", "data-points") or 0)
    # The watched process (the test's `sleep`) and ingestbench itself, charted.
    wait_for(driver, "the watched processes' card",
             lambda d: d.find_element(By.ID, "run_watched").is_displayed()
             and int(attr(d, "run_chart_cpu", "data-points") or 0) > 0)
    watched = text(driver, "run_watched_rows")
    # Pause and resume.
    click(driver, "run_pause")
    wait_for(driver, "the state to show paused", lambda d: text(d, "run_state") == "paused")
    paused_resume_enabled = driver.find_element(By.ID, "run_resume").is_enabled()
    click(driver, "run_resume")
    wait_for(driver, "the state to show running again", lambda d: text(d, "run_state") == "running")
    # One run at a time: a second start is refused, and the page says so.
    click(driver, "run_start")
    wait_for(driver, "the refusal of a second start", lambda d: attr(d, "run_message", "data-status") == "409")
    refused = text(driver, "run_message")
    # A new rate: the rate asked changes at once, the last second's target follows.
    fill(driver, "run_rate_value", "400")
    Select(driver.find_element(By.ID, "run_rate_kind")).select_by_value("eps")
    click(driver, "run_rate_set")
    message(driver, "run_control_message", "rate: done", "the rate change")
    wait_for(driver, "the rate asked to show 400", lambda d: text(d, "run_rate_eps") == "400")
    wait_for(driver, "the target to follow to 400", lambda d: text(d, "run_target_eps") == "400", within=8)
    after_rate = run_figures(driver)
    eps_points_after = int(attr(driver, "run_chart_eps", "data-points") or 0)
    shot_path = shot(driver, shot_dir, "run")
    # Stop: two clicks (the first asks), then the report opens in Reports.
    click(driver, "run_stop")
    wait_for(driver, "the stop's confirmation", lambda d: "Really" in text(d, "run_stop"))
    click(driver, "run_stop")
    report = wait_report_opened(driver, "")
    wait_for(driver, "the report's watched-process chart",
             lambda d: d.find_element(By.ID, "rep_watched").is_displayed()
             and int(attr(d, "rep_chart_cpu", "data-points") or 0) > 0)
    return {"phase": "run", "validation": validation, "first": first, "second": second,
            "refused": refused, "after_rate": after_rate, "watched": watched,
            "resume_enabled_when_paused": paused_resume_enabled, "eps_points": [eps_points_before, eps_points_after],
            "report": report, "report_title": text(driver, "rep_title"),
            "report_control": text(driver, "rep_latency"), "slo_rows": len(driver.find_elements(By.CSS_SELECTOR, "#rep_slo tr")),
            "hist_bars": attr(driver, "rep_chart_hist", "data-bars"), "screenshot": shot_path}


def second_run(driver, configs_dir):
    """panel-smoke.yaml's text pasted, 3 s at 100 eps, with the saved scenario at 120x; waits
    for its report to open. Its report's name and the scenario's stage events shown."""
    pick_config(driver, ".paste")
    wait_for(driver, "the paste field", lambda d: d.find_element(By.ID, "run_text").is_displayed())
    with open(os.path.join(configs_dir, "panel-smoke.yaml")) as f:
        set_value(driver, driver.find_element(By.ID, "run_text"), f.read())
    wait_for(driver, "Start to be usable again", lambda d: text(d, "run_state") in ("finished", "idle"))
    fill(driver, "run_duration", "3s")
    fill(driver, "run_eps", "100")
    wait_for(driver, "the saved scenario in the run's picker",
             lambda d: "ui-brute-force.yaml" in option_values(d.find_element(By.ID, "run_scenario")))
    Select(driver.find_element(By.ID, "run_scenario")).select_by_value("ui-brute-force.yaml")
    fill(driver, "run_speed", "120x")
    previous = attr(driver, "rep_view", "data-name")
    click(driver, "run_start")
    message(driver, "run_message", "started", "the second run's start")
    wait_for(driver, "the scenario's progress", lambda d: d.find_element(By.ID, "run_scenario_tile").is_displayed())
    scenario_events = text(driver, "run_scenario_events")
    return wait_report_opened(driver, previous), scenario_events


def wait_downloads(downloads):
    """The first .json and .csv files saved in `downloads` (bounded wait): their paths."""
    deadline = time.monotonic() + WAIT_S
    while True:
        files = sorted(f for f in os.listdir(downloads) if not f.endswith(".crdownload"))
        json_files = [f for f in files if f.endswith(".json")]
        csv_files = [f for f in files if f.endswith(".csv")]
        if json_files and csv_files:
            return files, os.path.join(downloads, json_files[0]), os.path.join(downloads, csv_files[0])
        if time.monotonic() > deadline:
            raise Stop(f"the downloads never arrived: {files}")
        time.sleep(0.1)


def compare(driver, a, b):
    """Compares report `a` with `b`: each row's metric, whether it differs, its text."""
    Select(driver.find_element(By.ID, "rep_a")).select_by_value(a)
    Select(driver.find_element(By.ID, "rep_b")).select_by_value(b)
    click(driver, "rep_compare")
    wait_for(driver, "the comparison", lambda d: d.find_elements(By.CSS_SELECTOR, "#rep_compare_rows tr[data-metric]"))
    return [(tr.get_attribute("data-metric"), tr.get_attribute("data-differs"), tr.text)
            for tr in driver.find_elements(By.CSS_SELECTOR, "#rep_compare_rows tr[data-metric]")]


def reports_step(driver, shot_dir, first_report, downloads, configs_dir):
    second, scenario_events = second_run(driver, configs_dir)
    wait_for(driver, "both reports in the list",
             lambda d: {first_report, second} <= {tr.get_attribute("data-name") for tr in
                                                  d.find_elements(By.CSS_SELECTOR, "#rep_list tr[data-name]")})
    listed = text(driver, "rep_list")
    opened = {"summary": text(driver, "rep_summary"), "slo": text(driver, "rep_slo"),
              "verdict": text(driver, "rep_verdict"),
              "hist_bars": attr(driver, "rep_chart_hist", "data-bars"),
              "latency_points": attr(driver, "rep_chart_latency", "data-points")}
    # Downloads through the page (fetched with the header, saved from a Blob URL).
    click(driver, "rep_download_json")
    message(driver, "rep_message", "downloaded", "the JSON download")
    click(driver, "rep_download_csv")
    message(driver, "rep_message", ".csv", "the CSV download")
    files, json_file, csv_file = wait_downloads(downloads)
    with open(csv_file) as f:
        csv_head = f.readline().strip()
    with open(json_file) as f:
        downloaded = json.load(f)
    shot_path = shot(driver, shot_dir, "reports")
    rows = compare(driver, first_report, second)
    highlighted = len(driver.find_elements(By.CSS_SELECTOR, "#rep_compare_rows tr.differs"))
    driver.execute_script("document.getElementById('rep_compare_view').scrollIntoView()")
    driver.save_screenshot(os.path.join(shot_dir, "panel-reports-compare.png"))
    return {"phase": "reports", "first": first_report, "second": second, "listed": listed,
            "scenario_events": scenario_events, "opened": opened, "downloads": files,
            "csv_head": csv_head, "downloaded_schema": downloaded.get("schema"),
            "compare_rows": rows, "highlighted": highlighted,
            "compare_message": text(driver, "rep_message"), "screenshot": shot_path}


def token_step(driver, url, shot_dir, downloads):
    driver.get(url + "#reports")
    form = driver.find_element(By.ID, "token_form")
    wait_for(driver, "the token prompt", lambda d: form.is_displayed())
    before = text(driver, "version")
    driver.find_element(By.ID, "token_input").send_keys(os.environ.get("PANEL_TOKEN", ""))
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(driver, "the version after the token", lambda d: text(d, "version").startswith("v"))
    wait_for(driver, "a report in the list",
             lambda d: d.find_elements(By.CSS_SELECTOR, "#rep_list tr[data-name]"))
    name = driver.find_elements(By.CSS_SELECTOR, "#rep_list tr[data-name]")[0].get_attribute("data-name")
    driver.find_elements(By.CSS_SELECTOR, "#rep_list tr[data-name]")[0].click()
    wait_for(driver, "the report", lambda d: attr(d, "rep_view", "data-name") == name)
    click(driver, "rep_download_json")
    message(driver, "rep_message", "downloaded", "the JSON download with a token")
    deadline = time.monotonic() + WAIT_S
    while not [f for f in os.listdir(downloads) if f.endswith(".json")]:
        if time.monotonic() > deadline:
            raise Stop("the download with a token never arrived")
        time.sleep(0.1)
    got = [f for f in os.listdir(downloads) if f.endswith(".json")][0]
    with open(os.path.join(downloads, got)) as f:
        downloaded = json.load(f)
    open_tab(driver, "configs")
    ro = driver.find_element(By.ID, "cfg_readonly")
    wait_for(driver, "the read-only notice", lambda d: ro.is_displayed() and "read-only" in ro.text)
    return {"phase": "token", "version_before": before, "version": text(driver, "version"),
            "form_hidden": not form.is_displayed(), "url": driver.current_url,
            "stored": driver.execute_script("return sessionStorage.getItem('ingestbench.panel.token')"),
            "report": name, "downloaded": got, "downloaded_schema": downloaded.get("schema"),
            "readonly": ro.text, "save_enabled": driver.find_element(By.ID, "cfg_save").is_enabled(),
            "screenshot": shot(driver, shot_dir, "token-configs")}


def page_state(driver):
    """What the page shows, for a failure message."""
    if driver is None:
        return {}
    try:
        return {
            "url": driver.current_url,
            "run_state": text(driver, "run_state"),
            "messages": {k: text(driver, k) for k in (
                "run_message", "run_control_message", "cfg_message", "scn_message", "rep_message", "global_message")},
            "console": console(driver),
        }
    except Exception as e:
        return {"page_state": f"unavailable: {e}"}


def main():
    mode, url, shot_dir, work_dir, chromium, chromedriver = sys.argv[1:7]
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(OVERALL_S)
    os.makedirs(shot_dir, exist_ok=True)
    downloads = os.path.join(work_dir, "downloads")
    os.makedirs(downloads, exist_ok=True)
    driver = None
    started = time.monotonic()
    try:
        driver = browser(work_dir, chromium, chromedriver, downloads)
        if mode == "token":
            emit(token_step(driver, url, shot_dir, downloads))
            emit({"phase": "done", "seconds": round(time.monotonic() - started, 1), "console": console(driver)})
            return 0
        configs, scenarios, reports = sys.argv[7:10]
        emit(header_step(driver, url))
        emit(packs_step(driver, shot_dir))
        emit(scenarios_step(driver, shot_dir, scenarios))
        emit(configs_step(driver, shot_dir, configs))
        run = run_step(driver, shot_dir)
        emit(run)
        emit(reports_step(driver, shot_dir, run["report"], downloads, configs))
        emit({"phase": "done", "seconds": round(time.monotonic() - started, 1), "console": console(driver)})
        return 0
    except Stop as e:
        emit({"phase": "error", "error": str(e), **page_state(driver)})
        return 1
    except Exception as e:
        emit({"phase": "error", "error": f"{type(e).__name__}: {e}", **page_state(driver)})
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
