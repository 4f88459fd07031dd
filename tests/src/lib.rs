//! Test mechanisms built with the kernel's API, their closed-form solutions, and numerical
//! helpers shared by the cross-crate tests and benchmarks.

pub mod counting;

use mollier_beam::Beam;
use mollier_core::geometry::Quat;
use mollier_core::{ElementId, Model, ModelBuilder, NodeId};
use mollier_hinge::Hinge;
use mollier_truss::Truss;
use num_dual::{DualNum, second_derivative};

/// Identity Euler parameters.
pub const IDENTITY: Quat = [1.0, 0.0, 0.0, 0.0];

/// Attach point `q` rigidly to the body with origin `p` and orientation `l`: a BEAM with both ends
/// on `l`, its three independent modes fixed and the other three released.
pub fn rigid_point(b: &mut ModelBuilder, name: &str, p: NodeId, l: NodeId, q: NodeId) -> ElementId {
    let el = b.add_element(name, Box::new(Beam::new(p, l, q, l, None))).expect("unique name");
    for m in ["torsion", "bending_y_q", "bending_z_q"] {
        b.free_mode(el, m);
    }
    el
}

/// How the points of a body are held to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Points {
    /// A rigid BEAM from the body's joint to each point, as SPACAR and the Delft shoulder model
    /// join them ([`rigid_point`]): three unknowns and three equations per point.
    Beams,
    /// Attached to the body's frame ([`ModelBuilder::attach`]): computed, no unknowns.
    Attached,
}

/// Hold point `q` to the body with origin `p` and orientation `l`, as `by` says.
pub fn hold_point(b: &mut ModelBuilder, by: Points, name: &str, p: NodeId, l: NodeId, q: NodeId) {
    match by {
        Points::Beams => {
            rigid_point(b, name, p, l, q);
        }
        Points::Attached => b.attach(q, p, l),
    }
}

/// A crank: fixed pivot `a` (ground orientation `g`), a body orientation, a crank pin at
/// `pin`, and a hinge about `axis` whose rotation is the input. Returns (orientation, pin).
pub fn crank(
    b: &mut ModelBuilder,
    name: &str,
    a: NodeId,
    g: NodeId,
    pin: [f64; 3],
    axis: [f64; 3],
) -> (NodeId, NodeId) {
    let l = b.orientation_node(format!("{name}_orientation"), IDENTITY).expect("unique");
    let pin = b.position_node(format!("{name}_pin"), pin).expect("unique");
    rigid_point(b, &format!("{name}_body"), a, l, pin);
    let h = b.add_element(format!("{name}_pivot"), Box::new(Hinge::new(g, l, axis, None))).expect("unique");
    b.input_mode(h, "rotation");
    (l, pin)
}

/// Planar four-bar: crank `a` from A = 0, coupler `b`, rocker `c` to D = (d, 0, 0), in z = 0.
#[derive(Clone, Copy, Debug)]
pub struct FourBar {
    /// Crank length.
    pub a: f64,
    /// Coupler length.
    pub b: f64,
    /// Rocker length.
    pub c: f64,
    /// Ground length.
    pub d: f64,
    /// Crank angle of the initial configuration (rad).
    pub theta0: f64,
    /// `+1` or `-1`: which assembly (open or crossed) of the closed form.
    pub branch: f64,
}

impl FourBar {
    /// A Grashof crank-rocker.
    pub fn crank_rocker() -> Self {
        Self { a: 0.4, b: 1.2, c: 0.9, d: 1.0, theta0: 0.3, branch: -1.0 }
    }

    /// Rocker angle θ4 (rad, of C − D) for crank angle θ2 — Freudenstein's closed form (Norton),
    /// generic so dual numbers give its exact derivatives.
    pub fn theta4<T: DualNum<Primitive = f64> + Copy>(&self, t2: T) -> T {
        let (a, b, c, d) = (self.a, self.b, self.c, self.d);
        let k1 = d / a;
        let k2 = d / c;
        let k3 = (a * a - b * b + c * c + d * d) / (2.0 * a * c);
        let cap_a = t2.cos() - k1 - t2.cos() * k2 + k3;
        let cap_b = t2.sin() * -2.0;
        let cap_c = -(t2.cos() * (k2 + 1.0)) + k1 + k3;
        let disc = (cap_b * cap_b - cap_a * cap_c * 4.0).sqrt();
        ((-cap_b + disc * self.branch) / (cap_a * 2.0)).atan() * 2.0
    }

