//! Muscle paths of an imported `.osim` model against OpenSim's, posture by posture: shared by the
//! tests that read a reference in the layout `tools/peer_opensim_wraps.py` writes (`coordinates`,
//! `free`, `muscles`, and `postures` with `q`, `lengths` and `minus_dl_dq`).

use serde_json::Value;

/// A muscle's name and its largest differences in length and moment arm (m), `None` when left out.
pub type Row = (String, Option<(f64, f64)>);

/// One difference: posture, muscle, length (m), moment arm (m per rad or per m).
pub type Each = (usize, usize, f64, f64);

/// Import `text` (the `.osim` file named `file`) and compare every muscle at every posture of
/// `model`: the largest differences of each muscle over the postures (length in m, `−dL/dq` in m
/// per rad or per m), the postures that do not solve, and every difference (posture, muscle,
/// length, moment arm). Each posture is solved from the default pose.
pub fn compare(file: &str, text: &str, model: &Value) -> (Vec<Row>, Vec<String>, Vec<Each>) {
    let registry = mollier::registry();
    let (imp, compiled) = mollier::import_osim(file, text, &registry).unwrap_or_else(|d| panic!("{}", d.render()));
    let strs = |k: &str| -> Vec<String> {
        model[k].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
    };
    let (coords, free, muscles) = (strs("coordinates"), strs("free"), strs("muscles"));
    let names: Vec<&str> = imp.model.coordinates.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(coords, names, "{file}: the coordinates in another order");
    let free: Vec<usize> = free.iter().map(|f| coords.iter().position(|c| c == f).unwrap()).collect();
    let probe = mollier::KinematicsRun::new(&compiled);
    let (deformation, transfer) = (probe.deformation_header(), probe.transfer_header());
    let n_in = compiled.inputs.len();
    // per muscle: its reference length and columns, or None when left out
    let columns: Vec<Option<(f64, usize, usize)>> = muscles
        .iter()
        .enumerate()
        .map(|(k, m)| {
            assert_eq!(&imp.model.muscles[k].name, m);
            let el = imp.muscle_names[k].as_ref()?;
            let id = compiled.elements.iter().find(|e| &e.name == el).unwrap().id;
            let mode = compiled.model.mode_by_name(id, "elongation").unwrap();
            let l0 = compiled.model.mode_reference(mode).unwrap_or(0.0);
            let d = deformation.iter().position(|h| h == &format!("{el}.elongation")).unwrap();
            let t = transfer.iter().position(|h| h == &format!("{el}.elongation/{}", compiled.inputs[0].name)).unwrap();
            Some((l0, d, t))
        })
        .collect();
    let mut worst: Vec<Row> = muscles.iter().zip(&columns).map(|(m, c)| (m.clone(), c.map(|_| (0.0, 0.0)))).collect();
    let (mut unsolved, mut each) = (Vec::new(), Vec::new());
    for (p, posture) in model["postures"].as_array().unwrap().iter().enumerate() {
        let q: Vec<f64> = posture["q"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let mut run = mollier::KinematicsRun::new(&compiled);
        let out = match run.solve(&imp.inputs_from_coordinates(&q)) {
            Ok(o) => o,
            Err(e) => {
                unsolved.push(format!("{file} posture {p}: {e}"));
                continue;
            }
        };
        // d inputs / d coordinate (couplers and axis functions), by central differences
        let h = 1e-6;
        let du: Vec<Vec<f64>> = free
            .iter()
            .map(|&c| {
                let (mut up, mut down) = (q.clone(), q.clone());
                up[c] += h;
                down[c] -= h;
                let (a, b) = (imp.inputs_from_coordinates(&up), imp.inputs_from_coordinates(&down));
                (0..n_in).map(|i| (a[i] - b[i]) / (2.0 * h)).collect()
            })
            .collect();
        for (k, col) in columns.iter().enumerate() {
            let Some((l0, d, t)) = col else { continue };
            let want = posture["lengths"][k].as_f64().unwrap();
            let dl = (l0 + out.deformations[*d] - want).abs();
            let mut da = 0.0f64;
            for (j, &c) in free.iter().enumerate() {
                let arm: f64 = -(0..n_in).map(|i| out.transfer[t + i] * du[j][i]).sum::<f64>();
                let want = posture["minus_dl_dq"][k][c].as_f64().unwrap();
                da = da.max((arm - want).abs());
            }
            let w = worst[k].1.as_mut().unwrap();
            *w = (w.0.max(dl), w.1.max(da));
            each.push((p, k, dl, da));
        }
    }
    (worst, unsolved, each)
}
