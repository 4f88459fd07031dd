//! Attached nodes against rigid beams: a spatial chain whose joints and centres of mass are held
//! to their bodies by SPACAR's rigid BEAMs (an independent, separately tested formulation with
//! three unknowns and three equations per point) and the same chain with those points attached to
//! the body frames. Everything the kernel computes must agree to round-off; and the chain rule of
//! the attached nodes is checked against central differences by the conformance harness.

use mollier_core::conformance::{Options, Rng, check_attached};
use mollier_core::dynamics::{element_forces, kinetostatics, mass_matrix};
use mollier_core::{Data, Model, NodeId, solve_positions, transfer};
use mollier_tests::{ChainNodes, Points, max_abs, serial_chain_with, spatial_links};
use mollier_truss::Truss;

/// The four-link spatial chain under gravity, with a muscle from the first body's centre of
/// mass to the third's and a ligament from the second joint to the fourth centre of mass (free
/// TRUSSes whose ends are attached in one model).
fn model(by: Points) -> (Model, ChainNodes) {
    serial_chain_with(&spatial_links(4), [0.0, -9.81, 0.0], by, |b, n: &ChainNodes| {
        let muscle = b.add_element("muscle", Box::new(Truss::new(n.coms[0], n.coms[2]))).expect("unique");
        b.free_element(muscle);
        let ligament = b.add_element("ligament", Box::new(Truss::new(n.joints[1], n.coms[3]))).expect("unique");
        b.free_element(ligament);
    })
}

fn close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    let scale = 1.0 + max_abs(a).max(max_abs(b));
    let err = a.iter().zip(b).fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
    assert!(err <= tol * scale, "{what}: differ by {err:e} (scale {scale:e})");
    assert_eq!(a.len(), b.len(), "{what}: lengths");
}

/// Column `j` of a matrix, for comparing whole matrices.
fn flat(m: faer::MatRef<'_, f64>) -> Vec<f64> {
    (0..m.ncols()).flat_map(|j| (0..m.nrows()).map(move |i| m[(i, j)])).collect()
}

