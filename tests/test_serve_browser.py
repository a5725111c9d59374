"""The `elman serve` web page in a real headless Chromium (Debian's chromium and
chromium-driver, driven through Selenium).

Loads the page, picks a model, types a sentence, submits, and compares what the page
rendered (probability bars, highlighted entities, the translation, next tokens) with
the API's answer; opens a report from the reports page; saves one screenshot per task
into the test's temporary folder. In CI (CI set) the test must run: a missing browser
is then a failure, not a skip.
"""

import os
import shutil

import pytest

from tests.test_serve import serve_tiny_runs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


def _require_browser():
    missing = []
    if not CHROMIUM or not DRIVER:
        missing.append("chromium and chromium-driver (apt-get install -y chromium "
                       "chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip install selenium)")
    if missing:
        message = "the browser test needs " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message + "; CI must run it")
        pytest.skip(message)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(base URL, {task: run folder}) of a server with every tiny run that loads."""
    _require_browser()
    server, _, runs = serve_tiny_runs(tmp_path_factory)
    yield server.url, runs
    server.stop()


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium driven by the system chromedriver (nothing downloaded)."""
    _require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 "--disable-gpu", "--window-size=1100,1400", "--lang=en-US"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _predict_in_page(browser, url, model, text, trace=False):
    """Opens the page, picks `model`, types `text`, ticks the trace box when `trace`,
    submits; returns the result element."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(url + "/")
    wait = WebDriverWait(browser, 60)
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    Select(browser.find_element(By.ID, "model")).select_by_value(model)
    box = browser.find_element(By.ID, "text")
    box.clear()
    box.send_keys(text)
    if trace != browser.find_element(By.ID, "trace").is_selected():
        browser.find_element(By.ID, "trace").click()
    browser.find_element(By.ID, "submit").click()
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-state"))
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "done", \
        browser.find_element(By.ID, "status").text
    return wait.until(ready.presence_of_element_located((By.CSS_SELECTOR, "#results .result")))


def _api(url, model, text, verb="predict"):
    import httpx

    response = httpx.post(f"{url}/v1/models/{model}:{verb}", json={"instances": [text]},
                          timeout=60)
    assert response.status_code == 200, response.text
    return response.json()["predictions" if verb == "predict" else "traces"][0]


def _trace_rows(result):
    from selenium.webdriver.common.by import By

    rows = result.find_elements(By.CSS_SELECTOR, "table.trace tr")
    return [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in rows[1:]]


def test_sentiment_bars_show_the_api_probabilities(site, browser, tmp_path):
    from selenium.webdriver.common.by import By

    url, runs = site
    name, text = runs["sentiment"].name, "the food was great and the staff were kind"
    result = _predict_in_page(browser, url, name, text)
    expected = _api(url, name, text)
    bars = result.find_elements(By.CSS_SELECTOR, ".bar")
    shown = {bar.get_attribute("data-label"): float(bar.get_attribute("data-probability"))
             for bar in bars}
    assert shown == expected["probabilities"]
    values = [bar.find_element(By.CSS_SELECTOR, ".value").text for bar in bars]
    assert values == [f"{p:.4f}" for p in expected["probabilities"].values()]
    assert result.find_element(By.CSS_SELECTOR, ".label").text == expected["label"]
    widths = [bar.find_element(By.CSS_SELECTOR, ".fill").size["width"] for bar in bars]
    assert widths[0] != widths[1] or len(set(shown.values())) == 1  # the bars are drawn
    assert not result.find_elements(By.CSS_SELECTOR, ".trace-box")  # only when asked
    browser.save_screenshot(str(tmp_path / "sentiment.png"))


def test_the_sentiment_trace_is_drawn_under_the_prediction(site, browser, tmp_path):
    from selenium.webdriver.common.by import By

    url, runs = site
    name, text = runs["sentiment"].name, "the service was slow but the food was great"
    result = _predict_in_page(browser, url, name, text, trace=True)
    trace = _api(url, name, text, "trace")
    lines = result.find_elements(By.CSS_SELECTOR, "svg.trace-chart polyline")
    assert [line.get_attribute("data-label") for line in lines] == trace["labels"]
    for line in lines:  # one point per token read
        assert len(line.get_attribute("points").split()) == len(trace["steps"])
    assert _trace_rows(result) == [
        [str(t), step["token"], *(f"{step['probabilities'][label]:.4f}"
                                  for label in trace["labels"])]
        for t, step in enumerate(trace["steps"], start=1)]
    browser.execute_script("arguments[0].scrollIntoView()", result)
    browser.save_screenshot(str(tmp_path / "sentiment-trace.png"))


def test_tagging_entities_are_highlighted_in_the_text(site, browser, tmp_path):
    from selenium.webdriver.common.by import By

    url, runs = site
    name, text = runs["tagging"].name, "Mary visited Paris with John"
    result = _predict_in_page(browser, url, name, text)
    expected = _api(url, name, text)
    marks = result.find_elements(By.CSS_SELECTOR, "mark.entity")
    assert [(m.get_attribute("data-type"), m.get_attribute("data-text")) for m in marks] == \
        [(e["type"], e["text"]) for e in expected["entities"]]
    assert [m.find_element(By.CSS_SELECTOR, ".etype").text for m in marks] == \
        [e["type"] for e in expected["entities"]]
    tags = [td.text for td in result.find_elements(By.CSS_SELECTOR, "table.tokens td.tag")]
    assert tags == expected["tags"]
    result = _predict_in_page(browser, url, name, text, trace=True)
    trace = _api(url, name, text, "trace")
    assert [row[:3] for row in _trace_rows(result)] == [
        [s["token"], s["tag"], f"{s['probability']:.4f}"] for s in trace["steps"]]
    browser.save_screenshot(str(tmp_path / "tagging.png"))


def test_translation_and_next_tokens_are_shown(site, browser, tmp_path):
    from selenium.webdriver.common.by import By

    url, runs = site
    name, text = runs["translation"].name, "i like tea"
    result = _predict_in_page(browser, url, name, text)
    shown = result.find_element(By.CSS_SELECTOR, ".translation").text
    assert shown == _api(url, name, text)["translation"].strip()
    trace = _api(url, name, text, "trace")  # the attention heatmap is always shown
    assert _trace_rows(result) == [[s["token"], f"{s['probability']:.4f}", ""]
                                   for s in trace["steps"]]
    cells = [[float(td.get_attribute("data-weight"))
              for td in row.find_elements(By.TAG_NAME, "td")]
             for row in result.find_elements(By.CSS_SELECTOR, "table.heatmap tr")[1:]]
    assert cells == [s["attention"] for s in trace["steps"]]
    browser.execute_script("arguments[0].scrollIntoView()", result)
    browser.save_screenshot(str(tmp_path / "translation.png"))
    name, text = runs["lm"].name, "the cat"
    result = _predict_in_page(browser, url, name, text)
    expected = _api(url, name, text)
    bars = result.find_elements(By.CSS_SELECTOR, ".bar")
    assert [b.get_attribute("data-label") for b in bars] == [
        n["token"] for n in expected.get("next", [])]
    result = _predict_in_page(browser, url, name, text, trace=True)
    trace = _api(url, name, text, "trace")
    assert [row[:2] for row in _trace_rows(result)] == [
        [s["token"], f"{s['surprisal_bits']:.2f}"] for s in trace["steps"]]
    browser.save_screenshot(str(tmp_path / "lm.png"))


def test_a_bad_request_shows_the_error(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    url, _ = site
    browser.get(url + "/")
    WebDriverWait(browser, 60).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.ID, "model")).select_by_value("echo")
    repeat = browser.find_element(By.ID, "option-repeat")
    assert (repeat.get_attribute("min"), repeat.get_attribute("max")) == ("1", "3")
    browser.find_element(By.ID, "text").send_keys("boom")
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "error")
    assert browser.find_element(By.ID, "status").text == \
        "text 1 is 'boom'; expected anything else"
    assert not browser.find_elements(By.CSS_SELECTOR, "#results .result")


def test_reports_page_opens_a_report(site, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    url, runs = site
    browser.get(url + "/reports")
    wait = WebDriverWait(browser, 60)
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#reports tbody tr")
    assert len(rows) >= len(runs)
    browser.save_screenshot(str(tmp_path / "reports.png"))
    name = runs["sentiment"].name
    browser.find_element(By.LINK_TEXT, name).click()
    wait.until(lambda d: "report" in d.title.lower())
    assert browser.current_url.endswith(f"/reports/sentiment/{name}/report.html")
    assert f"Sentiment report — {name}" in browser.find_element(By.TAG_NAME, "h1").text
    browser.save_screenshot(str(tmp_path / "report.png"))


def test_the_sentiment_trace_shows_attention_weights(browser, tmp_path, tiny_sentiment):
    """A run with attention pooling: the page's trace table gains each token's weight,
    as the API's trace gives it."""
    _require_browser()
    from elman.serve.models import load_models
    from tests.conftest import train_tiny_sentiment
    from tests.test_serve import start_server

    run = train_tiny_sentiment(tmp_path, tiny_sentiment, "attention-run",
                               "--set", "head.pooling=attention")
    models = load_models([run], reports_root=tmp_path / "reports", log=lambda *a: None)
    server = start_server(models, reports=tmp_path / "reports")
    try:
        name, text = next(iter(models)), "the service was slow but the food was great"
        result = _predict_in_page(browser, server.url, name, text, trace=True)
        trace = _api(server.url, name, text, "trace")
        assert _trace_rows(result) == [
            [str(t), step["token"], *(f"{step['probabilities'][label]:.4f}"
                                      for label in trace["labels"]),
             f"{step['attention']:.4f}", ""]
            for t, step in enumerate(trace["steps"], start=1)]
        browser.save_screenshot(str(tmp_path / "sentiment-attention.png"))
    finally:
        server.stop()
