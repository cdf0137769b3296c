//! Charts of reproduced figures, drawn with plotters: lines on linear or logarithmic axes (FCT slowdown against
//! flow size, a metric against load, CDFs) and bars (one per scheme), with tick labels in readable units (KB/MB,
//! µs/ms, %). [`render`] turns a [`Chart`] into a PNG, an SVG and the CSV of the plotted data, all in memory, so
//! that the caller writes them atomically next to each other.
//!
//! The font is bundled (Liberation Sans, SIL Open Font License, `fonts/`) and registered with plotters' `ab_glyph`
//! backend, so a machine with only the Rust toolchain draws the same pixels: no fontconfig, no system fonts.
//!
//! Ticks are chosen here, not by plotters: a logarithmic axis is drawn as a linear axis over log10 of the values
//! with ticks at decades (and 2 and 5 times a decade when the axis spans less than two), which keeps one
//! coordinate type for every combination of scales; a sweep of a few values on a log x axis is ticked at its
//! values instead.

use std::sync::Once;

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{
    IntoSegmentedCoord, KeyPointHint, NoDefaultFormatting, Ranged, SegmentValue, ValueFormatter,
};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The bundled font: Liberation Sans Regular (SIL Open Font License 1.1, `fonts/LICENSE-OFL.txt`).
static FONT: &[u8] = include_bytes!("../fonts/LiberationSans-Regular.ttf");
/// The family name plotters knows the bundled font by.
const FAMILY: &str = "sans-serif";
/// Pixel size of the PNG (and the SVG's view box).
const SIZE: (u32, u32) = (900, 560);
/// Least width of the legend column right of a line chart: outside the plot, so it never hides a line. A
/// column widens to its longest name, up to half the chart.
const LEGEND_WIDTH: u32 = 170;

/// What the numbers on an axis are, which decides how their tick labels read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A plain number (slowdown, a count, a load).
    Plain,
    /// Bytes, labelled B/KB/MB/GB (powers of 1000, as flow sizes are given in the papers).
    Bytes,
    /// Nanoseconds, labelled ns/µs/ms/s.
    Nanos,
    /// A fraction, labelled as a percentage.
    Fraction,
}

impl Unit {
    /// `v` as a tick label: short, with the unit.
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Plain => compact(v),
            Unit::Fraction => format!("{}%", compact(v * 100.0)),
            Unit::Bytes => scaled(v, &[(1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B")]),
            Unit::Nanos => scaled(v, &[(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")]),
        }
    }
}

/// `v` in the largest unit of `units` (descending) that it reaches.
fn scaled(v: f64, units: &[(f64, &str)]) -> String {
    let (div, name) = units
        .iter()
        .find(|(div, _)| v.abs() >= *div)
        .unwrap_or(&units[units.len() - 1]);
    format!("{}{name}", compact(v / div))
}

/// A number with at most three significant digits and no trailing zeros.
fn compact(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// One axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The axis title.
    pub label: String,
    /// How tick labels read.
    pub unit: Unit,
    /// Logarithmic scale (values ≤ 0 are left out of the chart).
    pub log: bool,
    /// Fixed lower end (default: from the data).
    pub min: Option<f64>,
    /// Fixed upper end (default: from the data).
    pub max: Option<f64>,
}

impl Axis {
    /// A linear axis whose ends follow the data.
    pub fn linear(label: impl Into<String>, unit: Unit) -> Axis {
        Axis {
            label: label.into(),
            unit,
            log: false,
            min: None,
            max: None,
        }
    }

    /// A logarithmic axis whose ends follow the data.
    pub fn log(label: impl Into<String>, unit: Unit) -> Axis {
        Axis {
            log: true,
            ..Axis::linear(label, unit)
        }
    }

    /// The same axis with fixed ends.
    pub fn range(self, min: f64, max: f64) -> Axis {
        Axis {
            min: Some(min),
            max: Some(max),
            ..self
        }
    }

    /// A data value in drawing coordinates (log10 on a log axis), `None` if it cannot be drawn.
    fn to_coord(&self, v: f64) -> Option<f64> {
        match (self.log, v.is_finite()) {
            (_, false) => None,
            (true, _) if v <= 0.0 => None,
            (true, _) => Some(v.log10()),
            (false, _) => Some(v),
        }
    }
}

/// An RGB colour.
pub type Rgb = [u8; 3];

/// A line of points, in the order given.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Legend entry.
    pub name: String,
    /// Its colour.
    pub colour: Rgb,
    /// `(x, y)` in data units.
    pub points: Vec<(f64, f64)>,
    /// Draw dashed (a second line of the same colour, e.g. another statistic).
    pub dashed: bool,
    /// Mark each point (sparse lines: one point per bucket or per load).
    pub markers: bool,
}

/// One bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// Its label under the x axis.
    pub name: String,
    /// Its colour.
    pub colour: Rgb,
    /// Its height, in the y axis's unit; not finite: not measured (no bar, labelled n/a).
    pub value: f64,
}

/// What the chart draws.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// Lines over two axes.
    Lines(Vec<Line>),
    /// One bar per category, on the y axis (the x axis only names them).
    Bars(Vec<Bar>),
}

/// A chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// Its title.
    pub title: String,
    /// The x axis (for bars only its label is used).
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
    /// The data.
    pub body: Body,
    /// A labelled vertical line (e.g. the queues per port on an active-flows CDF).
    pub vline: Option<(f64, String)>,
}