    /// `(θ4, dθ4/dθ2, d²θ4/dθ2²)` from the closed form.
    pub fn theta4_derivatives(&self, t2: f64) -> (f64, f64, f64) {
        second_derivative(|t| self.theta4(t), t2)
    }

    /// The mechanism: input `crank_pivot.rotation` = θ2 − θ0. Returns the model and the
    /// position nodes C and D.
    pub fn model(&self) -> (Model, NodeId, NodeId) {
        let mut b = ModelBuilder::new();
        let a = b.position_node("A", [0.0; 3]).unwrap();
        let d = b.position_node("D", [self.d, 0.0, 0.0]).unwrap();
        let g = b.orientation_node("ground", IDENTITY).unwrap();
        for n in [a, d, g] {
            b.fix_node(n);
        }
        let (s, co) = self.theta0.sin_cos();
        let (_, pin) = crank(&mut b, "crank", a, g, [self.a * co, self.a * s, 0.0], [0.0, 0.0, 1.0]);
        let t4 = self.theta4(self.theta0);
        let cpt = b.position_node("C", [self.d + self.c * t4.cos(), self.c * t4.sin(), 0.0]).unwrap();
        b.fix_coordinate(cpt, 2);
        b.add_element("coupler", Box::new(Truss::new(pin, cpt))).unwrap();
        b.add_element("rocker", Box::new(Truss::new(cpt, d))).unwrap();
        (b.build().unwrap(), cpt, d)
    }
}

/// Slider-crank: crank `r` about the origin (z axis), rod `l`, slider on the x axis.
#[derive(Clone, Copy, Debug)]
pub struct SliderCrank {
    /// Crank radius.
    pub r: f64,
    /// Rod length.
    pub l: f64,
    /// Crank angle of the initial configuration.
    pub theta0: f64,
}

impl SliderCrank {
    /// Slider position for crank angle θ (closed form), generic for dual numbers.
    pub fn x<T: DualNum<Primitive = f64> + Copy>(&self, t: T) -> T {
        let s = t.sin() * self.r;
        t.cos() * self.r + (-(s * s) + self.l * self.l).sqrt()
    }

    /// The mechanism, driven by the crank angle (`crank_pivot.rotation` = θ − θ0); or, with
    /// `slider_input`, driven by the slider's x with the crank free. Returns (model, slider node).
    pub fn model(&self, slider_input: bool) -> (Model, NodeId) {
        let mut b = ModelBuilder::new();
        let a = b.position_node("A", [0.0; 3]).unwrap();
        let g = b.orientation_node("ground", IDENTITY).unwrap();
        b.fix_node(a);
        b.fix_node(g);
        let (s, c) = self.theta0.sin_cos();
        let l = b.orientation_node("crank_orientation", IDENTITY).unwrap();
        let pin = b.position_node("crank_pin", [self.r * c, self.r * s, 0.0]).unwrap();
        rigid_point(&mut b, "crank_body", a, l, pin);
        let h = b.add_element("crank_pivot", Box::new(Hinge::new(g, l, [0.0, 0.0, 1.0], None))).unwrap();
        let slider = b.position_node("slider", [self.x(self.theta0), 0.0, 0.0]).unwrap();
        b.fix_coordinate(slider, 1);
        b.fix_coordinate(slider, 2);
        if slider_input {
            b.free_mode(h, "rotation");
            b.input_coordinate(slider, 0);
        } else {
            b.input_mode(h, "rotation");
        }
        b.add_element("rod", Box::new(Truss::new(pin, slider))).unwrap();
        (b.build().unwrap(), slider)
    }
}

