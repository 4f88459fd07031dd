//! Memory of the kinematics of long chains: the peak resident memory of two frames of
//! `mollier kinematics` (positions, deformations, the transfer functions of the free modes) grows
//! linearly with the number of bodies, not with its square. A chain of `n` hinged bodies has `n`
//! inputs and `4n` unknowns: a dense `DF` (`n_x x n_q`) alone would be `~ 100 n²` bytes, 2.5 GB at
//! 5000 bodies. Alone in its test binary, so that the process's peak is this test's.

use mollier::{KinematicsRun, compile, registry};
use mollier_format::parse;

mod chains;
#[path = "support/peak.rs"]
mod peak;

/// `(VmHWM, VmRSS)` of this process (bytes), from /proc/self/status.
fn memory() -> Option<(f64, f64)> {
    Some((peak::status_bytes("VmHWM:")?, peak::status_bytes("VmRSS:")?))
}

/// The peak memory above the resident memory before it (bytes) of compiling a chain of `n` bodies
/// and solving two frames with their transfer functions.
fn peak_of_two_frames(n: usize) -> Option<f64> {
    let text = chains::chain(n, None, true);
    // the last size's freed memory handed back, then the peak reset to the resident memory now
    // (Linux: 5 in clear_refs)
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of the allocator to the system
    unsafe {
        libc::malloc_trim(0);
    }
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    let (_, before) = memory()?;
    let doc = parse("chain.toml", &text).unwrap_or_else(|d| panic!("{}", d.render()));
    let c = compile(&doc, &registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    let mut run = KinematicsRun::new(&c);
    let mut q = c.model.q0();
    for frame in 0..2 {
        let out = run.solve(&q).unwrap_or_else(|e| panic!("frame {frame} of {n}: {e}"));
        assert_eq!(out.transfer.len(), n, "one free mode, n inputs");
        assert!(out.transfer.iter().all(|v| v.is_finite()));
        q.iter_mut().for_each(|v| *v += 1e-3);
    }
    let (peak, _) = memory()?;
    Some(peak - before)
}

#[test]
fn the_kinematics_of_a_chain_grows_linearly_in_memory() {
    // the first use's costs (the registry, the allocator's arenas) out of the measurements
    if peak_of_two_frames(50).is_none() {
        mollier_core::shared_data::skip(
            "the_kinematics_of_a_chain_grows_linearly_in_memory",
            "no /proc/self/status or clear_refs: the peak cannot be measured here",
        );
        return;
    }
    let sizes = [250, 2000];
    let peaks: Vec<f64> = sizes.iter().map(|&n| peak_of_two_frames(n).expect("measured before")).collect();
    let per_body: Vec<f64> = peaks.iter().zip(sizes).map(|(p, n)| p / n as f64).collect();
    let (mb, kb): (Vec<f64>, Vec<f64>) =
        (peaks.iter().map(|p| p / 1e6).collect(), per_body.iter().map(|b| b / 1e3).collect());
    eprintln!("peaks {mb:.1?} MB for {sizes:?} bodies: {kb:.1?} kB per body");
    // linear: a body costs the same in a long chain as in a short one (less: the short one
    // carries the fixed costs); quadratic (a dense DF, 32 n² bytes for its right-hand sides
    // alone): 8 times the bodies, 8 times each body's cost
    assert!(per_body[1] < 2.0 * per_body[0], "{kb:.1?} kB per body for {sizes:?} bodies: not linear");
    // and 5000 bodies, at the long chain's cost per body, well under 1 GB
    assert!(per_body[1] * 5000.0 < 512e6, "{:.0} MB at 5000 bodies", per_body[1] * 5e3 / 1e6);
}
