//! Issue 17: `fct.parquet` holds exactly the records of `fct.csv`, row by row, in at most a fifth of the bytes
//! of `fct.csv` and `fct.txt` together. The run is the README's main job over 1 ms (190,000 flows; the whole
//! 5 ms job's files are measured in the README), plus a named group and a cut-off that leaves flows
//! unfinished, so that null values and group names are read back too.

#![cfg(feature = "parquet")]

mod common;

use common::{TempDir, bfcsim, s};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row};

/// Picoseconds as `fct.csv` writes them: nanoseconds with three decimals.
fn ns3(ps: u64) -> String {
    format!("{}.{:03}", ps / 1000, ps % 1000)
}

/// A Parquet field as `fct.csv` writes the same value (`slowdown` is compared numerically instead).
fn as_csv(field: &Field) -> String {
    match field {
        Field::Null => String::new(),
        Field::Bool(b) => b.to_string(),
        Field::UByte(v) => v.to_string(),
        Field::UInt(v) => v.to_string(),
        Field::ULong(v) => v.to_string(),
        Field::Str(v) => v.clone(),
        other => panic!("unexpected field {other}"),
    }
}

fn cell(row: &Row, name: &str) -> Field {
    row.get_column_iter()
        .find(|(n, _)| n.as_str() == name)
        .map(|(_, f)| f.clone())
        .unwrap_or_else(|| panic!("fct.parquet has no column `{name}`"))
}

#[test]
fn parquet_rows_equal_fct_csv_and_take_a_fifth_of_the_text_outputs() {
    let tmp = TempDir::new("parquet");
    let out = tmp.join("out");
    let run = bfcsim(&[
        "run",
        "experiments/clos128-google-dctcp.toml",
        "--set",
        "workload.duration=1ms",
        "--set",
        "run.max_time=1.01ms",
        "--set",
        "workload.group=[{name = \"mice\", size = \"1KB\", to = 3, load = 0.05}]",
        "--outputs",
        "all",
        "--out",
        s(&out),
    ]);
    assert!(run.success(), "{:?}\n{}", run.code, run.stderr);

    let size = |name: &str| std::fs::metadata(out.join(name)).unwrap().len();
    let (parquet_bytes, text_bytes) = (size("fct.parquet"), size("fct.csv") + size("fct.txt"));
    assert!(
        5 * parquet_bytes <= text_bytes,
        "fct.parquet is {parquet_bytes} B, fct.csv + fct.txt {text_bytes} B"
    );

    let csv = std::fs::read_to_string(out.join("fct.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let file = std::fs::File::open(out.join("fct.parquet")).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let rows = reader.get_row_iter(None).unwrap();
    let (mut n, mut unfinished, mut grouped) = (0, 0, 0);
    for (row, line) in rows.zip(lines.by_ref()) {
        let row = row.unwrap();
        let fields: Vec<&str> = line.split(',').collect();
        let csv = |name: &str| fields[header.iter().position(|h| *h == name).unwrap()];
        for name in ["id", "src", "dst", "size_bytes", "incast", "class", "group"] {
            assert_eq!(as_csv(&cell(&row, name)), csv(name), "row {n}, {name}");
        }
        for (ps, ns) in [
            ("start_ps", "start_ns"),
            ("finish_ps", "finish_ns"),
            ("fct_ps", "fct_ns"),
            ("ideal_ps", "ideal_ns"),
        ] {
            let value = match cell(&row, ps) {
                Field::ULong(v) => ns3(v),
                Field::Null => String::new(),
                other => panic!("row {n}, {ps}: {other}"),
            };
            assert_eq!(value, csv(ns), "row {n}, {ps}");
        }
        match (
            cell(&row, "slowdown"),
            cell(&row, "fct_ps"),
            cell(&row, "ideal_ps"),
        ) {
            (Field::Double(v), Field::ULong(fct), Field::ULong(ideal)) => {
                // The raw ratio, which fct.csv rounds half up to six decimals.
                assert_eq!(v, fct as f64 / ideal as f64, "row {n}");
                let micro =
                    (u128::from(fct) * 2_000_000 + u128::from(ideal)) / (2 * u128::from(ideal));
                let rounded = format!("{}.{:06}", micro / 1_000_000, micro % 1_000_000);
                assert_eq!(rounded, csv("slowdown"), "row {n}");
            }
            (Field::Null, Field::Null, _) => {
                assert_eq!(csv("slowdown"), "", "row {n}");
                unfinished += 1;
            }
            other => panic!("row {n}: slowdown, fct and ideal {other:?}"),
        }
        grouped += usize::from(!csv("group").is_empty());
        n += 1;
    }
    assert!(
        lines.next().is_none(),
        "fct.csv has more rows than fct.parquet"
    );
    assert_eq!(n, reader.metadata().file_metadata().num_rows() as usize);
    assert!(n > 100_000, "{n} rows");
    assert!(
        unfinished > 0 && grouped > 0,
        "{unfinished} unfinished, {grouped} in the group"
    );
}
