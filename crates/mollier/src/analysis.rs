//! Kinematic analysis of a motion, frame by frame, with outputs named as in the file.
//!
//! For each frame: positions of the points a user can name, every mode of the user's elements,
//! and the first-order transfer function `∂e/∂q` of every dependent (free) mode of the user's
//! elements — for a muscle's elongation, minus its moment arms. Each frame starts from the
//! previous solution (Newton-Raphson with the kernel's predictor and continuation). On request
//! ([`KinematicsRun::with_second_order`]) also the second-order transfer function
//! `∂²e/∂q_i∂q_j` of the same modes, for `i <= j` (the pairs of [`mollier_core::pair_index`]).

use mollier_core::kinematics::{KinematicsError, solve_positions_explained};
use mollier_core::transfer::{first_order_of_modes, second_order};
use mollier_core::{Data, ElementRole, ModeId, ModeRole, NodeId, n_pairs};

use crate::compile::Compiled;

/// Why a frame could not be solved.
#[derive(Clone, Debug, thiserror::Error)]
pub enum FrameError {
    /// The kernel failed: no convergence, a singular configuration, an element error.
    #[error(transparent)]
    Kinematics(#[from] KinematicsError),
    /// A result is NaN or infinite.
    #[error("the solution has a non-finite value in `{0}`")]
    NonFinite(String),
    /// A forward simulation with muscles failed.
    #[error(transparent)]
    Simulation(#[from] mollier_sim::SimError),
}

/// One frame's results, in the order of [`KinematicsRun`]'s headers.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameOutput {
    /// `x, y, z` of each point (m): `3 x points`.
    pub positions: Vec<f64>,
    /// Each mode of each user element (m or rad).
    pub deformations: Vec<f64>,
    /// `∂e/∂q` for each dependent mode and input (m/m, m/rad, rad/rad, ...).
    pub transfer: Vec<f64>,
    /// `∂²e/∂q_i∂q_j` for each dependent mode and pair of inputs `i <= j` (m/rad², ...):
    /// `modes x n_q(n_q+1)/2`, pairs in the order of [`mollier_core::pair_index`]; empty unless
    /// the run was made [`KinematicsRun::with_second_order`].
    pub second_order: Vec<f64>,
    /// What the elements say of this configuration without failing it ([`element_warnings`]):
    /// `element: warning`, usually none.
    pub warnings: Vec<String>,
}

/// The warnings of the elements at the configuration `data` holds
/// ([`mollier_core::ElementInfo::warning`]: a path's anchor inside a wrap object, drawn straight
/// as OpenSim does), each as `element: warning`, in the model's element order. The lines of
/// action are asked (the paths: the only elements that warn), not every joint and beam, whose
/// local coordinates would be gathered at every frame for nothing. For a solved frame; the
/// elements are only asked, the workspace is not changed.
pub fn element_warnings(compiled: &Compiled, data: &Data) -> Vec<String> {
    compiled.model.element_warnings(data.x(), lines_of_action(compiled))
}

/// The lines of action (the elements that may warn, [`element_warnings`]), in model order.
pub(crate) fn lines_of_action(compiled: &Compiled) -> impl Iterator<Item = mollier_core::ElementId> + '_ {
    compiled.elements.iter().filter(|e| e.role == ElementRole::LineOfAction).map(|e| e.id)
}

/// A kinematic analysis in progress: the model's workspace and the output columns.
pub struct KinematicsRun<'a> {
    compiled: &'a Compiled,
    data: Data,
    points: Vec<(String, NodeId)>,
    modes: Vec<(String, ModeId)>,
    dependent: Vec<(String, ModeId)>,
    second_order: bool,
}

impl<'a> KinematicsRun<'a> {
    /// Start at the model's initial configuration.
    pub fn new(compiled: &'a Compiled) -> Self {
        let model = &compiled.model;
        let points = compiled.points.iter().map(|p| (p.name.clone(), p.node)).collect();
        let mut modes = Vec::new();
        let mut dependent = Vec::new();
        for el in &compiled.elements {
            let n = model.element(el.id).layout().n_modes();
            for k in 0..n {
                let m = model.mode_id(el.id, k);
                let label = format!("{}.{}", el.name, model.mode_info(m).name);
                if model.mode_role(m) == ModeRole::Dependent {
                    dependent.push((label.clone(), m));
                }
                modes.push((label, m));
            }
        }
        Self { compiled, data: Data::new(model), points, modes, dependent, second_order: false }
    }

    /// Also compute the second-order transfer functions ([`FrameOutput::second_order`]).
    pub fn with_second_order(mut self) -> Self {
        self.second_order = true;
        self
    }

    /// Columns of positions: `<point>.x`, `<point>.y`, `<point>.z` per point.
    pub fn position_header(&self) -> Vec<String> {
        self.points.iter().flat_map(|(n, _)| ["x", "y", "z"].map(|a| format!("{n}.{a}"))).collect()
    }

