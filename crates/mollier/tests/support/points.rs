//! A model file with many points, for the scale test and the model-build benchmark.

/// A pendulum whose arm carries `n` points given by coordinates, and `n / 10` more given as
/// the names of those (sharing their nodes).
pub fn many_points(n: usize) -> String {
    let mut s = String::from(
        "format_version = 1\nfixed = [\"ground\"]\ninputs = [\"swing.rotation\"]\n\n[bodies.ground]\norigin = [0, 0, 0]\n\n[bodies.arm]\norigin = \"ground\"\n\n[bodies.arm.points]\n",
    );
    for i in 0..n {
        s += &format!("p{i} = [{}, -0.5, 0]\n", 1e-3 * (i + 1) as f64);
    }
    for i in 0..n / 10 {
        s += &format!("alias{i} = \"arm.p{}\"\n", 10 * i);
    }
    s += "\n[elements.swing]\ntype = \"hinge\"\np = \"ground\"\nq = \"arm\"\naxis = [0, 0, 1]\n";
    s
}
