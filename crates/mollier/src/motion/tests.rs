use super::*;
use mollier_core::{CoordId, Input, ModeId};

fn inputs() -> Vec<InputInfo> {
    vec![
        InputInfo { name: "knee.rotation".into(), input: Input::Mode(ModeId::new(0)), quantity: Quantity::Angle },
        InputInfo { name: "pelvis.y".into(), input: Input::Coordinate(CoordId::new(1)), quantity: Quantity::Length },
    ]
}

#[test]
fn csv_columns_in_any_order() {
    let m = parse_motion("m.csv", "pelvis.y, time ,knee.rotation,extra\n0.9,0,0.1,7\n0.95,0.01,0.2,7\n", &inputs())
        .unwrap();
    assert_eq!(m.times, [0.0, 0.01]);
    assert_eq!((&m.q[0], &m.q[1]), (&[0.1, 0.9][..], &[0.2, 0.95][..]));
    assert_eq!(m.ignored, ["extra"]);
}

#[test]
fn opensim_storage_in_degrees_converts_only_angles() {
    let text = "Coordinates\nversion=1\nnRows=2\ninDegrees=yes\nendheader\ntime\tknee.rotation\tpelvis.y\n0\t90\t0.9\n0.5\t-45\t1.0\n";
    let m = parse_motion("walk.mot", text, &inputs()).unwrap();
    assert!(m.in_degrees);
    assert!((m.q[0][0] - std::f64::consts::FRAC_PI_2).abs() < 1e-15 && m.q[0][1] == 0.9);
    assert!((m.q[1][0] + std::f64::consts::FRAC_PI_4).abs() < 1e-15 && m.q[1][1] == 1.0);
}

#[test]
fn a_motion_is_differentiated_per_input() {
    // knee: a cubic in degrees; pelvis: a line; both differentiated exactly
    let mut text = String::from("x\ninDegrees=yes\nendheader\ntime\tknee.rotation\tpelvis.y\n");
    for i in 0..6 {
        let t = 0.1 * i as f64;
        text.push_str(&format!("{t}\t{}\t{}\n", 30.0 * t * t * t, 0.9 + 0.5 * t));
    }
    let m = parse_motion("m.mot", &text, &inputs()).unwrap();
    let d = m.differentiate(Smoothing::Interpolate).unwrap();
    let deg = std::f64::consts::PI / 180.0;
    for (i, t) in m.times.iter().enumerate() {
        assert!((d.qd[i][0] - 90.0 * t * t * deg).abs() < 1e-12, "{:?}", &d.qd[i]);
        assert!((d.qdd[i][0] - 180.0 * t * deg).abs() < 1e-10, "{:?}", &d.qdd[i]);
        assert!((d.qd[i][1] - 0.5).abs() < 1e-12 && d.qdd[i][1].abs() < 1e-10, "{:?}", &d.qd[i]);
        assert_eq!(d.q[i], m.q[i]);
    }
    for hz in [0.0, -1.0, f64::NAN, 1e-300] {
        assert!(matches!(m.differentiate(Smoothing::Cutoff(hz)), Err(crate::spline::SplineError::Cutoff(_))), "{hz}");
    }
}

/// A motion file of `knee.rotation = A sin ωt` (deg) and `pelvis.y = 0.9 + 0.1 t²` (m) at
/// `n` frames over one second, with the extra columns `extra(t)` after those.
fn sine_file(n: usize, header: &str, extra: impl Fn(f64) -> String) -> String {
    let mut text = format!("time,knee.rotation [deg],pelvis.y{header}\n");
    for i in 0..n {
        let t = i as f64 / (n - 1) as f64;
        text.push_str(&format!("{t},{},{}{}\n", 30.0 * (TAU * t).sin(), 0.9 + 0.1 * t * t, extra(t)));
    }
    text
}

const TAU: f64 = std::f64::consts::TAU;
const DEG: f64 = std::f64::consts::PI / 180.0;

