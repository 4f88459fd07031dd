//! Load sharing over a motion, as `mollier inverse` runs it and the Python package returns it:
//! the motion differentiated (or taken as static postures), the model's `[load_sharing]`
//! section set up for a criterion, and the frames solved in parallel chunks and handed over in
//! frame order as they are solved ([`LoadSharing::run_streaming`]), so that memory does not
//! grow with the motion. The tables are [`crate::inverse_tables`]'s.

use mollier_core::Load;
use mollier_optim::{Criterion, Frame, FrameResult, LoadSharing, RunOptions, Study};

use crate::compile::Compiled;
use crate::load_sharing::LoadSharingSetup;
use crate::loads::ExternalLoads;
use crate::motion::{Motion, MotionDerivatives, Smoothing};

/// What an inverse run is asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct InverseOptions {
    /// The criterion.
    pub criterion: Criterion,
    /// Impose the joint cone (else only report its stability index).
    pub impose_cone: bool,
    /// Every frame a static posture: rates and accelerations zero.
    pub quasi_static: bool,
    /// Smoothing cut-off (Hz) for differentiating the motion; `None`: interpolate.
    pub smooth: Option<f64>,
}

/// Why an inverse run cannot start. Front ends name the model and the motion.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InverseError {
    /// The model has no `[load_sharing]` section.
    #[error("no [load_sharing] section")]
    NoSection,
    /// The motion cannot be differentiated.
    #[error("cannot differentiate the motion: {0}")]
    Differentiate(String),
    /// The load-sharing problem is refused by the optimiser.
    #[error("load sharing: {0}")]
    LoadSharing(String),
}

/// Load sharing over one motion: set up once, then run.
pub struct InverseRun<'a> {
    setup: &'a LoadSharingSetup,
    motion: &'a Motion,
    derivatives: Option<MotionDerivatives>,
    study: Study,
    sharing: LoadSharing<'a>,
    /// External loads per frame (empty without `--loads`).
    loads: Vec<Vec<Load>>,
}

impl<'a> InverseRun<'a> {
    /// Set up the run of `motion` on a compiled model with a `[load_sharing]` section.
    pub fn new(compiled: &'a Compiled, motion: &'a Motion, options: &InverseOptions) -> Result<Self, InverseError> {
        let setup = compiled.load_sharing.as_ref().ok_or(InverseError::NoSection)?;
        let derivatives = if options.quasi_static {
            None
        } else {
            let smoothing = options.smooth.map_or(Smoothing::Interpolate, Smoothing::Cutoff);
            Some(motion.differentiate(smoothing).map_err(|e| InverseError::Differentiate(e.to_string()))?)
        };
        let study = setup.study(options.criterion.clone(), options.impose_cone);
        let sharing =
            LoadSharing::new(&compiled.model, study.clone()).map_err(|e| InverseError::LoadSharing(e.to_string()))?;
        Ok(Self { setup, motion, derivatives, study, sharing, loads: Vec::new() })
    }

    /// Apply time-varying external loads (resolved against the same model): each frame's, in
    /// its configuration, are worked out here once (a kinematic pass over the motion when a load
    /// needs the configuration, [`ExternalLoads::over_motion`]).
    pub fn with_loads(mut self, compiled: &Compiled, loads: Option<&ExternalLoads>) -> Self {
        self.loads = match loads {
            None => Vec::new(),
            Some(l) => {
                let q = self.derivatives.as_ref().map_or(&self.motion.q, |d| &d.q);
                l.over_motion(compiled, self.motion.times.iter().copied().zip(q.iter()))
            }
        };
        self
    }

    /// The model's load-sharing section.
    pub fn setup(&self) -> &'a LoadSharingSetup {
        self.setup
    }

    /// The load-sharing problem solved at every frame.
    pub fn study(&self) -> &Study {
        &self.study
    }

    /// The motion's derivatives; `None` for static postures.
    pub fn derivatives(&self) -> Option<&MotionDerivatives> {
        self.derivatives.as_ref()
    }

    /// How the motion was differentiated, for summaries and notes.
    pub fn derivatives_text(&self, compiled: &Compiled) -> String {
        match &self.derivatives {
            None => "static: rates and accelerations zero".to_string(),
            Some(d) => d.summary(&compiled.inputs),
        }
    }

    /// The number of frames.
    pub fn frames(&self) -> usize {
        self.motion.times.len()
    }

    /// The time of frame `k` (s).
    pub fn time(&self, k: usize) -> f64 {
        self.motion.times[k]
    }

    /// Frame `k` as the optimiser takes it.
    pub fn frame(&self, k: usize) -> Frame {
        let mut frame = crate::load_sharing::frame(self.motion, self.derivatives.as_ref(), k);
        if let Some(loads) = self.loads.get(k) {
            frame.loads.clone_from(loads);
        }
        frame
    }

    /// Solve every frame (in parallel chunks, with the optimiser's default options) and hand
    /// each result to `sink` in frame order as soon as it and the frames before it are solved;
    /// `progress(k)`: `k` more frames solved. A sink's error stops the run.
    pub fn run<E>(
        &self,
        progress: &(dyn Fn(usize) + Sync),
        sink: impl FnMut(usize, FrameResult) -> Result<(), E>,
    ) -> Result<(), E> {
        let frame = |k: usize| self.frame(k);
        self.sharing.run_streaming(self.frames(), &frame, RunOptions::default(), progress, sink)
    }
}
