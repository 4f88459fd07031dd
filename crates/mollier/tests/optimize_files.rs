//! Problem files of `mollier optimize` that are wrong are refused before any solve, each problem
//! at `file:line:col` with its field path; none panics.

use mollier::optimize::OptimizeRun;

/// Write `text` as a problem file beside a copy of the pendulum model and read it.
fn read(name: &str, text: &str) -> Result<OptimizeRun, mollier_format::Diagnostics> {
    read_beside("mechanisms/pendulum.toml", name, text)
}

/// Write `text` as a problem file beside a copy of `model` (under `models/`, by its file name)
/// and read it.
fn read_beside(model: &str, name: &str, text: &str) -> Result<OptimizeRun, mollier_format::Diagnostics> {
    let dir = std::env::temp_dir().join(format!("mollier-optimize-files-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let from = format!("{}/../../models/{model}", env!("CARGO_MANIFEST_DIR"));
    let file = std::path::Path::new(model).file_name().unwrap();
    std::fs::copy(from, dir.join(file)).unwrap();
    let path = dir.join("problem.toml");
    std::fs::write(&path, text).unwrap();
    let r = OptimizeRun::read(&path, &mollier::registry());
    std::fs::remove_dir_all(&dir).unwrap();
    r
}

const GOOD: &str =
    "model = \"pendulum.toml\"\nduration = 1.0\nintervals = 10\n\n[actuators.motor]\ncoordinate = \"swing.rotation\"\n";

#[test]
fn a_good_file_reads() {
    let r = read("good", GOOD).expect("reads");
    assert_eq!(r.spec.intervals, 10);
}

#[test]
fn unknown_states_inputs_and_bad_numbers_are_placed_with_their_paths() {
    let text = format!(
        "{GOOD}\n[final]\n\"swing.rotaton\" = 1.0\n\n[bounds]\n\"swing.rotation\" = [2.0, 1.0]\n\n[actuators.other]\ncoordinate = \"nope\"\n"
    );
    let d = read("bad", &text).err().expect("refused").0;
    let at = |path: &str| d.iter().find(|x| x.path == path).unwrap_or_else(|| panic!("no problem at {path}: {d:?}"));
    for (path, line) in [("final.swing.rotaton", 9), ("bounds.swing.rotation", 12), ("actuators.other.coordinate", 15)]
    {
        let p = at(path);
        assert_eq!(p.location.as_ref().map(|l| l.line), Some(line), "{path}: {p:?}");
    }
    assert!(at("final.swing.rotaton").message.contains("not a state"));
}

#[test]
fn unknown_fields_and_wrong_types_are_refused_at_their_place() {
    let d = read("field", &format!("{GOOD}schem = \"x\"\n")).err().expect("refused").0;
    assert_eq!(d[0].location.as_ref().map(|l| l.line), Some(7), "{d:?}");
    assert!(d[0].message.contains("schem"), "{d:?}");
    let d = read("type", "model = \"pendulum.toml\"\nduration = \"long\"\nintervals = 10\n").err().expect("refused").0;
    assert_eq!(d[0].location.as_ref().map(|l| l.line), Some(2), "{d:?}");
    let d = read("zero", "model = \"pendulum.toml\"\nduration = -1.0\nintervals = 0\n").err().expect("refused").0;
    assert!(d.iter().any(|x| x.path == "duration") && d.iter().any(|x| x.path == "intervals"), "{d:?}");
}

/// `[solver] hessian = "exact"` is read where the Hessian is exact (the pendulum, the double
/// pendulum: a chain; Engin's shoulder: a chain with a resistance law on modes the three hinges
/// move) and refused at its place where it is not (the elbow with a joint cone), saying why.
#[test]
fn an_exact_hessian_is_refused_where_it_would_not_be_exact() {
    let solver = "\n[solver]\nhessian = \"exact\"\n";
    read("exact", &format!("{GOOD}{solver}")).expect("the pendulum's Hessian is exact");
    let chain = "model = \"double-pendulum.toml\"\nduration = 1.0\nintervals = 10\n";
    read_beside("mechanisms/double-pendulum.toml", "chain-exact", &format!("{chain}{solver}"))
        .expect("the double pendulum's Hessian is exact");
    let law = "model = \"engin-shoulder.toml\"\nduration = 1.0\nintervals = 10\n";
    read_beside("joints/engin-shoulder.toml", "law-exact", &format!("{law}{solver}"))
        .expect("Engin's resistance gives its second partials");
    let cone = "model = \"elbow.toml\"\nduration = 0.5\nintervals = 4\n\n[constraints.cone]\nforce_scale = 100.0\n";
    read_beside("forward/elbow.toml", "cone", cone).expect("reads without the field");
    let d = read_beside("forward/elbow.toml", "cone-exact", &format!("{cone}{solver}")).err().expect("refused").0;
    let p = d.iter().find(|x| x.path == "solver.hessian").unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(p.location.as_ref().map(|l| l.line), Some(9), "{p:?}");
    assert!(p.message.contains("constraints.cone"), "{p:?}");
}

#[test]
fn joint_ranges_bound_the_inputs_at_their_laws_ranges() {
    // the shoulder's flexion: SC and AC have DAS3's ranges as stops (`limits.range`), GH OpenSim's
    // `CoordinateLimitForce` (`coordinate_limit`), all in degrees from rest in the model file
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/optimal-control/shoulder-flexion-track.toml");
    let run = OptimizeRun::read(std::path::Path::new(path), &mollier::registry()).expect("reads");
    assert!(run.spec.joint_ranges);
    let b = run.state_bounds();
    let deg = std::f64::consts::PI / 180.0;
    let names = mollier::optimize::state_names(&run.compiled);
    let at = |name: &str| b[names.iter().position(|n| n == name).expect(name)];
    for (name, range) in [
        ("sc_y.rotation", [-35.6369, 10.3659]),
        ("ac_x.rotation", [-13.0721, 21.9299]),
        ("gh_x.rotation", [-50.0, 120.0]),
        ("gh_y.rotation", [-80.0, 80.0]),
    ] {
        let got = at(name);
        for k in 0..2 {
            assert!((got[k] - range[k] * deg).abs() < 1e-12, "{name}: {got:?} against {range:?} deg");
        }
    }
    // rates free, muscles' states at their natural bounds
    assert_eq!(at("gh_x.rotation.vel"), [-2e19, 2e19]);
    assert_eq!(at("serratus_anterior_1.activation"), [0.0, 1.0]);
    assert_eq!(at("serratus_anterior_1.contraction"), [0.0, 2e19]);
    // `[bounds]` overrides a range; without `joint_ranges` the inputs are free
    let mut run = run;
    run.spec.bounds.insert("gh_x.rotation".into(), [-0.1, 0.2]);
    assert_eq!(run.state_bounds()[names.iter().position(|n| n == "gh_x.rotation").unwrap()], [-0.1, 0.2]);
    run.spec.joint_ranges = false;
    assert_eq!(run.state_bounds()[names.iter().position(|n| n == "sc_y.rotation").unwrap()], [-2e19, 2e19]);
}

/// A run changed by hand after `read` (its fields are public) is checked again by `solve`: an
/// unknown state is refused with its field path, not a panic.
#[test]
fn a_run_changed_after_reading_is_checked_again_before_solving() {
    let mut r = read("changed", GOOD).expect("reads");
    r.spec.initial.insert("swing.rotaton".into(), 0.5);
    match r.solve() {
        Err(mollier::optimize::OptimizeError::File(d)) => {
            assert!(d.0.iter().any(|x| x.path == "initial.swing.rotaton"), "{d:?}");
        }
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("solved with an unknown state"),
    }
}

/// `[objective.excitation_weights]` names muscles: an unknown one and a negative weight are
/// refused at their paths; the others weigh 1, in the model's muscle order.
#[test]
fn excitation_weights_name_the_models_muscles() {
    let head = "model = \"elbow.toml\"\nduration = 0.5\nintervals = 5\n\n[objective]\nexcitation = 1.0\n";
    let bad = format!("{head}\n[objective.excitation_weights]\nbicep = 2.0\ntriceps = -1.0\n");
    let d = read_beside("forward/elbow.toml", "weights-bad", &bad).err().expect("refused").0;
    for (path, line) in [("objective.excitation_weights.bicep", 9), ("objective.excitation_weights.triceps", 10)] {
        let p = d.iter().find(|x| x.path == path).unwrap_or_else(|| panic!("no problem at {path}: {d:?}"));
        assert_eq!(p.location.as_ref().map(|l| l.line), Some(line), "{path}: {p:?}");
    }
    let good = format!("{head}\n[objective.excitation_weights]\ntriceps = 2.5\n");
    let run = read_beside("forward/elbow.toml", "weights", &good).expect("reads");
    let names: Vec<&str> = run.compiled.muscles.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["biceps", "triceps"]);
    assert_eq!(run.spec.objective.excitation_weights.get("triceps"), Some(&2.5));
}

/// A model with a rigid tendon is refused at the problem's `model` field, naming the muscle: the
/// transcription's derivatives are the elastic contraction residual's.
#[test]
fn a_rigid_tendon_is_refused_at_the_model() {
    let dir = std::env::temp_dir().join(format!("mollier-optimize-files-{}-rigid", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let elbow = std::fs::read_to_string(format!("{}/../../models/forward/elbow.toml", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .replacen("[muscles.biceps]\n", "[muscles.biceps]\ntendon = \"rigid\"\n", 1);
    assert!(elbow.contains("tendon = \"rigid\""), "the elbow's biceps entry moved");
    std::fs::write(dir.join("elbow.toml"), elbow).unwrap();
    let path = dir.join("problem.toml");
    std::fs::write(&path, "model = \"elbow.toml\"\nduration = 0.5\nintervals = 4\n").unwrap();
    let r = OptimizeRun::read(&path, &mollier::registry());
    std::fs::remove_dir_all(&dir).unwrap();
    let d = r.err().expect("refused").0;
    let p = d.iter().find(|x| x.path == "model").unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(p.location.as_ref().map(|l| l.line), Some(1), "{p:?}");
    assert!(p.message.contains("rigid") && p.message.contains("biceps"), "{p:?}");
}
