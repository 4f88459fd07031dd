//! The shoulder's markers for tests of inverse kinematics: the 14 points that stand for motion
//! capture's markers, the humerus's cluster and epicondyles added to the model, seeded normal
//! noise of 2 mm and the `.trc` text of a known motion. One home for `mollier`'s IK test
//! (`tests/ik.rs`) and `mollier-study`'s marker study (`tests/markers.rs`, by `#[path]`).

use mollier::Compiled;
use mollier_core::{Data, solve_positions};

/// The shoulder's markers: bony landmarks of clavicle and scapula, and on the humerus the hand,
/// two muscle insertions, a cluster of three markers on the upper arm (as motion capture puts a
/// plate there) and the epicondyles, which [`with_markers`] adds to the model as points (points
/// attached to a body add no unknowns).
pub const MARKERS: [&str; 14] = [
    "clavicle.trapezoid",
    "clavicle.conoid",
    "scapula.TS",
    "scapula.AI",
    "scapula.conoid",
    "scapula.GH",
    "humerus.hand",
    "humerus.deltoideus_scapular_1_i",
    "humerus.teres_major_1_i",
    "humerus.cluster_1",
    "humerus.cluster_2",
    "humerus.cluster_3",
    "humerus.elbow_lateral",
    "humerus.elbow_medial",
];

/// The noise of each coordinate (mm): 2 mm root mean square of a marker's displacement.
pub const SIGMA_MM: f64 = 2.0 / 1.732_050_807_568_877_2;

/// The seed of the markers' noise.
pub const SEED: u64 = 0x5EED_2026;

/// The upper-arm cluster, 80 mm off the humerus's axis, and the epicondyles, 35 mm either side
/// of it at the elbow (mm, in the humerus frame).
const CLUSTER: &str = "cluster_1 = [80, -150, 0]\ncluster_2 = [0, -180, 80]\ncluster_3 = [-57, -210, -57]\n\
                       elbow_lateral = [35, -290, 0]\nelbow_medial = [-35, -290, 0]\n";

/// The text of the shoulder model `shoulder.toml` with the humerus's cluster and epicondyles.
pub fn with_markers(shoulder_toml: &str) -> String {
    shoulder_toml.replace("[bodies.humerus.points]\n", &format!("[bodies.humerus.points]\n{CLUSTER}"))
}

/// xorshift64* and Box-Muller: normal deviates from a fixed seed (no dependency for a test).
pub struct Noise(pub u64);

impl Noise {
    /// A uniform deviate in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal deviate.
    pub fn normal(&mut self) -> f64 {
        (-2.0 * self.uniform().ln()).sqrt() * (std::f64::consts::TAU * self.uniform()).cos()
    }
}

/// The `.trc` text (named `name`, `rate` frames a second from time 0) of [`MARKERS`] at the
/// frames' inputs `qs` of the compiled model `c`, in mm with normal noise of 2 mm root mean
/// square per marker ([`SIGMA_MM`] per coordinate).
pub fn trial(c: &Compiled, qs: &[Vec<f64>], name: &str, rate: f64, noise: &mut Noise) -> String {
    let model = &c.model;
    let nodes: Vec<_> = MARKERS
        .iter()
        .map(|m| c.points.iter().find(|p| p.name == *m).unwrap_or_else(|| panic!("no point {m}")).node)
        .collect();
    let mut trc = format!(
        "PathFileType\t4\t(X/Y/Z)\t{name}\nDataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\n\
         {rate}\t{rate}\t{}\t{}\tmm\nFrame#\tTime\t{}\n\t\t{}\n\n",
        qs.len(),
        MARKERS.len(),
        MARKERS.join("\t\t\t"),
        (1..=MARKERS.len()).map(|k| format!("X{k}\tY{k}\tZ{k}")).collect::<Vec<_>>().join("\t"),
    );
    let mut data = Data::new(model);
    for (i, q) in qs.iter().enumerate() {
        solve_positions(model, &mut data, q).unwrap();
        trc += &format!("{}\t{}", i + 1, i as f64 / rate);
        for n in &nodes {
            for x in data.position(model, *n) {
                trc += &format!("\t{:.4}", 1e3 * x + SIGMA_MM * noise.normal());
            }
        }
        trc += "\n";
    }
    trc
}
