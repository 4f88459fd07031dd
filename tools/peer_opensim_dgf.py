#!/usr/bin/env python3
"""OpenSim's DeGrooteFregly2016Muscle evaluated at a set of points, for Mollier's copy of it.

Run once with OpenSim 4.6's Python package (`pip install opensim`) from the repository's root:

    python tools/peer_opensim_dgf.py crates/mollier-sim/tests/data/opensim_dgf.csv

Each row is `kind, muscle, x1..x5, y1, y2`: what OpenSim returns (`y`) at the inputs (`x`), all
computed by OpenSim's own functions.

- `fl` (x1 normalized fibre length; y1 calcActiveForceLengthMultiplier, y2
  calcPassiveForceMultiplier), `fv` (x1 normalized fibre velocity; y1
  calcForceVelocityMultiplier), `ft` (x1 normalized tendon length; y1
  calcTendonForceMultiplier): the curves of muscle `muscle`.
- `residual` (x1 activation, x2 muscle-tendon length L_M (m), x3 its lengthening speed (m/s),
  x4 normalized tendon force, x5 its time derivative (1/s)): y1 calcEquilibriumResidual, OpenSim's
  implicit tendon dynamics' residual `F_T/F_max − F_fibre cos(phi)/F_max`; y2 the contraction
  state s = L_M − L_T (m). The row `sdot` after it, at the same inputs, has y1 = ds/dt =
  dL_M/dt − dL_T/dt (m/s). Both come from OpenSim's inverse tendon curve and its derivative, so
  that Mollier evaluates its residual (in s and ds/dt) at the same state.
- `adot` (x1 activation, x2 excitation; y1 the activation state's derivative, from
  computeStateVariableDerivatives in a model realized to acceleration).
- `rigid` (x1 activation, x2 muscle-tendon length L_M (m), x3 its lengthening speed (m/s); y1
  the tendon force (N), y2 the fibre length (m)): the muscle with `ignore_tendon_compliance` in a
  model (a body on a slider pulled by it from the ground) realized to dynamics.

Muscle 0 has OpenSim's defaults; muscle 1 differs in every parameter (pennation 0.3 rad,
max_contraction_velocity 8, active_force_width_scale 1.3, fiber_damping 0.05,
passive_fiber_strain_at_one_norm_force 0.5, tendon_strain_at_one_norm_force 0.06,
activation_dynamics_smoothing 10, time constants 0.02 s and 0.07 s). Both have F_max 500 N,
L_opt 0.1 m, L_slack 0.2 m. OpenSim keeps each muscle's time constants and smoothing in
function-local statics (the first muscle whose derivatives it computes sets them for the
process), so the `adot` rows are of muscle 1 alone.
"""
import sys

import opensim as osim


def muscle(which):
    m = osim.DeGrooteFregly2016Muscle()
    m.setName(f"m{which}")
    m.set_max_isometric_force(500.0)
    m.set_optimal_fiber_length(0.1)
    m.set_tendon_slack_length(0.2)
    if which == 1:
        m.set_pennation_angle_at_optimal(0.3)
        m.set_max_contraction_velocity(8.0)
        m.set_active_force_width_scale(1.3)
        m.set_fiber_damping(0.05)
        m.set_passive_fiber_strain_at_one_norm_force(0.5)
        m.set_tendon_strain_at_one_norm_force(0.06)
        m.set_activation_dynamics_smoothing(10.0)
        m.set_activation_time_constant(0.02)
        m.set_deactivation_time_constant(0.07)
    return m


def activation_rates(rows):
    """ȧ of muscle 1 in a model: a body on a slider pulled by the muscle from the ground."""
    model = osim.Model()
    body = osim.Body("b", 1.0, osim.Vec3(0), osim.Inertia(0.01))
    model.addBody(body)
    joint = osim.SliderJoint("j", model.getGround(), body)
    model.addJoint(joint)
    m = muscle(1)
    m.addNewPathPoint("o", model.getGround(), osim.Vec3(0))
    m.addNewPathPoint("i", body, osim.Vec3(0.3, 0, 0))
    model.addForce(m)
    state = model.initSystem()
    for a in [0.05, 0.3, 0.7, 0.98]:
        for u in [0.0, 0.1, 0.31, 0.69, 1.0]:
            m.setActivation(state, a)
            model.realizeVelocity(state)
            controls = model.updControls(state)
            m.setControls(osim.Vector(1, u), controls)
            model.setControls(state, controls)
            model.realizeAcceleration(state)
            rows.append(("adot", 1, a, u, 0, 0, 0, m.getStateVariableDerivativeValue(state, "activation"), 0))


