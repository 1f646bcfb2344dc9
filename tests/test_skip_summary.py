"""`make test` ends with each skipped test, its reason and what enables it (tests/conftest.py)."""
from pathlib import Path

pytest_plugins = "pytester"

import pytest

CONFTEST = Path(__file__).with_name("conftest.py")
# the hook alone (the suite's pytest_configure would warm the kit's kernels under -n)
HOOK_ONLY = f"""
import importlib.util
spec = importlib.util.spec_from_file_location("suite_conftest", {str(CONFTEST)!r})
suite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite)
pytest_terminal_summary = suite.pytest_terminal_summary
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_summary_names_each_skipped_test_and_what_enables_it(pytester, workers):
    pytester.makeconftest(HOOK_ONLY)
    pytester.makepyfile(test_inner="""
        import pytest

        def test_runs():
            pass

        @pytest.mark.skipif(True, reason="no chromium / chromedriver installed")
        def test_browser():
            pass

        def test_deep():
            pytest.importorskip("torch_absent_for_this_test")

        def test_also_deep():
            pytest.skip("could not import 'torch': No module named 'torch'")

        def test_machine():
            pytest.skip("signals reach the main thread only")
    """)
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", *workers)
    res.assert_outcomes(passed=1, skipped=4)
    out = res.stdout.str()
    assert "4 skipped: what enables them" in out
    res.stdout.fnmatch_lines([  # reasons in sorted order
        "could not import 'torch': No module named 'torch':",
        "    test_inner.py::test_also_deep",
        "  to run: make install-deep",
        "could not import 'torch_absent_for_this_test'*",  # importorskip's own reason
        "    test_inner.py::test_deep",
        "  to run: make install-deep",
        "no chromium / chromedriver installed:",
        "    test_inner.py::test_browser",
        "  to run: make test-browser*",
        "signals reach the main thread only:",
        "    test_inner.py::test_machine",
        "  (nothing to install*",
    ])


def test_no_summary_without_skips(pytester):
    pytester.makeconftest(HOOK_ONLY)
    pytester.makepyfile(test_inner="def test_runs():\n    pass\n")
    res = pytester.runpytest("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1)
    assert "what enables them" not in res.stdout.str()
