//! From the OpenSim model to a Mollier model file (TOML with comments naming the source
//! objects), written through `toml_edit` so that every name is escaped by the serializer. The
//! mapping (docs/opensim-import.md):
//!
//! - every body is a body, at its pose with the coordinates at zero (locked ones at their
//!   default): its origin, orientation, mass, centre of mass and inertia; markers and path points
//!   are its points;
//! - a joint's rotations that a coordinate drives are hinges in a chain from the parent's
//!   orientation to the child's through massless orientation nodes; its translations that a
//!   coordinate drives are beams along their axes, held in direction by the parent's orientation
//!   at both ends, whose elongation is the translation; constant rotations and translations are
//!   part of the geometry;
//! - the hinge's rotation (the beam's elongation) is an input, or rigid when the coordinate is
//!   locked. It is the change of the axis's value from the initial configuration (the default
//!   pose): for an axis whose function is `q + b` that is the coordinate minus its default value,
//!   and the element is named after the coordinate;
//! - muscles are trusses or curved trusses through their path points, over their wrap objects.
//!
//! One function per kind of object: [`joints`] (nodes and joint elements), [`muscles`] (path
//! points, obstacles, load sharing), [`file`] (the document: header, bodies, points).

mod doc;
mod file;
mod joints;
mod muscles;
mod path_points;

use std::collections::{HashMap, HashSet};

use toml_edit::{Table, Value};

use crate::function::Function;
use crate::model::{AxisValue, Model};
use crate::pose::{Pose, poses};
use crate::report::Entry;

/// One Mollier input and how it follows from OpenSim's coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct InputDef {
    /// The input as written in the model's `inputs` (`hip_flexion_r.rotation`).
    pub name: String,
    /// The coordinate (index into the model's coordinates).
    pub coordinate: usize,
    /// The axis's value as a function of the coordinate.
    pub function: Function,
    /// The axis's value in the initial configuration (subtracted: inputs are changes).
    pub offset: f64,
    /// `true` when the input is the coordinate minus its default value (the element is named after
    /// the coordinate).
    pub exact_name: bool,
}

/// What the builder makes.
pub(crate) struct Built {
    pub toml: String,
    pub inputs: Vec<InputDef>,
    pub body_names: Vec<String>,
    pub muscle_names: Vec<Option<String>>,
    pub q0: Vec<f64>,
    pub entries: Vec<Entry>,
}

/// N/cm²: PCSA (cm²) = maximal isometric force / this.
pub const SPECIFIC_TENSION: f64 = 100.0;

/// Names that cannot be points: the coordinates and modes a reference `body.x` would mean.
const RESERVED_POINTS: [&str; 9] = ["x", "y", "z", "l0", "l1", "l2", "l3", "orientation", "com"];

/// Names in one namespace, made valid for a Mollier file and unique: characters other than
/// ASCII letters, digits, `_` and `-` become `_`; a taken name gets the first free `_2`, `_3`, ...
/// (the next suffix to try is remembered per base, so that n equal names take linear time).
#[derive(Default)]
struct Names {
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

impl Names {
    fn claim(&mut self, want: &str) -> String {
        let mut s: String =
            want.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
        if !s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            s.insert(0, '_');
        }
        let free = |n: &str, taken: &HashSet<String>| !taken.contains(n) && !RESERVED_POINTS.contains(&n);
        if free(&s, &self.taken) {
            self.taken.insert(s.clone());
            return s;
        }
        let k = self.next.entry(s.clone()).or_insert(2);
        let mut name = format!("{s}_{k}");
        while !free(&name, &self.taken) {
            *k += 1;
            name = format!("{s}_{k}");
        }
        *k += 1;
        self.taken.insert(name.clone());
        name
    }

    /// [`Names::claim`] for an object's own name: a name that changes is reported (`R.ASIS`
    /// becomes `R_ASIS`), so that a user finds the object under its new name.
    fn claim_reported(&mut self, want: &str, place: &str, kind: &str, entries: &mut Vec<Entry>) -> String {
        let got = self.claim(want);
        if got != want {
            entries.push(Entry::new(
                place,
                want,
                kind,
                format!(
                    "renamed `{got}`: Mollier names are ASCII letters, digits, `_` and `-`, unique and not one of {}",
                    RESERVED_POINTS.join(", ")
                ),
            ));
        }
        got
    }
}

/// A body's points, in order, and the names they take.
#[derive(Default)]
struct Points {
    names: Names,
    list: Vec<(String, Value, String)>, // name, value, comment
}

impl Points {
    fn add(&mut self, want: &str, value: Value, comment: String) -> String {
        let n = self.names.claim(want);
        self.list.push((n.clone(), value, comment));
        n
    }
}

/// What the functions of each object kind read: the model in its initial configuration.
struct Ctx<'a> {
    m: &'a Model,
    file: &'a str,
    order: &'a [usize],
    /// The initial configuration's coordinates.
    q0: Vec<f64>,
    /// Every body's pose there.
    pose: Vec<Pose>,
    /// How many axes each coordinate drives.
    uses: Vec<usize>,
    /// The coupler of each coupled coordinate.
    coupled: HashMap<usize, usize>,
    /// Muscles to leave out (OpenSim name) and why.
    leave_out: &'a [(String, String)],
}

