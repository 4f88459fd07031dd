"""Every call of the package against the `mollier` command's outputs on the same model and
motion (equal to 1e-12), the errors, and the numpy dtype and shape contracts."""

import json
import warnings

import numpy as np
import pytest

import mollier
from conftest import MODELS, ROOT, SHARED_DATA, assert_gil_released, long_call

MECH = MODELS / "mechanisms"
FOUR_BAR = (MECH / "four-bar.toml", MECH / "four-bar-motion.csv")
ELBOW = (MECH / "elbow-muscles.toml", MECH / "elbow-muscles-motion.csv")
PENDULUM = (MECH / "pendulum.toml", MECH / "pendulum-motion.csv")
DOUBLE = (MECH / "double-pendulum.toml", MECH / "double-pendulum-motion.mot")


def same(py, cli_table, name):
    """A table from Python equals the command's CSV: columns, times and every value to 1e-12
    (NaN where the command wrote an empty cell)."""
    assert isinstance(py, mollier.Table), name
    assert py.columns == cli_table.columns, name
    np.testing.assert_allclose(py.time, cli_table.time, rtol=1e-12, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(py.values, cli_table.values, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=name)
    for col, cells in cli_table.text.items():
        assert py.text[col] == cells, f"{name}: {col}"


def read(path):
    return mollier.read_table(path, output="numpy")


@pytest.mark.parametrize("model,motion", [FOUR_BAR, ELBOW, DOUBLE], ids=["four-bar", "elbow", "double-pendulum"])
def test_kinematics_equals_the_command(cli, tmp_path, model, motion):
    cli("kinematics", model, "--motion", motion, "--out", tmp_path / "k", "--second-order", "-q")
    r = mollier.load(model).kinematics(motion, second_order=True, output="numpy")
    written = sorted(p.stem for p in (tmp_path / "k").glob("*.csv"))
    assert sorted(r.keys()) == written
    for name in r:
        same(r[name], read(tmp_path / "k" / f"{name}.csv"), name)


def test_lengths_and_moment_arms_of_the_elbow(cli, tmp_path):
    model, motion = ELBOW
    m = mollier.load(model)
    r = m.kinematics(motion, output="numpy")
    assert r.lengths.columns == m.muscles and len(m.muscles) == 4
    assert r.moment_arms.columns == [f"{mu}/{i}" for mu in m.muscles for i in m.inputs]
    # a moment arm is minus the derivative of the length: check it against central differences
    # of the lengths over the frames
    motion_q = read(motion)
    deg = "[deg]" in motion_q.columns[0]
    angle = motion_q.values[:, 0] * (np.pi / 180 if deg else 1.0)
    dl = np.gradient(r.lengths.values, angle, axis=0, edge_order=2)
    np.testing.assert_allclose(r.moment_arms.values[1:-1], -dl[1:-1], atol=2e-4)


def test_inverse_dynamics_equals_the_command(cli, tmp_path):
    for model, motion in (PENDULUM, DOUBLE):
        out = tmp_path / model.stem
        cli("inverse-dynamics", model, "--motion", motion, "--out", out, "-q")
        r = mollier.load(model).inverse_dynamics(motion, output="numpy")
        assert list(r.keys()) == ["driving", "reactions", "passive"]
        for name in r:
            same(r[name], read(out / f"{name}.csv"), f"{model.stem}/{name}")


@pytest.mark.parametrize("criterion", ["a", "b", "c", "d"])
def test_inverse_equals_the_command(cli, tmp_path, criterion):
    model, motion = ELBOW
    cli("inverse", model, "--motion", motion, "--criterion", criterion, "--static", "--out", tmp_path, "-q")
    r = mollier.load(model).inverse(motion, criterion=criterion, static=True, output="numpy")
    same(r.forces, read(tmp_path / "forces.csv"), "forces")
    same(r.reactions, read(tmp_path / "reactions.csv"), "reactions")
    cli_stability = read(tmp_path / "stability.csv")
    for col in r.stability.columns:
        np.testing.assert_allclose(r.stability[col], cli_stability[col], rtol=1e-12, atol=1e-12, equal_nan=True,
                                   err_msg=col)
    assert r.stability.text["status"] == cli_stability.text["status"]


def test_inverse_with_dynamics_equals_the_command(cli, tmp_path):
    model, motion = ELBOW
    cli("inverse", model, "--motion", motion, "--criterion", "b", "--smooth", "3", "--out", tmp_path, "-q")
    r = mollier.load(model).inverse(motion, criterion="b", smooth=3.0, output="numpy")
    same(r.forces, read(tmp_path / "forces.csv"), "forces")
    assert any("motion derivatives" in n for n in r.notes)


def test_external_loads_equal_the_command(cli, tmp_path):
    """``loads=`` is ``--loads``: a time-varying force at the pendulum's tip and at the hand of
    the elbow; the loads change the results, so the comparison can fail."""
    model, motion = PENDULUM
    loads = tmp_path / "tip.csv"
    loads.write_text("time,rod.tip.fx,rod.tip.fy,rod.tip.fz\n0,3,-20,0\n5,5,-10,0\n")
    cli("inverse-dynamics", model, "--motion", motion, "--loads", loads, "--out", tmp_path / "id", "-q")
    m = mollier.load(model)
    r = m.inverse_dynamics(motion, loads=loads, output="numpy")
    same(r["driving"], read(tmp_path / "id" / "driving.csv"), "driving")
    bare = m.inverse_dynamics(motion, output="numpy")["driving"].values
    assert np.abs(r["driving"].values - bare).max() > 1.0
    model, motion = ELBOW
    loads = tmp_path / "hand.csv"
    loads.write_text("time,forearm.hand.fx,forearm.hand.fy,forearm.hand.fz\n0,0,-15,0\n")
    cli("inverse", model, "--motion", motion, "--criterion", "b", "--static", "--loads", loads,
        "--out", tmp_path / "inv", "-q")
    r = mollier.load(model).inverse(motion, criterion="b", static=True, loads=str(loads), output="numpy")
    same(r.forces, read(tmp_path / "inv" / "forces.csv"), "forces")
    with pytest.raises(mollier.ModelError, match="is not a body"):
        loads.write_text("time,radius.fx,radius.fy,radius.fz\n0,0,-15,0\n")
        mollier.load(model).inverse(motion, static=True, loads=loads)


@pytest.mark.parametrize("cone", [True, False], ids=["cone", "no-cone"])
def test_inverse_on_the_shoulder_equals_the_command(cli, tmp_path, shoulder_motion, cone):
    _, motion = shoulder_motion
    model = MODELS / "shoulder" / "shoulder.toml"
    flags = [] if cone else ["--no-cone"]
    cli("inverse", model, "--motion", motion, "--criterion", "b", "--static", *flags, "--out", tmp_path, "-q")
    r = mollier.load(model).inverse(motion, "b", cone=cone, static=True, output="numpy")
    assert r.forces.shape == (3, len(mollier.load(model).load_sharing_muscles))
    same(r.forces, read(tmp_path / "forces.csv"), "forces")
    same(r.reactions, read(tmp_path / "reactions.csv"), "reactions")
    assert "joint_force" in r.reactions.columns
    assert r.stability.text["status"] == read(tmp_path / "stability.csv").text["status"]


def test_study_writes_what_the_command_writes(cli, tmp_path, shoulder_motion):
    study, _ = shoulder_motion
    res = mollier.study(study, tmp_path / "py")
    cli("study", study, "--out", tmp_path / "cli", "-q")
    assert res.files[-1].name == "summary.json" and res.summary["complete"] is True
    assert res.failed == 0
    tables = sorted(p.relative_to(tmp_path / "cli") for p in (tmp_path / "cli").rglob("*.csv"))
    assert tables == sorted(p.relative_to(tmp_path / "py") for p in (tmp_path / "py").rglob("*.csv"))
    assert len(tables) >= 5
    for rel in tables:
        # the same writer: byte for byte the same tables
        assert (tmp_path / "py" / rel).read_bytes() == (tmp_path / "cli" / rel).read_bytes(), rel
    forces = res.table("b-glenoid/forces.csv", output="numpy")
    assert forces.values.dtype == np.float64 and forces.shape[0] == 3


def test_check_agrees_with_the_command(cli):
    for model in (FOUR_BAR[0], ELBOW[0], MODELS / "shoulder" / "shoulder.toml"):
        report = json.loads(cli("check", model, "--json").stdout)
        m = mollier.load(model)
        c = m.check()
        assert c["dof"] == report["dof"] and c["well_posed"] is True
        assert m.inputs == report["inputs"]


def test_a_model_that_is_not_well_posed(tmp_path):
    text = (MECH / "four-bar.toml").read_text()
    # the crank's angle free rather than driven: a degree of freedom that nothing drives
    text = text.replace('inputs = ["crank_joint.rotation"]', "inputs = []")
    text = text.replace('free = ["rocker_joint.rotation"]', 'free = ["rocker_joint.rotation", "crank_joint.rotation"]')
    m = mollier.load_text(text, "four-bar.toml")
    c = m.check()
    assert c["well_posed"] is False and c["dof"] == 1
    assert "1 degree of freedom" in c["problems"][0]
    # as `mollier kinematics` (exit code 2): the file's problem, located
    with pytest.raises(mollier.ModelError, match=r"four-bar.toml:\d+:\d+: error: inputs"):
        m.kinematics(FOUR_BAR[1])


def test_model_errors_carry_file_line_column_path_and_hint(tmp_path):
    bad = tmp_path / "bad.toml"
    text = (MECH / "four-bar.toml").read_text().replace('type = "hinge"', 'type = "hinj"', 1)
    bad.write_text(text)
    with pytest.raises(mollier.ModelError) as e:
        mollier.load(bad)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if '"hinj"' in l)
    d = e.value.diagnostics[0]
    assert d["file"] == str(bad) and d["line"] == line and d["column"] >= 1
    assert d["path"].startswith("elements.") and d["hint"]
    assert f"{bad}:{line}:{d['column']}" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_missing_files_and_bad_motions_raise():
    with pytest.raises(mollier.ModelError, match="nowhere.toml"):
        mollier.load("nowhere.toml")
    m = mollier.load(FOUR_BAR[0])
    with pytest.raises(mollier.ModelError):
        m.kinematics("nowhere.csv")
    # times that do not increase are the motion reader's error, for arrays as for files
    with pytest.raises(mollier.ModelError, match="<arrays>"):
        m.kinematics((np.array([0.0, 0.0]), np.array([[0.0], [0.1]])))
    with pytest.raises(ValueError, match="do not fit"):
        m.kinematics((np.array([0.0, 1.0]), np.zeros((3, 1))))
    with pytest.raises(TypeError):
        m.kinematics(42)
    with pytest.raises(ValueError, match="criterion"):
        mollier.load(ELBOW[0]).inverse(ELBOW[1], criterion="z")
    with pytest.raises(ValueError, match="load_sharing"):
        m.inverse(FOUR_BAR[1])


