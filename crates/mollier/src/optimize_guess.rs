//! `guess = { file = "states.csv" }` of an optimal control problem: a trajectory to start from,
//! read from a `states.csv` as `simulate` and `optimize` write it (`time`, then states named as
//! [`crate::optimize::state_names`] names them; any subset), with the excitations of the
//! `muscles.csv` beside it when there is one (its `NAME.excitation` columns) and the rates of
//! the `rates.csv` beside it when there is one (`optimize` writes it: its `NAME.rate` columns).
//! With `warm_start = true`, `optimize`'s `variables.csv` and `constraints.csv` beside it give
//! the iterate and its multipliers (IPOPT's warm start), and `convergence.csv` its barrier
//! parameter. Problems are located at `file:line:col` with the column's name.

use std::path::Path;

use mollier_format::Diagnostics;
use mollier_ipopt::Scaling;
use mollier_ocp::{Multipliers, Trajectory};

use crate::compile::Compiled;
use crate::motion::{any_table, at};
use crate::optimize::state_names;

/// Read the trajectory of `path` (and of `muscles.csv` beside it, if any) for `compiled`.
pub fn read_guess(path: &Path, compiled: &Compiled) -> Result<Trajectory, Diagnostics> {
    let states = state_names(compiled);
    let (time, states) = read_columns(path, &states, None)?;
    let muscles = path.with_file_name("muscles.csv");
    let names: Vec<String> = compiled.muscles.iter().map(|m| format!("{}.excitation", m.name)).collect();
    let excitations = if muscles.is_file() && !names.is_empty() {
        let (t, e) = read_columns(&muscles, &names, Some(&time))?;
        debug_assert_eq!(t, time);
        e
    } else {
        vec![None; names.len()]
    };
    let rates = path.with_file_name("rates.csv");
    let rates = if rates.is_file() {
        let names: Vec<String> = state_names(compiled).iter().map(|n| format!("{n}.rate")).collect();
        read_columns(&rates, &names, Some(&time))?.1
    } else {
        Vec::new()
    };
    Ok(Trajectory { time, states, rates, excitations })
}

/// An `optimize` run's last iterate, to continue it: its variables, their multipliers, its
/// scaling and the barrier parameter `μ` of its last iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct WarmStart {
    /// The NLP's variables (n).
    pub variables: Vec<f64>,
    /// The constraints' (m) and the bounds' (n, n) multipliers, and the scaling's factors of
    /// the variables and the rows (the `scale` columns; the objective's 1).
    pub start: mollier_ocp::WarmStart,
    /// `μ` of the last iteration (`convergence.csv`), if written.
    pub mu: Option<f64>,
}

/// Read the warm start beside `path` (a `states.csv` of `optimize`): `variables.csv` (`value`,
/// `lower_multiplier`, `upper_multiplier`, `scale`), `constraints.csv` (`multiplier`, `scale`)
/// and, if there,
/// `convergence.csv` (`lg_mu` of its last row).
pub fn read_warm_start(path: &Path) -> Result<WarmStart, Diagnostics> {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let vars = read_numbers(
        &path.with_file_name("variables.csv"),
        &names(&["value", "lower_multiplier", "upper_multiplier", "scale"]),
    )?;
    let cons = read_numbers(&path.with_file_name("constraints.csv"), &names(&["multiplier", "scale"]))?;
    let conv = path.with_file_name("convergence.csv");
    let mu = if conv.is_file() {
        read_numbers(&conv, &names(&["lg_mu"]))?[0].as_ref().and_then(|c| c.last()).map(|lg| 10f64.powf(*lg))
    } else {
        None
    };
    let [variables, z_l, z_u, x] = <[Option<Vec<f64>>; 4]>::try_from(vars).expect("four columns asked for");
    let [lambda, g] = <[Option<Vec<f64>>; 2]>::try_from(cons).expect("two columns asked for");
    let [variables, z_l, z_u, lambda] = [variables, z_l, z_u, lambda].map(|c| c.expect("required columns"));
    // without the `scale` columns (an older output) the physical scaling is computed anew
    let scaling = x.zip(g).map(|(x, g)| Scaling { objective: 1.0, x, g });
    Ok(WarmStart {
        variables,
        start: mollier_ocp::WarmStart { multipliers: Multipliers { lambda, z_l, z_u }, scaling },
        mu,
    })
}

