//! The `.trc` reader: units, missing markers, and located problems for bad files.

use mollier::parse_trc;

#[path = "support/opensim_gait.rs"]
mod opensim_gait;

/// A two-marker trial in `units` with the given data rows (tab-separated).
fn trial(units: &str, n_frames: usize, rows: &[&str]) -> String {
    let mut t = format!(
        "PathFileType\t4\t(X/Y/Z)\tt.trc\nDataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\n\
         100\t100\t{n_frames}\t2\t{units}\nFrame#\tTime\tA\t\t\tB.x\t\t\n\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n\n"
    );
    for r in rows {
        t.push_str(r);
        t.push('\n');
    }
    t
}

/// The rendered problem of a file that must be refused.
fn refused(text: &str) -> String {
    parse_trc("t.trc", text).expect_err("a bad file was read").to_string()
}

#[test]
fn millimetres_become_metres_and_empty_cells_are_missing() {
    let text = trial(
        "mm",
        3,
        &["1\t0.00\t10\t20\t30\t1000\t-2000\t3", "2\t0.01\t11\t\t31\tNaN\tnan\t4", "3\t0.02\t12\t22\t32"],
    );
    let m = parse_trc("t.trc", &text).unwrap();
    assert_eq!(m.names, ["A", "B.x"]);
    assert_eq!((m.rate, m.units.as_str(), m.len()), (100.0, "mm", 3));
    assert_eq!(m.marker(0, 0), Some([0.01, 0.02, 0.03]));
    assert_eq!(m.marker(0, 1), Some([1.0, -2.0, 0.003]));
    // one coordinate missing makes the marker missing; a short row leaves the rest missing
    assert_eq!((m.marker(1, 0), m.marker(1, 1)), (None, None));
    assert_eq!((m.marker(2, 0), m.marker(2, 1)), (Some([0.012, 0.022, 0.032]), None));
    assert_eq!(m.times, [0.0, 0.01, 0.02]);
    assert_eq!((m.lines[0], m.name_at[1].line, m.name_at[1].column), (7, 4, 17));
}

#[test]
fn metres_and_centimetres() {
    let row = ["1\t0\t1\t2\t3\t4\t5\t6"];
    assert_eq!(parse_trc("t.trc", &trial("m", 1, &row)).unwrap().marker(0, 1), Some([4.0, 5.0, 6.0]));
    assert_eq!(parse_trc("t.trc", &trial("cm", 1, &row)).unwrap().marker(0, 0), Some([0.01, 0.02, 0.03]));
}

#[test]
fn a_wrong_unit_is_refused_at_the_header() {
    let e = refused(&trial("inches", 1, &["1\t0\t1\t2\t3\t4\t5\t6"]));
    assert!(e.contains("t.trc:3:") && e.contains("unknown unit `inches`") && e.contains("Units"), "{e}");
    let e = refused(&trial("M", 1, &["1\t0\t1\t2\t3\t4\t5\t6"]));
    assert!(e.contains("unknown unit `M`"), "{e}");
}

#[test]
fn missing_frames_are_refused_at_the_row() {
    let e = refused(&trial("mm", 2, &["1\t0\t1\t2\t3\t4\t5\t6", "3\t0.02\t1\t2\t3\t4\t5\t6"]));
    assert!(e.contains("t.trc:8:1") && e.contains("frames missing: 3 follows 1"), "{e}");
    // fewer rows than the header says
    let e = refused(&trial("mm", 3, &["1\t0\t1\t2\t3\t4\t5\t6", "2\t0.01\t1\t2\t3\t4\t5\t6"]));
    assert!(e.contains("t.trc:3:") && e.contains("NumFrames is 3 but the file has 2 frames"), "{e}");
}

#[test]
fn a_bad_cell_is_refused_at_the_cell_with_its_marker() {
    let e = refused(&trial("mm", 1, &["1\t0\t1\t2\t3\t4\tx5\t6"]));
    assert!(e.contains("t.trc:7:13") && e.contains("B.x.Y") && e.contains("not a coordinate: `x5`"), "{e}");
    let e = refused(&trial("mm", 1, &["1\t0\t1\t2\t3\t4\tinf\t6"]));
    assert!(e.contains("t.trc:7:") && e.contains("not a coordinate"), "{e}");
}

#[test]
fn rows_without_a_time_or_out_of_order_are_refused() {
    let e = refused(&trial("mm", 1, &["1\tNaN\t1\t2\t3\t4\t5\t6"]));
    assert!(e.contains("t.trc:7:3") && e.contains("not a time: `NaN`"), "{e}");
    let e = refused(&trial("mm", 2, &["1\t0.1\t1\t2\t3\t4\t5\t6", "2\t0.1\t1\t2\t3\t4\t5\t6"]));
    assert!(e.contains("t.trc:8:3") && e.contains("time does not increase"), "{e}");
    let e = refused(&trial("mm", 1, &["1\t0\t1\t2\t3\t4\t5\t6\t7"]));
    assert!(e.contains("t.trc:7:") && e.contains("7 values for 2 markers"), "{e}");
}

#[test]
fn a_header_that_is_not_a_trc_header_is_refused() {
    let e = refused("time,a\n0,1\n");
    assert!(e.contains("t.trc:1:1") && e.contains("not a .trc file"), "{e}");
    let e = refused("PathFileType\t4\nDataRate\n");
    assert!(e.contains("the file ends before the header"), "{e}");
    let text = trial("mm", 1, &["1\t0\t1\t2\t3\t4\t5\t6"]).replace("\t2\tmm", "\t3\tmm");
    let e = refused(&text);
    assert!(e.contains("t.trc:3:") && e.contains("NumMarkers is 3 but the header names 2"), "{e}");
    let text = trial("mm", 1, &["1\t0\t1\t2\t3\t4\t5\t6"]).replace("\tB.x\t", "\tA\t");
    assert!(refused(&text).contains("marker `A` appears twice"));
    let e = refused(&trial("mm", 0, &[]));
    assert!(e.contains("no frames"), "{e}");
}

#[test]
fn opensim_gait_trial_reads_whole() {
    let Some(dir) = opensim_gait::models_or_skip("opensim_gait_trial_reads_whole") else { return };
    let m = mollier::read_trc(&dir.join("Gait2354_Simbody/subject01_walk1.trc")).unwrap();
    assert_eq!((m.len(), m.names.len(), m.units.as_str(), m.rate), (151, 41, "mm", 60.0));
    // first frame, R.ASIS as written (617.247620 1055.275020 170.781980 mm)
    assert_eq!(m.marker(0, 0), Some([0.61724762, 1.05527502, 0.17078198]));
}