def test_arrays_and_dataframes_give_the_file_s_numbers():
    pd = pytest.importorskip("pandas")
    model, motion = ELBOW
    m = mollier.load(model)
    from_file = m.inverse(motion, "c", static=True, output="numpy")
    q = read(motion)  # in the file's units: the reader converts a `[deg]` column
    df = pd.read_csv(motion, comment="#")
    from_df = m.inverse(df, "c", static=True, output="numpy")
    np.testing.assert_array_equal(from_df.forces.values, from_file.forces.values)
    assert "[deg]" in q.columns[0] or q.columns[0] == m.inputs[0]
    angle = q.values[:, 0] * (np.pi / 180 if "[deg]" in q.columns[0] else 1.0)
    from_arrays = m.inverse((q.time, angle), "c", static=True, output="numpy")
    np.testing.assert_allclose(from_arrays.forces.values, from_file.forces.values, rtol=1e-12, atol=1e-12)

    # arrays whose data are not 8-byte aligned (as arrays unpickled from a byte buffer may be,
    # e.g. by Dask) are read too, with the same numbers
    def unaligned(a):
        raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
        out = np.frombuffer(raw.data, dtype=np.float64, count=a.size, offset=1).reshape(a.shape)
        out[...] = a
        assert not out.flags.aligned
        return out

    odd = m.inverse((unaligned(q.time), unaligned(angle)), "c", static=True, output="numpy")
    np.testing.assert_array_equal(odd.forces.values, from_arrays.forces.values)
    # the native module, called with unaligned arrays directly, refuses them rather than read
    # them in place
    raw = ("<arrays>", unaligned(q.time), unaligned(angle.reshape(-1, 1)), list(m.inputs))
    with pytest.raises(ValueError, match="not aligned"):
        m._m.inverse(raw, "c", True, True, None, None)


