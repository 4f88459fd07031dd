"""The Dask sweep (examples/sweep_dask.py, mollier.sweep) on a real cluster: a `dask scheduler`
and two `dask worker` processes (each with its nanny) on 127.0.0.1, started and stopped here by
their process ids. Losing every worker at once mid-sweep costs nothing but time, and a client
killed mid-sweep loses only the tasks it had not written: the rerun runs just those. A scheduler
killed mid-sweep stops the sweep with one line, and a rerun on a new cluster resumes it."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("dask.distributed")

sys.path.insert(0, str(ROOT / "examples"))
import sweep_dask  # noqa: E402

from mollier import sweep  # noqa: E402

# 2 loads x 2 margins x criterion (d), 32 frames in chunks of 4: 32 tasks of 4 frames
ARGS = ["--frames", "32", "--chunk", "4", "--loads", "0", "30", "--margins", "1", "0.7", "--criteria", "d"]
TASKS = 32
LIMIT = 240  # s: every wait here is bounded


def _start(args, log, env):
    return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)


def _stop(p):
    """Stop a process started here, and its children (a nanny's worker), by its process group."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=30)


class Cluster:
    """A scheduler and two nanny-managed workers on 127.0.0.1; `client` is the test's own."""

    def __init__(self, tmp: Path, allowed_failures: int):
        env = {**os.environ, "RAYON_NUM_THREADS": "1", **sweep.dask_env(),
               "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": str(allowed_failures)}
        self.file = tmp / "scheduler.json"
        self.log = open(tmp / "cluster.log", "w")
        self.client = None
        self.procs = []
        try:
            self._start(tmp, env)
        except BaseException:
            self.close()
            raise

    def _start(self, tmp, env):
        self.procs = [_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                              "--scheduler-file", str(self.file)], self.log, env)]
        deadline = time.monotonic() + 60
        self.address = None
        while self.address is None and time.monotonic() < deadline:
            try:  # the file may be seen before the scheduler has finished writing it
                self.address = json.loads(self.file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        assert self.address, "the scheduler did not start"
        assert self.address.startswith("tcp://127.0.0.1:")
        for i in range(2):
            self.procs.append(_start(["worker", "--scheduler-file", str(self.file), "--host", "127.0.0.1",
                                      "--nthreads", "1", "--nworkers", "1", "--no-dashboard", "--name", f"w{i}",
                                      "--local-directory", str(tmp / f"w{i}"), "--death-timeout", "60"],
                                     self.log, env))
        self.client = distributed.Client(self.address, timeout="60s")
        self.client.wait_for_workers(2, timeout=120)

    def worker_pids(self):
        return sorted(self.client.run(os.getpid).values())

    def pending(self):
        """The sweep's tasks the scheduler has not finished (its keys start with `sweep-`)."""
        return self.client.run_on_scheduler(lambda dask_scheduler: [
            k for k, ts in dask_scheduler.tasks.items()
            if str(k).startswith("sweep-") and ts.state in ("waiting", "queued", "processing", "no-worker")])

    def idle(self):
        """Wait until the scheduler holds no task (a killed client's tasks are released)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            n = self.client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
            if n == 0:
                return
            time.sleep(0.2)
        raise AssertionError("the scheduler still holds tasks")

    def close(self):
        if self.client is not None:
            self.client.close()
        for p in reversed(self.procs):
            _stop(p)
        self.log.close()


@pytest.fixture
def cluster(tmp_path, request):
    c = Cluster(tmp_path, getattr(request, "param", 3))
    yield c
    c.close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The fault-free sweep, run in this process (no Dask): its results directory's table."""
    d = tmp_path_factory.mktemp("reference")
    time_, q, columns = sweep_dask.shoulder_motion(32, d)
    work = sweep_dask.tasks(sweep_dask.grid([0.0, 30.0], [1.0, 0.7], ["d"]), time_, q, columns, 4)
    assert len(work) == TASKS
    report = sweep.run(None, work, sweep.ResultsDir(d / "sweep"))
    assert (report.ran, report.skipped) == (TASKS, 0)
    return sweep.read_table(report.table), work


def _sweep(cluster, out, *extra):
    """The example as a user runs it, against the cluster, in its own process."""
    env = {**os.environ, "RAYON_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, str(ROOT / "examples" / "sweep_dask.py"), "--scheduler", cluster.address,
                             *ARGS, "--out", str(out), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)


def _finished(out):
    """The task files the sweep has written (not a temporary one it was writing)."""
    tasks = out.parent / f".{out.name}.partial" / "tasks"
    return sorted(f for f in tasks.glob("*.npz") if not f.name.startswith("."))


def _wait_for(p, out, at_least, cluster):
    """Wait until the sweep has written `at_least` task files while tasks run on the workers:
    the keys running."""
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        if len(_finished(out)) >= at_least:
            busy = cluster.pending()
            if busy:
                return busy
        assert p.poll() is None, f"the sweep ended early: {p.communicate()}"
        time.sleep(0.02)
    raise AssertionError("the sweep wrote no task in time")


def _table_of(out):
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True
    return sweep.read_table(out / summary["table"]), summary


@pytest.mark.parametrize("cluster", [3, 0], indirect=True, ids=["scheduler-retries", "client-resubmits"])
def test_every_worker_killed_mid_sweep_the_sweep_completes_unchanged(cluster, reference, tmp_path, request):
    """Both workers SIGKILLed while tasks run (their nannies start new ones): the sweep ends
    well and its table equals the fault-free one row for row. With the scheduler's
    allowed-failures at 0 the lost tasks come back as KilledWorker, and the client submits them
    again; at 3 the scheduler reruns them itself. Either way the model files, which lived only
    on the dead workers, are computed again from the graph."""
    table, _ = reference
    out = tmp_path / "sweep"
    before = cluster.worker_pids()
    p = _sweep(cluster, out)
    try:
        busy = _wait_for(p, out, 1, cluster)
        done = len(_finished(out))
        for pid in before:
            os.kill(pid, signal.SIGKILL)  # a crash: no goodbye to the scheduler
        stdout, stderr = p.communicate(timeout=LIMIT)
    finally:
        _stop(p)
    assert busy and done < TASKS, (busy, done)
    assert p.returncode == 0, stderr
    assert "Traceback" not in stderr
    got, summary = _table_of(out)
    pd.testing.assert_frame_equal(got, table, check_exact=True)
    assert summary["run"]["ran"] == TASKS and summary["run"]["skipped"] == 0
    if request.node.callspec.id == "client-resubmits":
        assert summary["run"]["resubmitted"] >= 1, summary
    cluster.client.wait_for_workers(2, timeout=120)
    assert not set(cluster.worker_pids()) & set(before), "the workers were not replaced"


def test_the_cluster_runs_with_the_sweeps_dask_settings(cluster):
    """`dask worker` and `dask scheduler` started with `mollier.sweep.dask_env()` (as
    docs/scale-out.md says) run without the dashboard's profiler and with the slow monitors of
    `DASK_CONFIG`; the heartbeat is Dask's own."""
    for callbacks in cluster.client.run(lambda dask_worker: {
            k: pc.callback_time for k, pc in dask_worker.periodic_callbacks.items()}).values():
        assert "profile" not in callbacks and callbacks["tick"] == 1000, callbacks
        assert callbacks["monitor"] == 5000 and callbacks["memory_monitor"] == 1000, callbacks
    tick = cluster.client.run_on_scheduler(
        lambda dask_scheduler: dask_scheduler.periodic_callbacks["tick"].callback_time)
    assert tick == 1000


def test_a_client_killed_mid_sweep_reruns_only_the_missing_tasks(cluster, reference, tmp_path):
    table, work = reference
    out = tmp_path / "sweep"
    p = _sweep(cluster, out)
    try:
        _wait_for(p, out, 3, cluster)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        _stop(p)
    kept = {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in _finished(out)}
    assert 3 <= len(kept) < TASKS, len(kept)
    assert not out.exists(), "a killed sweep left a results directory"
    cluster.idle()
    start = time.time()
    cluster.client.get_task_stream(start=start)  # the scheduler records the tasks from now on
    p = _sweep(cluster, out)
    try:
        stdout, stderr = p.communicate(timeout=LIMIT)
    finally:
        _stop(p)
    assert p.returncode == 0, stderr
    missing = TASKS - len(kept)
    assert f"{TASKS} tasks: {len(kept)} already done, {missing} run" in stdout, stdout
    # counted by the scheduler, not by the sweep: the tasks the workers ran for the rerun
    # (a Dask task's key ends with the ids of the sweep's tasks it ran, several to a Dask task)
    ran = {r["key"] for r in cluster.client.get_task_stream(start=start) if str(r["key"]).startswith("sweep-")}
    ids_run = [i for k in ran for i in k.split("-")[-1].split(".")]
    assert len(ids_run) == missing, sorted(ran)
    assert set(ids_run) == {t.id[:8] for t in work if f"{t.id}.npz" not in kept}
    got, summary = _table_of(out)
    pd.testing.assert_frame_equal(got, table, check_exact=True)
    assert summary["run"] == {"tasks": TASKS, "skipped": len(kept), "ran": missing, "resubmitted": 0}
    # the tasks written before the kill were kept as they were, not written again
    for name, (ino, mtime) in kept.items():
        f = out / "tasks" / name
        assert (f.stat().st_ino, f.stat().st_mtime_ns) == (ino, mtime), name


@pytest.mark.parametrize("cluster", [0], indirect=True)
def test_a_task_lost_more_often_than_its_retries_stops_with_one_message(cluster, tmp_path):
    """`--retries 0` and a scheduler that gives up on a task at its first lost worker: the
    sweep stops with one line naming the task and the cause, no traceback, and keeps what it
    finished for a rerun."""
    out = tmp_path / "sweep"
    before = cluster.worker_pids()
    p = _sweep(cluster, out, "--retries", "0")
    try:
        _wait_for(p, out, 1, cluster)
        for pid in before:
            os.kill(pid, signal.SIGKILL)
        stdout, stderr = p.communicate(timeout=LIMIT)
    finally:
        _stop(p)
    assert p.returncode == 1, (stdout, stderr)
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("sweep_dask: ")]
    assert len(lines) == 1, stderr
    assert "lost 1 time " in lines[0] and "KilledWorker" in lines[0] and "-chunk" in lines[0], lines[0]
    assert not out.exists() and len(_finished(out)) >= 1


