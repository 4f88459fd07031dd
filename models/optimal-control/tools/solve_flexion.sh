#!/bin/sh
# Solve the shoulder's flexion (models/optimal-control/shoulder-flexion-{predict,track}.toml) in
# the stages of docs/optimal-control.md, "The shoulder's flexion":
#   OUT/cmc     computed muscle control's run along the target (the tracked problem's start),
#   OUT/lbfgs   the problem from it with IPOPT's L-BFGS Hessian, LBFGS_ITERATIONS iterations,
#   OUT/exact   continued from that iterate (its multipliers: a warm start) with the exact Hessian,
#               300 iterations at most,
#   OUT/exact2  if that did not converge, continued again from its last iterate the same way.
# usage: solve_flexion.sh predict|track OUT [LBFGS_ITERATIONS=500]; MOLLIER names the binary
# (default: mollier on the PATH), PROBLEM a variant of the problem file to solve instead (its
# model path and lines as the generated file's), START what the L-BFGS stage starts from: `cmc`
# (OUT/cmc; the default for `track`), a guess keyword (`reference`, the target itself: the default
# for `predict`, whose L-BFGS stage diverges from OUT/cmc; `linear`, `rest`) or a states.csv (e.g.
# the committed tracked optimum, crates/mollier/tests/data/flexion-track/states.csv). Each stage's
# IPOPT log is OUT/STAGE.ipopt.
set -eu
kind=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)
iterations=${3:-500}
mollier=${MOLLIER:-mollier}
models=$(cd "$(dirname "$0")/../.." && pwd)
problem=${PROBLEM:-"$models/optimal-control/shoulder-flexion-$kind.toml"}
case "$kind" in
track) start=${START:-cmc} ;;
predict) start=${START:-reference} ;;
*)
    echo "usage: solve_flexion.sh predict|track OUT [LBFGS_ITERATIONS]" >&2
    exit 2
    ;;
esac
if [ "$start" = cmc ]; then
    "$mollier" simulate "$models/shoulder/shoulder-forward.toml" --track "$models/shoulder/flexion-target.csv" \
        --duration 1.3 --out "$out/cmc"
    start="$out/cmc/states.csv"
fi
# STAGE GUESS HESSIAN ITERATIONS: the problem file with these settings (stage.py), solved into
# OUT/STAGE
stage() {
    python3 "$models/optimal-control/tools/stage.py" "$problem" "$models/shoulder/shoulder-forward.toml" \
        "$out" "$1" "$2" "$3" "$4"
    "$mollier" optimize "$out/$1.toml" --out "$out/$1" || true
}
case "$start" in
reference | linear | rest) ;;
*) start="$(cd "$(dirname "$start")" && pwd)/$(basename "$start")" ;;
esac
stage lbfgs "$start" limited-memory "$iterations"
stage exact "$out/lbfgs/states.csv:warm" exact 300
if grep -q '"converged": false' "$out/exact/summary.json"; then
    stage exact2 "$out/exact/states.csv:warm" exact 300
fi
