//! Large models: a chain of 5000 hinged bodies from a model file is checked through the sparse
//! path and reported well posed; with one joint released it is reported under-constrained by its
//! structural rank. (Not timed: `benches/` measures the cost.)

use mollier::{check, compile, registry};
use mollier_format::parse;

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
