//! Dynamics against hand-derived Lagrangian equations, an independent recursive Newton-Euler
//! algorithm, energy conservation, the static arm after Dumas et al., and virtual work.

mod allocations;
mod attached;
mod energy;
mod lagrange;
mod newton_euler;
mod static_arm;

#[global_allocator]
static GLOBAL: mollier_tests::counting::Counting = mollier_tests::counting::Counting;
