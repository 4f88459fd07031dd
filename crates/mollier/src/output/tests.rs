use super::*;

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mollier-output-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    v.sort();
    v
}

/// One run: a table `t.csv` with `rows` rows and one extra file per variant.
fn run(target: &Path, variants: &[&str], rows: usize) -> Result<PathBuf, OutputError> {
    let mut o = OutputDir::create(target)?;
    let t = o.table("t.csv", None, ["time", "x"])?;
    for i in 0..rows {
        o.numbers(t, [i as f64, 0.5 * i as f64])?;
    }
    for v in variants {
        o.json(&format!("{v}/summary.json"), &json!({ "variant": v }))?;
    }
    o.commit(json!({ "rows": rows }), json!({ "wall_ms": 1.0 }))
}

#[test]
fn a_rerun_with_fewer_variants_leaves_no_stale_file() {
    let base = temp("rerun");
    let out = base.join("out");
    run(&out, &["a", "b", "c"], 3).unwrap();
    assert_eq!(names(&out), [MARKER, "a", "b", "c", "summary.json", "t.csv", "timing.json"]);
    run(&out, &["a"], 2).unwrap();
    assert_eq!(names(&out), [MARKER, "a", "summary.json", "t.csv", "timing.json"]);
    // nothing left beside it either
    assert_eq!(names(&base), ["out"]);
    let s: Value = serde_json::from_str(&fs::read_to_string(out.join(SUMMARY)).unwrap()).unwrap();
    assert_eq!(s["complete"], json!(true));
    assert_eq!(s["files"], json!(["t.csv", "a/summary.json", "timing.json"]));
    assert_eq!(s["rows"], json!(2));
    assert_eq!(fs::read_to_string(out.join("t.csv")).unwrap(), "time,x\n0,0\n1,0.5\n");
}

#[test]
fn a_run_that_stops_part_way_leaves_the_old_output_intact() {
    let base = temp("interrupted");
    let out = base.join("out");
    run(&out, &["a"], 3).unwrap();
    let before: Vec<(String, Vec<u8>)> =
        names(&out).into_iter().map(|n| (n.clone(), fs::read(out.join(&n)).unwrap_or_default())).collect();
    {
        // a run that writes rows, then fails (an error returned part-way drops the writer)
        let mut o = OutputDir::create(&out).unwrap();
        let t = o.table("t.csv", None, ["time", "x"]).unwrap();
        o.numbers(t, [9.0, 9.0]).unwrap();
        o.json("z/summary.json", &json!({})).unwrap();
        assert!(o.staging().exists());
    }
    let after: Vec<(String, Vec<u8>)> =
        names(&out).into_iter().map(|n| (n.clone(), fs::read(out.join(&n)).unwrap_or_default())).collect();
    assert_eq!(before, after);
    assert_eq!(names(&base), ["out"], "the temporary directory is removed");
}

#[test]
fn summary_is_written_last_and_tables_are_complete_before_it() {
    let base = temp("last");
    let out = base.join("out");
    FINISHED.with(|f| f.borrow_mut().clear());
    run(&out, &["a", "b"], 1000).unwrap();
    // the order the writer finished its files in, by their names in the directory
    let order: Vec<String> = FINISHED.with(|f| {
        f.borrow()
            .iter()
            .filter_map(|p| p.strip_prefix(out.parent()?).ok())
            .map(|p| {
                let mut c = p.components();
                c.next();
                c.as_path().to_string_lossy().into_owned()
            })
            .collect()
    });
    assert_eq!(order.last().map(String::as_str), Some(SUMMARY), "{order:?}");
    for f in ["t.csv", "a/summary.json", "b/summary.json", "timing.json", MARKER] {
        assert_eq!(order.iter().filter(|o| *o == f).count(), 1, "{f} finished once: {order:?}");
    }
    let table = fs::read_to_string(out.join("t.csv")).unwrap();
    assert_eq!(table.lines().count(), 1001);
    assert!(table.ends_with("999,499.5\n"));
}

#[test]
fn a_killed_run_is_cleaned_up_and_an_interrupted_swap_undone() {
    let base = temp("killed");
    let out = base.join("out");
    run(&out, &[], 1).unwrap();
    // a run killed while writing (no such process), and one killed between the renames
    let dead = u32::MAX - 1;
    fs::create_dir(base.join(format!(".out.partial-{dead}"))).unwrap();
    fs::rename(&out, aside_path(&out, dead)).unwrap();
    let mut o = OutputDir::create(&out).unwrap();
    assert!(out.join(SUMMARY).is_file(), "the old output is back in place");
    let t = o.table("t.csv", None, ["time"]).unwrap();
    o.numbers(t, [1.0]).unwrap();
    o.commit(json!({}), json!({})).unwrap();
    assert_eq!(names(&base), ["out"]);
}

