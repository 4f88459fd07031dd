//! The result of a solved frame: the forces from the solution, the independent check of the
//! equilibrium they make, and the frame's report.

use super::*;

impl LoadSharing<'_> {
    /// Forces from the solution, the independent check, and the result.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn report(
        &self,
        data: &mut Data,
        qd: &[f64],
        qdd: &[f64],
        loads: &[Load],
        maps: &Maps,
        out: &Outcome,
        rho: &[f64],
        iterations: u32,
        start: Instant,
    ) -> FrameResult {
        let k = self.modes.len();
        let tol = self.study.tolerance;
        let finite = out.x.iter().all(|v| v.is_finite());
        let mut clip = 0.0f64;
        let forces: Vec<f64> = (0..k)
            .map(|i| {
                let raw = maps.fmax[i] * out.x[i];
                let f = raw.clamp(0.0, maps.fmax[i]);
                clip = clip.max((raw - f).abs() / scale_or_one(maps.fmax[i]));
                f
            })
            .collect();
        let reserves: Vec<f64> = (0..self.study.reserves.len()).map(|r| rho[r] * out.x[k + r]).collect();
        let mut result = FrameResult {
            status: Status::Solved,
            forces,
            max_forces: maps.fmax.clone(),
            lengths: maps.lengths.clone(),
            reserve_shares: vec![f64::NAN; reserves.len()],
            reserves,
            reactions: vec![f64::NAN; self.study.signs.len()],
            cone_force: None,
            stability_index: None,
            objective: None,
            residual: None,
            iterations,
            time_ms: 0.0,
            warnings: Vec::new(),
        };
        if !finite {
            result.forces.fill(f64::NAN);
            result.reserves.fill(f64::NAN);
        }
        // independent check: kinetostatics again, from the forces themselves
        let sigma = self.stresses(&maps.sigma0, if finite { &result.forces } else { &[] });
        let mut problems = Vec::new();
        match kinetostatics(self.model, data, qd, qdd, Some(&sigma), loads) {
            Ok(ks) => {
                let tau = driving_from_kinetostatics(self.model, data, &ks);
                let mut reserve_of = vec![0.0; tau.len()];
                for (r, res) in self.study.reserves.iter().enumerate() {
                    reserve_of[res.input] = result.reserves[r];
                }
                let scales: Vec<f64> = (0..tau.len())
                    .map(|j| {
                        maps.tau0[j].abs()
                            + (0..k).map(|i| (maps.tau_f[j * k + i] * maps.fmax[i]).abs()).sum::<f64>()
                            + reserve_of[j].abs()
                    })
                    .collect();
                // kinetostatics computes every τ_j from the same stresses: its round-off follows
                // the frame's largest terms, so a nearly unloaded input (an axial rotation no
                // muscle crosses) is judged against at least 10⁻⁶ of them
                let floor = 1e-6 * scales.iter().fold(0.0, |m: f64, x| m.max(*x));
                let mut worst = 0.0f64;
                let mut worst_scaled = 0.0f64;
                for j in 0..tau.len() {
                    let d = (tau[j] - reserve_of[j]).abs();
                    worst = worst.max(d);
                    worst_scaled = worst_scaled.max(d / scale_or_one(scales[j].max(floor)));
                }
                result.residual = Some(worst);
                if !(worst_scaled <= tol) {
                    problems.push(format!("equilibrium residual {worst:.3e} (relative {worst_scaled:.1e})"));
                }
                for (s, sc) in self.study.signs.iter().enumerate() {
                    let sig = ks.sigma[sc.mode.index()];
                    result.reactions[s] = sig;
                    let scale =
                        maps.sig0[s].abs() + (0..k).map(|i| (maps.sig_f[s * k + i] * maps.fmax[i]).abs()).sum::<f64>();
                    let wrong = match sc.sign {
                        Sign::Compression => sig,
                        Sign::Tension => -sig,
                    };
                    if !(wrong <= tol * scale_or_one(scale)) {
                        problems.push(format!(
                            "reaction of {} has the wrong sign: {sig:.3e}",
                            self.model.mode_name(sc.mode)
                        ));
                    }
                }
                if let Some(c) = &self.cone {
                    let fc = mat_vec(&maps.to_cone, &self.joint_force(data, &ks.sigma));
                    result.cone_force = Some(fc);
                    result.stability_index = stability_index(&fc, c.half_y, c.half_z);
                    if c.enforce {
                        let scale = maps.cone0.iter().map(|x| x * x).sum::<f64>().sqrt()
                            + (0..k)
                                .map(|i| {
                                    (0..3).map(|r| maps.cone_f[r * k + i].powi(2)).sum::<f64>().sqrt() * maps.fmax[i]
                                })
                                .sum::<f64>();
                        let v = cone_violation(&fc, c.half_y, c.half_z);
                        if !(v <= tol * scale_or_one(scale)) {
                            problems.push(format!("joint force outside the cone by {v:.3e} N"));
                        }
                    }
                }
            }
            Err(e) => problems.push(format!("kinetostatics of the solution failed: {e}")),
        }
        if !(clip <= tol) {
            problems.push(format!("a force was outside its bounds by {clip:.1e} of Fmax"));
        }
        result.objective = finite.then(|| self.objective(&result.forces, &result.reserves, &maps.fmax, rho));
        for (r, res) in self.study.reserves.iter().enumerate() {
            let muscles: f64 = (0..k).map(|i| (maps.tau_f[res.input * k + i] * result.forces[i]).abs()).sum();
            let v = result.reserves[r].abs();
            result.reserve_shares[r] = if v > 0.0 { v / (v + muscles) } else { 0.0 };
        }
        result.status = match (out.status, &out.error) {
            (_, Some(e)) => Status::Solver(e.clone()),
            (Some(st), _) if !out.solved() => Status::Solver(format!("{st:?}")),
            _ if !problems.is_empty() => Status::Check(problems.join("; ")),
            (Some(clarabel::solver::SolverStatus::AlmostSolved), _) => Status::AlmostSolved,
            _ => Status::Solved,
        };
        result.time_ms = start.elapsed().as_secs_f64() * 1e3;
        result
    }
}
