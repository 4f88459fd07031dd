//! `mollier optimize PROBLEM.toml --out DIR`: optimal control by direct collocation and IPOPT.
//! The problem file, the solve and the tables are the facade's pipeline ([`mollier::optimize::run`],
//! which Python's `mollier.optimize` runs too); this file prints and sets the exit code.

use mollier::optimize::OptimizeError;

use super::prelude::*;

pub(crate) fn run(problem: &Path, out: &Path, quiet: bool, registry: &Registry) -> ExitCode {
    let done = match mollier::optimize::run(problem, registry, || output_dir(out)) {
        Ok(d) => d,
        Err(OptimizeError::File(d)) => {
            report(&d);
            return ExitCode::from(INVALID);
        }
        Err(e @ OptimizeError::Open(_)) => {
            errln!("error: {}", printable(&e.to_string()));
            return ExitCode::from(INVALID);
        }
        Err(e) => {
            errln!("error: {}", printable(&e.to_string()));
            return ExitCode::from(FAILED);
        }
    };
    let s = &done.summary;
    if !quiet {
        println!(
            "{}: objective {:.9e} after {} iterations ({}), {} points, {:.2} s; wrote {}",
            printable(&problem.display().to_string()),
            s["objective"].as_f64().unwrap_or(f64::NAN),
            s["iterations"],
            s["status"].as_str().unwrap_or("?"),
            s["points"],
            done.seconds,
            printable(&out.display().to_string()),
        );
    }
    if done.converged {
        ExitCode::SUCCESS
    } else {
        errln!(
            "error: IPOPT did not converge: {} (the output is the last iterate)",
            s["status"].as_str().unwrap_or("?")
        );
        ExitCode::from(FAILED)
    }
}
