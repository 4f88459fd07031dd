"""The Dask sweep (examples/sweep_dask.py over mollier.sweep): on a LocalCluster of 2 workers it
equals the same sweep run in this process, value for value; a worker killed mid-sweep loses and
duplicates nothing; the results directory is written as a unit, and a rerun runs only what is
not finished (tests/test_dask_cluster.py does the same on a real scheduler and workers)."""

import json
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

from conftest import ROOT

pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("dask.distributed")

sys.path.insert(0, str(ROOT / "examples"))
import sweep_dask  # noqa: E402

from mollier import sweep  # noqa: E402


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A small sweep: 2 loads x 2 margins x 1 criterion x 2 chunks of 2 frames = 8 tasks."""
    time_, q, columns = sweep_dask.shoulder_motion(4, tmp_path_factory.mktemp("motion"))
    return sweep_dask.tasks(sweep_dask.grid([0.0, 30.0], [1.0, 0.7], ["b"]), time_, q, columns, 2)


@pytest.fixture(scope="module")
def sequential(work, tmp_path_factory):
    """The sweep in this process: the reference."""
    report = sweep.run(None, work, sweep.ResultsDir(tmp_path_factory.mktemp("seq") / "sweep"))
    return sweep.read_table(report.table)


@pytest.fixture(scope="module")
def cluster():
    with sweep_dask.local_cluster(2) as c, distributed.Client(c) as client:
        yield client


def test_the_variants_change_the_model():
    text = sweep_dask.model_files().texts["shoulder.toml"]
    v = sweep_dask.variant_text(text, sweep_dask.Variant(25.0, 0.5, "b"))
    # the margin goes into the joint cone's table, right after its half-angles
    assert "half_angles = [44.37, 38.55]  # deg: towards glenoid y, then z\nmargin = 0.5\n" in v
    assert 'at = "humerus.hand"' in v and "force = [0, -25.0, 0]" in v
    assert sweep_dask.variant_text(text, sweep_dask.Variant(0.0, 1.0, "b")).count("[loads.hand]") == 0


def test_the_sequential_sweep_is_sensible(sequential):
    table = sequential
    # almost_solved: clarabel's reduced accuracy with every independent check passed (a frame whose
    # joint force sits on the tightened cone)
    assert len(table) == 8 * 2 and table["status"].isin(["solved", "almost_solved"]).all()
    assert list(table.columns[:5]) == ["hand_load_N", "margin", "criterion", "chunk", "time"]
    # a load in the hand needs more muscle force and a larger joint force
    total = table.filter(regex="^[a-z_]+_[0-9]+$").sum(axis=1)
    loaded = table["hand_load_N"] > 0
    assert (total[loaded].to_numpy() > total[~loaded].to_numpy()).all()
    assert (table.loc[loaded, "joint_force_N"].to_numpy() > table.loc[~loaded, "joint_force_N"].to_numpy()).all()
    # a tighter cone keeps the joint force inside it: the stability index stays <= 0
    assert (table["stability_index"] <= 1e-6).all()
    assert len(table.groupby(["hand_load_N", "margin"])) == 4


def test_dask_equals_the_sequential_sweep(work, sequential, cluster, tmp_path):
    assert len(cluster.scheduler_info()["workers"]) == 2
    report = sweep.run(cluster, work, sweep.ResultsDir(tmp_path / "sweep"))
    assert (report.tasks, report.ran, report.skipped) == (8, 8, 0)
    pd.testing.assert_frame_equal(sweep.read_table(report.table), sequential, check_exact=True)


def test_the_local_cluster_runs_with_the_sweeps_dask_settings(cluster):
    """The example's LocalCluster starts its scheduler and workers with `DASK_CONFIG`: no
    statistical profiler sampling the task's thread every 10 ms, the monitors at 1-5 s (an idle
    worker's CPU 43 -> 4 ms a second here)."""
    for callbacks in cluster.run(lambda dask_worker: {k: pc.callback_time
                                                      for k, pc in dask_worker.periodic_callbacks.items()}).values():
        assert "profile" not in callbacks and callbacks["tick"] == 1000, callbacks
        assert callbacks["monitor"] == 5000 and callbacks["memory_monitor"] == 1000, callbacks


