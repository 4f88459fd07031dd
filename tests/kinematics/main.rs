//! Kinematics of test mechanisms against closed forms and finite differences of the kernel's own
//! Newton-Raphson solutions.

mod closed_form;
mod diagnostics;
mod finite_differences;