/// Three orthogonal hinges in series (z, then y, then x) from the ground to a body: a spherical
/// joint with the three angles as inputs. Returns (model, the body's orientation node).
pub fn spherical_joint() -> (Model, NodeId) {
    let mut b = ModelBuilder::new();
    let g = b.orientation_node("ground", IDENTITY).unwrap();
    b.fix_node(g);
    let la = b.orientation_node("La", IDENTITY).unwrap();
    let lb = b.orientation_node("Lb", IDENTITY).unwrap();
    let lc = b.orientation_node("Lc", IDENTITY).unwrap();
    for (name, p, q, axis) in
        [("h1", g, la, [0.0, 0.0, 1.0]), ("h2", la, lb, [0.0, 1.0, 0.0]), ("h3", lb, lc, [1.0, 0.0, 0.0])]
    {
        let h = b.add_element(name, Box::new(Hinge::new(p, q, axis, None))).unwrap();
        b.input_mode(h, "rotation");
    }
    (b.build().unwrap(), lc)
}

/// A spatial RSSR loop: crank about z at the origin (radius `r`), rocker about x at `dpos`
/// (radius `c`), coupler of length `l` with ball joints (a rigid TRUSS). 1 DOF.
#[derive(Clone, Copy, Debug)]
pub struct Rssr {
    /// Crank radius.
    pub r: f64,
    /// Rocker radius.
    pub c: f64,
    /// Coupler length.
    pub l: f64,
    /// Rocker pivot.
    pub dpos: [f64; 3],
    /// Initial crank angle.
    pub theta0: f64,
    /// Assembly branch, `+1` or `-1`.
    pub branch: f64,
}

impl Rssr {
    /// A loop that turns fully.
    pub fn example() -> Self {
        Self { r: 0.3, c: 0.8, l: 1.5, dpos: [0.9, 0.4, 0.7], theta0: 0.2, branch: 1.0 }
    }

    /// Rocker angle φ (of C − D in the y–z plane) for crank angle θ, closed form.
    pub fn phi<T: DualNum<Primitive = f64> + Copy>(&self, t: T) -> T {
        let [dx, dy, dz] = self.dpos;
        let bx = t.cos() * self.r - dx;
        let by = t.sin() * self.r - dy;
        let p = by * (-2.0 * self.c);
        let q = T::from(2.0 * self.c * dz);
        let rr = -(bx * bx + by * by) + self.l * self.l - dz * dz - self.c * self.c;
        let base = q.atan2(p);
        base + (rr / (p * p + q * q).sqrt()).acos() * self.branch
    }

    /// The mechanism; returns (model, rocker point C, the rocker hinge element).
    pub fn model(&self) -> (Model, NodeId, ElementId) {
        let mut b = ModelBuilder::new();
        let a = b.position_node("A", [0.0; 3]).unwrap();
        let d = b.position_node("D", self.dpos).unwrap();
        let g = b.orientation_node("ground", IDENTITY).unwrap();
        for n in [a, d, g] {
            b.fix_node(n);
        }
        let (s, co) = self.theta0.sin_cos();
        let (_, pin) = crank(&mut b, "crank", a, g, [self.r * co, self.r * s, 0.0], [0.0, 0.0, 1.0]);
        let phi = self.phi(self.theta0);
        let [dx, dy, dz] = self.dpos;
        let lr = b.orientation_node("rocker_orientation", IDENTITY).unwrap();
        let cpt = b.position_node("C", [dx, dy + self.c * phi.cos(), dz + self.c * phi.sin()]).unwrap();
        rigid_point(&mut b, "rocker_body", d, lr, cpt);
        let h = b.add_element("rocker_pivot", Box::new(Hinge::new(g, lr, [1.0, 0.0, 0.0], None))).unwrap();
        b.free_mode(h, "rotation");
        b.add_element("coupler", Box::new(Truss::new(pin, cpt))).unwrap();
        (b.build().unwrap(), cpt, h)
    }
}

/// A serial chain of `n` rigid bodies, each turning about the previous one by a hinge whose
/// rotation is an input; hinge axes cycle through z, y, x. Each body is a rigid BEAM from its joint
/// to the next (length `link`). `n` degrees of freedom.
pub fn chain(n: usize, link: f64) -> Model {
    chain_by(n, link, Points::Beams)
}