#[test]
fn velocity_and_acceleration_columns_are_used_where_given() {
    // exact velocities and accelerations in the file (deg/s, deg/s², and SI for pelvis.y)
    let extra = |t: f64| {
        let (s, c) = (TAU * t).sin_cos();
        format!(",{},{},{}", 30.0 * TAU * c, -30.0 * TAU * TAU * s, 0.2 * t)
    };
    let text = sine_file(12, ",knee.rotation.vel [deg/s],knee.rotation.acc [deg/s^2],pelvis.y.vel", extra);
    let m = parse_motion("m.csv", &text, &inputs()).unwrap();
    assert!(m.ignored.is_empty(), "{:?}", m.ignored);
    assert!(m.velocities.iter().all(Option::is_some) && m.accelerations[0].is_some() && m.accelerations[1].is_none());
    for smoothing in [Smoothing::Interpolate, Smoothing::NotAKnot] {
        let d = m.differentiate(smoothing).unwrap();
        for (i, &t) in m.times.iter().enumerate() {
            let (s, c) = (TAU * t).sin_cos();
            // the file's own values, converted
            assert!((d.qd[i][0] - 30.0 * DEG * TAU * c).abs() < 1e-12, "{i}");
            assert!((d.qdd[i][0] + 30.0 * DEG * TAU * TAU * s).abs() < 1e-11, "{i}");
            assert!((d.qd[i][1] - 0.2 * t).abs() < 1e-15, "{i}");
            // pelvis.y's acceleration: the spline of its velocities, a line: exact
            assert!((d.qdd[i][1] - 0.2).abs() < 1e-12, "{i}: {}", d.qdd[i][1]);
        }
        let method = match smoothing {
            Smoothing::NotAKnot => Method::Spline(Ends::NotAKnot),
            _ => Method::Spline(Ends::Quintic),
        };
        assert_eq!(d.sources, [[Source::File, Source::File], [Source::File, Source::Velocities(method)]]);
    }
    let d = m.differentiate(Smoothing::Interpolate).unwrap();
    assert_eq!(
        d.summary(&inputs()),
        "knee.rotation: velocities from the file, accelerations from the file; pelvis.y: velocities from \
         the file, accelerations by a cubic spline of the file's velocities (quintic ends)"
    );
    // without the columns: the spline of the positions, for every input, said in one phrase
    let m = parse_motion("m.csv", &sine_file(12, "", |_| String::new()), &inputs()).unwrap();
    let d = m.differentiate(Smoothing::Interpolate).unwrap();
    assert_eq!(
        d.summary(&inputs()),
        "velocities by a cubic spline of the positions (quintic ends), accelerations by a cubic spline of the positions (quintic ends)"
    );
    // 12 frames in 1 s: a cutoff below their Nyquist frequency, 5.5 Hz
    let d = m.differentiate(Smoothing::Cutoff(3.0)).unwrap();
    assert_eq!(d.sources[1], [Source::Positions(Method::Smoothing(3.0)); 2]);
}

#[test]
fn opensim_speeds_and_derivative_units() {
    // `_u` and `_speed` are velocities in storage files, in degrees with inDegrees=yes
    let text = "x\ninDegrees=yes\nendheader\ntime\tknee.rotation\tpelvis.y\tknee.rotation_u\tpelvis.y_speed\n\
                0\t0\t1\t90\t0.5\n0.1\t9\t1.05\t90\t0.5\n";
    let m = parse_motion("m.sto", text, &inputs()).unwrap();
    assert_eq!(m.velocities[0].as_deref(), Some(&[90.0 * DEG, 90.0 * DEG][..]));
    assert_eq!(m.velocities[1].as_deref(), Some(&[0.5, 0.5][..]));
    // in CSV they are other columns
    let m = parse_motion("m.csv", "time,knee.rotation,pelvis.y,knee.rotation_u\n0,0,1,3\n", &inputs()).unwrap();
    assert!(m.velocities[0].is_none() && m.ignored == ["knee.rotation_u"]);
    // lengths per second in mm/s, accelerations in cm/s²
    let m = parse_motion(
        "m.csv",
        "time,knee.rotation,pelvis.y,pelvis.y.vel [mm/s],pelvis.y.acc [cm/s²]\n0,0,1,500,-20\n",
        &inputs(),
    )
    .unwrap();
    assert!((m.velocities[1].as_ref().unwrap()[0] - 0.5).abs() < 1e-15);
    assert!((m.accelerations[1].as_ref().unwrap()[0] + 0.2).abs() < 1e-15);
    // a unit that does not fit, and a velocity given twice, are located at the header
    let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y,pelvis.y.vel [mm]\n0,0,1,5\n", &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.csv:1:1: error: column `pelvis.y.vel`: unit `mm` does not fit it");
    assert!(e.0[0].hint.as_deref().is_some_and(|h| h.contains("`mm/s`")), "{e}");
    let e = parse_motion(
        "m.mot",
        "endheader\ntime\tknee.rotation\tpelvis.y\tpelvis.y.vel\tpelvis.y_u\n0\t0\t1\t0\t0\n",
        &inputs(),
    )
    .unwrap_err();
    assert!(e.0[0].message.contains("the velocity of `pelvis.y` is given twice"), "{e}");
    // and a bad cell in a derivative column is located like any other
    let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y,pelvis.y.acc\n0,0,1,x\n", &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.csv:2:7: error: pelvis.y.acc: not a number: `x`");
}