#[test]
fn a_directory_of_other_files_is_not_replaced() {
    let base = temp("foreign");
    let out = base.join("mine");
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("thesis.tex"), "precious").unwrap();
    assert!(matches!(OutputDir::create(&out), Err(OutputError::NotAnOutput { old_summary: false, .. })));
    assert_eq!(fs::read_to_string(out.join("thesis.tex")).unwrap(), "precious");
    // a summary.json of one's own, or an output of a Mollier from before the marker, or a
    // marker that is a link or holds another tag: none of them is Mollier's marker
    for (name, text) in [
        (SUMMARY, "{}"),
        (SUMMARY, "{\"complete\": true, \"files\": []}"),
        (MARKER, "mollier-output 2"),
        (MARKER, "mollier-output"),
        (MARKER, "not-mollier 1"),
        (MARKER, ""),
    ] {
        fs::write(out.join(name), text).unwrap();
        let e = OutputDir::create(&out).err().expect("refused");
        assert!(matches!(e, OutputError::NotAnOutput { .. }), "{name}: {text}: {e}");
        assert!(e.to_string().contains("nothing in it was changed"), "{e}");
        assert_eq!(fs::read_to_string(out.join("thesis.tex")).unwrap(), "precious");
    }
    let e = OutputDir::create(&out).err().unwrap();
    assert!(matches!(e, OutputError::NotAnOutput { old_summary: true, .. }));
    assert!(e.to_string().contains("before the marker"), "{e}");
    fs::remove_file(out.join(MARKER)).unwrap();
    let tag = base.join("tag");
    fs::write(&tag, format!("{MARKER_TAG}\n")).unwrap();
    std::os::unix::fs::symlink(&tag, out.join(MARKER)).unwrap();
    assert!(matches!(OutputDir::create(&out), Err(OutputError::NotAnOutput { .. })));
    assert_eq!(fs::read_to_string(out.join("thesis.tex")).unwrap(), "precious");
    // the marker a commit writes makes the directory Mollier's to replace
    fs::remove_file(out.join(MARKER)).unwrap();
    fs::write(out.join(MARKER), format!("{MARKER_TAG}\n")).unwrap();
    run(&out, &[], 1).unwrap();
    assert_eq!(names(&out), [MARKER, "summary.json", "t.csv", "timing.json"]);
    assert_eq!(fs::read_to_string(out.join(MARKER)).unwrap(), format!("{MARKER_TAG}\n"));
    // a link to a directory is not a directory to replace
    let link = base.join("link");
    std::os::unix::fs::symlink(&out, &link).unwrap();
    assert!(matches!(OutputDir::create(&link), Err(OutputError::NotAFile { kind: LINK, .. })));
    assert!(out.join(MARKER).is_file());
    assert!(matches!(OutputDir::create(Path::new(".")), Err(OutputError::NoName { .. })));
    let file = base.join("file");
    fs::write(&file, "x").unwrap();
    assert!(OutputDir::create(&file).is_err());
    let mut o = OutputDir::create(&base.join("new")).unwrap();
    for bad in ["../x.csv", "/etc/x", "", "summary.json", "a/../../b"] {
        assert!(matches!(o.file(bad), Err(OutputError::BadName { .. })), "{bad}");
    }
}