def rigid_forces(rows):
    """Each muscle with a rigid tendon on a slider: its force at lengths and speeds."""
    for k in (0, 1):
        model = osim.Model()
        body = osim.Body("b", 1.0, osim.Vec3(0), osim.Inertia(0.01))
        model.addBody(body)
        joint = osim.SliderJoint("j", model.getGround(), body)
        model.addJoint(joint)
        m = muscle(k)
        m.set_ignore_tendon_compliance(True)
        m.addNewPathPoint("o", model.getGround(), osim.Vec3(0))
        m.addNewPathPoint("i", body, osim.Vec3(0.3, 0, 0))
        model.addForce(m)
        state = model.initSystem()
        coord = joint.getCoordinate()
        for a, q, qd in [(0.3, 0.0, 0.0), (1.0, 0.01, -0.2), (0.05, 0.02, 0.4), (0.7, -0.01, 0.05), (0.5, 0.03, -0.6)]:
            m.setActivation(state, a)
            coord.setValue(state, q)
            coord.setSpeedValue(state, qd)
            model.realizeDynamics(state)
            length, speed = m.getLength(state), m.getLengtheningSpeed(state)
            rows.append(("rigid", k, a, length, speed, 0, 0, m.getTendonForce(state), m.getFiberLength(state)))


def main(out):
    rows = []
    muscles = [muscle(0), muscle(1)]
    for m in muscles:
        m.finalizeFromProperties()
    for k, m in enumerate(muscles):
        for i in range(17):
            l = 0.3 + 0.1 * i
            rows.append(("fl", k, l, 0, 0, 0, 0, m.calcActiveForceLengthMultiplier(l), m.calcPassiveForceMultiplier(l)))
        for i in range(13):
            v = -1.2 + 0.2 * i
            rows.append(("fv", k, v, 0, 0, 0, 0, m.calcForceVelocityMultiplier(v), 0))
        for i in range(9):
            lt = 0.99 + 0.01 * i
            rows.append(("ft", k, lt, 0, 0, 0, 0, m.calcTendonForceMultiplier(lt), 0))
        vmax = m.get_max_contraction_velocity() * m.get_optimal_fiber_length()
        for a, lm, vm, ft, dft in [
            (0.3, 0.3, 0.0, 0.1, 0.0),
            (1.0, 0.31, -0.2, 0.8, 1.5),
            (0.05, 0.32, 0.4, 0.3, -2.0),
            (0.7, 0.29, 0.05, 0.5, 3.0),
            (0.5, 0.33, -0.6, 1.2, -4.0),
        ]:
            res = m.calcEquilibriumResidual(lm, vm, a, ft, dft)
            lt = m.calcTendonForceLengthInverseCurve(ft)
            dlt = m.calcTendonForceLengthInverseCurveDerivative(dft, lt)
            s = lm - m.get_tendon_slack_length() * lt
            sdot = vm - m.get_tendon_slack_length() * dlt
            assert abs(sdot) < vmax, "keep the fibre within its velocity range"
            rows.append(("residual", k, a, lm, vm, ft, dft, res, s))
            rows.append(("sdot", k, a, lm, vm, ft, dft, sdot, 0))
    activation_rates(rows)
    rigid_forces(rows)
    with open(out, "w") as f:
        f.write(f"# OpenSim {osim.GetVersionAndDate()}: DeGrooteFregly2016Muscle; tools/peer_opensim_dgf.py\n")
        f.write("kind,muscle,x1,x2,x3,x4,x5,y1,y2\n")
        for r in rows:
            f.write(",".join([r[0], str(r[1])] + [repr(float(x)) for x in r[2:]]) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
