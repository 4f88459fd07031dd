//! The joint cone as a path constraint, solved (`models/optimal-control/elbow-cone.toml`: the
//! elbow's flexion with its cone narrowed to 2.5°): the solution keeps the joint force inside
//! the cone at every grid point, where the solution without the cone leaves it.
//!
//! Needs IPOPT (`tools/install-ipopt`): without it the tests say SKIPPED, under CI=true they fail.

use std::path::Path;

use mollier::optimize::{OptimizeRun, Optimized};
use mollier_optim::stability_index;

#[path = "support/ipopt.rs"]
mod ipopt;
use ipopt::ipopt_here;

/// The problem file with its cone narrowed to `margin` of the model's (`None`: switched off).
fn solve(run: &mut OptimizeRun, margin: Option<f64>) -> Optimized<'_> {
    let cone = run.spec.constraints.cone.as_mut().expect("the file has a cone");
    cone.enabled = margin.is_some();
    cone.margin = margin.or(cone.margin);
    let solved = run.solve().expect("solves");
    assert!(solved.solved.ipopt.converged(), "{}", solved.solved.ipopt.status_name());
    println!("{}", solved.summary());
    solved
}

/// The stability index (Chadwick et al. 2014, eq. 9) of each point's joint force in the cone of
/// half-angles `half` (rad).
fn indices(o: &Optimized<'_>, half: f64) -> Vec<f64> {
    o.solved.cone.iter().map(|f| stability_index(f, half, half).expect("a force")).collect()
}

#[test]
fn the_cone_is_respected_where_it_binds() {
    if !ipopt_here("optimize with the joint cone") {
        return;
    }
    let path = format!("{}/../../models/optimal-control/elbow-cone.toml", env!("CARGO_MANIFEST_DIR"));
    let mut run = OptimizeRun::read(Path::new(&path), &mollier::registry()).expect("problem reads");
    let narrow = 0.1 * 25f64.to_radians();
    let free = solve(&mut run, None).solved.ipopt.objective;
    // the model's 25° cone does not bind: the free optimum, its forces outside the narrowed cone
    let wide = solve(&mut run, Some(1.0));
    assert!((wide.solved.ipopt.objective - free).abs() < 1e-6 * free, "{} against {free}", wide.solved.ipopt.objective);
    let outside = indices(&wide, narrow).into_iter().fold(f64::NEG_INFINITY, f64::max);
    println!("without the narrowed cone: largest index {outside:.3}");
    assert!(
        outside > 0.5,
        "the free solution is inside the narrowed cone (index {outside:.3}): the test tests nothing"
    );
    // the narrowed cone binds: every point inside it, at a higher effort
    let bound = solve(&mut run, Some(0.1));
    let inside = indices(&bound, narrow);
    println!("with it: indices {inside:.4?}");
    let worst = inside.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!(worst <= 1e-6, "the joint force leaves the cone: index {worst:.2e}");
    assert!(worst > -1e-3, "the cone does not bind: largest index {worst:.2e}");
    assert!(bound.solved.ipopt.objective > free * 1.001, "{} against {free}", bound.solved.ipopt.objective);
    // stability.csv: the force, angles, index in the model's cone and the constraint's row
    let out = std::env::temp_dir().join(format!("mollier-optimize-cone-{}", std::process::id()));
    bound.write(mollier::OutputDir::create(&out).expect("opens")).expect("writes");
    let text = std::fs::read_to_string(out.join("stability.csv")).expect("stability.csv is written");
    std::fs::remove_dir_all(&out).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.first(), Some(&"time"));
    assert_eq!(header.last(), Some(&"cone_constraint"));
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    assert_eq!(rows.len(), bound.solved.points.len());
    for (r, f) in rows.iter().zip(&bound.solved.cone) {
        let index = stability_index(f, 25f64.to_radians(), 25f64.to_radians()).unwrap();
        assert!((r[1] - f[0]).abs() <= 1e-9 * f[0].abs() && (r[6] - index).abs() < 1e-9, "{r:?} against {f:?}");
        assert!(r[7] <= 1e-6, "the constraint's row {} is violated", r[7]);
    }
}
