//! A problem file solved through `mollier optimize`'s pipeline with a chosen Hessian.

use std::path::Path;

use mollier::optimize::{HessianSpec, OptimizeRun};
use mollier_ocp::Motion;

/// Solve the problem file at `path` with `hessian` at IPOPT's `tol` `tolerance`; its objective,
/// its iterations and the Hessian case the transcription chose. Panics unless IPOPT converged.
pub fn solve_file(path: &Path, hessian: HessianSpec, tolerance: f64) -> (f64, usize, Result<Motion, String>) {
    let mut run = OptimizeRun::read(path, &mollier::registry()).expect("problem reads");
    run.spec.solver.hessian = Some(hessian);
    run.spec.solver.tolerance = tolerance;
    let solved = run.solve().expect("solves");
    let ip = &solved.solved.ipopt;
    assert!(ip.converged(), "{hessian:?}: {}", ip.status_name());
    println!("{hessian:?}: objective {:.12}, {} iterations", ip.objective, ip.iterations.len());
    (ip.objective, ip.iterations.len(), solved.solved.hessian.clone())
}