/// What they add to: the file's tables in the making, and the report.
#[derive(Default)]
struct Out {
    top: Names,
    body_names: Vec<String>,
    points: Vec<Points>,
    nodes: Vec<(String, Table)>,
    elements: Vec<(String, Table)>,
    /// Comment lines for the next element (the joint or muscle it belongs to).
    heading: Vec<String>,
    inputs: Vec<InputDef>,
    free: Vec<String>,
    /// body -> its origin (a reference or coordinates) and a note.
    child_origin: HashMap<usize, (Value, String)>,
    /// body -> points that are its joint's centre.
    child_points: HashMap<usize, Vec<(String, Value)>>,
    muscle_names: Vec<Option<String>>,
    /// name -> its load-sharing entry and a note.
    sharing: Vec<(String, Value, String)>,
    /// name -> its `[muscles]` table (De Groote et al.'s muscles).
    hill: Vec<(String, Table)>,
    /// wrap object -> the muscles over it.
    wrap_users: HashMap<(usize, usize), Vec<String>>,
    entries: Vec<Entry>,
}

impl Out {
    /// An element table, after the pending heading.
    fn element(&mut self, name: String, note: Option<&str>, entries: Vec<(&str, Value)>) {
        let heading = std::mem::take(&mut self.heading);
        self.elements.push((name, doc::table(&heading, note, entries)));
    }
}

/// The coordinates of the initial configuration: OpenSim's default pose (every coordinate at its
/// default value, coupled ones from their coupler). Zero coordinates are no good: in DAS3 they put
/// the scapula inside the thorax's wrapping ellipsoid.
pub(crate) fn initial_coordinates(m: &Model) -> Vec<f64> {
    let q: Vec<f64> = m.coordinates.iter().map(|c| c.default).collect();
    apply_couplers(m, q)
}

/// `q` with each coupled coordinate set from its coupler (in order, repeated for chains).
pub(crate) fn apply_couplers(m: &Model, mut q: Vec<f64>) -> Vec<f64> {
    for _ in 0..m.couplers.len() {
        for c in &m.couplers {
            q[c.dependent] = c.scale * c.function.value(q[c.independent]);
        }
    }
    q
}

/// The model file of `m` (`file` names the `.osim` in comments; `order` is the joints' order from
/// ground out).
/// Muscles named in `leave_out` (OpenSim name, reason) are left out and reported.
pub(crate) fn build(m: &Model, file: &str, order: &[usize], leave_out: &[(String, String)]) -> Built {
    let q0 = initial_coordinates(m);
    let pose = poses(m, order, &q0);
    let mut uses = vec![0usize; m.coordinates.len()];
    for j in &m.joints {
        for a in j.rotations.iter().chain(&j.translations) {
            if let AxisValue::Coord(c, _) = &a.value {
                uses[*c] += 1;
            }
        }
    }
    let coupled = m.couplers.iter().enumerate().map(|(k, c)| (c.dependent, k)).collect();
    let ctx = Ctx { m, file, order, q0, pose, uses, coupled, leave_out };
    let mut out = Out::default();
    for b in &m.bodies {
        let name = out.top.claim_reported(&b.name, &b.place, "Body", &mut out.entries);
        out.body_names.push(name);
        out.points.push(Points::default());
    }
    for &k in order {
        joints::joint(&ctx, k, &mut out);
    }
    for mk in &m.markers {
        let name = out.points[mk.body].add(&mk.name, doc::vec3(&mk.location), "marker".into());
        if name != mk.name {
            out.entries.push(Entry::new(
                &mk.place,
                &mk.name,
                "Marker",
                format!(
                    "renamed `{}.{name}`: Mollier point names are ASCII letters, digits, `_` and `-`, unique in their body",
                    out.body_names[mk.body]
                ),
            ));
        }
    }
    for mu in &m.muscles {
        muscles::muscle(&ctx, mu, &mut out);
    }
    muscles::wrap_entries(&ctx, &mut out);
    joints::coordinate_entries(&ctx, &mut out);
    joints::limit_laws(&ctx, &mut out);
    // inputs in the order of the coordinates (a coordinate's axes in joint order)
    out.inputs.sort_by_key(|d| d.coordinate);
    let toml = file::document(&ctx, &mut out);
    Built {
        toml,
        inputs: out.inputs,
        body_names: out.body_names,
        muscle_names: out.muscle_names,
        q0: ctx.q0,
        entries: out.entries,
    }
}

#[cfg(test)]
mod tests {
    use super::Names;

    #[test]
    fn names_are_unique_and_valid_in_linear_time() {
        let mut n = Names::default();
        assert_eq!(n.claim("R.ASIS"), "R_ASIS");
        assert_eq!(n.claim("R_ASIS"), "R_ASIS_2");
        assert_eq!(n.claim("R_ASIS_3"), "R_ASIS_3");
        assert_eq!(n.claim("R ASIS"), "R_ASIS_4");
        assert_eq!(n.claim("x"), "x_2");
        assert_eq!(n.claim("1a"), "_1a");
        assert_eq!(n.claim("a\n]=\"#"), "a_____");
        // many equal names: each claim tries one suffix (the quadratic search took 29 s for 100k)
        let mut n = Names::default();
        for k in 0..20_000 {
            let got = n.claim("m");
            assert_eq!(got, if k == 0 { "m".to_string() } else { format!("m_{}", k + 1) });
        }
        assert_eq!(n.next.get("m"), Some(&20_001));
    }
}
