//! Dynamics against hand-derived Lagrangian equations, an independent recursive Newton-Euler
//! algorithm, energy conservation, the static arm of seed 004, and virtual work.

mod attached;
mod energy;
mod lagrange;
mod newton_euler;
mod static_arm;
