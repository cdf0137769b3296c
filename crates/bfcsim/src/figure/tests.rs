use super::*;

#[test]
fn metrics_parse_and_name_their_flow_set() {
    assert_eq!(
        Metric::parse("short.p99").unwrap(),
        Metric::Slowdown {
            set: "non-incast".into(),
            sizes: Sizes::Short,
            stat: Stat::P99
        }
    );
    assert_eq!(
        Metric::parse("group:direct:all.p50").unwrap(),
        Metric::Slowdown {
            set: "group:direct".into(),
            sizes: Sizes::All,
            stat: Stat::P50
        }
    );
    assert_eq!(
        Metric::parse("buffer.p99").unwrap(),
        Metric::Buffer(Stat::P99)
    );
    assert_eq!(
        Metric::parse("util.link:3").unwrap(),
        Metric::Utilization("link:3".into())
    );
    assert_eq!(Metric::parse("loss").unwrap(), Metric::Loss);
    assert_eq!(
        Metric::parse("group:a:fct.small.p99").unwrap(),
        Metric::Fct {
            set: "group:a".into(),
            class: FctClass::Small,
            stat: Stat::P99
        }
    );
    assert_eq!(Metric::parse("fct.large.avg").unwrap().unit(), Unit::Nanos);
    for bad in [
        "short",
        "short.p98",
        "medium.p99",
        "incast:buffer.p99",
        "x",
        "fct.huge.avg",
        "fct.small",
    ] {
        assert!(Metric::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(axis_text(100.0), "100");
    assert_eq!(axis_text(0.95), "0.95");
}

#[test]
fn a_figure_names_its_line_on_error_and_checks_its_series() {
    let dir = std::env::temp_dir().join(format!("bfcsim-figure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let palette: BTreeMap<String, [u8; 3]> = [("BFC".to_string(), [1, 2, 3])].into();
    let base = "name = \"f\"\npaper = \"p\"\nsource = \"s\"\ntitle = \"t\"\nsetup = \"u\"\n\
                experiment = \"e.toml\"\n[paper_scale]\ndescribe = \"d\"\n[quick]\ndescribe = \"q\"\n";
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let ok = write(
        "ok.toml",
        &format!("{base}[[series]]\nlabel = \"BFC\"\nscheme = \"bfc\"\n"),
    );
    let f = Figure::read(&ok, &palette).unwrap();
    assert_eq!(f.colours, vec![[1, 2, 3]]);
    let cases = [
        (
            format!("{base}[[series]]\nlabel = \"HPCC\"\n"),
            "no colour in palette.toml",
        ),
        (
            format!("{base}[[series]]\nlabel = \"BFC\"\ncolour = 1\n"),
            "ok2.toml:13: unknown field",
        ),
        (
            format!(
                "{base}[[series]]\nlabel = \"BFC\"\n[[claim]]\ntext = \"c\"\nmetric = \"short.p99\"\n\
                     series = [\"X\"]\npaper = 2.0\n"
            ),
            "names no series `X`",
        ),
        (
            format!(
                "{base}[[series]]\nlabel = \"BFC\"\n[[plot]]\nkind = \"bars\"\nmetric = \"nope\"\n"
            ),
            "unknown metric `nope`",
        ),
    ];
    for (text, want) in cases {
        let p = write("ok2.toml", &text);
        let e = Figure::read(&p, &palette).unwrap_err();
        assert!(e.contains(want), "want `{want}` in `{e}`");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// CIE L*a*b* of an sRGB colour (D65).
fn lab([r, g, b]: [u8; 3]) -> [f64; 3] {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let (r, g, b) = (lin(r), lin(g), lin(b));
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    let f = |t: f64| {
        if t > 0.008856 {
            t.cbrt()
        } else {
            7.787 * t + 16.0 / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// Within one figure, every two series can be told apart by colour: their CIE76 distance is at least 30.
/// DCQCN's and ExpressPass's two greens, 26 apart, read as one line in Fig. 12.
#[test]
fn the_series_of_a_figure_have_distinct_colours() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/figures");
    let mut close = Vec::new();
    for f in read_all(&dir).unwrap() {
        let labs: Vec<[f64; 3]> = f.colours.iter().map(|&c| lab(c)).collect();
        for i in 0..labs.len() {
            for j in i + 1..labs.len() {
                let d = (0..3)
                    .map(|k| (labs[i][k] - labs[j][k]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if d < 30.0 {
                    close.push(format!(
                        "{}: {} and {} ({d:.1})",
                        f.def.name, f.def.series[i].label, f.def.series[j].label
                    ));
                }
            }
        }
    }
    assert!(close.is_empty(), "colours too close:\n{}", close.join("\n"));
}