    /// Columns of deformations: `<element>.<mode>` per mode of each user element.
    pub fn deformation_header(&self) -> Vec<String> {
        self.modes.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Columns of transfer functions: `<element>.<mode>/<input>` per dependent mode and input.
    pub fn transfer_header(&self) -> Vec<String> {
        self.dependent
            .iter()
            .flat_map(|(n, _)| self.compiled.inputs.iter().map(move |i| format!("{n}/{}", i.name)))
            .collect()
    }

    /// Columns of second-order transfer functions: `<element>.<mode>/<input i>/<input j>` per
    /// dependent mode and pair of inputs `i <= j` (empty unless [`Self::with_second_order`]).
    pub fn second_order_header(&self) -> Vec<String> {
        if !self.second_order {
            return Vec::new();
        }
        let inputs = &self.compiled.inputs;
        let pairs: Vec<String> = (0..inputs.len())
            .flat_map(|i| (i..inputs.len()).map(move |j| format!("{}/{}", inputs[i].name, inputs[j].name)))
            .collect();
        self.dependent.iter().flat_map(|(n, _)| pairs.iter().map(move |p| format!("{n}/{p}"))).collect()
    }

    /// Solve one frame for the generalized coordinates `q` (n_q, SI). On failure the workspace
    /// stays at the last solved frame, so the run can go on.
    pub fn solve(&mut self, q: &[f64]) -> Result<FrameOutput, FrameError> {
        let model = &self.compiled.model;
        // an unreachable frame names the inputs that cannot be reached alone
        solve_positions_explained(model, &mut self.data, q)?;
        // the free modes' rows of DF only: DF whole is n_x x n_q (a chain of 5000 bodies: GBs)
        let n_q = model.n_q();
        let ids: Vec<ModeId> = self.dependent.iter().map(|(_, m)| *m).collect();
        let mut transfer = Vec::with_capacity(ids.len() * n_q);
        first_order_of_modes(model, &mut self.data, &ids, &mut transfer)?;
        let mut positions = Vec::with_capacity(3 * self.points.len());
        for (_, n) in &self.points {
            positions.extend_from_slice(&self.data.position(model, *n));
        }
        let deformations = self.modes.iter().map(|(_, m)| self.data.mode_value(*m)).collect();
        let second = if self.second_order {
            second_order(model, &mut self.data)?;
            let d2 = self.data.d2f_e();
            // the pairs i <= j in order are the columns 0, 1, ... of pair_index
            self.dependent.iter().flat_map(|(_, m)| (0..n_pairs(n_q)).map(move |p| d2[(m.index(), p)])).collect()
        } else {
            Vec::new()
        };
        let warnings = element_warnings(self.compiled, &self.data);
        let out = FrameOutput { positions, deformations, transfer, second_order: second, warnings };
        // the headers are made only for a frame that has a non-finite value
        let bad =
            |v: &[f64], h: &dyn Fn() -> Vec<String>| v.iter().position(|x| !x.is_finite()).map(|i| h()[i].clone());
        let culprit = bad(&out.positions, &|| self.position_header())
            .or_else(|| bad(&out.deformations, &|| self.deformation_header()))
            .or_else(|| bad(&out.transfer, &|| self.transfer_header()))
            .or_else(|| bad(&out.second_order, &|| self.second_order_header()));
        if let Some(column) = culprit {
            // never start the next frame from a poisoned configuration
            self.data.reset(model);
            return Err(FrameError::NonFinite(column));
        }
        Ok(out)
    }

    /// The workspace (configuration of the last solved frame).
    pub fn data(&self) -> &Data {
        &self.data
    }
}

/// The muscles of a kinematic run: every line of action (`ElementRole::LineOfAction`) whose
/// elongation is free, with where its elongation and transfer functions are in a frame's output and its reference
/// length (m). Their lengths and moment arms are what `mollier kinematics` writes in
/// `lengths.csv` and `moment_arms.csv`, and what the Python package returns.
#[derive(Clone, Debug, Default)]
pub struct MuscleColumns {
    names: Vec<String>,
    inputs: Vec<String>,
    deformation: Vec<usize>,
    transfer: Vec<usize>,
    reference: Vec<f64>,
}

impl MuscleColumns {
    /// The muscles of `run`'s model.
    pub fn of(compiled: &Compiled, run: &KinematicsRun) -> Self {
        let (deformation_header, transfer_header) = (run.deformation_header(), run.transfer_header());
        let first_input = compiled.inputs.first().map(|i| i.name.as_str());
        let inputs = compiled.inputs.iter().map(|i| i.name.clone()).collect();
        let mut m = Self { inputs, ..Self::default() };
        for el in compiled.elements.iter().filter(|e| e.role == ElementRole::LineOfAction) {
            let Some(mode) = compiled.model.mode_by_name(el.id, "elongation") else { continue };
            if compiled.model.mode_role(mode) != ModeRole::Dependent {
                continue;
            }
            let label = format!("{}.elongation", el.name);
            let (Some(d), Some(t)) = (
                deformation_header.iter().position(|h| *h == label),
                first_input.and_then(|i| transfer_header.iter().position(|h| *h == format!("{label}/{i}"))),
            ) else {
                continue;
            };
            m.names.push(el.name.clone());
            m.deformation.push(d);
            m.transfer.push(t);
            m.reference.push(compiled.model.mode_reference(mode).unwrap_or(0.0));
        }
        m
    }

    /// The muscles' names: the columns of the lengths.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Columns of the moment arms: `<muscle>/<input>` per muscle and input.
    pub fn moment_arm_header(&self) -> Vec<String> {
        self.names.iter().flat_map(|m| self.inputs.iter().map(move |i| format!("{m}/{i}"))).collect()
    }

    /// A frame's muscle lengths (m, one per muscle) and moment arms (m/rad or m/m, muscles x
    /// inputs, row-major).
    pub fn values(&self, f: &FrameOutput) -> (Vec<f64>, Vec<f64>) {
        let n_q = self.inputs.len();
        let lengths = (0..self.names.len()).map(|k| self.reference[k] + f.deformations[self.deformation[k]]).collect();
        // a moment arm is minus the transfer function of the muscle's length
        let arms = (0..self.names.len())
            .flat_map(|k| (0..n_q).map(move |j| (k, j)))
            .map(|(k, j)| -f.transfer[self.transfer[k] + j])
            .collect();
        (lengths, arms)
    }
}
