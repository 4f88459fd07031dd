//! External loads on the pendulum of `models/mechanisms/pendulum.toml` (a rod hinged about z at
//! the ground's origin, its tip 0.8 m along its x axis): the driving moment of a frame with a
//! load minus the same frame's without is minus the load's moment about the hinge, `(r × F)_z`,
//! with `r` the tip's position in closed form.

use std::path::Path;

use super::*;
use crate::dynamics::InverseDynamicsRun;

fn pendulum() -> Compiled {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms/pendulum.toml");
    crate::load(&path, &crate::registry()).expect("the pendulum compiles")
}

/// The driving moment at angle `phi` (rad) and time `t` (s), at rest, with and without `loads`.
fn moments(compiled: &Compiled, loads: &ExternalLoads, phi: f64, t: f64) -> (f64, f64) {
    let mut bare = InverseDynamicsRun::new(compiled);
    let without = bare.solve(&[phi], &[0.0], &[0.0]).expect("solves").driving[0];
    let mut run = InverseDynamicsRun::new(compiled).with_loads(Some(loads));
    let with = run.solve_at(t, &[phi], &[0.0], &[0.0]).expect("solves").driving[0];
    (with, without)
}

/// `(r × F)_z` for the tip at angle `phi` and force `f`.
fn tip_moment(phi: f64, f: [f64; 2]) -> f64 {
    let r = [0.8 * phi.cos(), 0.8 * phi.sin()];
    r[0] * f[1] - r[1] * f[0]
}

#[test]
fn a_tip_force_changes_the_driving_moment_by_r_cross_f() {
    let c = pendulum();
    // linear in time: the spline through two rows is the line, exact between them
    let text = "time,rod.tip.fx,rod.tip.fy,rod.tip.fz,rod.mx,rod.my,rod.mz [N m]\n0,3,-20,0,0,0,2\n1,5,-10,0,0,0,2\n";
    let loads = ExternalLoads::parse("tip.csv", text, &c).expect("parses");
    assert_eq!(loads.names, ["rod.tip", "rod"]);
    for (phi, t) in [(0.0, 0.0), (0.3, 0.25), (1.0, 0.5), (2.0, 0.9), (-1.2, 1.0)] {
        let f = [3.0 + 2.0 * t, -20.0 + 10.0 * t];
        let (with, without) = moments(&c, &loads, phi, t);
        let expected = -(tip_moment(phi, f) + 2.0);
        assert!((with - without - expected).abs() < 1e-9, "phi {phi}: {} vs {expected}", with - without);
    }
}

#[test]
fn a_point_of_application_in_the_table_acts_where_it_is() {
    let c = pendulum();
    // the tip's global position at the frames' angles, given as the point of application
    let frames = [(0.0, 0.4), (0.1, -0.7), (0.2, 1.3)];
    let mut text = String::from("time,rod.fx,rod.fy,rod.fz,rod.px [mm],rod.py [mm],rod.pz [mm]\n");
    for (t, phi) in frames {
        text.push_str(&format!("{t},4,-30,7,{},{},0\n", 800.0 * f64::cos(phi), 800.0 * f64::sin(phi)));
    }
    let loads = ExternalLoads::parse("cop.mot.csv", &text, &c).expect("parses");
    assert!(loads.needs_configuration());
    for (t, phi) in frames {
        let (with, without) = moments(&c, &loads, phi, t);
        let expected = -tip_moment(phi, [4.0, -30.0]);
        assert!((with - without - expected).abs() < 1e-9, "phi {phi}: {} vs {expected}", with - without);
    }
}

/// Reads the XML's table from memory.
pub(super) fn xml_loads(c: &Compiled, xml: &str, table: &str) -> Result<ExternalLoads, Diagnostics> {
    let table = table.to_string();
    parse_xml("loads.xml", xml, c, &|name: &str| Ok((name.to_string(), table.clone())))
}

pub(super) fn opensim_xml(body: &str, force_in: &str, point_in: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?>\n<OpenSimDocument Version=\"40000\">\n<ExternalLoads name=\"x\">\n<objects>\n\
         <ExternalForce name=\"hand\">\n<applied_to_body> {body} </applied_to_body>\n\
         <force_expressed_in_body>{force_in}</force_expressed_in_body>\n\
         <point_expressed_in_body>{point_in}</point_expressed_in_body>\n\
         <force_identifier>f_</force_identifier>\n<point_identifier>p_</point_identifier>\n\
         <torque_identifier>t_</torque_identifier>\n</ExternalForce>\n</objects>\n\
         <datafile>grf.mot</datafile>\n</ExternalLoads>\n</OpenSimDocument>\n"
    )
}

const TABLE: &str = "grf\nversion=1\nendheader\ntime\tf_x\tf_y\tf_z\tp_x\tp_y\tp_z\tt_x\tt_y\tt_z\n\
                     0\t0\t-10\t0\t0.8\t0\t0\t0\t0\t1.5\n2\t0\t-10\t0\t0.8\t0\t0\t0\t0\t1.5\n";

