//! A failed solve hands the next one the state of the last solution, the elements' warm starts
//! included: not those of a failed iterate. An element may keep a warm start that chooses
//! between solutions (a curved truss over an ellipsoid or between two obstacles keeps the local
//! minimum it came from, as a band would); `mollier kinematics --on-error skip` then gave, after
//! a failed frame, another length for the same posture (issue 35: arm26's triceps).

use mollier_core::element::{Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind};
use mollier_core::{Data, Model, ModelBuilder, SavedPositions, solve_positions};

/// A point `Q` on a slide: modes `x` (its first coordinate, the input), `y`, `z` (held), and
/// `length`, `|Q|` plus 0.1 m once it has been evaluated beyond `x = 1.5` (a warm start that
/// remembers where it has been), outside its domain beyond `x = 2`.
#[derive(Clone, Debug)]
struct Latch {
    layout: Layout,
}

#[derive(Clone, Debug, Default)]
struct Seen {
    far: bool,
}

impl ElementInfo for Latch {
    fn type_name(&self) -> &str {
        "latch"
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn initialize(&mut self, _x0: &[f64]) -> Result<(), ElementError> {
        Ok(())
    }
}

impl Element for Latch {
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        if x[0] > 2.0 {
            return Err(ElementError::Domain(format!("x = {} beyond 2", x[0])));
        }
        let seen = out.state::<Seen>();
        seen.far |= x[0] > 1.5;
        let extra = if seen.far { 0.1 } else { 0.0 };
        let r = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
        let values = [x[0], x[1], x[2], r + extra];
        out.e.copy_from_slice(&values);
        for k in 0..3 {
            let mut d = out.mode(k);
            let mut g = [0.0; 3];
            g[k] = 1.0;
            d.add_grad(0, &g, 1.0);
        }
        let mut d = out.mode(3);
        d.add_grad(0, &[x[0] / r, x[1] / r, x[2] / r], 1.0);
        if d.has_hess() {
            for i in 0..3 {
                for j in 0..3 {
                    let delta = if i == j { 1.0 } else { 0.0 };
                    d.hess[i * 3 + j] = (delta - x[i] * x[j] / (r * r)) / r;
                }
            }
        }
        Ok(())
    }
}

/// A model of one [`Latch`] with `x` its input and `length` free, and `length`'s mode index.
fn latch_model() -> (Model, usize) {
    let mut b = ModelBuilder::new();
    let q = b.position_node("Q", [1.0, 0.0, 0.0]).unwrap();
    let layout = Layout::new(
        vec![(q, NodeKind::Position)],
        vec![ModeInfo::length("x"), ModeInfo::length("y"), ModeInfo::length("z"), ModeInfo::length("length")],
    );
    let el = b.add_element("latch", Box::new(Latch { layout })).unwrap();
    b.input_mode(el, "x");
    b.free_mode(el, "length");
    let model = b.build().unwrap();
    let length = model.mode_by_name(el, "length").unwrap().index();
    (model, length)
}

#[test]
fn a_failed_frame_leaves_no_warm_start_behind() {
    let (model, length) = latch_model();
    let mut data = Data::new(&model);
    solve_positions(&model, &mut data, &[0.2]).unwrap();
    let before = data.e()[length];
    let x = data.x()[..3].to_vec();
    let r = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
    assert!(x[0] < 1.5 && (before - r).abs() < 1e-12, "{x:?}: {before}");
    // the way to 2.5 passes 1.5, then fails beyond 2
    assert!(solve_positions(&model, &mut data, &[2.5]).is_err());
    assert_eq!(data.x()[..3], x);
    solve_positions(&model, &mut data, &[0.2]).unwrap();
    assert_eq!(data.e()[length], before, "the failed frame's warm start was kept");
}

#[test]
fn saved_positions_return_the_configuration_and_its_warm_starts() {
    let (model, length) = latch_model();
    let mut data = Data::new(&model);
    let mut saved = SavedPositions::new();
    // nothing saved yet: refused, the data left as it is
    assert!(saved.restore(&model, &mut data).is_err());
    solve_positions(&model, &mut data, &[0.2]).unwrap();
    let x = data.x().to_vec();
    saved.save(&data);
    // past 1.5 the latch's warm start adds 0.1 m to its length
    solve_positions(&model, &mut data, &[1.8]).unwrap();
    assert!((data.e()[length] - (1.8 + 0.1)).abs() < 1e-12, "{}", data.e()[length]);
    saved.restore(&model, &mut data).unwrap();
    assert_eq!((data.q(), data.x()), (&[0.2][..], &x[..]));
    solve_positions(&model, &mut data, &[0.3]).unwrap();
    // |Q| = x on the slide: the length of a latch that has not been beyond 1.5
    assert!((data.e()[length] - 0.3).abs() < 1e-12, "the warm start was not restored: {}", data.e()[length]);
    // a configuration of another model's size is refused
    let other = ModelBuilder::new().build().unwrap();
    assert!(saved.restore(&other, &mut Data::new(&other)).is_err());
}
