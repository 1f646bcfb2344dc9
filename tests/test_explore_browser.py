"""The explore panel in a real JupyterLab, driven by headless Chromium
(Debian's ``chromium`` and ``chromium-driver``, which ``make test-browser`` and ``.ci/run`` install):
run the notebook, move the "tags removed" slider in the page, and the
panel re-runs and redraws its plot.

Skipped, with the reason, where no browser or driver is installed. Set
``HMLKIT_SCREENSHOTS=DIR`` to keep the before / after screenshots."""
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="no chromium / chromedriver installed "
                       "(Debian packages chromium, chromium-driver)"),
]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def jupyterlab(root):
    """A JupyterLab server on 127.0.0.1 serving the folder ``root`` (also its kernels'
    working directory): yields its url; stopped at the end."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               JUPYTER_CONFIG_DIR=str(root / ".jupyter"), JUPYTER_RUNTIME_DIR=str(root / ".runtime"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         "--IdentityProvider.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
         f"--ServerApp.root_dir={root}", "--LabApp.news_url=", "--LabApp.check_for_updates_class="
         "jupyterlab.NeverCheckForUpdate"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start within 60 s")
        yield url
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 serving a copy of the explore notebook."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copy(REPO / "studies" / "explore.ipynb", root / "explore.ipynb")
    with jupyterlab(root) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1400"):
        opts.add_argument(arg)
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield drv
    drv.quit()


def _wait(fn, timeout, what, drv=None):
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            out = fn()
            if out:
                return out
        except Exception:  # the page is still building
            pass
        time.sleep(0.5)
    if drv is not None and os.environ.get("HMLKIT_SCREENSHOTS"):
        drv.save_screenshot(str(Path(os.environ["HMLKIT_SCREENSHOTS"]) / "explore_timeout.png"))
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


def _dismiss_dialog(drv):
    """Accept a JupyterLab dialog that covers the page; returns its text ("" if none).
    Under load JupyterLab can open its modal "Select Kernel" dialog (Python 3 preselected)
    before the notebook's kernel is settled, as a user sees it; it swallowed the test's
    menu click (ElementClickInterceptedException, once in eight full-suite runs; 2 of 5
    runs with two busy-looping processes beside). Accepting it is what a user does."""
    from selenium.webdriver.common.by import By

    dialogs = drv.find_elements(By.CSS_SELECTOR, ".jp-Dialog")
    if not dialogs:
        return ""
    text = dialogs[0].text
    buttons = dialogs[0].find_elements(By.CSS_SELECTOR, ".jp-Dialog-button.jp-mod-accept")
    if buttons:
        buttons[0].click()
    print(f"dismissed a JupyterLab dialog: {text!r}")
    time.sleep(1.0)
    return text


def _click(drv, find, what, timeout=60):
    """Click the element ``find()`` returns, accepting a dialog that intercepts the click."""
    from selenium.common.exceptions import ElementClickInterceptedException

    t0 = time.time()
    while True:
        _dismiss_dialog(drv)
        element = _wait(find, max(1.0, timeout - (time.time() - t0)), what, drv)
        try:
            element.click()
            return element
        except ElementClickInterceptedException:
            if time.time() - t0 > timeout:
                raise


def _status(drv):
    from selenium.webdriver.common.by import By

    texts = [e.text for e in drv.find_elements(By.CSS_SELECTOR, ".widget-html-content")]
    return next((t for t in texts if "done in" in t or "Error" in t), "")


def _started(drv):
    """Some cell has run or is running: its prompt is no longer "[ ]:". A prompt
    re-rendered between being found and read (stale) counts as not yet: the caller
    polls again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    try:
        prompts = [e.text.strip() for e in drv.find_elements(By.CSS_SELECTOR, ".jp-InputPrompt")]
    except StaleElementReferenceException:
        return False
    return any(t and t not in ("[ ]:", "[]:") for t in prompts)


def _plot_src(drv):
    from selenium.webdriver.common.by import By

    imgs = drv.find_elements(By.CSS_SELECTOR, "img.widget-image")
    return imgs[0].get_attribute("src") if imgs else ""


def _run_all(drv):
    """Run > Run All Cells, through the menu bar as a person would. A click that
    lands while the kernel's session is still connecting runs nothing (seen
    about once in ten runs: every prompt stays "[ ]"), so it is repeated
    until a cell has started."""
    from selenium.webdriver.common.by import By

    for _attempt in range(4):
        _click(drv, lambda: ([e for e in drv.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-itemLabel")
                              if e.text == "Run"] or [None])[0], "the Run menu")
        _click(drv, lambda: drv.find_element(By.CSS_SELECTOR, "li[data-command='runmenu:run-all']"),
               "Run All Cells", timeout=30)
        t0 = time.time()
        while time.time() - t0 < 30 and not _started(drv):
            time.sleep(0.5)
        if _started(drv):
            return


def test_moving_a_slider_in_jupyterlab_redraws_the_panel(lab, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    shots = Path(os.environ.get("HMLKIT_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    drv = browser
    drv.get(f"{lab}/lab/tree/explore.ipynb")
    _wait(lambda: drv.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell"), 120, "the notebook")
    _wait(lambda: drv.find_elements(By.CSS_SELECTOR, ".jp-Notebook-ExecutionIndicator[data-status='idle']"), 120,
          "an idle kernel")
    _run_all(drv)
    try:
        first = _wait(lambda: _status(drv) if "run 1" in _status(drv) else "", 240, "the panel's first run", drv)
    except pytest.fail.Exception:
        # seen once in many CI runs: the kernel idle, the panel never showing its first
        # run, as a widget cell can leave a notebook client waiting for good (jupyter/
        # nbclient#312); Run All once more makes a new panel, whose first run is "run 1"
        _run_all(drv)
        first = _wait(lambda: _status(drv) if "run 1" in _status(drv) else "", 300, "the panel's first run", drv)
    assert "Error" not in first
    before = _wait(lambda: _plot_src(drv), 60, "the panel's plot")
    drv.save_screenshot(str(shots / "explore_before.png"))
    # the "tags removed" slider: focus its handle and press the right arrow (one step, 0.1)
    slider = _wait(lambda: [w for w in drv.find_elements(By.CSS_SELECTOR, ".widget-slider")
                            if "tags removed" in w.text], 30, "the tags-removed slider")[0]
    handle = slider.find_element(By.CSS_SELECTOR, ".noUi-handle")
    handle.click()
    handle.send_keys(Keys.ARROW_RIGHT)
    second = _wait(lambda: _status(drv) if "run 2" in _status(drv) else "", 300, "the run after the slider moved")
    assert "Error" not in second
    after = _wait(lambda: (s := _plot_src(drv)) != before and s, 60, "a new plot")
    drv.save_screenshot(str(shots / "explore_after.png"))
    assert after and after != before
    readout = slider.find_element(By.CSS_SELECTOR, ".widget-readout").text
    assert float(readout) == pytest.approx(0.1)
