//! Well-posedness diagnostics: over- and under-constrained mechanisms, singular postures, bad
//! inputs.

use mollier_core::{Data, KinematicsError, ModelBuilder, solve_positions, well_posedness};
use mollier_hinge::Hinge;
use mollier_tests::{FourBar, IDENTITY, SliderCrank, four_bar_frame, rigid_point};
use num_dual::Dual64;

/// The planar four-bar built only from hinges and rigid bodies in space: the classic
/// over-constrained loop (Grübler: 6·3 − 5·4 = −2 for a mechanism that moves with one DOF).
#[test]
fn hinge_only_four_bar_is_over_constrained_out_of_plane() {
    let fb = FourBar::crank_rocker();
    let mut b = ModelBuilder::new();
    let (a, d, g, bp, cp) = four_bar_frame(&mut b, &fb);
    let l1 = b.orientation_node("L1", IDENTITY).unwrap();
    let l2 = b.orientation_node("L2", IDENTITY).unwrap();
    let l3 = b.orientation_node("L3", IDENTITY).unwrap();
    rigid_point(&mut b, "crank", a, l1, bp);
    rigid_point(&mut b, "coupler", bp, l2, cp);
    rigid_point(&mut b, "rocker", d, l3, cp);
    let z = [0.0, 0.0, 1.0];
    let ha = b.add_element("hinge_a", Box::new(Hinge::new(g, l1, z, None))).unwrap();
    b.input_mode(ha, "rotation");
    for (name, p, q) in [("hinge_b", l1, l2), ("hinge_c", l2, l3), ("hinge_d", l3, g)] {
        let h = b.add_element(name, Box::new(Hinge::new(p, q, z, None))).unwrap();
        b.free_mode(h, "rotation");
    }
    let model = b.build().unwrap();
    let mut data = Data::new(&model);
    let w = well_posedness(&model, &mut data);
    assert_eq!((w.equations, w.unknowns), (21, 18));
    assert_eq!((w.over, w.under), (3, 0), "{w}");
    let names: Vec<&str> = w.redundant.iter().map(|i| i.name.as_str()).collect();
    // only out-of-plane constraints are redundant: never an in-plane one
    for n in &names {
        assert!(!n.ends_with(".rotation") && !n.ends_with(".elongation") && !n.ends_with(".norm"), "{n} in {names:?}");
    }
    // every hinge's two bendings take part
    for h in ["hinge_a", "hinge_b", "hinge_c", "hinge_d"] {
        for m in ["bending_y", "bending_z"] {
            assert!(names.contains(&format!("{h}.{m}").as_str()), "{h}.{m} missing from {names:?}");
        }
    }
    assert!(w.messages().iter().any(|m| m.contains("over-constrained by 3")), "{:?}", w.messages());
    // and solving reports it rather than failing obscurely
    assert!(matches!(solve_positions(&model, &mut data, &[0.1]), Err(KinematicsError::NotWellPosed(_))));
}

#[test]
fn four_bar_without_an_input_is_under_constrained() {
    // the crank-driven four-bar, but with its crank hinge released instead of driven
    let fb = FourBar::crank_rocker();
    let mut b = ModelBuilder::new();
    let (a, d, g, pin, c) = four_bar_frame(&mut b, &fb);
    let l = b.orientation_node("L1", IDENTITY).unwrap();
    rigid_point(&mut b, "crank", a, l, pin);
    let h = b.add_element("pivot", Box::new(Hinge::new(g, l, [0.0, 0.0, 1.0], None))).unwrap();
    b.free_mode(h, "rotation");
    b.fix_coordinate(c, 2);
    b.add_element("coupler", Box::new(mollier_truss::Truss::new(pin, c))).unwrap();
    b.add_element("rocker", Box::new(mollier_truss::Truss::new(c, d))).unwrap();
    let model = b.build().unwrap();
    let mut data = Data::new(&model);
    let w = well_posedness(&model, &mut data);
    assert_eq!((w.dof, w.equations, w.unknowns, w.over, w.under), (0, 8, 9, 0, 1), "{w}");
    let names: Vec<&str> = w.free.iter().map(|i| i.name.as_str()).collect();
    for n in ["B.x", "B.y", "C.x", "C.y"] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    // out-of-plane coordinates do not move
    assert!(!names.contains(&"B.z"), "{names:?}");
    assert!(w.messages().iter().any(|m| m.contains("under-constrained by 1")), "{:?}", w.messages());
}

