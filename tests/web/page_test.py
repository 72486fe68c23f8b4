#!/usr/bin/env python3
"""The web page in headless Chromium (chromedriver, python3-selenium), against a running master.

Environment: SNN_API (the API's address), SNN_TOKEN (an access token), GATE (a file the job waits
for), SCREENSHOT_DIR (where job.png and pool.png go), BROWSER_DIR (Chromium's profile, removed by
the caller). Every wait is on a condition in the page, with a bound long enough for a loaded
machine; nothing depends on how fast the page is. Prints "page test: OK" when all held.
"""
import os
import sys

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

API = os.environ["SNN_API"]
TOKEN = os.environ["SNN_TOKEN"]
GATE = os.environ["GATE"]
SHOTS = os.environ["SCREENSHOT_DIR"]
BOUND_S = 180  # a bound for a stuck page, not a margin

JOB = f"""name: from-the-page
time_limit: 10m
task:
  command: /bin/sh
  args: ["-c", "while [ ! -e {GATE} ]; do sleep 0.05; done; echo hello from the page; echo 42 > $SNN_OUTPUT_DIR/answer.txt"]
  resources:
    cores: 4
    ksps: 100
"""


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1400", "--user-data-dir=" + os.environ["BROWSER_DIR"]):
        options.add_argument(arg)
    # The master's certificate is signed by the test cluster's own CA.
    options.set_capability("acceptInsecureCerts", True)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait_for(driver, what, condition):
    try:
        return WebDriverWait(driver, BOUND_S, poll_frequency=0.1,
                             ignored_exceptions=[StaleElementReferenceException]).until(
                                 lambda d: condition(d))
    except TimeoutException:
        sys.exit(f"page test: gave up waiting for {what}; the page shows:\n"
                 + driver.find_element(By.TAG_NAME, "body").text)


# Reads in one script, so a view that re-renders between finding and reading cannot interfere.
def text_of(driver, css):
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.innerText : ''", css)


def texts_of(driver, css):
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((e) => e.innerText)", css)


def count_of(driver, css):
    return driver.execute_script("return document.querySelectorAll(arguments[0]).length", css)


def click(driver, css):
    wait_for(driver, "to click " + css,
             lambda d: d.find_element(By.CSS_SELECTOR, css).click() or True)


def sign_in(driver):
    driver.get(API + "/")
    wait_for(driver, "the sign-in form", lambda d: d.find_elements(By.ID, "token"))
    driver.find_element(By.ID, "token").send_keys("not-a-token")
    click(driver, "#sign-in")
    wait_for(driver, "the refusal of a wrong token",
             lambda d: "token" in text_of(d, "[role=alert]"))
    driver.find_element(By.ID, "token").send_keys(TOKEN)
    click(driver, "#sign-in")
    wait_for(driver, "the queue", lambda d: text_of(d, "h1") == "Queue")
    wait_for(driver, "the event stream", lambda d: text_of(d, "#live") == "Live")


def submit(driver):
    click(driver, "nav a[data-section=submit]")
    box = wait_for(driver, "the submit form", lambda d: d.find_elements(By.ID, "job-file"))[0]
    box.clear()
    box.send_keys(JOB)
    click(driver, "#submit-job")
    wait_for(driver, "the job's page", lambda d: text_of(d, "h1").startswith("Job 1"))
    wait_for(driver, "the job running on its page", lambda d: text_of(d, "#job-state") == "RUNNING")


def submit_with_a_model(driver):
    """A NIR export chosen beside the job file: sent as a form upload, its cores from the model."""
    click(driver, "nav a[data-section=submit]")
    box = wait_for(driver, "the submit form", lambda d: d.find_elements(By.ID, "job-file"))[0]
    box.clear()
    box.send_keys("name: with-a-model\ntenant: lab-a\ntask:\n  command: /bin/true\n"
                  "  resources:\n    ksps: 10\n    board_type: any\n")
    driver.find_element(By.ID, "model-file").send_keys(
        os.path.join(os.environ["SNN_SOURCE_DIR"], "etc/models/nir/lif_rockpool.nir"))
    click(driver, "#submit-job")
    wait_for(driver, "the uploaded job's page", lambda d: text_of(d, "h1").startswith("Job 2"))
    wait_for(driver, "the uploaded job completed",
             lambda d: text_of(d, "#job-state") == "COMPLETED")


def watch_on_queue(driver):
    click(driver, "nav a[data-section=jobs]")
    row = "tr[data-job='lab-a/1']"
    wait_for(driver, "the job's row, running",
             lambda d: count_of(d, row + "[data-state=RUNNING]"))
    # A mark that a reload would wipe: the row must change by itself, from the event stream.
    driver.execute_script("window.snnNoReload = true")
    open(GATE, "w").close()
    wait_for(driver, "the job's row, completed",
             lambda d: count_of(d, row + "[data-state=COMPLETED]"))
    assert driver.execute_script("return window.snnNoReload === true"), "the page reloaded"
    click(driver, row + " a")


def check_job_page(driver):
    wait_for(driver, "the job's page, completed",
             lambda d: text_of(d, "#job-state") == "COMPLETED"
             and "hello from the page" in text_of(d, "pre.output"))
    history = texts_of(driver, "table tbody tr")
    assert any("PENDING" in r for r in history), history
    assert any("RUNNING" in r and "COMPLETED" in r for r in history), history
    mine = count_of(driver, "svg.board rect.mine")
    assert mine == 4, f"{mine} cores drawn as the task's, not 4"
    cells = count_of(driver, "svg.board rect.free, svg.board rect.mine")
    assert cells == 16, f"{cells} cells drawn for a 4x4 board"
    assert count_of(driver, "svg.board rect.outline") == 1, "no rectangle around the cores"
    assert count_of(driver, "tr[data-result='answer.txt']") == 1, "the result is not listed"
    label = driver.execute_script(
        "return document.querySelector('svg.board').getAttribute('aria-label')")
    assert "4 in use" in label, label
    driver.save_screenshot(os.path.join(SHOTS, "job.png"))


def check_other_tenant(driver):
    # Another tenant's queue is refused with the API's own line; the page says so.
    driver.execute_script("location.hash = '#/jobs?tenant=lab-b'")
    wait_for(driver, "the refusal of another tenant's queue",
             lambda d: "lab-b" in text_of(d, "main [role=alert]"))
    driver.execute_script("location.hash = '#/jobs?tenant=lab-a'")
    wait_for(driver, "lab-a's queue", lambda d: count_of(d, "tr[data-job='lab-a/1']") == 1)


def check_pool(driver):
    click(driver, "nav a[data-section=pool]")
    wait_for(driver, "the pool's boards",
             lambda d: count_of(d, "tr[data-board^='node1/']") == 2)
    assert "UP" in text_of(driver, "h2[data-node=node1]")
    driver.save_screenshot(os.path.join(SHOTS, "pool.png"))


def check_console(driver):
    # The browser logs the refusals this test asks for (a wrong token, another tenant) as
    # failed loads; anything else severe is the page's fault.
    expected = ("status of 401", "status of 403")
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"
              and not (e["source"] == "network" and any(x in e["message"] for x in expected))]
    assert not errors, f"the page logged errors: {errors}"


def main():
    driver = browser()
    try:
        sign_in(driver)
        submit(driver)
        watch_on_queue(driver)
        check_job_page(driver)
        check_other_tenant(driver)
        check_pool(driver)
        submit_with_a_model(driver)
        check_console(driver)
    finally:
        driver.quit()
    print("page test: OK; screenshots in", SHOTS)


if __name__ == "__main__":
    main()