#[test]
fn attached_points_move_and_load_their_bodies_as_rigid_beams_do() {
    let (beams, nodes) = model(Points::Beams);
    let (attached, _) = model(Points::Attached);
    // 3 joints and 4 centres of mass attached: 21 unknowns and 21 equations fewer
    assert_eq!(attached.n_attached(), 7);
    assert_eq!(beams.n_unknowns() - attached.n_unknowns(), 21);
    assert_eq!(beams.n_x(), attached.n_x());
    let muscle = |m: &Model| m.mode_id(m.element_by_name("muscle").expect("muscle"), 0);
    let hinges = |m: &Model| -> Vec<usize> {
        (0..4).map(|i| m.mode_id(m.element_by_name(&format!("joint{i}")).expect("hinge"), 0).index()).collect()
    };
    let mut rng = Rng::new(17);
    let (mut db, mut da) = (Data::new(&beams), Data::new(&attached));
    for sample in 0..5 {
        let q: Vec<f64> = (0..4).map(|_| 0.8 * rng.symmetric()).collect();
        let qd: Vec<f64> = (0..4).map(|_| 2.0 * rng.symmetric()).collect();
        let qdd: Vec<f64> = (0..4).map(|_| 5.0 * rng.symmetric()).collect();
        solve_positions(&beams, &mut db, &q).expect("beams solve");
        solve_positions(&attached, &mut da, &q).expect("attached solve");
        close(db.x(), da.x(), 1e-13, "positions");
        transfer::second_order(&beams, &mut db).expect("D²F");
        transfer::second_order(&attached, &mut da).expect("D²F");
        close(&flat(db.df_x()), &flat(da.df_x()), 1e-12, "DF_x");
        close(&flat(db.d2f_x()), &flat(da.d2f_x()), 1e-11, "D²F_x");
        let (mb, ma) = (muscle(&beams).index(), muscle(&attached).index());
        close(&flat(db.df_e().subrows(mb, 1)), &flat(da.df_e().subrows(ma, 1)), 1e-12, "moment arms");
        close(&flat(db.d2f_e().subrows(mb, 1)), &flat(da.d2f_e().subrows(ma, 1)), 1e-11, "D²F of the muscle");
        // velocities and accelerations, everywhere (the attached nodes' by the chain rule)
        let kb = kinetostatics(&beams, &mut db, &qd, &qdd, None, &[]).expect("kinetostatics");
        let ka = kinetostatics(&attached, &mut da, &qd, &qdd, None, &[]).expect("kinetostatics");
        close(db.xd(), da.xd(), 1e-12, "velocities");
        close(db.xdd(), da.xdd(), 1e-11, "accelerations");
        // joint moments and reactions of the hinges, support reactions at the fixed coordinates
        let pick = |k: &[f64], idx: Vec<usize>| idx.into_iter().map(|i| k[i]).collect::<Vec<f64>>();
        close(&pick(&kb.sigma, hinges(&beams)), &pick(&ka.sigma, hinges(&attached)), 1e-11, "hinge stresses");
        let fixed = |m: &Model| -> Vec<usize> {
            (0..m.n_x())
                .filter(|&c| m.coord_role(mollier_core::CoordId::new(c)) == mollier_core::CoordRole::Fixed)
                .collect()
        };
        close(&pick(&kb.nodal, fixed(&beams)), &pick(&ka.nodal, fixed(&attached)), 1e-11, "support reactions");
        // the force the body exerts on its joint point: the beam's on one side, what passes
        // through the attached node on the other
        for (i, &j) in nodes.joints.iter().enumerate().skip(1) {
            let beam = beams.element_by_name(&format!("link{}_to_J{i}", i - 1)).expect("beam");
            let on_node = element_forces(&beams, &db, beam, &kb.sigma);
            let o = offset(&attached, j);
            let at = beams.element(beam).layout().offset(2);
            let by_beam: Vec<f64> = (0..3).map(|a| -on_node[at + a]).collect();
            let through: Vec<f64> = (0..3).map(|a| -ka.nodal[o + a]).collect();
            close(&by_beam, &through, 1e-11, &format!("joint force at J{i}, sample {sample}"));
        }
        let (mmb, mma) = (mass_matrix(&beams, &mut db).expect("M"), mass_matrix(&attached, &mut da).expect("M"));
        close(&flat(mmb.as_ref()), &flat(mma.as_ref()), 1e-12, "mass matrix");
    }
}

fn offset(m: &Model, n: NodeId) -> usize {
    m.nodes()[n.index()].offset
}

#[test]
fn the_chain_rule_of_attached_nodes_agrees_with_central_differences() {
    let (attached, _) = model(Points::Attached);
    let mut rng = Rng::new(5);
    let mut data = Data::new(&attached);
    let mut checked = 0;
    for _ in 0..4 {
        // a configuration on the constraints, then every coordinate perturbed off them
        let q: Vec<f64> = (0..4).map(|_| rng.symmetric()).collect();
        solve_positions(&attached, &mut data, &q).expect("solves");
        let x: Vec<f64> = data.x().iter().map(|v| v + 0.05 * rng.symmetric()).collect();
        let report = check_attached(&attached, &x, &Options::default()).expect("chain rule");
        // the muscle and the ligament (the hinges act on orientations only); C2 hangs from J2,
        // J2 from J1, J1 from J0: three frames deep
        assert_eq!(report.configurations, 2, "{report:?}");
        checked += report.configurations;
    }
    assert_eq!(checked, 8);
}

#[test]
fn the_harness_compares_and_can_fail() {
    // with a central-difference step of 1e-3 the differences are off by O(h²) ≈ 1e-6: a harness
    // held to 1e-14 must report a failure, so its passing above is a measurement, not a given
    let (attached, _) = model(Points::Attached);
    let mut data = Data::new(&attached);
    solve_positions(&attached, &mut data, &[0.3, -0.2, 0.5, 0.1]).expect("solves");
    let opts = Options { gradient_rtol: 1e-14, hessian_rtol: 1e-14, step: 1e-3, ..Options::default() };
    let failure = check_attached(&attached, data.x(), &opts).expect_err("must fail");
    assert!(failure.check.contains("attached nodes"), "{failure}");
}