#[test]
fn opensim_external_loads_in_a_body_s_axes_turn_with_it() {
    let c = pendulum();
    // force (0, -10, 0) at (0.8, 0, 0), both in the rod's axes, and a torque 1.5 about the rod's
    // z (the global z): (r × F)_z = 0.8 · -10 = -8 at every angle
    let loads = xml_loads(&c, &opensim_xml("rod", "rod", "rod"), TABLE).expect("parses");
    assert_eq!(loads.names, ["hand"]);
    for phi in [0.0, 0.7, 2.5] {
        let (with, without) = moments(&c, &loads, phi, 1.0);
        assert!((with - without - (8.0 - 1.5)).abs() < 1e-9, "phi {phi}: {}", with - without);
    }
    // the same numbers in the global frame act as a fixed force at a fixed point
    let loads = xml_loads(&c, &opensim_xml("rod", "ground", "ground"), TABLE).expect("parses");
    for phi in [0.0, 0.7] {
        let (with, without) = moments(&c, &loads, phi, 1.0);
        let expected = -(0.8 * -10.0 + 1.5);
        assert!((with - without - expected).abs() < 1e-9, "phi {phi}: {}", with - without);
    }
}

#[test]
fn a_load_on_a_body_that_does_not_exist_is_located() {
    let c = pendulum();
    let e = xml_loads(&c, &opensim_xml("calcn_r", "ground", "ground"), TABLE).expect_err("refused");
    let d = &e.0[0];
    assert_eq!(d.location.map(|l| l.line), Some(6), "{d:?}");
    assert_eq!(d.path, "ExternalLoads/ExternalForce[hand]/applied_to_body");
    assert!(d.message.contains("`calcn_r` is not a body"), "{d:?}");
    let e = xml_loads(&c, &opensim_xml("rod", "femur", "ground"), TABLE).expect_err("refused");
    assert_eq!(e.0[0].location.map(|l| l.line), Some(7), "{e:?}");
    let e = ExternalLoads::parse("l.csv", "# loads\ntime,hand.grip.fy\n0,-20\n", &c).expect_err("refused");
    let d = &e.0[0];
    assert_eq!(d.location.map(|l| (l.line, l.column)), Some((2, 1)), "{d:?}");
    assert!(d.message.contains("`hand.grip` is not a body"), "{d:?}");
}

#[test]
fn columns_that_are_no_load_or_half_a_load_are_refused() {
    let c = pendulum();
    for (text, says) in [
        ("time,rod.tip.fq\n0,1\n", "not a load component"),
        ("time,rod.tip.fy\n0,1\n", "but not all"),
        ("time,rod.tip.fx,rod.tip.fy\n0,1,1\n", "but not all"),
        ("time,rod.tip.fx [kN],rod.tip.fy,rod.tip.fz\n0,1,1,1\n", "does not fit"),
        ("time,rod.tip.fx,rod.tip.fy,rod.tip.fz\n0,1,nan,1\n", "not a finite number"),
        ("time,rod.tip.fx,rod.tip.fy,rod.tip.fz\n1,1,1,1\n0,1,1,1\n", "does not increase"),
        ("time,rod.tip.px,rod.tip.py,rod.tip.pz\n0,1,1,1\n", "cannot have a point"),
        ("time,ro.fx,ro.fy,ro.fz\n0,1,1,1\n", "not a body"),
        ("time\n0\n", "names no load"),
    ] {
        let e = ExternalLoads::parse("l.csv", text, &c).expect_err(text);
        assert!(e.0[0].message.contains(says) && e.0[0].location.is_some(), "{text}: {e:?}");
    }
    // a table without the named columns is placed at the XML's identifier
    let e = xml_loads(&c, &opensim_xml("rod", "ground", "ground"), "t\nendheader\ntime\tf_x\n0\t1\n").expect_err("no");
    assert_eq!(e.0[0].path, "ExternalLoads/ExternalForce[hand]/force_identifier", "{e:?}");
}

#[test]
fn a_run_outside_the_table_s_times_is_refused() {
    let c = pendulum();
    let loads = ExternalLoads::parse("l.csv", "time,rod.mx,rod.my,rod.mz\n0.5,0,0,1\n1.5,0,0,1\n", &c).expect("ok");
    assert!(loads.check_times(0.5, 1.5).is_ok());
    assert!(loads.check_times(0.4, 1.0).is_err());
    assert!(loads.check_times(1.0, 1.6).is_err());
    let constant = ExternalLoads::parse("l.csv", "time,rod.mx,rod.my,rod.mz\n0,0,0,1\n", &c).expect("ok");
    assert!(constant.check_times(-5.0, 50.0).is_ok());
}