#[test]
fn slider_driven_crank_is_singular_at_dead_centre() {
    // assembled fully stretched: crank and rod aligned, so the slider's position does not fix
    // the crank angle to first order
    let sc = SliderCrank { r: 0.15, l: 0.5, theta0: 0.0 };
    let (model, _) = sc.model(true);
    let mut data = Data::new(&model);
    let w = well_posedness(&model, &mut data);
    // Away from dead centre the same mechanism is well posed: as many independent equations
    // as unknowns. At dead centre only the posture differs, so the counts are the same, and
    // the rank drops by one: the slider's closed-form position x(θ) has x′(θ) = 0 at θ = 0
    // (and only there), one direction the equations do not fix to first order.
    let regular = SliderCrank { theta0: 0.7, ..sc }.model(true).0;
    let wr = well_posedness(&regular, &mut Data::new(&regular));
    assert!(wr.is_well_posed() && wr.equations == wr.unknowns && wr.over == 0, "{wr}");
    let slope = |theta: f64| sc.x(Dual64::from(theta).derivative()).eps;
    assert!(slope(0.0) == 0.0 && slope(0.7).abs() > 0.1 * sc.r);
    // the unknowns: the crank's orientation (4 Euler parameters) and its pin (3); the slider
    // is the input along x and fixed across
    assert_eq!(wr.unknowns, 4 + 3);
    assert_eq!((w.equations, w.unknowns, w.over, w.under), (wr.equations, wr.unknowns, 1, 1), "{w}");
    // the two aligned bars
    let mut redundant: Vec<&str> = w.redundant.iter().map(|i| i.name.as_str()).collect();
    redundant.sort();
    assert_eq!(redundant, ["crank_body.elongation", "rod.elongation"]);
    let free: Vec<&str> = w.free.iter().map(|i| i.name.as_str()).collect();
    assert!(free.contains(&"crank_pin.y") && free.contains(&"crank_orientation.l3"), "{free:?}");
    assert!(w.messages().iter().any(|m| m.contains("dependent constraints at this configuration")), "{w}");
    let err = solve_positions(&model, &mut data, &[sc.r + sc.l]).unwrap_err();
    assert!(matches!(err, KinematicsError::NotWellPosed(_)), "{err}");
    // beyond reach, from a regular configuration: no configuration exists
    let sc = SliderCrank { r: 0.15, l: 0.5, theta0: 0.5 };
    let (model, _) = sc.model(true);
    let mut data = Data::new(&model);
    let before = data.x().to_vec();
    let err = solve_positions(&model, &mut data, &[sc.r + sc.l + 0.01]).unwrap_err();
    assert!(matches!(err, KinematicsError::NoConvergence { .. } | KinematicsError::NotWellPosed(_)), "{err}");
    // the workspace is left as it was
    assert_eq!(data.x(), &before[..]);
}

#[test]
fn bad_inputs_are_reported() {
    let (model, _, _) = FourBar::crank_rocker().model();
    let mut data = Data::new(&model);
    assert!(matches!(
        solve_positions(&model, &mut data, &[]),
        Err(KinematicsError::InputLength { expected: 1, got: 0 })
    ));
    let err = solve_positions(&model, &mut data, &[f64::NAN]).unwrap_err();
    assert!(err.to_string().contains("crank_pivot.rotation"), "{err}");
    assert!(matches!(mollier_core::transfer::first_order(&model, &mut data), Err(KinematicsError::NotSolved)));
}

#[test]
fn topology_of_the_four_bar() {
    let (model, _, _) = FourBar::crank_rocker().model();
    let t = model.topology();
    assert_eq!(t.parts.len(), 1);
    assert!(t.parts[0].grounded);
    assert_eq!(t.element_order.len(), model.n_elements());
    assert_eq!(t.node_order.len(), model.nodes().len());
    // the crank loop through the ground, the four-bar loop, and the plane constraint of C
    assert_eq!(t.loops, 3);
}

#[test]
fn a_model_without_dependent_coordinates_solves_trivially() {
    // a point moved by its three coordinates, and a free truss to a fixed point
    let mut b = ModelBuilder::new();
    let a = b.position_node("A", [0.0; 3]).unwrap();
    let p = b.position_node("P", [0.3, 0.4, 0.0]).unwrap();
    b.fix_node(a);
    for axis in 0..3 {
        b.input_coordinate(p, axis);
    }
    let t = b.add_element("link", Box::new(mollier_truss::Truss::new(a, p))).unwrap();
    b.free_element(t);
    let model = b.build().unwrap();
    assert_eq!((model.n_unknowns(), model.n_equations()), (0, 0));
    let mut data = Data::new(&model);
    assert!(well_posedness(&model, &mut data).is_well_posed());
    solve_positions(&model, &mut data, &[0.6, 0.8, 0.0]).unwrap();
    mollier_core::transfer::second_order(&model, &mut data).unwrap();
    let el = model.mode_by_name(t, "elongation").unwrap().index();
    // elongation 1 − 0.5 and its derivative along x: x/|p| = 0.6
    assert!((data.e()[el] - 0.5).abs() < 1e-15);
    assert!((data.df_e()[(el, 0)] - 0.6).abs() < 1e-15);
}