/// The columns `wanted` of a table by rows (each required but `scale`, `None` when missing;
/// others passed over).
fn read_numbers(path: &Path, wanted: &[String]) -> Result<Vec<Option<Vec<f64>>>, Diagnostics> {
    let text = mollier_format::read_text(path, "warm start file")?;
    let file = path.display().to_string();
    let t = any_table(&file, &text)?;
    let hint = "docs/optimal-control.md: a warm start reads the tables an `optimize` run wrote";
    let err =
        |offset: usize, field: &str, message: String| Diagnostics::one(*at(&file, &text, offset, field, message, hint));
    let mut cols = Vec::with_capacity(wanted.len());
    for w in wanted {
        let c = t.header.iter().position(|h| h == w);
        if c.is_none() && w != "scale" {
            return Err(err(t.header_at, w, format!("no `{w}` column")));
        }
        cols.push(c);
    }
    let mut out: Vec<Option<Vec<f64>>> = cols.iter().map(|c| c.map(|_| Vec::new())).collect();
    for (offset, row) in &t.rows {
        if row.len() != t.header.len() {
            let message = format!("{} values for {} columns", row.len(), t.header.len());
            return Err(err(*offset, "", message));
        }
        for (k, c) in cols.iter().enumerate() {
            let (Some(c), Some(column)) = (*c, out[k].as_mut()) else { continue };
            let v = row[c].parse::<f64>().ok().filter(|v| v.is_finite());
            let v = v.ok_or_else(|| {
                err(
                    t.cell_offset(&text, *offset, c),
                    &wanted[k],
                    format!("`{}` is not a finite number here", wanted[k]),
                )
            })?;
            column.push(v);
        }
    }
    Ok(out)
}

type Columns = (Vec<f64>, Vec<Option<Vec<f64>>>);

/// The `time` column and the columns named `wanted` (`None` where missing). Without `times`
/// every other column must be one of `wanted`; with them (a companion table), other columns
/// are passed over and the times must be the same.
fn read_columns(path: &Path, wanted: &[String], times: Option<&[f64]>) -> Result<Columns, Diagnostics> {
    let text = mollier_format::read_text(path, "guess file")?;
    let file = path.display().to_string();
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let t = any_table(&file, text)?;
    let err = |offset: usize, field: &str, message: String, hint: &str| {
        Diagnostics::one(*at(&file, text, offset, field, message, hint))
    };
    let hint = "docs/optimal-control.md: a guess file is a states.csv as simulate and optimize write it";
    let time_col = t
        .header
        .iter()
        .position(|h| h == "time")
        .ok_or_else(|| err(t.header_at, "", "no `time` column".into(), hint))?;
    let mut cols = vec![None; wanted.len()];
    for (c, h) in t.header.iter().enumerate() {
        if c == time_col {
            continue;
        }
        if t.header[..c].contains(h) {
            return Err(err(t.header_at, h, format!("column `{h}` appears twice"), "delete one of them"));
        }
        match wanted.iter().position(|n| n == h) {
            Some(k) => cols[k] = Some(c),
            None if times.is_some() => {}
            None => {
                let message = format!("`{h}` is not a state of the model");
                let hint = match crate::compile::suggest(h, wanted.iter().map(String::as_str)) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => {
                        "the states are the inputs, their `.vel`, and each muscle's `.contraction` and `.activation`"
                            .into()
                    }
                };
                return Err(err(t.header_at, h, message, &hint));
            }
        }
    }
    if t.rows.is_empty() {
        return Err(err(t.header_at, "", "the file has no rows".into(), hint));
    }
    let mut time = Vec::with_capacity(t.rows.len());
    let mut values: Vec<Option<Vec<f64>>> = cols.iter().map(|c| c.map(|_| Vec::new())).collect();
    for (r, (offset, row)) in t.rows.iter().enumerate() {
        if row.len() != t.header.len() {
            let message = format!("{} values for {} columns", row.len(), t.header.len());
            return Err(err(*offset, "", message, "one value per column"));
        }
        let number = |c: usize, name: &str| {
            row[c].parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| {
                err(t.cell_offset(text, *offset, c), name, format!("`{name}` is not a finite number here"), hint)
            })
        };
        let tv = number(time_col, "time")?;
        let increasing = time.last().is_none_or(|&p| tv > p);
        let same = times.is_none_or(|ts| ts.get(r) == Some(&tv));
        if !increasing || !same {
            let message = if increasing { "the times differ from states.csv's" } else { "the times do not increase" };
            return Err(err(t.cell_offset(text, *offset, time_col), "time", message.into(), hint));
        }
        time.push(tv);
        for (k, c) in cols.iter().enumerate() {
            if let (Some(c), Some(v)) = (c, values[k].as_mut()) {
                v.push(number(*c, &wanted[k])?);
            }
        }
    }
    if times.is_some_and(|ts| ts.len() != time.len()) {
        return Err(err(t.header_at, "time", "the rows differ in number from states.csv's".into(), hint));
    }
    Ok((time, values))
}