def test_numpy_contracts():
    model, motion = ELBOW
    r = mollier.load(model).kinematics(motion, output="numpy")
    n = len(read(motion).time)
    for name, t in r.items():
        assert t.time.dtype == np.float64 and t.time.shape == (n,), name
        assert t.values.dtype == np.float64 and t.values.shape == (n, len(t.columns)), name
        assert t.values.flags.c_contiguous
        assert np.all(np.diff(t.time) > 0)
    assert r.moment_arms.shape == (n, len(r.lengths.columns))


def test_pandas_output():
    pd = pytest.importorskip("pandas")
    model, motion = ELBOW
    m = mollier.load(model)
    r = m.inverse(motion, "b", static=True)
    assert isinstance(r.forces, pd.DataFrame) and r.forces.index.name == "time"
    assert list(r.forces.columns) == m.load_sharing_muscles
    assert list(r.stability.columns)[-2:] == ["status", "message"]
    assert r.stability["status"].iloc[0] == "solved"
    np.testing.assert_array_equal(r.forces.to_numpy(), m.inverse(motion, "b", static=True, output="numpy").forces.values)


def test_progress_is_reported_and_can_stop_a_run():
    model, motion = ELBOW
    m = mollier.load(model)
    seen = []
    r = m.kinematics(motion, progress=lambda done, total: seen.append((done, total)), output="numpy")
    n = len(r.lengths)
    assert seen == [(i, n) for i in range(1, n + 1)]
    seen.clear()
    m.inverse(motion, static=True, progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (n, n) and all(t == n for _, t in seen)

    def interrupt(done, total):
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        m.kinematics(motion, progress=interrupt)


def test_the_gil_is_released_while_rust_runs(shoulder_motion):
    _, motion = shoulder_motion
    m = mollier.load(MODELS / "shoulder" / "shoulder.toml")
    q = read(motion)
    # one long call: the 3 postures over and over (criterion d)
    def make(reps):
        values = np.tile(q.values, (reps, 1))
        times = np.arange(len(values), dtype=float)
        return lambda: m.inverse((times, values, q.columns), "d", static=True)

    assert_gil_released(long_call(make, size=10))


def test_nan_in_a_motion_is_an_error():
    model, motion = FOUR_BAR
    m = mollier.load(model)
    q = read(motion)
    values = q.values.copy()
    values[1, 0] = np.nan
    with pytest.raises(mollier.ModelError):
        m.kinematics((q.time, values, q.columns))
    with pytest.raises(ValueError, match="on_error"):
        m.kinematics(motion, on_error="ignore")


def test_osim_models_load_as_the_command_imports_them(cli, tmp_path):
    osim = SHARED_DATA / "das3" / "das3.osim"
    if not osim.exists():
        pytest.skip(f"SKIPPED: {osim} is absent (the DAS3 reference data)")
    m = mollier.load(osim)
    cli("import", osim, "--out", tmp_path / "das3.toml")
    report = json.loads(cli("check", tmp_path / "das3.toml", "--json", check=False).stdout)
    assert m.inputs == report["inputs"]
    assert m.check()["dof"] == report["dof"]
    assert len(m.muscles) > 100
    text = osim.read_text()
    assert mollier.load_text(text, "das3.osim").inputs == m.inputs


def test_warnings_for_motions_that_look_wrong():
    model, _ = PENDULUM
    m = mollier.load(model)
    t = np.linspace(0, 1, 11)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.kinematics((t, np.linspace(0, 90, 11)))  # degrees given as rad
    assert any(issubclass(x.category, mollier.MotionWarning) for x in w)


def test_models_from_text_equal_models_from_files():
    model, motion = ELBOW
    a = mollier.load(model).inverse(motion, "b", static=True, output="numpy")
    # the model's directory matters only for files it names; the elbow names none
    b = mollier.load_text(model.read_text(), "elbow-muscles.toml").inverse(motion, "b", static=True, output="numpy")
    np.testing.assert_array_equal(a.forces.values, b.forces.values)
    assert ROOT.exists()


def test_reserves_doing_the_muscles_work_are_warned_about_as_the_command_does(cli, tmp_path):
    model, motion = ELBOW
    # a reserve almost free to use takes over from the muscles
    text = model.read_text().replace("width = 0.56\n", 'width = 0.56\nreserves = [{ input = "elbow.rotation", weight = 1e-6 }]\n', 1)
    cheap = tmp_path / "elbow-reserve.toml"
    cheap.write_text(text)
    said = cli("inverse", cheap, "--motion", motion, "--criterion", "b", "--static", "--out", tmp_path / "o", "-q").stderr
    with pytest.warns(mollier.ReserveWarning) as w:
        r = mollier.load(cheap).inverse(motion, "b", static=True, output="numpy")
    assert said.strip() == f"warning: {w[0].message}"
    same(r.reactions, read(tmp_path / "o" / "reactions.csv"), "reactions")
    assert "reserve:elbow.rotation" in r.reactions.columns
    # none without the cheap reserve
    with warnings.catch_warnings():
        warnings.simplefilter("error", mollier.ReserveWarning)
        mollier.load(model).inverse(motion, "b", static=True)


def test_a_redundant_constraint_raises_not_well_posed_as_the_command_exits_1(cli, tmp_path):
    # a planar loop of four hinges: over-constrained by 3 out of its plane, with the right
    # number of inputs, so that nothing in the file is wrong (no ModelError) but the model is
    # not well posed (the fixture of crates/mollier/tests/compile.rs)
    model = ROOT / "crates" / "mollier" / "tests" / "fixtures" / "hinged-four-bar.toml"
    checked = cli("check", model, "--json", check=False)
    assert checked.returncode == 1
    report = json.loads(checked.stdout)
    m = mollier.load(model)
    c = m.check()
    assert (c["well_posed"], c["dof"], c["redundant"], c["problems"]) == (False, report["dof"], 3, [])
    assert c["diagnostics"] == report["diagnostics"]
    assert any("over-constrained by 3" in d for d in c["diagnostics"])
    said = cli("kinematics", model, "--motion", FOUR_BAR[1], "--out", tmp_path / "k", check=False)
    assert said.returncode == 1 and "not well posed" in said.stderr
    for call in (lambda: m.kinematics(FOUR_BAR[1]), lambda: m.inverse_dynamics(FOUR_BAR[1]),
                 lambda: m.simulate(duration=0.1)):
        with pytest.raises(mollier.NotWellPosed) as e:
            call()
        assert not isinstance(e.value, mollier.ModelError)
        # the findings the command lists, one a line
        for d in c["diagnostics"]:
            assert f"  - {d}" in str(e.value) and f"  - {d}" in said.stderr
    assert not (tmp_path / "k").exists()


def slider_driven_by_its_slider(tmp_path):
    """The slider-crank driven by the slider's x (crank 0.3 m, rod 0.5 m: x reaches 0.8 m at
    most), and a motion whose frame at t = 3 s puts the slider out of reach."""
    text = ((MECH / "slider-crank.toml").read_text()
            .replace('inputs = ["crank_joint.rotation"]', 'inputs = ["slider.x"]')
            .replace('free = ["travel"]', 'free = ["travel", "crank_joint.rotation"]'))
    model = tmp_path / "slider.toml"
    model.write_text(text)
    xs = [0.4, 0.5, 0.6, 0.9, 0.7, 0.6]
    motion = tmp_path / "reach.csv"
    motion.write_text("time,slider.x\n" + "".join(f"{t},{x}\n" for t, x in enumerate(xs)))
    reachable = tmp_path / "reachable.csv"
    reachable.write_text("time,slider.x\n" + "".join(f"{t},{x}\n" for t, x in enumerate(xs) if t != 3))
    return model, motion, reachable


def test_on_error_skip_leaves_out_an_unreachable_frame(cli, tmp_path):
    model, motion, reachable = slider_driven_by_its_slider(tmp_path)
    m = mollier.load(model)
    with pytest.warns(mollier.MotionWarning, match=r"1 frames could not be solved .* frame at time 3(\.0)? s"):
        r = m.kinematics(motion, on_error="skip", output="numpy")
    [(time_, reason)] = r.failures
    assert time_ == 3.0 and reason
    assert list(r.positions.time) == [0.0, 1.0, 2.0, 4.0, 5.0]
    # the other frames are those of a run without the unreachable one
    without = m.kinematics(reachable, output="numpy")
    for name in without:
        np.testing.assert_allclose(r[name].values, without[name].values, rtol=1e-12, atol=1e-12, err_msg=name)
    # and the command's `--on-error skip` files
    said = cli("kinematics", model, "--motion", motion, "--on-error", "skip", "--out", tmp_path / "k", check=False)
    assert said.returncode == 1 and "1 of 6 frames could not be solved" in said.stderr
    summary = json.loads((tmp_path / "k" / "summary.json").read_text())
    assert summary["failures"] == [{"time": 3.0, "error": reason}] and summary["solved"] == 5
    for name in r:
        same(r[name], read(tmp_path / "k" / f"{name}.csv"), name)
    # inverse dynamics skips it as its command does
    said = cli("inverse-dynamics", model, "--motion", motion, "--on-error", "skip", "--out", tmp_path / "d",
               check=False)
    assert said.returncode == 1
    with pytest.warns(mollier.MotionWarning, match="1 frames could not be solved"):
        d = m.inverse_dynamics(motion, on_error="skip", output="numpy")
    for name in d:
        same(d[name], read(tmp_path / "d" / f"{name}.csv"), name)
    # on_error="stop" (the default) raises at the frame, naming its time and the input
    with pytest.raises(mollier.FrameError) as e:
        m.kinematics(motion)
    assert str(e.value) in (f"frame at time 3.0 s: {reason}", f"frame at time 3 s: {reason}")


def test_scale_writes_what_the_command_writes(cli, tmp_path):
    model = ROOT / "crates/mollier-osim/tests/data/osim/pin.osim"
    factors = tmp_path / "factors.toml"
    factors.write_text("[bodies]\nb1 = [1.0, 2.0, 1.0]\nb2 = 1.1\n")
    res = mollier.scale(model, factors, tmp_path / "py", mass=23.0)
    cli("scale", model, "--setup", factors, "--mass", "23", "--out", tmp_path / "cli", "-q")
    assert res.files[-1].name == "summary.json" and res.summary["complete"] is True
    assert res.summary["total_mass_kg"] == pytest.approx(23.0, rel=1e-12)
    for name in ["model.toml", "scale_factors.csv", "masses.csv", "muscles.csv"]:
        # the same pipeline and writer: the same bytes, but for the file names in the model's
        # first line
        py, command = (tmp_path / d / name for d in ("py", "cli"))
        assert py.read_text().split("\n", 1)[1] == command.read_text().split("\n", 1)[1], name
    assert res.factors["b1"] == (1.0, 2.0, 1.0) and res.factors["b2"] == (1.1, 1.1, 1.1)
    assert mollier.load(res.model).check()["well_posed"]
    with pytest.raises(mollier.ModelError) as e:
        mollier.scale(model, factors, tmp_path / "bad", mass=-1.0)
    assert not (tmp_path / "bad").exists() and "mass" in str(e.value)


def test_scale_takes_a_mollier_model_file(cli, tmp_path):
    model = MODELS / "mechanisms" / "wrapping.toml"
    factors = tmp_path / "factors.toml"
    factors.write_text("[bodies]\nground = 1.2\narm = [1.1, 1.3, 1.0]\n")
    res = mollier.scale(model, factors, tmp_path / "py")
    cli("scale", model, "--setup", factors, "--out", tmp_path / "cli", "-q")
    for name in ["model.toml", "scale_factors.csv", "masses.csv", "muscles.csv"]:
        py, command = (tmp_path / d / name for d in ("py", "cli"))
        assert py.read_text().split("\n", 1)[1] == command.read_text().split("\n", 1)[1], name
    assert res.factors["arm"] == (1.1, 1.3, 1.0) and res.factors["ground"] == (1.2, 1.2, 1.2)
    scaled = mollier.load(res.model)
    assert scaled.check()["well_posed"]
    # the sphere on the ground (radius 40 mm) by the ground's factor
    assert "radius = 48.0" in res.model.read_text()
    factors.write_text("[bodies]\nhumerus = 1.1\n")
    with pytest.raises(mollier.ModelError) as e:
        mollier.scale(model, factors, tmp_path / "bad")
    assert not (tmp_path / "bad").exists() and "humerus" in str(e.value)


def test_ik_returns_what_the_command_writes(cli, tmp_path):
    # the pendulum's tip (0.8 m from its hinge) swinging, in mm
    rows = []
    for i in range(30):
        a = 0.3 * np.sin(i * 0.05) - 0.5
        rows.append(f"{i + 1}\t{i / 100}\t{800 * np.cos(a)}\t{800 * np.sin(a)}\t0")
    trial = tmp_path / "p.trc"
    trial.write_text("PathFileType\t4\t(X/Y/Z)\tp.trc\nDataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\n"
                     "100\t100\t30\t1\tmm\nFrame#\tTime\ttip\t\t\n\t\tX1\tY1\tZ1\n\n" + "\n".join(rows) + "\n")
    model = MODELS / "mechanisms" / "pendulum.toml"
    cli("ik", model, "--markers", trial, "--out", tmp_path / "cli", "-q")
    r = mollier.load(model).ik(trial, output="numpy")
    assert sorted(r.keys()) == ["marker_errors", "motion"]
    same(r["motion"], read(tmp_path / "cli" / "motion.csv"), "motion")
    same(r["marker_errors"], read(tmp_path / "cli" / "marker_errors.csv"), "marker_errors")
    assert r["marker_errors"].values[:, -1].max() < 1e-9
    # the fitted angle is the one the markers were made from
    a = 0.3 * np.sin(np.arange(30) * 0.05) - 0.5
    col = r["motion"].values[:, 0]
    assert np.abs(col - col[0] - (a - a[0])).max() < 1e-8
    with pytest.raises(mollier.ModelError):
        mollier.load(model).ik(tmp_path / "none.trc")
    # a looser stop (OpenSim's IK accuracy) takes fewer steps and stays within it
    cli("ik", model, "--markers", trial, "--tolerance", "1e-2", "--out", tmp_path / "loose", "-q")
    loose = mollier.load(model).ik(trial, tolerance=1e-2, output="numpy")
    same(loose["motion"], read(tmp_path / "loose" / "motion.csv"), "loose motion")
    assert np.abs(loose["motion"].values[:, 0] - r["motion"].values[:, 0]).max() < 1e-2
    with pytest.raises(ValueError):
        mollier.load(model).ik(trial, tolerance=0.0)


def test_optimize_solves_the_sliding_mass_as_the_command_does(cli, tmp_path):
    # 2 kg moved 1 m in 1 s from rest to rest with the least ∫ F² dt: F = 12 − 24 t, objective 48
    problem = MODELS / "optimal-control/sliding-mass-effort.toml"
    try:
        res = mollier.optimize(problem, tmp_path / "py")
    except mollier.FrameError as e:
        if "IPOPT is not available" in str(e):
            pytest.skip(str(e))
        raise
    assert res.converged and res.summary["status"] == "Solve_Succeeded"
    assert res.objective == pytest.approx(48.0, rel=1e-6)
    assert res.files[-1].name == "summary.json" and all(f.exists() for f in res.files)
    controls = res.table("controls", output="numpy")
    force = controls.values[:, controls.columns.index("force.force")]
    assert np.allclose(force, 12.0 - 24.0 * controls.time, atol=1e-4)
    states = res.table("states", output="numpy")
    assert states.values[-1, states.columns.index("block.x")] == pytest.approx(1.0, abs=1e-9)
    # the command's pipeline: the same tables, to the bit
    cli("optimize", problem, "--out", tmp_path / "cli", "--quiet")
    for name in ["states.csv", "controls.csv", "convergence.csv", "units.csv"]:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    # a bad problem file: a ModelError with its place, nothing written
    bad = tmp_path / "bad.toml"
    bad.write_text(problem.read_text().replace("duration = 1.0", "duration = -1.0"))
    (tmp_path / "sliding-mass.toml").symlink_to(MODELS / "optimal-control" / "sliding-mass.toml")
    with pytest.raises(mollier.ModelError) as e:
        mollier.optimize(bad, tmp_path / "bad-out")
    assert "duration" in str(e.value) and not (tmp_path / "bad-out").exists()
