//! Benchmarks of the kinematic analysis (written below).
fn main() {}