/// A rendered chart.
pub struct Rendered {
    /// PNG bytes.
    pub png: Vec<u8>,
    /// SVG text.
    pub svg: String,
    /// The plotted data as CSV: `series,x,y` for lines, `series,value` for bars (data units, not log10).
    pub csv: Vec<u8>,
}

/// Draws `chart` as PNG and SVG and writes its data as CSV.
pub fn render(chart: &Chart) -> Result<Rendered, String> {
    register_font()?;
    let mut rgb = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
        draw(&root, chart)?;
        root.present()
            .map_err(|e| format!("drawing `{}`: {e}", chart.title))?;
    }
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        &rgb,
        SIZE.0,
        SIZE.1,
        image::ColorType::Rgb8,
    )
    .map_err(|e| format!("encoding `{}` as PNG: {e}", chart.title))?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(&root, chart)?;
        root.present()
            .map_err(|e| format!("drawing `{}`: {e}", chart.title))?;
    }
    Ok(Rendered {
        png,
        svg,
        csv: csv_of(chart).map_err(|e| format!("writing the data of `{}`: {e}", chart.title))?,
    })
}

/// Registers the bundled font with plotters once per process.
fn register_font() -> Result<(), String> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
            .map_err(|_| "the bundled font does not parse".to_string());
    });
    result
}

