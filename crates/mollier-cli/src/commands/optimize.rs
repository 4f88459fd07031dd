//! `mollier optimize PROBLEM.toml --out DIR`: optimal control by direct collocation and IPOPT.
//! The problem file, the solve and the tables are the facade's ([`mollier::optimize`]); this file
//! prints and sets the exit code.

use mollier::optimize::{OptimizeError, OptimizeRun};

use super::prelude::*;

pub(crate) fn run(problem: &Path, out: &Path, quiet: bool, registry: &Registry) -> ExitCode {
    let run = match OptimizeRun::read(problem, registry) {
        Ok(r) => r,
        Err(d) => {
            report(&d);
            return ExitCode::from(INVALID);
        }
    };
    let dir = match output_dir(out) {
        Ok(d) => d,
        Err(e) => {
            errln!("error: {}", printable(&e.to_string()));
            return ExitCode::from(INVALID);
        }
    };
    let solved = match run.solve() {
        Ok(s) => s,
        Err(OptimizeError::File(d)) => {
            report(&d);
            return ExitCode::from(INVALID);
        }
        Err(e) => {
            errln!("error: {}", printable(&e.to_string()));
            return ExitCode::from(FAILED);
        }
    };
    let ip = &solved.solved.ipopt;
    if let Err(e) = solved.write(dir) {
        errln!("error: {}", printable(&e.to_string()));
        return ExitCode::from(FAILED);
    }
    if !quiet {
        println!(
            "{}: objective {:.9e} after {} iterations ({}), {} points, {:.2} s; wrote {}",
            printable(&problem.display().to_string()),
            ip.objective,
            ip.iterations.last().map_or(0, |i| i.iter),
            ip.status_name(),
            solved.solved.points.len(),
            solved.seconds,
            printable(&out.display().to_string()),
        );
    }
    if ip.converged() {
        ExitCode::SUCCESS
    } else {
        errln!("error: IPOPT did not converge: {} (the output is the last iterate)", ip.status_name());
        ExitCode::from(FAILED)
    }
}
