"""Fixtures: the repository, the `mollier` command (built by tools/test-python) and a runner
that writes a command's outputs into a temporary directory."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "models"
SHARED_DATA = ROOT.parent / "shared" / "data"


def _in_ci() -> bool:
    return os.environ.get("CI") == "true"


def _skip_fails_in_ci(report):
    """Under CI=true every dependency of these tests is installed (tools/test-python installs the
    test extras), so a skip can only mean a fault: it is reported as a failure."""
    if _in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"a missing dependency under CI=true is a failure, not a skip: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _skip_fails_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _skip_fails_in_ci(outcome.get_result())


def _cli() -> Path:
    given = os.environ.get("MOLLIER_CLI")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    found = target / "release" / "mollier"
    if found.exists():
        return found
    on_path = shutil.which("mollier")
    if on_path:
        return Path(on_path)
    pytest.exit("no `mollier` command: run tools/test-python, or set MOLLIER_CLI", returncode=2)


@pytest.fixture(scope="session")
def cli():
    """Run `mollier ARGS...` and return the completed process (check=True)."""
    exe = _cli()

    def run(*args, check=True):
        return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, check=check,
                              cwd=ROOT)

    return run


@pytest.fixture(scope="session")
def shoulder_motion(tmp_path_factory, cli):
    """A few frames of the abduction study's motion (its motion.csv), from a study file like
    models/shoulder/abduction.toml with 3 frames and one variant."""
    out = tmp_path_factory.mktemp("shoulder")
    text = (MODELS / "shoulder" / "abduction.toml").read_text()
    text = text.replace('model = "shoulder.toml"', f'model = "{MODELS / "shoulder" / "shoulder.toml"}"')
    text = text.replace("frames = 37", "frames = 3")
    import re

    text = re.sub(r"criteria = \[[^\]]*\]", 'criteria = ["b"]', text)
    text = re.sub(r"joint_cone = \[[^\]]*\]", 'joint_cone = ["with"]', text)
    study = out / "study.toml"
    study.write_text(text)
    cli("study", study, "--out", out / "cli", "-q")
    return study, out / "cli" / "motion.csv"


def long_call(make, size=1, at_least=0.3, most=10**6):
    """`make(size)`, a call, for the first size (growing fourfold) whose call takes `at_least`
    seconds here: the GIL test stays meaningful on a faster machine or kernel."""
    import time

    while True:
        call = make(size)
        start = time.perf_counter()
        call()
        if time.perf_counter() - start >= at_least or size >= most:
            return call
        size *= 4


def assert_gil_released(call):
    """Run `call` in a thread while this one ticks every millisecond: with the GIL held through
    the call, no tick could fall inside it."""
    import threading
    import time

    span, ticks = {}, []

    def work():
        span["start"] = time.perf_counter()
        call()
        span["end"] = time.perf_counter()

    t = threading.Thread(target=work)
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    start, end = span["start"], span["end"]
    assert end - start > 0.2, "the call is too short to tell"
    inside = [x for x in ticks if start + 0.05 < x < end - 0.05]
    assert len(inside) > 5, (len(inside), end - start)