def test_tasks_sent_together_are_kept_one_by_one(work, sequential, cluster, tmp_path):
    """Tasks sent to a worker as one Dask task (`batch`, consecutive chunks of one model) give
    the same table, each task its own file; a task that raises among them is named, and the
    tasks before it in its Dask task are kept."""
    # groups: consecutive tasks of one model, at most `batch`; by default enough for 40
    # frames while every worker thread gets 4 Dask tasks
    assert [len(g) for g in sweep._groups(work, 1)] == [1] * 8
    assert [len(g) for g in sweep._groups(work, 3)] == [2] * 4
    assert [sweep._group_size(n, work, None) for n in (1, 2)] == [2, 1] and sweep._group_size(2, work, 3) == 3
    with pytest.raises(ValueError, match="batch"):
        sweep._group_size(2, work, 0)
    with distributed.get_task_stream(cluster) as stream:
        report = sweep.run(cluster, work, sweep.ResultsDir(tmp_path / "sweep"), batch=2)
    keys = {x["key"] for x in stream.data if str(x["key"]).startswith("sweep-")}
    # 4 variants of 2 chunks: 4 Dask tasks of 2, their keys ending with the tasks' ids
    assert sorted(len(k.split("-")[-1].split(".")) for k in keys) == [2, 2, 2, 2], keys
    assert {i for k in keys for i in k.split("-")[-1].split(".")} == {t.id[:8] for t in work}
    assert (report.ran, len(list((tmp_path / "sweep" / "tasks").iterdir()))) == (8, 8)
    pd.testing.assert_frame_equal(sweep.read_table(report.table), sequential, check_exact=True)
    bad = sweep.Task("bad-task", work[0].files, "z", work[1].time, work[1].q, work[1].columns)
    out = sweep.ResultsDir(tmp_path / "bad")
    with pytest.raises(sweep.SweepError, match=r"^task bad-task \(id [0-9a-f]+\) raised: ValueError: .*criterion"):
        sweep.run(cluster, [work[0], bad], out, batch=2)
    out.close()
    assert [f.name for f in (tmp_path / ".bad.partial" / "tasks").iterdir()] == [f"{work[0].id}.npz"]


def test_a_worker_killed_mid_sweep_loses_and_duplicates_nothing(work, sequential, cluster, tmp_path):
    killed = []
    finished = threading.Event()

    # watched from another thread, not from `on_done`: when the tasks are quick, every task in
    # flight can be done by the time the client hears of one (CI saw no worker busy then)
    def kill_the_first_busy_worker():
        while not killed and not finished.is_set():
            busy = [w for w, keys in cluster.processing().items() if keys]
            if busy:
                pid = cluster.run(os.getpid, workers=[busy[0]])[busy[0]]
                os.kill(pid, signal.SIGKILL)  # a crash: no goodbye to the scheduler
                killed.append(busy[0])
            else:
                time.sleep(0.001)

    watcher = threading.Thread(target=kill_the_first_busy_worker)
    watcher.start()
    try:
        report = sweep.run(cluster, work, sweep.ResultsDir(tmp_path / "sweep"))
    finally:
        finished.set()
        watcher.join()
    assert killed, "no worker was busy mid-sweep"
    table = sweep.read_table(report.table)
    pd.testing.assert_frame_equal(table, sequential, check_exact=True)
    keys = list(zip(table["hand_load_N"], table["margin"], table["criterion"], table["time"]))
    assert len(keys) == len(set(keys)) == len(sequential)
    # the nanny brought the worker back: the cluster is whole again for what follows
    cluster.wait_for_workers(2, timeout=60)
    assert killed[0] not in cluster.scheduler_info()["workers"], "the killed worker is still there"
    assert np.isfinite(table["joint_force_N"]).all()


def test_a_rerun_runs_only_the_tasks_whose_inputs_are_new(work, sequential, tmp_path):
    out = tmp_path / "sweep"
    first = sweep.run(None, work[:3], sweep.ResultsDir(out))
    assert (first.ran, first.skipped) == (3, 0)
    # the finished sweep's tasks are carried over; the others run
    again = sweep.run(None, work, sweep.ResultsDir(out))
    assert (again.ran, again.skipped) == (5, 3)
    pd.testing.assert_frame_equal(sweep.read_table(again.table), sequential, check_exact=True)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and [t["id"] for t in summary["tasks"]] == [t.id for t in work]
    assert sorted(p.name for p in (out / "tasks").iterdir()) == sorted(f"{t.id}.npz" for t in work)
    # the same sweep again: nothing to run
    assert sweep.run(None, work, sweep.ResultsDir(out)).ran == 0
    # a changed input is another task: one frame's time by one ulp, one model text by a comment
    t = work[0]
    nudged = sweep.Task(t.name, t.files, t.criterion, np.nextafter(t.time, np.inf), t.q, t.columns, t.labels)
    texts = dict(t.files.texts)
    texts["shoulder.toml"] += "\n# edited\n"
    edited = sweep.Task(t.name, sweep.ModelFiles(t.files.main, texts), t.criterion, t.time, t.q, t.columns, t.labels)
    other = sweep.Task(t.name, t.files, "c", t.time, t.q, t.columns, t.labels)
    assert len({t.id, nudged.id, edited.id, other.id}) == 4
    report = sweep.run(None, [nudged, edited] + list(work[1:]), sweep.ResultsDir(out))
    assert (report.ran, report.skipped) == (2, len(work) - 1)
    # tasks of the earlier sweep that are not in this one are not kept
    assert not (out / "tasks" / f"{t.id}.npz").exists()