/// The data of `chart` as CSV.
fn csv_of(chart: &Chart) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    match &chart.body {
        Body::Lines(lines) => {
            w.write_record(["series", chart.x.label.as_str(), chart.y.label.as_str()])?;
            for l in lines {
                for &(x, y) in &l.points {
                    w.write_record([l.name.clone(), x.to_string(), y.to_string()])?;
                }
            }
        }
        Body::Bars(bars) => {
            w.write_record(["series", chart.y.label.as_str()])?;
            for b in bars {
                w.write_record([b.name.clone(), b.value.to_string()])?;
            }
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// The ends of `axis` in drawing coordinates: fixed ends if given, else the data's, padded so that no point sits
/// on the frame; a degenerate range is widened.
fn extent(axis: &Axis, values: impl Iterator<Item = f64>) -> (f64, f64) {
    let coords: Vec<f64> = values.filter_map(|v| axis.to_coord(v)).collect();
    let lo = coords.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = coords.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (mut lo, mut hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let pad =
        if axis.log { 0.05 } else { 0.04 } * (hi - lo).max(if axis.log { 1.0 } else { hi.abs() });
    lo -= pad;
    hi += pad;
    if let Some(m) = axis.min.and_then(|m| axis.to_coord(m)) {
        lo = m;
    }
    if let Some(m) = axis.max.and_then(|m| axis.to_coord(m)) {
        hi = m;
    }
    if hi - lo < 1e-9 {
        hi = lo + 1.0;
    }
    (lo, hi)
}

/// Ticks at the lines' own x values (drawing coordinates) when they are a sweep of a few values on a log axis
/// (BFC Fig. 7b's 0.25 to 4 times a threshold): read at those values, where decades and their 2 and 5 would
/// leave the ends unlabelled. `None` otherwise.
fn swept_ticks(axis: &Axis, lines: &[Line], lo: f64, hi: f64) -> Option<Vec<f64>> {
    if !axis.log {
        return None;
    }
    let mut xs: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().filter_map(|p| axis.to_coord(p.0)))
        .filter(|t| *t >= lo - 1e-9 && *t <= hi + 1e-9)
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    (2..=8).contains(&xs.len()).then_some(xs)
}

/// Tick positions (drawing coordinates) over `[lo, hi]`.
fn ticks(axis: &Axis, lo: f64, hi: f64) -> Vec<f64> {
    if axis.log {
        let span = hi - lo;
        let steps: &[f64] = if span < 1.2 {
            &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]
        } else if span < 2.5 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let every = (span / 8.0).ceil().max(1.0) as i32;
        let mut out = Vec::new();
        for e in (lo.floor() as i32)..=(hi.ceil() as i32) {
            if e.rem_euclid(every) != 0 {
                continue;
            }
            for s in steps {
                let t = (s * 10f64.powi(e)).log10();
                if t >= lo - 1e-9 && t <= hi + 1e-9 {
                    out.push(t);
                }
            }
        }
        out
    } else {
        let raw = (hi - lo) / 6.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * mag);
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        // Rounded to the step's decimals, so that 6 × 0.1 is the 0.6 its label says.
        let decimals = (-step.log10().floor()).max(0.0) as usize + 1;
        (first..=last)
            .map(|i| {
                format!("{:.decimals$}", i as f64 * step)
                    .parse()
                    .unwrap_or(i as f64 * step)
            })
            .collect()
    }
}

/// A linear coordinate over `[lo, hi]` whose grid lines and labels are exactly `ticks` (plotters' own key points
/// of an `f64` range cannot be chosen).
#[derive(Clone)]
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Ticked {
        Ticked { lo, hi, ticks }
    }
}