def test_the_scheduler_killed_mid_sweep_keeps_the_finished_tasks_and_a_rerun_resumes(reference, tmp_path):
    """The scheduler SIGKILLed while tasks run (a head node lost): the sweep stops with one
    line, no traceback, the tasks it wrote kept; rerun against a new cluster, it runs only the
    others and its table equals the fault-free one row for row."""
    table, work = reference
    out = tmp_path / "sweep"
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = Cluster(tmp_path / "first", 3)
    try:
        p = _sweep(first, out)
        try:
            _wait_for(p, out, 3, first)
            os.kill(first.procs[0].pid, signal.SIGKILL)  # the scheduler alone: its workers live on
            stdout, stderr = p.communicate(timeout=LIMIT)
        finally:
            _stop(p)
    finally:
        first.close()
    assert p.returncode == 1, (stdout, stderr)
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("sweep_dask: ")]
    assert len(lines) == 1, stderr
    kept = {f.name for f in _finished(out)}
    assert 3 <= len(kept) < TASKS, len(kept)
    assert not out.exists(), "a sweep that lost its scheduler left a results directory"
    second = Cluster(tmp_path / "second", 3)
    try:
        p = _sweep(second, out)
        try:
            stdout, stderr = p.communicate(timeout=LIMIT)
        finally:
            _stop(p)
    finally:
        second.close()
    assert p.returncode == 0, stderr
    missing = TASKS - len(kept)
    assert f"{TASKS} tasks: {len(kept)} already done, {missing} run" in stdout, stdout
    got, summary = _table_of(out)
    pd.testing.assert_frame_equal(got, table, check_exact=True)
    assert summary["run"]["skipped"] == len(kept) and summary["run"]["ran"] == missing, summary