/// Cells and headers a mutated motion file may get.
const TOKENS: [&str; 16] = [
    "",
    "nan",
    "inf",
    "1e308",
    "-1e308",
    "x",
    "1e-320",
    "0",
    "\"",
    ",",
    "\t",
    "\n",
    "knee.rotation.vel [deg]",
    "pelvis.y_u",
    "pelvis.y.acc [mm/s^2]",
    "knee.rotation.vel",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 400, ..Default::default() })]

    /// Any mutation of a motion file with derivative columns: no panic, every problem located,
    /// and what is read differentiates to finite numbers or to an error.
    #[test]
    fn mutated_motion_files_never_panic_or_give_non_finite_derivatives(
        storage in proptest::bool::ANY,
        edits in proptest::collection::vec((0usize..8, 0usize..5, 0..TOKENS.len()), 1..4),
    ) {
        let sep = if storage { "\t" } else { "," };
        let mut rows: Vec<Vec<String>> = vec![
            ["time", "knee.rotation [deg]", "pelvis.y", "knee.rotation.vel [deg/s]", "pelvis.y.acc"].map(String::from).to_vec(),
        ];
        for i in 0..7 {
            let t = 0.1 * i as f64;
            rows.push([t, 30.0 * t, 0.9 + t * t, 30.0, 2.0].map(|v| v.to_string()).to_vec());
        }
        for (row, col, tok) in &edits {
            rows[*row][*col] = TOKENS[*tok].to_string();
        }
        let body: Vec<String> = rows.iter().map(|r| r.join(sep)).collect();
        let (file, text) = if storage {
            ("m.sto", format!("m\nendheader\n{}\n", body.join("\n")))
        } else {
            ("m.csv", body.join("\n") + "\n")
        };
        match parse_motion(file, &text, &inputs()) {
            Err(d) => proptest::prop_assert!(d.0.iter().all(|d| d.location.is_some()), "{d}"),
            Ok(m) => {
                if let Ok(d) = m.differentiate(Smoothing::Interpolate) {
                    let all = d.q.iter().chain(&d.qd).chain(&d.qdd).flatten();
                    proptest::prop_assert!(all.clone().all(|v| v.is_finite()), "{text}");
                }
            }
        }
    }
}

#[test]
fn column_units_convert_and_must_fit_the_input() {
    let m = parse_motion("m.csv", "time [s],knee.rotation [deg],pelvis.y [mm]\n0,90,900\n0.1,-45,950\n", &inputs())
        .unwrap();
    assert!((m.q[0][0] - std::f64::consts::FRAC_PI_2).abs() < 1e-15 && (m.q[0][1] - 0.9).abs() < 1e-15);
    assert!((m.q[1][0] + std::f64::consts::FRAC_PI_4).abs() < 1e-15 && (m.q[1][1] - 0.95).abs() < 1e-15);
    assert!(m.notes.is_empty() && m.warnings.is_empty() && m.ignored.is_empty());
    let e = parse_motion("m.csv", "time,knee.rotation [mm],pelvis.y\n0,1,1\n", &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.csv:1:1: error: column `knee.rotation`: unit `mm` does not fit an angle input");
    let e = parse_motion("m.csv", "time [ms],knee.rotation,pelvis.y\n0,1,1\n", &inputs()).unwrap_err();
    assert!(e.0[0].message.contains("time in `ms`"), "{e}");
    // degrees written as radians are noticed, not refused
    let m = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n0.1,90,1\n", &inputs()).unwrap();
    assert_eq!(m.q[1][0], 90.0);
    assert!(m.warnings[0].contains("name the column `knee.rotation [deg]`"), "{:?}", m.warnings);
}

#[test]
fn problems_are_located() {
    let e = parse_motion("m.csv", "time,knee.rotation\n0,0\n", &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.csv:1:1: error: no column for input `pelvis.y`");
    let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n0.1,nan,1\n", &inputs()).unwrap_err();
    // at the cell, not at the row
    assert_eq!(e.0[0].headline(), "m.csv:3:5: error: knee.rotation: not a finite number: NaN");
    let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n0.1, x,1\n", &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.csv:3:6: error: knee.rotation: not a number: `x`");
    let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n0.1,\"0\",y\n", &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.csv:3:9: error: pelvis.y: not a number: `y`");
    let sto = "endheader\ntime\tknee.rotation\tpelvis.y\n0\t0\t1\n0.1\t0\tz\n";
    let e = parse_motion("m.sto", sto, &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.sto:4:7: error: pelvis.y: not a number: `z`");
    let e =
        parse_motion("m.mot", "endheader\ntime knee.rotation pelvis.y\n0  0 1\n 0.1 0  w\n", &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.mot:4:9: error: pelvis.y: not a number: `w`");
    // finite but absurd values are refused at their cell, printed short: no NaN later
    let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n1e300,0,1\n", &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.csv:3:1: error: time: 1e300 is too large: at most 1e9 here");
    let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n1,0,-2e200\n", &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.csv:3:5: error: pelvis.y: -2e200 is too large: at most 1e15 here");
    let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0.2,0,1\n0.1,0,1\n", &inputs()).unwrap_err();
    assert!(e.0[0].message.contains("time does not increase"), "{e}");
    let e = parse_motion("m.mot", "time\tknee.rotation\n", &inputs()).unwrap_err();
    assert!(e.0[0].message.contains("endheader"));
    let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n", &inputs()).unwrap_err();
    assert!(e.0[0].message.contains("no rows"));
    // finite values whose derivatives would overflow are refused where they stand
    let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1e308\n0.1,0,-1e308\n", &inputs()).unwrap_err();
    assert_eq!(e.0[0].headline(), "m.csv:2:5: error: pelvis.y: 1e308 is too large: at most 1e15 here");
}
