//! OpenSim's functions of one coordinate read from a `.osim` file: `Constant`,
//! `LinearFunction`, `PolynomialFunction`, `SimmSpline`, `NaturalCubicSpline` and
//! `MultiplierFunction`, evaluated as OpenSim 4.x does by the type the kernel's path points use
//! (`mollier_path_point::function`). Checked against OpenSim's own values
//! (`tests/opensim_kinematics.rs`). OpenSim 4.6 reads a `NaturalCubicSpline` as a `SimmSpline`,
//! and so does this crate.

use mollier_format::Diagnostic;
use roxmltree::Node;

use crate::xml::{Src, child};

pub use mollier_path_point::function::{Function, Spline};

/// The function element among `node`'s children (any of the supported tags), if any.
pub(crate) fn function_child<'a, 'i>(node: Node<'a, 'i>) -> Option<Node<'a, 'i>> {
    node.children().find(|c| c.is_element() && is_function_tag(c.tag_name().name()))
}

fn is_function_tag(tag: &str) -> bool {
    matches!(
        tag,
        "Constant"
            | "LinearFunction"
            | "PolynomialFunction"
            | "SimmSpline"
            | "NaturalCubicSpline"
            | "MultiplierFunction"
            | "GCVSpline"
            | "PiecewiseLinearFunction"
            | "PiecewiseConstantFunction"
            | "StepFunction"
            | "Sine"
            | "MultivariatePolynomialFunction"
            | "ClutchedPathSpring"
    )
}

/// Read a function element.
pub(crate) fn read_function(src: &Src, node: Node) -> Result<Function, Box<Diagnostic>> {
    let tag_text = crate::xml::tag(node);
    let tag = tag_text.as_str();
    match tag {
        "Constant" => Ok(Function::Constant(src.number_or(node, "value", 0.0)?)),
        "LinearFunction" => {
            let c = src.numbers(node, "coefficients", 2)?;
            Ok(Function::Linear { slope: c[0], intercept: c[1] })
        }
        "PolynomialFunction" => {
            let c = src.numbers(node, "coefficients", 0)?;
            if c.is_empty() {
                return Err(src.error(node, "a PolynomialFunction without coefficients", "give its coefficients"));
            }
            Ok(Function::Polynomial(c))
        }
        "SimmSpline" | "NaturalCubicSpline" => {
            let x = src.numbers(node, "x", 0)?;
            let y = src.numbers(node, "y", 0)?;
            if x.len() != y.len() || x.len() < 2 {
                return Err(src.error(
                    node,
                    format!("a spline needs at least 2 knots and as many x as y values ({} x, {} y)", x.len(), y.len()),
                    "give matching <x> and <y> lists",
                ));
            }
            if x.windows(2).any(|w| !(w[1] > w[0])) {
                return Err(src.error(
                    node,
                    "the spline's x values do not increase",
                    "sort the knots by x, without repeats",
                ));
            }
            // OpenSim 4.6 has no class `NaturalCubicSpline`: it reads the tag as a SimmSpline (its
            // values agree with SimmSpline's, not a natural spline's; tests/opensim_kinematics.rs)
            Ok(Function::Spline(Spline::fmm(x, y)))
        }
        "MultiplierFunction" => {
            let scale = src.number_or(node, "scale", 1.0)?;
            let inner =
                child(node, "function").and_then(function_child).or_else(|| function_child(node)).ok_or_else(|| {
                    src.error(node, "a MultiplierFunction without its function", "add the function it scales")
                })?;
            Ok(Function::Multiplier(scale, Box::new(read_function(src, inner)?)))
        }
        _ => Err(src.error(
            node,
            format!("the function type `{tag}` is not supported"),
            "use Constant, LinearFunction, PolynomialFunction, SimmSpline, NaturalCubicSpline or MultiplierFunction",
        )),
    }
}
