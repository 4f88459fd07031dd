//! Chains of hinged bodies as model files, for the tests of large models.

/// A chain of `n` bodies, each hinged to the previous one's end (axes z, y, x in turn), every
/// hinge's rotation an input; `released`: the hinge whose `bending_y` is made free; with `bar`,
/// a truss from the ground to the last body's end whose elongation is free (one row of transfer
/// functions, `n` values, per frame).
pub fn chain(n: usize, released: Option<usize>, bar: bool) -> String {
    let inputs: Vec<String> = (1..=n).map(|i| format!("\"j{i}.rotation\"")).collect();
    let mut free: Vec<String> = released.map(|k| format!("\"j{k}.bending_y\"")).into_iter().collect();
    if bar {
        free.push("\"bar\"".into());
    }
    let mut s = format!("format_version = 1\nfixed = [\"ground\"]\ninputs = [{}]\n", inputs.join(", "));
    if !free.is_empty() {
        s += &format!("free = [{}]\n", free.join(", "));
    }
    s += "\n[bodies.ground]\norigin = [0, 0, 0]\npoints = { end = [0.1, 0, 0] }\n";
    let axes = ["[0, 0, 1]", "[0, 1, 0]", "[1, 0, 0]"];
    for i in 1..=n {
        let parent = if i == 1 { "ground".to_string() } else { format!("b{}", i - 1) };
        s += &format!("\n[bodies.b{i}]\norigin = \"{parent}.end\"\npoints = {{ end = [0.1, 0, 0] }}\n");
        s += &format!("\n[elements.j{i}]\ntype = \"hinge\"\np = \"{parent}\"\nq = \"b{i}\"\naxis = {}\n", axes[i % 3]);
    }
    if bar {
        s += &format!("\n[elements.bar]\ntype = \"truss\"\np = \"ground\"\nq = \"b{n}.end\"\n");
    }
    s
}
