"""papermill for the tests: a cell timeout and one fresh start when it strikes.

A kernel's reply can get lost (seen once in about six quick study runs): nbclient then
waits forever and so would CI. The study runner guards its own runs
(``hmlkit.studies.runner.CELL_TIMEOUT``); tests that execute a notebook directly go
through here."""
import papermill as pm

CELL_TIMEOUT = 600  # seconds; every notebook the tests run takes well under a minute a cell


def execute_notebook(input_path, output_path, **kwargs):
    kwargs.setdefault("execution_timeout", CELL_TIMEOUT)
    kwargs.setdefault("progress_bar", False)
    try:
        return pm.execute_notebook(str(input_path), str(output_path), **kwargs)
    except TimeoutError:  # nbclient's CellTimeoutError: once more, from a fresh kernel
        return pm.execute_notebook(str(input_path), str(output_path), **kwargs)
