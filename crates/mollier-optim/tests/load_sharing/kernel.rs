//! The kernel identities load sharing rests on: the adjoint sensitivities equal the rows of the
//! kinetostatic influence, and the driving forces' derivatives are the muscles' length
//! derivatives (virtual power) for mode and coordinate inputs alike.

use mollier_core::dynamics::{Load, kinetostatic_influence, kinetostatic_sensitivity};
use mollier_core::{Data, Input, ModeId, ModeRole, Model, ModelBuilder, solve_positions};
use mollier_optim::{Criterion, LoadSharing, Muscle, Study};
use mollier_truss::Truss;

use crate::common::*;
use crate::cone::spatial_arm;

fn assert_identities(model: &Model, data: &mut Data, muscles: &[ModeId]) {
    let (dsig, dnod) = kinetostatic_influence(model, data, muscles).unwrap();
    let rows: Vec<ModeId> = (0..model.n_e()).map(ModeId::new).collect();
    let sens = kinetostatic_sensitivity(model, data, &rows, muscles).unwrap();
    let scale = 1.0
        + (0..model.n_e())
            .flat_map(|r| (0..muscles.len()).map(move |i| (r, i)))
            .fold(0.0f64, |m, (r, i)| m.max(dsig[(r, i)].abs()));
    for r in 0..model.n_e() {
        for i in 0..muscles.len() {
            let d = (sens[(r, i)] - dsig[(r, i)]).abs();
            assert!(
                d < 1e-12 * scale,
                "mode {} / muscle {i}: {} vs {}",
                model.mode_name(ModeId::new(r)),
                sens[(r, i)],
                dsig[(r, i)]
            );
        }
    }
    let jac = length_jacobian(model, data, muscles);
    for (j, inp) in model.inputs().iter().enumerate() {
        for i in 0..muscles.len() {
            let from_influence = match *inp {
                Input::Mode(m) => -dsig[(m.index(), i)],
                Input::Coordinate(c) => dnod[(c.index(), i)],
            };
            assert!((from_influence - jac[i][j]).abs() < 1e-12 * (1.0 + jac[i][j].abs()), "input {j}, muscle {i}");
        }
    }
}

#[test]
fn adjoint_and_virtual_power_agree_with_the_influence() {
    let arm = spatial_arm(Some(1.0));
    let mut data = Data::new(&arm.model);
    solve_positions(&arm.model, &mut data, &[0.3, -0.2, 0.4]).unwrap();
    assert_identities(&arm.model, &mut data, &arm.muscles);
    // an unsolved workspace is refused, not read
    let mut fresh = Data::new(&arm.model);
    assert!(kinetostatic_sensitivity(&arm.model, &mut fresh, &[arm.muscles[0]], &arm.muscles).is_err());
}

/// A point whose x and y are the inputs, held by three trusses: coordinate inputs through the
/// whole pipeline, against the closed form `F = Uᵀ(UUᵀ)⁻¹ f` of criterion (a) (U: the unit
/// vectors from the point to the origins, f the force to balance).
#[test]
fn coordinate_inputs_point_held_by_three_muscles() {
    let origins = [[0.3, 0.4, 0.0], [-0.35, 0.3, 0.0], [0.05, 0.45, 0.0]];
    let mut b = ModelBuilder::new();
    let p = b.position_node("P", [0.0; 3]).unwrap();
    b.fix_coordinate(p, 2);
    b.input_coordinate(p, 0);
    b.input_coordinate(p, 1);
    let mut modes = Vec::new();
    let mut l0 = Vec::new();
    for (i, o) in origins.iter().enumerate() {
        let on = b.position_node(format!("O{i}"), *o).unwrap();
        b.fix_node(on);
        let el = b.add_element(format!("m{i}"), Box::new(Truss::new(on, p))).unwrap();
        b.free_element(el);
        l0.push(norm(o));
        modes.push(el);
    }
    // the kernel wants at least one dependent coordinate: an unloaded tripod elsewhere
    let top = b.position_node("top", [1.0, 1.0, 1.0]).unwrap();
    for (i, x) in [[1.5, 1.0, 0.0], [1.0, 1.5, 0.0], [0.6, 0.7, 0.0]].into_iter().enumerate() {
        let n = b.position_node(format!("foot{i}"), x).unwrap();
        b.fix_node(n);
        b.add_element(format!("leg{i}"), Box::new(Truss::new(n, top))).unwrap();
    }
    let model = b.build().unwrap();
    let modes: Vec<ModeId> = modes.iter().map(|&e| model.mode_id(e, 0)).collect();
    assert!(modes.iter().all(|m| model.mode_role(*m) == ModeRole::Dependent));
    let q = [0.02, -0.05];
    let mut data = Data::new(&model);
    solve_positions(&model, &mut data, &q).unwrap();
    assert_identities(&model, &mut data, &modes);
    let weight = [0.0, -30.0, 0.0];
    let muscles = (0..3).map(|i| Muscle::new(modes[i], 1e-3, l0[i])).collect();
    let sharing = LoadSharing::new(&model, Study::new(muscles, Criterion::Forces)).unwrap();
    let r = sharing.solve_frame(
        &mut sharing.workspace(),
        &mut data,
        &[0.0; 2],
        &[0.0; 2],
        &[Load::Force { node: p, force: weight }],
    );
    assert!(r.status.is_success(), "{}", r.status);
    // Σ F_i u_i = −weight in the plane
    let here = [q[0], q[1], 0.0];
    let u: Vec<[f64; 3]> = origins.iter().map(|o| unit(&sub(o, &here))).collect();
    let g = nalgebra::Matrix2::from_fn(|a, c| (0..3).map(|i| u[i][a] * u[i][c]).sum());
    let y = g.lu().solve(&nalgebra::Vector2::new(-weight[0], -weight[1])).unwrap();
    let want: Vec<f64> = (0..3).map(|i| y[0] * u[i][0] + y[1] * u[i][1]).collect();
    assert!(want.iter().all(|f| *f > 0.0), "precondition: all pull {want:?}");
    assert!(rel_diff(&r.forces, &want, 30.0) < 1e-9, "{:?} vs {want:?}", r.forces);
}
