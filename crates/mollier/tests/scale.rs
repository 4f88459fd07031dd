//! Large models: a chain of 5000 hinged bodies from a model file is checked through the sparse
//! path and reported well posed; with one joint released it is reported under-constrained by its
//! structural rank. (Not timed: `benches/` measures the cost.)

use mollier::{check, compile, registry};
use mollier_format::parse;

#[path = "support/points.rs"]
mod points;
use points::many_points;

mod chains;

fn chain(n: usize, released: Option<usize>) -> String {
    chains::chain(n, released, false)
}

#[test]
fn a_chain_of_5000_bodies_is_checked_and_well_posed() {
    let doc = parse("chain.toml", &chain(5000, None)).unwrap_or_else(|d| panic!("{}", d.render()));
    let c = compile(&doc, &registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    // the bodies' ends are attached: 4 unknowns (Euler parameters) per body
    assert_eq!(c.model.n_unknowns(), 4 * 5000);
    let report = check(&c, &registry());
    assert!(report.is_well_posed(), "{:?}", report.diagnostics);
    assert_eq!(report.dof, 5000);
}

#[test]
fn a_large_chain_with_a_joint_released_is_under_constrained_by_one() {
    let doc = parse("chain.toml", &chain(5000, Some(2500))).unwrap_or_else(|d| panic!("{}", d.render()));
    let c = compile(&doc, &registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    let report = check(&c, &registry());
    assert!(!report.is_well_posed());
    assert_eq!((report.analysis.over, report.analysis.under), (0, 1), "{:?}", report.diagnostics);
    // a structural count: one unknown is left without an equation; which one a matching leaves
    // over is not the motion's shape (the SVD would give that), so none is named
    assert!(report.analysis.free.is_empty() && report.analysis.redundant.is_empty());
    let note = report.analysis.note.as_deref().unwrap_or_default();
    assert!(note.contains("structural rank 19999"), "{note}");
}

/// Names a compile compares to find the file's nodes, bodies and points (`Named::examined`).
fn names_examined(n: usize) -> usize {
    let doc = parse("points.toml", &many_points(n)).unwrap_or_else(|d| panic!("{}", d.render()));
    let before = mollier_format::Named::<()>::examined();
    let c = compile(&doc, &registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    assert_eq!(c.points.len(), 2 + n + n / 10);
    mollier_format::Named::<()>::examined() - before
}

#[test]
fn compiling_points_compares_names_a_number_of_times_linear_in_the_points() {
    // a scan of the body's points per point (the step that took 80,000 points to 31 s)
    // compares about n^2/2 names: doubling the points would quadruple the count
    let (small, large) = (names_examined(2_000), names_examined(4_000));
    assert!(large <= 2 * small + 1_000, "2,000 points: {small} names compared; 4,000 points: {large}");
}