/// Single files are written over regular files only: a link, a directory, a FIFO or a device
/// at the path is left as it was (issue 33: `--out /dev/null` replaced /dev/null as root).
#[test]
fn a_file_output_replaces_only_a_regular_file() {
    let base = temp("files");
    let secret = base.join("secret");
    fs::write(&secret, "keep").unwrap();
    let link = base.join("link.html");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let dir = base.join("dir.html");
    fs::create_dir(&dir).unwrap();
    let fifo = base.join("fifo.html");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let cases: [(&Path, &str); 4] =
        [(&link, LINK), (&dir, DIRECTORY), (&fifo, "a FIFO"), (Path::new("/dev/null"), "a device")];
    for (path, kind) in cases {
        let before = fs::symlink_metadata(path).unwrap().file_type();
        match write_file(path, b"new", Replace::Files) {
            Err(OutputError::NotAFile { kind: k, .. }) => assert_eq!(k, kind, "{}", path.display()),
            other => panic!("{}: {other:?}", path.display()),
        }
        assert_eq!(fs::symlink_metadata(path).unwrap().file_type(), before, "{}", path.display());
        if kind != LINK {
            // not even when asked to replace links
            assert!(write_file(path, b"new", Replace::Links).is_err(), "{}", path.display());
            assert_eq!(fs::symlink_metadata(path).unwrap().file_type(), before);
        }
    }
    assert_eq!(fs::read_to_string(&secret).unwrap(), "keep");
    let e = write_file(&link, b"new", Replace::Files).unwrap_err().to_string();
    assert!(e.contains("symbolic link") && e.contains("--force"), "{e}");
    // asked to, the link itself is replaced; what it pointed to is not written
    write_file(&link, b"new", Replace::Links).unwrap();
    assert!(fs::symlink_metadata(&link).unwrap().is_file());
    assert_eq!(fs::read_to_string(&link).unwrap(), "new");
    assert_eq!(fs::read_to_string(&secret).unwrap(), "keep");
    // a regular file is replaced; a link planted at the temporary name is not followed
    let page = base.join("page.html");
    fs::write(&page, "old").unwrap();
    let temp = base.join(format!(".page.html.partial-{}", std::process::id()));
    std::os::unix::fs::symlink(&secret, &temp).unwrap();
    write_file(&page, b"new", Replace::Files).unwrap();
    assert_eq!(fs::read_to_string(&page).unwrap(), "new");
    assert_eq!(fs::read_to_string(&secret).unwrap(), "keep");
    assert!(!temp.exists() && fs::symlink_metadata(&temp).is_err(), "the temporary name is gone");
    let _ = fs::remove_dir_all(&base);
}

#[test]
fn sto_tables_have_opensims_header_with_their_row_count() {
    let base = temp("sto");
    let target = base.join("out");
    let mut o = OutputDir::create(&target).unwrap().with_format(TableFormat::Sto);
    assert_eq!(o.table_file("motion.csv"), "motion.sto");
    let t = o.table("motion.csv", Some("a comment"), ["time", "a", "b"]).unwrap();
    for i in 0..1234 {
        o.numbers(t, [i as f64 * 0.01, 1.0 / (1.0 + i as f64), -2.5e-7 * i as f64]).unwrap();
    }
    o.units(&[Table { file: "motion.csv".into(), columns: vec![] }]).unwrap();
    o.commit(Value::Null, Value::Null).unwrap();
    let text = fs::read_to_string(target.join("motion.sto")).unwrap();
    let (head, body) = text.split_once("endheader\n").unwrap();
    assert_eq!(head, "motion\nversion=1\nnRows=000000001234\nnColumns=3\ninDegrees=no\n# a comment\n");
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines[0], "time\ta\tb");
    assert_eq!(lines.len(), 1 + 1234);
    let last: Vec<f64> = lines[1234].split('\t').map(|v| v.parse().unwrap()).collect();
    assert_eq!(last, vec![1233.0 * 0.01, 1.0 / 1234.0, -2.5e-7 * 1233.0]);
    // the units file stays CSV and names the .sto file
    let units = fs::read_to_string(target.join("units.csv")).unwrap();
    assert!(units.contains("motion.sto,time,s,time"), "{units}");
    let _ = fs::remove_dir_all(&base);
}