/// [`chain`] with the bodies' far ends held as `by` says.
pub fn chain_by(n: usize, link: f64, by: Points) -> Model {
    let mut b = ModelBuilder::new();
    let mut p = b.position_node("P0", [0.0; 3]).unwrap();
    let mut l = b.orientation_node("L0", IDENTITY).unwrap();
    b.fix_node(p);
    b.fix_node(l);
    let axes = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]];
    for i in 1..=n {
        let li = b.orientation_node(format!("L{i}"), IDENTITY).unwrap();
        let h = b.add_element(format!("joint{i}"), Box::new(Hinge::new(l, li, axes[i % 3], None))).unwrap();
        b.input_mode(h, "rotation");
        let pi = b.position_node(format!("P{i}"), [link * i as f64, 0.0, 0.0]).unwrap();
        hold_point(&mut b, by, &format!("link{i}"), p, li, pi);
        p = pi;
        l = li;
    }
    b.build().unwrap()
}

/// Largest absolute entry of a slice.
pub fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |a, b| a.max(b.abs()))
}

/// One body of a serial chain with inertia (reference configuration: all orientations identity).
#[derive(Clone, Copy, Debug)]
pub struct Link {
    /// Joint axis (global frame, reference configuration), turning this body about its parent.
    pub axis: [f64; 3],
    /// Joint position (reference configuration).
    pub joint: [f64; 3],
    /// Centre of mass (reference configuration).
    pub com: [f64; 3],
    /// Mass (kg).
    pub mass: f64,
    /// Inertia about the centre of mass, body frame (kg m²).
    pub inertia: [[f64; 3]; 3],
}

/// Nodes of a [`serial_chain`].
#[derive(Clone, Debug)]
pub struct ChainNodes {
    /// Joint position node of each link.
    pub joints: Vec<NodeId>,
    /// Centre-of-mass node of each link.
    pub coms: Vec<NodeId>,
    /// Orientation node of each link.
    pub orientations: Vec<NodeId>,
    /// The hinge of each joint.
    pub hinges: Vec<ElementId>,
}

/// A serial chain of rigid bodies with inertia, each turning about its parent by a driven
/// hinge; the first joint is fixed in the ground.
pub fn serial_chain(links: &[Link], gravity: [f64; 3]) -> (Model, ChainNodes) {
    serial_chain_with(links, gravity, Points::Beams, |_, _| {})
}

/// [`serial_chain`] with the joints and centres of mass held as `by` says, and `more` adding
/// elements before the model is built.
pub fn serial_chain_with(
    links: &[Link],
    gravity: [f64; 3],
    by: Points,
    more: impl FnOnce(&mut ModelBuilder, &ChainNodes),
) -> (Model, ChainNodes) {
    let mut b = ModelBuilder::new();
    let g = b.orientation_node("ground", IDENTITY).unwrap();
    b.fix_node(g);
    let mut nodes = ChainNodes { joints: vec![], coms: vec![], orientations: vec![], hinges: vec![] };
    let mut parent = g;
    for (i, link) in links.iter().enumerate() {
        let j = b.position_node(format!("J{i}"), link.joint).unwrap();
        if i == 0 {
            b.fix_node(j);
        } else {
            hold_point(&mut b, by, &format!("link{}_to_J{i}", i - 1), nodes.joints[i - 1], parent, j);
        }
        let l = b.orientation_node(format!("L{i}"), IDENTITY).unwrap();
        let h = b.add_element(format!("joint{i}"), Box::new(Hinge::new(parent, l, link.axis, None))).unwrap();
        b.input_mode(h, "rotation");
        let c = b.position_node(format!("C{i}"), link.com).unwrap();
        hold_point(&mut b, by, &format!("link{i}_com"), j, l, c);
        b.add_mass(c, link.mass);
        b.add_rotational_inertia(l, link.inertia);
        nodes.joints.push(j);
        nodes.coms.push(c);
        nodes.orientations.push(l);
        nodes.hinges.push(h);
        parent = l;
    }
    b.set_gravity(gravity);
    more(&mut b, &nodes);
    (b.build().unwrap(), nodes)
}

