"""`Model.simulate` against `mollier simulate`'s files on the same model (equal to 1e-12): a model
moved by Hill muscles (Rosenbrock), the shoulder on its soft contacts, passive mechanisms (RK4);
excitations as a file, arrays and a DataFrame; the errors."""

import csv
import json

import numpy as np
import pytest

import mollier
from conftest import MODELS, assert_gil_released, long_call

ELBOW = MODELS / "forward" / "elbow.toml"
EXCITATIONS = MODELS / "forward" / "elbow-excitations.csv"
MECH = MODELS / "mechanisms"

# what summary.json and Python's summary both hold, wall-clock figures aside
DETERMINISTIC = ["integrator", "end_time_s", "duration_s", "dt_s", "steps", "solved", "max_motion_defect",
                 "max_muscle_defect_N", "muscles", "muscles_without_excitation", "lowest_contact_level",
                 "largest_stability_index", "conservative", "max_energy_drift_J", "excitations"]


def read(path):
    return mollier.read_table(path, output="numpy")


def units_of(directory):
    """units.csv as {table: {column: unit}}."""
    out = {}
    with open(directory / "units.csv", newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault(row["file"].removesuffix(".csv"), {})[row["column"]] = row["unit"]
    return out


def same_as_the_command(r, out):
    """Every table of `r` equals the command's CSV file of that name (columns, times, values to
    1e-12), the command wrote no other table, and the units and summary agree."""
    written = sorted(p.stem for p in out.glob("*.csv") if p.stem != "units")
    assert sorted(r.keys()) == written
    for name in r:
        py, cli = r[name], read(out / f"{name}.csv")
        assert py.columns == cli.columns, name
        assert py.values.dtype == np.float64 and py.values.shape == (len(cli.time), len(cli.columns)), name
        np.testing.assert_allclose(py.time, cli.time, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(py.values, cli.values, rtol=1e-12, atol=1e-12, err_msg=name)
    assert r.units == units_of(out)
    summary = json.loads((out / "summary.json").read_text())
    for key in DETERMINISTIC:
        assert (key in r.summary) == (key in summary), key
        if key not in summary:
            continue
        if isinstance(summary[key], float):
            np.testing.assert_allclose(r.summary[key], summary[key], rtol=1e-12, atol=1e-12, err_msg=key)
        elif key == "excitations":
            assert (r.summary[key] is None) == (summary[key] is None)
        else:
            assert r.summary[key] == summary[key], key
    assert r.summary["solved"] == r.summary["steps"] == len(next(iter(r.items()))[1].time)


def test_the_elbow_moved_by_its_muscles_equals_the_command(cli, tmp_path):
    cli("simulate", ELBOW, "--excitations", EXCITATIONS, "--duration", 0.6, "--dt", 0.004, "--out", tmp_path, "-q")
    r = mollier.load(ELBOW).simulate(EXCITATIONS, duration=0.6, dt=0.004, output="numpy")
    assert list(r.keys()) == ["states", "muscles", "stability"]
    same_as_the_command(r, tmp_path)
    # and the numbers are the motion: the biceps (excitation 0.6 from 0.15 s) flexes the elbow
    assert np.degrees(r.states["elbow.rotation"][r.states.time.searchsorted(0.36)]) > 10
    assert r.summary["integrator"] == "rosenbrock" and r.summary["real_time_factor"] > 0
    assert r.units["states"]["elbow.rotation.vel"] == "rad/s" and r.units["muscles"]["biceps.force"] == "N"


def test_the_shoulder_on_its_soft_contacts_equals_the_command(cli, tmp_path):
    model = MODELS / "shoulder" / "shoulder-forward.toml"
    cli("simulate", model, "--duration", 0.02, "--out", tmp_path, "-q")
    r = mollier.load(model).simulate(duration=0.02, output="numpy")
    assert list(r.keys()) == ["states", "muscles", "contacts", "stability"]
    same_as_the_command(r, tmp_path)
    assert r.summary["muscles"] == 95 and len(r.summary["muscles_without_excitation"]) == 95


@pytest.mark.parametrize("model,dt", [(MECH / "pendulum.toml", 0.01), (MECH / "double-pendulum.toml", 0.002)],
                         ids=["pendulum", "double-pendulum"])
def test_passive_mechanisms_by_rk4_equal_the_command(cli, tmp_path, model, dt):
    cli("simulate", model, "--integrator", "rk4", "--duration", 0.5, "--dt", dt, "--out", tmp_path, "-q")
    r = mollier.load(model).simulate(duration=0.5, dt=dt, integrator="rk4", output="numpy")
    assert list(r.keys()) == ["motion", "velocities", "energy"]
    same_as_the_command(r, tmp_path)
    assert r.summary["integrator"] == "rk4" and r.summary["conservative"] is True
    # an independent check: the energy is conserved (RK4's error at this step) and the drift
    # column is the energy minus its first value
    energy = r.energy["energy"]
    np.testing.assert_allclose(r.energy["drift"], energy - energy[0], rtol=0, atol=1e-12)
    assert np.abs(r.energy["drift"]).max() < 1e-5 * max(1.0, np.abs(energy).max())
    # the default integrator of a model without muscles is RK4: the same numbers
    again = mollier.load(model).simulate(duration=0.5, dt=dt, output="numpy")
    np.testing.assert_array_equal(again.motion.values, r.motion.values)


def test_the_simulated_pendulum_swings_at_its_closed_form_period():
    # an independent reference: the rod of models/mechanisms/pendulum.toml released horizontally
    # (θ0 = 90° from hanging) is a compound pendulum of equivalent length L = (m c² + J) / (m c);
    # it reaches the other horizontal after half its period T = 4 sqrt(L/g) K(sin(θ0/2))
    m, c, j, g = 1.5, 0.4, 0.08, 9.81
    length = (m * c * c + j) / (m * c)
    a, b = 1.0, np.sqrt(0.5)  # K(k) = π / (2 AGM(1, sqrt(1 - k²))), k = sin 45°
    for _ in range(10):
        a, b = (a + b) / 2, np.sqrt(a * b)
    half_period = 2 * np.sqrt(length / g) * np.pi / (2 * a)
    r = mollier.load(MECH / "pendulum.toml").simulate(duration=1.2, dt=0.001, output="numpy")
    t, velocity = r.velocities.time, r.velocities.values[:, 0]
    k = np.nonzero((velocity[:-1] < 0) & (velocity[1:] >= 0))[0][0]
    # the turning point, interpolated between the steps
    turn = t[k] - velocity[k] * (t[k + 1] - t[k]) / (velocity[k + 1] - velocity[k])
    assert abs(turn - half_period) < 1e-5, (turn, half_period)
    np.testing.assert_allclose(r.motion.values[k, 0], -np.pi, atol=1e-4)


def test_excitations_as_arrays_and_dataframes_give_the_file_s_numbers():
    m = mollier.load(ELBOW)
    from_file = m.simulate(EXCITATIONS, duration=0.3, output="numpy")
    e = read(EXCITATIONS)
    assert e.columns == m.forward_muscles == ["biceps", "triceps"]
    from_arrays = m.simulate((e.time, e.values), duration=0.3, output="numpy")
    from_named = m.simulate((e.time, e.values[:, ::-1], e.columns[::-1]), duration=0.3, output="numpy")
    for r in (from_arrays, from_named):
        for name in from_file:
            np.testing.assert_array_equal(r[name].values, from_file[name].values, err_msg=name)
    assert from_arrays.summary["excitations"] == "<arrays>"
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(EXCITATIONS, comment="#")
    from_df = m.simulate(df, duration=0.3)
    assert isinstance(from_df.states, pd.DataFrame) and from_df.states.index.name == "time"
    np.testing.assert_array_equal(from_df.muscles.to_numpy(), from_file.muscles.values)
    # a muscle without a column: excitation 0, with a warning
    with pytest.warns(mollier.MotionWarning, match="no excitation column for triceps"):
        only = m.simulate(df[["time", "biceps"]], duration=0.1, output="numpy")
    assert np.all(only.muscles["triceps.excitation"] == 0)


def test_bad_excitations_raise_with_file_line_column(tmp_path):
    m = mollier.load(ELBOW)
    bad = tmp_path / "bad.csv"
    bad.write_text("time,biceps,triceps\n0,0.1,0.1\n0.1,1.5,0.1\n")
    with pytest.raises(mollier.ModelError, match=rf"{bad}:3:\d+: error: .*outside \[0, 1\]") as e:
        m.simulate(bad, duration=0.1)
    d = e.value.diagnostics[0]
    assert d["file"] == str(bad) and d["line"] == 3 and d["column"] >= 1 and d["hint"]
    with pytest.raises(mollier.ModelError, match="nowhere.csv"):
        m.simulate(tmp_path / "nowhere.csv", duration=0.1)
    # arrays are read as a file is: times that do not increase are located in the arrays' text
    with pytest.raises(mollier.ModelError, match=r"<arrays>:3:"):
        m.simulate((np.array([0.0, 0.0]), np.full((2, 2), 0.1)), duration=0.1)
    with pytest.raises(TypeError, match="excitations"):
        m.simulate(42, duration=0.1)


@pytest.mark.parametrize("method", ["euler", "bdf2"])
def test_the_error_controls_options_and_rigid_tendons_equal_the_command(cli, tmp_path, method):
    options = ["--atol-activation", 1e-2, "--controller", "gustafsson", "--steps-across-knots",
               "--rigid-tendons", 1.385, "--method", method, "--jacobian-every", 16]
    cli("simulate", ELBOW, "--excitations", EXCITATIONS, "--duration", 0.3, *options, "--out", tmp_path, "-q")
    r = mollier.load(ELBOW).simulate(EXCITATIONS, duration=0.3, atol_activation=1e-2, controller="gustafsson",
                                     steps_across_knots=True, rigid_tendons=1.385, method=method,
                                     jacobian_every=16, output="numpy")
    same_as_the_command(r, tmp_path)
    summary = json.loads((tmp_path / "summary.json").read_text())
    for key in ["atol_activation", "controller", "method", "steps_end_on_knots", "rigid_tendons",
                "rigid_tendon_ratio", "accepted_steps", "rejected_steps", "kernel_evaluations",
                "jacobian_every", "jacobian_evaluations"]:
        assert r.summary[key] == summary[key], key
    assert r.summary["rigid_tendons"] == ["biceps"] and r.summary["controller"] == "gustafsson"
    assert r.summary["method"] == method and r.summary["jacobian_every"] == 16
    # the options change the run: the defaults give other steps
    default = mollier.load(ELBOW).simulate(EXCITATIONS, duration=0.3, output="numpy")
    assert default.summary["rigid_tendons"] == [] and default.summary["steps_end_on_knots"] is True
    assert default.summary["method"] == "ros23" and default.summary["jacobian_every"] == 4
    assert default.summary["kernel_evaluations"] != r.summary["kernel_evaluations"]


def test_what_cannot_be_simulated_is_refused():
    m = mollier.load(ELBOW)
    with pytest.raises(ValueError, match="controller"):
        m.simulate(EXCITATIONS, duration=0.1, controller="pid")
    with pytest.raises(ValueError, match='"ros23", "ros34pw2", "euler" or "bdf2", not "bdf3"'):
        m.simulate(EXCITATIONS, duration=0.1, method="bdf3")
    with pytest.raises(ValueError, match="atol_activation"):
        m.simulate(EXCITATIONS, duration=0.1, atol_activation=0.0)
    with pytest.raises(ValueError, match="whole Jacobian's interval"):
        m.simulate(EXCITATIONS, duration=0.1, jacobian_every=0)
    for ratio in [0.0, float("nan")]:
        with pytest.raises(ValueError, match="rigid-tendon ratio"):
            m.simulate(EXCITATIONS, duration=0.1, rigid_tendons=ratio)
    with pytest.raises(ValueError, match="rigid_tendons or track"):
        m.simulate(duration=0.1, rigid_tendons=1.0, track=MODELS / "forward" / "elbow-excitations.csv")
    with pytest.raises(ValueError, match="must be positive"):
        m.simulate(duration=-1.0)
    with pytest.raises(ValueError, match="must be positive"):
        m.simulate(duration=1.0, dt=0.0)
    with pytest.raises(ValueError, match='integrator="rosenbrock"'):
        m.simulate(duration=0.1, integrator="rk4")
    with pytest.raises(ValueError, match="rk4.*rosenbrock"):
        m.simulate(duration=0.1, integrator="euler")
    with pytest.raises(ValueError, match='integrator="rosenbrock"'):
        mollier.load(MECH / "pendulum.toml").simulate(EXCITATIONS, duration=0.1)


def test_progress_is_reported_and_can_stop_a_simulation():
    m = mollier.load(ELBOW)
    seen = []
    r = m.simulate(EXCITATIONS, duration=0.4, progress=lambda done, total: seen.append((done, total)),
                   output="numpy")
    total = r.summary["steps"]
    assert seen[-1] == (total, total) and len(seen) > 1
    assert all(a[0] < b[0] for a, b in zip(seen, seen[1:]))

    class Stop(Exception):
        pass

    def stop(done, total):
        raise Stop

    with pytest.raises(Stop):
        m.simulate(EXCITATIONS, duration=0.4, progress=stop)


def test_the_gil_is_released_while_a_simulation_runs():
    m = mollier.load(ELBOW)
    # steps of 0.2 ms, as many as it takes to be long enough to tell
    assert_gil_released(long_call(lambda n: lambda: m.simulate(EXCITATIONS, duration=n * 0.0002, dt=0.0002, output="numpy"), size=5000))


def test_a_muscle_without_an_initial_equilibrium_raises_frame_error_as_the_command_fails(cli, tmp_path):
    # a tendon longer than the biceps' whole path: no isometric equilibrium to start from
    text = ELBOW.read_text().replace("tendon_slack_length = 160", "tendon_slack_length = 2000", 1)
    assert "2000" in text
    model = tmp_path / "elbow.toml"
    model.write_text(text)
    said = cli("simulate", model, "--duration", 0.1, "--out", tmp_path / "out", check=False)
    assert said.returncode == 1 and not (tmp_path / "out").exists()
    with pytest.raises(mollier.FrameError) as e:
        mollier.load(model).simulate(duration=0.1)
    assert str(e.value).startswith("the initial state: muscle `biceps` has no equilibrium")
    assert f"error: {e.value}" in said.stderr


def test_a_step_that_fails_mid_run_raises_frame_error_with_the_rows_before(cli, tmp_path):
    # RK4 at a step far too large: the double pendulum diverges, and the position solve refuses
    # the step (more than 65 536 continuation steps) at 3.9 s; the command writes the 40 steps
    # solved and exits 1
    model, out = MECH / "double-pendulum.toml", tmp_path / "out"
    said = cli("simulate", model, "--duration", 20, "--dt", 0.1, "--out", out, check=False)
    assert said.returncode == 1, said.stderr
    with pytest.raises(mollier.FrameError) as e:
        mollier.load(model).simulate(duration=20, dt=0.1, output="numpy")
    assert str(e.value).startswith("the steps from time 3.9 s: input `shoulder.rotation` moves by")
    assert "a time step too large" in str(e.value)
    assert f"error: {e.value}" in said.stderr
    r = e.value.results
    assert len(r.motion.time) == 40 and r.motion.time[-1] == pytest.approx(3.9)  # t = 0 … 3.9 s
    for name in r:
        cli_table = read(out / f"{name}.csv")
        np.testing.assert_allclose(r[name].time, cli_table.time, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(r[name].values, cli_table.values, rtol=1e-12, atol=1e-12, err_msg=name)
    assert r.summary["solved"] == 40 and r.summary["steps"] == 201


def test_tracking_a_motion_equals_the_command(cli, tmp_path):
    """`track=` runs `mollier simulate --track`'s pipeline: the same excitations and tables, and
    the shoulder follows its target (computed muscle control, 0.1 s of the flexion)."""
    model = MODELS / "shoulder" / "shoulder-forward.toml"
    target = MODELS / "shoulder" / "flexion-target.csv"
    cli("simulate", model, "--track", target, "--duration", 0.1, "--out", tmp_path, "-q")
    with pytest.warns(mollier.MotionWarning, match="computed muscle control"):
        r = mollier.load(model).simulate(duration=0.1, track=target, output="numpy")
    # the excitation file the command made is not one of the run's tables
    made = read(tmp_path / "excitations.csv")
    (tmp_path / "excitations.csv").unlink()
    same_as_the_command(r, tmp_path)
    for k, name in enumerate(made.columns):
        np.testing.assert_allclose(r.muscles[f"{name}.excitation"][-1], made.values[-1, k], rtol=0, atol=1e-12)
    # the target's nine joint rotations at 0.1 s, within 2° (an independent check; measured
    # 1.27°, the clavicle's axial rotation)
    goal = read(target)
    row = goal.time.searchsorted(0.1)
    for k, name in enumerate(goal.columns[:9]):
        assert abs(np.degrees(r.states[name][-1] - goal.values[row, k])) < 2.0, name
    with pytest.raises(ValueError, match="not both"):
        mollier.load(model).simulate(target, duration=0.1, track=target)