/// Rows of numbers bypass the csv writer: each table's bytes are those the csv writer, set up
/// as the table is, writes for the same records (header and text cells that need quoting,
/// numbers' text), in CSV and in STO; a row of another length is refused either way.
#[test]
fn tables_are_the_csv_writers_bytes() {
    let header = ["time", "a,b", "say \"hi\"", "two\nlines"];
    let texts = [["x", "", "q\"", "c,d"], ["\r", " ", "plain", "ünï"]];
    let numbers: Vec<[f64; 4]> = (0..50)
        .map(|i| [i as f64 * 0.01, -1.0 / (1.0 + i as f64), 1e20 * i as f64, 2.5e-9 / (1.0 + i as f64)])
        .collect();
    for format in [TableFormat::Csv, TableFormat::Sto] {
        let base = temp(&format!("bytes-{format:?}"));
        let target = base.join("out");
        let mut o = OutputDir::create(&target).unwrap().with_format(format);
        let t = o.table("t.csv", Some("a comment"), header).unwrap();
        o.row(t, texts[0]).unwrap();
        for r in &numbers {
            o.numbers(t, r.iter().copied()).unwrap();
        }
        o.row(t, texts[1]).unwrap();
        assert!(o.numbers(t, [1.0, 2.0]).is_err());
        assert!(o.row(t, ["1", "2", "3", "4", "5"]).is_err());
        let name = o.table_file("t.csv");
        o.commit(Value::Null, Value::Null).unwrap();
        let written = fs::read(target.join(&name)).unwrap();
        // the reference: the csv crate writes every record, numbers as their text
        let mut builder = csv::WriterBuilder::new();
        if format == TableFormat::Sto {
            builder.delimiter(b'\t').quote_style(csv::QuoteStyle::Never);
        }
        let mut w = builder.from_writer(Vec::new());
        w.write_record(header).unwrap();
        w.write_record(texts[0]).unwrap();
        for r in &numbers {
            w.write_record(r.iter().map(|v| number(*v))).unwrap();
        }
        w.write_record(texts[1]).unwrap();
        let reference = w.into_inner().unwrap();
        let last_of_head: &[u8] = if format == TableFormat::Sto { b"endheader" } else { b"# a comment" };
        let body = written.split(|&b| b == b'\n').position(|l| l == last_of_head).unwrap();
        let start: usize = written.split(|&b| b == b'\n').take(body + 1).map(|l| l.len() + 1).sum();
        assert_eq!(String::from_utf8_lossy(&written[start..]), String::from_utf8_lossy(&reference), "{format:?}");
        // the refused rows are not counted: two rows of text and the numbers'
        if format == TableFormat::Sto {
            let want = format!("nRows={:012}\n", 2 + numbers.len());
            assert!(String::from_utf8_lossy(&written).contains(&want), "{want}");
        }
        let _ = fs::remove_dir_all(&base);
    }
}

#[test]
fn numbers_read_back_exactly_and_never_as_nan() {
    for v in [0.1, -1.0 / 3.0, 1e-300, 6.02e23, 146.226, -0.1727990292093, f64::MIN_POSITIVE, 1e15, 1e-5] {
        assert_eq!(number(v).parse::<f64>().unwrap(), v, "{v}");
    }
    assert_eq!(number(-0.0), "0");
    assert_eq!(number(1e-7), "1e-7");
    for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(number(v), "");
    }
}

/// The text of the standard library's shortest formatting, `{}` near 1 and `{:e}` far from it:
/// what [`number`] writes, character for character.
fn reference(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        String::new()
    } else if a == 0.0 {
        "0".to_string()
    } else if (1e-5..1e15).contains(&a) {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

#[test]
fn numbers_are_the_standard_librarys_text() {
    let mut edges = vec![1e-5, 1e15, 1.0, 0.1, 5e-324, f64::MAX, f64::MIN_POSITIVE, 123456789012345.6, 1e-4, 100.0];
    edges.extend([1690060720831323.2, 1234567890123456.7, 9999999999999998.0, 2e15, 1.000000000000001e15]);
    for k in -330..310 {
        let p: f64 = format!("1e{k}").parse().unwrap();
        edges.extend([p, p * 1.5, p * 9.999999999999999]);
    }
    edges.extend(
        [1e-5f64, 1e15].iter().flat_map(|&e| [f64::from_bits(e.to_bits() - 1), f64::from_bits(e.to_bits() + 1)]),
    );
    // bit patterns of every exponent, and values of a model's size
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let random: Vec<f64> = (0..200_000)
        .flat_map(|_| [f64::from_bits(next()), (next() >> 11) as f64 / (1u64 << 53) as f64 * 200.0 - 100.0])
        .collect();
    let mut ties = 0;
    for v in edges.into_iter().chain(random) {
        for v in [v, -v] {
            let (got, want) = (number(v), reference(v));
            if got != want {
                // a value halfway between two shortest texts (e.g. 1690060720831323.25 at
                // 17 digits): ryu takes the even digit, the standard library the upper one;
                // both read back exactly and differ in the last digit only
                let last = |t: &str| t.find('e').unwrap_or(t.len()) - 1;
                let (a, b) = (got.as_bytes(), want.as_bytes());
                let i = last(&got);
                assert!(a.len() == b.len() && a[..i] == b[..i] && a[i + 1..] == b[i + 1..], "{v:?}: {got} vs {want}");
                assert_eq!((b[i] - a[i], (a[i] - b'0') % 2), (1, 0), "{v:?}: {got} vs {want}");
                ties += 1;
            }
            if v.is_finite() {
                assert_eq!(got.parse::<f64>().unwrap(), v, "{v:?} ({:#x})", v.to_bits());
            }
        }
    }
    // 118 of these 800 000 (exact halves are rare, and all but absent from a model's values)
    assert!(ties < 1000, "{ties} ties in 800 000 numbers");
}