/// A symmetric 3x3 tensor from `[xx, yy, zz, xy, xz, yz]`.
pub fn symmetric(a: [f64; 6]) -> [[f64; 3]; 3] {
    [[a[0], a[3], a[4]], [a[3], a[1], a[5]], [a[4], a[5], a[2]]]
}

/// A spatial chain of four bodies with full inertia tensors, offset centres of mass and skew
/// axes (the first `n` of them).
pub fn spatial_links(n: usize) -> Vec<Link> {
    let all = [
        Link {
            axis: [0.0, 0.0, 1.0],
            joint: [0.0; 3],
            com: [0.1, 0.05, 0.2],
            mass: 2.0,
            inertia: symmetric([0.05, 0.04, 0.03, 0.004, -0.002, 0.001]),
        },
        Link {
            axis: [0.0, 1.0, 0.0],
            joint: [0.2, 0.0, 0.3],
            com: [0.45, 0.08, 0.25],
            mass: 1.5,
            inertia: symmetric([0.02, 0.03, 0.025, -0.003, 0.002, 0.001]),
        },
        Link {
            axis: [0.6, 0.0, 0.8],
            joint: [0.7, 0.1, 0.3],
            com: [0.85, 0.0, 0.4],
            mass: 0.9,
            inertia: symmetric([0.01, 0.012, 0.008, 0.001, 0.0, -0.002]),
        },
        Link {
            axis: [1.0, 0.0, 0.0],
            joint: [1.0, -0.1, 0.35],
            com: [1.15, -0.1, 0.3],
            mass: 0.5,
            inertia: symmetric([0.004, 0.006, 0.005, 0.0, 0.001, 0.0]),
        },
    ];
    all[..n].to_vec()
}

/// A spatial chain of `n` bodies with inertia for timing against peers: hinge axes cycling z, y,
/// x; joints `link` (m) apart along x with small y–z offsets so that no two axes are coplanar;
/// each body's centre of mass off its axis, mass 0.5–1.5 kg, full positive-definite inertia
/// tensor (kg m², principal moments 0.005–0.01 obeying the triangle inequality, products of
/// inertia up to 0.0005). Deterministic.
pub fn timing_links(n: usize, link: f64) -> Vec<Link> {
    let axes = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]];
    (0..n)
        .map(|i| {
            let t = i as f64;
            let joint = [link * t, 0.1 * link * (0.7 * t).sin(), 0.1 * link * (1.3 * t).cos()];
            let com = [joint[0] + 0.5 * link, joint[1] + 0.05 * link, joint[2] - 0.03 * link];
            let d = 0.001 * (0.9 * t).cos();
            Link {
                axis: axes[i % 3],
                joint,
                com,
                mass: 1.0 + 0.5 * (0.37 * t).sin(),
                inertia: symmetric([0.008 + d, 0.007 - d, 0.006, 0.0005, -0.0003, 0.0002]),
            }
        })
        .collect()
}

/// The ground of a four-bar: pivots A (origin) and D, the ground orientation, all fixed, and the
/// crank pin B and rocker pin C in their initial places. Returns (A, D, ground, B, C).
pub fn four_bar_frame(b: &mut ModelBuilder, fb: &FourBar) -> (NodeId, NodeId, NodeId, NodeId, NodeId) {
    let a = b.position_node("A", [0.0; 3]).unwrap();
    let d = b.position_node("D", [fb.d, 0.0, 0.0]).unwrap();
    let g = b.orientation_node("ground", IDENTITY).unwrap();
    for n in [a, d, g] {
        b.fix_node(n);
    }
    let t4 = fb.theta4(fb.theta0);
    let bp = b.position_node("B", [fb.a * fb.theta0.cos(), fb.a * fb.theta0.sin(), 0.0]).unwrap();
    let cp = b.position_node("C", [fb.d + fb.c * t4.cos(), fb.c * t4.sin(), 0.0]).unwrap();
    (a, d, g, bp, cp)
}