impl Ranged for Ticked {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (f * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Bold grid lines and labels at the ticks; no light lines in between.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

impl ValueFormatter<f64> for Ticked {
    fn format(v: &f64) -> String {
        v.to_string()
    }
}

/// A tick label: the data value at drawing coordinate `c`.
fn tick_label(axis: &Axis, c: f64) -> String {
    axis.unit.format(if axis.log { 10f64.powf(c) } else { c })
}

fn colour(c: Rgb) -> RGBColor {
    RGBColor(c[0], c[1], c[2])
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing `{}`: {e}", chart.title);
    root.fill(&WHITE).map_err(err)?;
    match &chart.body {
        Body::Lines(lines) => draw_lines(root, chart, lines).map_err(err),
        Body::Bars(bars) => draw_bars(root, chart, bars).map_err(err),
    }
}

/// The frame every chart shares: title, margins and room for the tick labels. A title too long for the area is set
/// smaller (down to 12 px) rather than cut at both ends.
fn frame<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, DB> {
    const MARGIN: u32 = 14;
    let room = f64::from(root.dim_in_pixel().0.saturating_sub(2 * MARGIN));
    let size = match root.estimate_text_size(title, &(FAMILY, 22).into_font().color(&BLACK)) {
        Ok((wide, _)) if f64::from(wide) > room => (22.0 * room / f64::from(wide)).max(12.0),
        _ => 22.0,
    };
    let mut b = ChartBuilder::on(root);
    b.caption(title, (FAMILY, size))
        .margin(MARGIN)
        .x_label_area_size(48)
        .y_label_area_size(72);
    b
}

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    lines: &[Line],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let all = || lines.iter().flat_map(|l| l.points.iter().copied());
    let mut xs: Vec<f64> = all().map(|p| p.0).collect();
    let mut ys: Vec<f64> = all().map(|p| p.1).collect();
    if let Some((x, _)) = chart.vline {
        xs.push(x);
    }
    // Slowdowns and other ratios to an ideal start at 1: keep 1 in view on their log axes.
    if chart.y.log && chart.y.unit == Unit::Plain && chart.y.min.is_none() {
        ys.push(1.0);
    }
    let (x0, x1) = extent(&chart.x, xs.into_iter());
    let (y0, y1) = extent(&chart.y, ys.into_iter());
    let xt = swept_ticks(&chart.x, lines, x0, x1).unwrap_or_else(|| ticks(&chart.x, x0, x1));
    let yt = ticks(&chart.y, y0, y1);
    let (width, _) = root.dim_in_pixel();
    let legend_font = (FAMILY, 15).into_font().color(&BLACK);
    let widest = lines
        .iter()
        .filter_map(|l| root.estimate_text_size(&l.name, &legend_font).ok())
        .map(|(w, _)| w)
        .max()
        .unwrap_or(0);
    let legend = (38 + widest + 8).clamp(LEGEND_WIDTH, width / 2);
    let (plot, side) = root.split_horizontally(width.saturating_sub(legend));
    let mut c = frame(&plot, &chart.title)
        .build_cartesian_2d(Ticked::new(x0, x1, xt), Ticked::new(y0, y1, yt))?;
    c.configure_mesh()
        .x_desc(chart.x.label.as_str())
        .y_desc(chart.y.label.as_str())
        .x_label_formatter(&|v| tick_label(&chart.x, *v))
        .y_label_formatter(&|v| tick_label(&chart.y, *v))
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    if let Some((x, label)) = &chart.vline
        && let Some(cx) = chart.x.to_coord(*x)
    {
        let grey = RGBColor(90, 90, 90);
        c.draw_series(DashedLineSeries::new(
            [(cx, y0), (cx, y1)],
            6,
            4,
            grey.stroke_width(2),
        ))?;
        c.draw_series([Text::new(
            label.clone(),
            (cx, y0 + 0.1 * (y1 - y0)),
            (FAMILY, 15).into_font().color(&grey),
        )])?;
    }
    let coords: Vec<Vec<(f64, f64)>> = lines
        .iter()
        .map(|l| {
            l.points
                .iter()
                .filter_map(|&(x, y)| Some((chart.x.to_coord(x)?, chart.y.to_coord(y)?)))
                .collect()
        })
        .collect();
    let under = covered(&coords, 0.005 * (y1 - y0));
    for ((l, pts), k) in lines.iter().zip(&coords).zip(under) {
        let col = colour(l.colour);
        // A line that later ones cover exactly is drawn wider, by 4 px per line on top of it, so that it shows
        // as a band on each side of them instead of vanishing.
        let halo = 4 * k;
        let style = col.stroke_width(if l.dashed { 2 } else { 3 } + halo);
        if l.dashed {
            c.draw_series(DashedLineSeries::new(pts.clone(), 8, 5, style))?;
        } else {
            c.draw_series(LineSeries::new(pts.clone(), style))?;
        }
        if l.markers {
            let r = 4 + 3 * k as i32;
            c.draw_series(pts.iter().map(|&p| Circle::new(p, r, col.filled())))?;
        }
    }
    // The legend, in its own column: a stroke of each line's colour and its name.
    for (k, l) in lines.iter().enumerate() {
        let y = 60 + 24 * k as i32;
        let col = colour(l.colour);
        side.draw(&PathElement::new([(4, y), (30, y)], col.stroke_width(3)))?;
        side.draw(&Text::new(
            l.name.clone(),
            (38, y),
            legend_font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

/// For each line (its points in chart coordinates), how many of the lines drawn after it cover it: the same x
/// values, each y within `tol`.
fn covered(lines: &[Vec<(f64, f64)>], tol: f64) -> Vec<u32> {
    let same = |a: &[(f64, f64)], b: &[(f64, f64)]| {
        !a.is_empty()
            && a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| p.0 == q.0 && (p.1 - q.1).abs() <= tol)
    };
    (0..lines.len())
        .map(|i| {
            lines[i + 1..]
                .iter()
                .filter(|later| same(&lines[i], later))
                .count() as u32
        })
        .collect()
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    bars: &[Bar],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    // Drawn in the axis's coordinates (log10 of the value on a log axis); a log axis starts at the power of ten at
    // or below the smallest bar (less 5% of the span), so that the smallest still shows as a bar. A bar of zero or
    // less has no place on it and reads n/a.
    let coords: Vec<Option<f64>> = bars.iter().map(|b| chart.y.to_coord(b.value)).collect();
    let (y0, y1) = if chart.y.log {
        let (lo, hi) = extent(&chart.y, bars.iter().map(|b| b.value));
        (lo.floor(), hi + 0.05 * (hi - lo))
    } else {
        let top = coords.iter().flatten().copied().fold(0.0, f64::max);
        (
            chart.y.min.unwrap_or(0.0),
            chart
                .y
                .max
                .unwrap_or(if top > 0.0 { top * 1.12 } else { 1.0 }),
        )
    };
    let yt = ticks(&chart.y, y0, y1);
    // A segmented range of u32 has a segment per value, both ends included.
    let n = bars.len().max(1) as u32 - 1;
    let mut c = frame(root, &chart.title)
        .build_cartesian_2d((0..n).into_segmented(), Ticked::new(y0, y1, yt))?;
    c.configure_mesh()
        .disable_x_mesh()
        .x_desc(chart.x.label.as_str())
        .y_desc(chart.y.label.as_str())
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => bars
                .get(*i as usize)
                .map_or(String::new(), |b| b.name.clone()),
            _ => String::new(),
        })
        .y_label_formatter(&|v| tick_label(&chart.y, *v))
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    c.draw_series(
        bars.iter()
            .zip(&coords)
            .enumerate()
            .filter_map(|(i, (b, y))| {
                let i = i as u32;
                let mut r = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), y0),
                        (SegmentValue::Exact(i + 1), (*y)?),
                    ],
                    colour(b.colour).filled(),
                );
                r.set_margin(0, 0, 12, 12);
                Some(r)
            }),
    )?;
    let centred = (FAMILY, 14)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    c.draw_series(bars.iter().zip(&coords).enumerate().map(|(i, (b, y))| {
        let (label, top) = match y {
            Some(y) => (chart.y.unit.format(b.value), y.max(y0)),
            None => ("n/a".to_string(), y0),
        };
        Text::new(
            label,
            (SegmentValue::CenterOf(i as u32), top + 0.01 * (y1 - y0)),
            centred.clone(),
        )
    }))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_naturally() {
        assert_eq!(Unit::Bytes.format(1000.0), "1KB");
        assert_eq!(Unit::Bytes.format(3_000_000.0), "3MB");
        assert_eq!(Unit::Bytes.format(150.0), "150B");
        assert_eq!(Unit::Bytes.format(12_500.0), "12.5KB");
        assert_eq!(Unit::Nanos.format(2000.0), "2µs");
        assert_eq!(Unit::Nanos.format(1_500_000.0), "1.5ms");
        assert_eq!(Unit::Fraction.format(0.255), "25.5%");
        assert_eq!(Unit::Plain.format(0.0), "0");
        assert_eq!(Unit::Plain.format(1234.0), "1234");
        assert_eq!(Unit::Plain.format(2.345), "2.35");
    }

    /// A sweep of five values on a log axis is ticked at them; a curve of many points keeps the decades.
    #[test]
    fn a_short_sweep_on_a_log_axis_is_ticked_at_its_values() {
        let axis = Axis::log("threshold", Unit::Plain);
        let line = |xs: &[f64]| Line {
            name: "a".into(),
            colour: [200, 0, 0],
            points: xs.iter().map(|&x| (x, 1.0)).collect(),
            dashed: false,
            markers: true,
        };
        let sweep = [line(&[0.25, 0.5, 1.0, 2.0, 4.0])];
        let (lo, hi) = (0.25f64.log10(), 4f64.log10());
        let t = swept_ticks(&axis, &sweep, lo, hi).unwrap();
        assert_eq!(t.len(), 5);
        assert!((t[0] - lo).abs() < 1e-12 && (t[4] - hi).abs() < 1e-12);
        let many: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(swept_ticks(&axis, &[line(&many)], 0.0, 20f64.log10()), None);
        let linear = Axis::linear("load", Unit::Fraction);
        assert_eq!(swept_ticks(&linear, &sweep, 0.25, 4.0), None);
    }

    #[test]
    fn log_ticks_are_decades_and_linear_ticks_are_round() {
        let log = Axis::log("size", Unit::Bytes);
        let t = ticks(&log, 2.9, 7.1);
        assert_eq!(t, vec![3.0, 4.0, 5.0, 6.0, 7.0]);
        let narrow = ticks(&log, 0.0, 1.0);
        assert!(narrow.contains(&2f64.log10()) && narrow.contains(&1.0));
        let lin = Axis::linear("load", Unit::Fraction);
        assert_eq!(ticks(&lin, 0.5, 0.95), vec![0.5, 0.6, 0.7, 0.8, 0.9]);
    }

    /// Lines that later ones cover point for point are counted, so that they can be drawn wider.
    #[test]
    fn lines_covered_by_later_ones_are_counted() {
        let a = vec![(0.0, 1.0), (1.0, 2.0)];
        let near = vec![(0.0, 1.001), (1.0, 2.0)];
        let other = vec![(0.0, 1.0), (1.0, 3.0)];
        assert_eq!(
            covered(&[a.clone(), near.clone(), other.clone(), a.clone()], 0.01),
            [2, 1, 0, 0]
        );
        assert_eq!(
            covered(&[vec![], vec![]], 0.01),
            [0, 0],
            "no points, nothing hidden"
        );
        assert_eq!(covered(&[a, vec![(0.0, 1.0)]], 0.01), [0, 0]);
    }

    #[test]
    fn renders_png_svg_and_csv() {
        let chart = Chart {
            title: "t".into(),
            x: Axis::log("flow size", Unit::Bytes),
            y: Axis::log("slowdown", Unit::Plain),
            body: Body::Lines(vec![Line {
                name: "a,b".into(),
                colour: [200, 0, 0],
                points: vec![(1000.0, 1.5), (1e6, 3.0), (0.0, 2.0)],
                dashed: false,
                markers: true,
            }]),
            vline: Some((1e5, "x".into())),
        };
        let r = render(&chart).unwrap();
        assert_eq!(&r.png[1..4], b"PNG");
        assert!(r.svg.contains("<svg") && r.svg.contains("flow size"));
        let csv = String::from_utf8(r.csv).unwrap();
        assert_eq!(csv.lines().next(), Some("series,flow size,slowdown"));
        assert!(csv.contains("\"a,b\",1000,1.5"), "{csv}");
        let bars = Chart {
            body: Body::Bars(vec![Bar {
                name: "BFC".into(),
                colour: [0, 0, 200],
                value: 0.25,
            }]),
            y: Axis::linear("paused", Unit::Fraction),
            ..chart
        };
        assert!(render(&bars).unwrap().svg.contains("BFC"));
        // On a log axis a 53 µs bar shows beside 30 ms ones: the axis starts a decade below it.
        let bar = |name: &str, value| Bar {
            name: name.into(),
            colour: [0, 0, 200],
            value,
        };
        let log = Chart {
            body: Body::Bars(vec![bar("a", 53e3), bar("b", 30e6), bar("c", f64::NAN)]),
            y: Axis::log("p99 FCT", Unit::Nanos),
            ..bars
        };
        let svg = render(&log).unwrap().svg;
        for label in ["10µs", "100µs", "10ms", "53µs", "30ms", "n/a"] {
            assert!(svg.contains(label), "{label} missing: {svg}");
        }
    }
}