def test_the_results_directory_is_written_as_a_unit(work, sequential, tmp_path):
    # a directory of other files is never replaced
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("not a sweep's")
    with pytest.raises(sweep.SweepError, match="not a results directory"):
        sweep.ResultsDir(other)
    assert (other / "notes.txt").read_text() == "not a sweep's"
    # while one sweep writes a directory, another is refused
    out = tmp_path / "sweep"
    first = sweep.ResultsDir(out)
    with pytest.raises(sweep.SweepError, match="another sweep is writing"):
        sweep.ResultsDir(out)
    # a task that fails stops the sweep with one message naming it; what finished is kept
    bad = sweep.Task("bad-task", work[1].files, "z", work[1].time, work[1].q, work[1].columns)
    with pytest.raises(sweep.SweepError, match=r"^task bad-task failed: ValueError: .*criterion") as e:
        sweep.run(None, [work[0], bad], first)
    assert "\n" not in str(e.value)
    first.close()
    kept = tmp_path / ".sweep.partial" / "tasks" / f"{work[0].id}.npz"
    assert not out.exists() and kept.is_file()
    # a task file cut short (power lost after the rename): named, removed, and computed anew
    kept.write_bytes(kept.read_bytes()[:100])
    with pytest.raises(sweep.SweepError, match=r"\(task load0-k1-b-chunk0\) cannot be read .*removed"):
        sweep.run(None, work[:1], sweep.ResultsDir(out))
    report = sweep.run(None, work[:1], sweep.ResultsDir(out))
    assert report.ran == 1
    pd.testing.assert_frame_equal(sweep.read_table(report.table), sequential.iloc[:2], check_exact=True)


def test_the_tables_read_back_value_for_value_as_csv_or_parquet(work, sequential, tmp_path):
    report = sweep.run(None, work[:2], sweep.ResultsDir(tmp_path / "csv"))
    assert report.table.name == "table.csv"
    pytest.importorskip("pyarrow", reason="SKIPPED: pyarrow is not installed (Parquet is written only with it)")
    report = sweep.run(None, work[:2], sweep.ResultsDir(tmp_path / "pq", "parquet"))
    assert report.table.name == "table.parquet" and report.table.read_bytes()[:4] == b"PAR1"
    pd.testing.assert_frame_equal(sweep.read_table(report.table), sequential.iloc[:4], check_exact=True)


def test_a_task_does_not_import_pandas_on_the_worker(work):
    """The first task of a fresh worker once cost 0.3-0.9 s: `import pandas` in the task. A task
    runs on numpy alone (the client makes the table); checked in a fresh process."""
    import subprocess

    t = work[0]
    code = (
        "import sys, numpy as np\n"
        "from mollier import sweep\n"
        "a = np.load(sys.argv[1])\n"
        "texts = {'shoulder.toml': open(sys.argv[2]).read(), 'muscles.csv': open(sys.argv[3]).read()}\n"
        "raw = sweep.solve_inverse(('d', 'shoulder.toml', texts), 'b', a['time'], a['q'], list(a['columns']))\n"
        "assert raw['values'].shape == (len(a['time']), len(raw['columns'])), raw['values'].shape\n"
        "print([m for m in ('pandas', 'pyarrow') if m in sys.modules])\n"
    )
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        np.savez(Path(d, "a.npz"), time=t.time, q=t.q, columns=np.array(t.columns))
        for name, text in t.files.texts.items():
            Path(d, name).write_text(text)
        done = subprocess.run([sys.executable, "-c", code, str(Path(d, "a.npz")), str(Path(d, "shoulder.toml")),
                               str(Path(d, "muscles.csv"))], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


def test_the_csv_table_is_what_pandas_writes_byte_for_byte(work, tmp_path):
    """The sweep's CSV is written without pandas (a third of the time, and no `import pandas` in
    the client): byte for byte what `DataFrame.to_csv` writes of the same rows, with a failed
    frame's NaN, labels whose values numpy makes float (an int beside a float), a label that is
    not a number, and a status that CSV must quote."""
    raws = [sweep.solve_inverse(sweep._ship(t.files), t.criterion, t.time, t.q, t.columns) for t in work[:3]]
    raws[1]["values"][1, 3] = np.nan
    raws[2]["values"][0, 0] = -0.0
    raws[2]["values"][1, 1] = 1e-300
    raws[2]["status"][1] = 'failed: "x", y'
    labels = [(("load", 0), ("name", "a,b"), ("on", True)), (("load", 2.5), ("name", "c"), ("on", False)),
              (("load", 7), ("name", "d"), ("on", True))]
    parts = [(sweep.Task(f"t{i}", t.files, t.criterion, t.time, t.q, t.columns, labels=labels[i]), r)
             for i, (t, r) in enumerate(zip(work[:3], raws))]
    rows = sweep._write_csv(parts, tmp_path / "own.csv")
    sweep._table(parts).to_csv(tmp_path / "pandas.csv", index=False, float_format=None, na_rep="")
    assert rows == sum(len(r["time"]) for r in raws)
    assert (tmp_path / "own.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()
    back = sweep.read_table(tmp_path / "own.csv")
    assert np.isnan(back.iloc[3, 7]) and back["load"].tolist()[::2] == [0.0, 2.5, 7.0]
