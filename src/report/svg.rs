//! SVG chart primitives, pure string building: linear and log axes with "nice" ticks, a chart
//! frame (title, legend, grid, axes, tick labels), line series with gaps, bars, shaded bands
//! and reference lines. Data marks go into one `<g class="marks">` so a page can check that
//! something was drawn. Every text goes through [`escape`].

use std::fmt::Write;

/// Escapes text for HTML and SVG (content and attribute values).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One tick: where, and its label (`\n` separates lines).
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub value: f64,
    pub label: String,
}

/// An axis: its domain, linear or log, its ticks and an optional title.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    pub ticks: Vec<Tick>,
    pub title: Option<String>,
}

/// 1, 2, 2.5 or 5 × a power of ten, near `span / n`.
pub fn nice_step(span: f64, n: usize) -> f64 {
    let raw = (span / n.max(1) as f64).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Decimals needed to print multiples of `step` exactly (up to 6).
fn decimals_of(step: f64) -> usize {
    (0..6)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(6)
}

/// A tick label for `v` on an axis stepping by `step`: thousands as `k`, millions as `M`.
pub fn tick_label(v: f64, step: f64) -> String {
    let (scale, suffix) = if step >= 1e6 {
        (1e6, "M")
    } else if step >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let d = decimals_of(step / scale);
    let s = format!("{:.d$}", v / scale);
    // Zero is plain "0" (not "0.0", "-0" or "0k").
    if s.parse::<f64>() == Ok(0.0) {
        return "0".into();
    }
    format!("{s}{suffix}")
}

/// A value on a log axis: as few digits as it needs (0.05, 2, 1k).
fn log_label(v: f64) -> String {
    if v >= 1e6 {
        tick_label(v, 1e6)
    } else if v >= 1e3 {
        tick_label(v, 1e3)
    } else {
        tick_label(v, v)
    }
}

impl Axis {
    /// Linear from `lo` to `hi`, widened to whole ticks, about `n` of them.
    pub fn linear(lo: f64, hi: f64, n: usize) -> Axis {
        let (lo, hi) = if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
        let step = nice_step(hi - lo, n);
        let first = (lo / step + 1e-9).floor();
        let last = (hi / step - 1e-9).ceil();
        let ticks = (first as i64..=last as i64)
            .map(|k| {
                let value = k as f64 * step;
                Tick {
                    value,
                    label: tick_label(value, step),
                }
            })
            .collect();
        Axis {
            lo: first * step,
            hi: last * step,
            log: false,
            ticks,
            title: None,
        }
    }

    /// Linear from 0 to at least `max` (1 when there is nothing above 0).
    pub fn zero_to(max: f64, n: usize) -> Axis {
        let max = if max.is_finite() && max > 0.0 {
            max
        } else {
            1.0
        };
        Axis::linear(0.0, max, n)
    }

    /// Log from the decade at or below `lo` to the decade at or above `hi`; ticks at each
    /// decade, and at 2 and 5 of each when the axis spans three decades or fewer.
    pub fn log(lo: f64, hi: f64) -> Axis {
        let lo = if lo.is_finite() && lo > 0.0 { lo } else { 1.0 };
        let hi = if hi.is_finite() && hi > lo {
            hi
        } else {
            lo * 10.0
        };
        let d0 = lo.log10().floor() as i32;
        let d1 = (hi.log10().ceil() as i32).max(d0 + 1);
        let minor = d1 - d0 <= 3;
        let mut ticks = Vec::new();
        for d in d0..=d1 {
            let base = 10f64.powi(d);
            for m in [1.0, 2.0, 5.0] {
                let value = base * m;
                if (m == 1.0 || minor) && value <= 10f64.powi(d1) * 1.000_001 {
                    ticks.push(Tick {
                        value,
                        label: log_label(value),
                    });
                }
            }
        }
        Axis {
            lo: 10f64.powi(d0),
            hi: 10f64.powi(d1),
            log: true,
            ticks,
            title: None,
        }
    }

    pub fn titled(mut self, title: &str) -> Axis {
        self.title = Some(title.to_string());
        self
    }

    /// Maps `v` to 0 (at `lo`) … 1 (at `hi`); `None` for values a log axis cannot show.
    fn fraction(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        if self.log {
            (v > 0.0).then(|| (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()))
        } else {
            Some((v - self.lo) / (self.hi - self.lo))
        }
    }
}

/// Stroke patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
}

impl Dash {
    fn attr(self) -> &'static str {
        match self {
            Dash::Solid => "",
            Dash::Dashed => r#" stroke-dasharray="6 4""#,
            Dash::Dotted => r#" stroke-dasharray="1.5 3""#,
        }
    }
}

/// How a line series is drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Stroke {
    pub colour: String,
    pub dash: Dash,
    pub width: f64,
}

impl Stroke {
    pub fn solid(colour: &str) -> Stroke {
        Stroke {
            colour: colour.into(),
            dash: Dash::Solid,
            width: 1.6,
        }
    }

    pub fn dashed(colour: &str) -> Stroke {
        Stroke {
            dash: Dash::Dashed,
            ..Stroke::solid(colour)
        }
    }

    pub fn dotted(colour: &str) -> Stroke {
        Stroke {
            dash: Dash::Dotted,
            width: 2.0,
            ..Stroke::solid(colour)
        }
    }
}

/// How an area (bar, band) is filled.
#[derive(Debug, Clone, PartialEq)]
pub struct Fill {
    pub colour: String,
    pub opacity: f64,
    pub outline: Option<String>,
}

impl Fill {
    pub fn solid(colour: &str) -> Fill {
        Fill {
            colour: colour.into(),
            opacity: 1.0,
            outline: None,
        }
    }

    pub fn light(colour: &str, opacity: f64) -> Fill {
        Fill {
            colour: colour.into(),
            opacity,
            outline: Some(colour.into()),
        }
    }

    fn attrs(&self) -> String {
        let mut s = format!(
            r#"fill="{}" fill-opacity="{}""#,
            escape(&self.colour),
            self.opacity
        );
        if let Some(o) = &self.outline {
            let _ = write!(s, r#" stroke="{}" stroke-width="1""#, escape(o));
        }
        s
    }
}

/// A legend entry's sample.
#[derive(Debug, Clone, PartialEq)]
pub enum Swatch {
    Line(Stroke),
    Area(Fill),
}

#[derive(Debug, Clone, PartialEq)]
pub struct LegendItem {
    pub label: String,
    pub swatch: Swatch,
}

impl LegendItem {
    pub fn line(label: impl Into<String>, stroke: &Stroke) -> LegendItem {
        LegendItem {
            label: label.into(),
            swatch: Swatch::Line(stroke.clone()),
        }
    }

    pub fn area(label: impl Into<String>, fill: &Fill) -> LegendItem {
        LegendItem {
            label: label.into(),
            swatch: Swatch::Area(fill.clone()),
        }
    }
}

/// Outer width and plot height of a chart, and its left margin (equal margins line up the
/// plots of stacked charts).
#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub width: f64,
    pub plot_height: f64,
    pub left: f64,
}

/// Approximate width of `s` at the chart's 11 px font.
fn text_width(s: &str) -> f64 {
    s.chars().count() as f64 * 6.3
}

const RIGHT: f64 = 30.0;
const TITLE_Y: f64 = 16.0;
const LEGEND_ROW: f64 = 17.0;

/// One chart being drawn; [`Chart::render`] gives its `<svg class="chart">`.
pub struct Chart {
    id: usize,
    name: String,
    title: String,
    width: f64,
    height: f64,
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
    x: Axis,
    y: Axis,
    legend: Vec<(f64, f64, LegendItem)>,
    under: String,
    marks: String,
    over: String,
}

fn fmt_num(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

impl Chart {
    /// `id` must be unique within the page (it names the clip path); `name` goes into
    /// `data-chart`.
    pub fn new(
        id: usize,
        name: &str,
        title: &str,
        size: Size,
        x: Axis,
        y: Axis,
        legend: Vec<LegendItem>,
    ) -> Chart {
        // Lay the legend out in rows under the title.
        let mut placed = Vec::new();
        let (mut lx, mut row) = (size.left, 0usize);
        for item in legend {
            let w = 26.0 + text_width(&item.label) + 18.0;
            if lx + w > size.width - RIGHT && lx > size.left {
                lx = size.left;
                row += 1;
            }
            placed.push((lx, TITLE_Y + 18.0 + row as f64 * LEGEND_ROW, item));
            lx += w;
        }
        let rows = if placed.is_empty() { 0 } else { row + 1 };
        let top = TITLE_Y + 14.0 + rows as f64 * LEGEND_ROW;
        let label_lines = x
            .ticks
            .iter()
            .map(|t| t.label.lines().count())
            .max()
            .unwrap_or(1);
        let bottom_margin =
            10.0 + label_lines as f64 * 13.0 + if x.title.is_some() { 16.0 } else { 0.0 };
        let bottom = top + size.plot_height;
        Chart {
            id,
            name: name.into(),
            title: title.into(),
            width: size.width,
            height: bottom + bottom_margin,
            left: size.left,
            top,
            right: size.width - RIGHT,
            bottom,
            x,
            y,
            legend: placed,
            under: String::new(),
            marks: String::new(),
            over: String::new(),
        }
    }

    fn px(&self, v: f64) -> Option<f64> {
        self.x
            .fraction(v)
            .map(|f| self.left + f * (self.right - self.left))
    }

    fn py(&self, v: f64) -> Option<f64> {
        self.y
            .fraction(v)
            .map(|f| self.bottom - f * (self.bottom - self.top))
    }

    /// A line through `points`; a `None` value (or one the axis cannot show) breaks it.
    /// Isolated points are drawn as dots.
    pub fn line(&mut self, label: &str, points: &[(f64, Option<f64>)], stroke: &Stroke) {
        let mut segments: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for &(x, y) in points {
            match (self.px(x), y.and_then(|y| self.py(y))) {
                (Some(px), Some(py)) => segments.last_mut().expect("one segment").push((px, py)),
                _ => {
                    if !segments.last().expect("one segment").is_empty() {
                        segments.push(Vec::new());
                    }
                }
            }
        }
        let mut d = String::new();
        let mut dots = String::new();
        for seg in segments.iter().filter(|s| !s.is_empty()) {
            if let [(x, y)] = seg[..] {
                let _ = write!(
                    dots,
                    r#"<circle cx="{}" cy="{}" r="2.2" fill="{}"/>"#,
                    fmt_num(x),
                    fmt_num(y),
                    escape(&stroke.colour)
                );
                continue;
            }
            for (i, (x, y)) in seg.iter().enumerate() {
                let _ = write!(
                    d,
                    "{}{},{}",
                    if i == 0 { "M" } else { "L" },
                    fmt_num(*x),
                    fmt_num(*y)
                );
            }
        }
        if !d.is_empty() {
            let _ = write!(
                self.marks,
                r#"<path d="{d}" fill="none" stroke="{}" stroke-width="{}" stroke-linejoin="round"{}><title>{}</title></path>"#,
                escape(&stroke.colour),
                stroke.width,
                stroke.dash.attr(),
                escape(label)
            );
        }
        self.marks.push_str(&dots);
    }

    /// A bar from the y axis's floor (0, or the bottom of a log axis) up to `y`, between
    /// `x0` and `x1`; `tip` shows on hover.
    pub fn bar(&mut self, x0: f64, x1: f64, y: f64, fill: &Fill, tip: &str) {
        let floor = if self.y.log { self.y.lo } else { 0.0 };
        let (Some(a), Some(b), Some(top), Some(base)) =
            (self.px(x0), self.px(x1), self.py(y), self.py(floor))
        else {
            return;
        };
        let _ = write!(
            self.marks,
            r#"<rect x="{}" y="{}" width="{}" height="{}" {}><title>{}</title></rect>"#,
            fmt_num(a.min(b)),
            fmt_num(top.min(base)),
            fmt_num((b - a).abs()),
            fmt_num((base - top).abs()),
            fill.attrs(),
            escape(tip)
        );
    }

    /// A shaded vertical band from `x0` to `x1` behind the data.
    pub fn band(&mut self, x0: f64, x1: f64, fill: &Fill) {
        let (Some(a), Some(b)) = (self.px(x0), self.px(x1)) else {
            return;
        };
        let (a, b) = (a.max(self.left), b.min(self.right));
        if b <= a {
            return;
        }
        let _ = write!(
            self.under,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}" fill-opacity="{}"/>"#,
            fmt_num(a),
            fmt_num(self.top),
            fmt_num(b - a),
            fmt_num(self.bottom - self.top),
            escape(&fill.colour),
            fill.opacity
        );
    }

    /// A dot at (`x`, `y`) with a hover text.
    pub fn dot(&mut self, x: f64, y: f64, colour: &str, tip: &str) {
        let (Some(px), Some(py)) = (self.px(x), self.py(y)) else {
            return;
        };
        let _ = write!(
            self.marks,
            r##"<circle cx="{}" cy="{}" r="3.2" fill="{}" stroke="#fff" stroke-width="1"><title>{}</title></circle>"##,
            fmt_num(px),
            fmt_num(py),
            escape(colour),
            escape(tip)
        );
    }

    /// A horizontal reference line at `y` across the plot, labelled above its left end.
    pub fn hline(&mut self, y: f64, stroke: &Stroke, label: &str) {
        let Some(py) = self.py(y) else {
            return;
        };
        let _ = write!(
            self.over,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}"{}/><text x="{}" y="{}" style="fill:{}">{}</text>"#,
            fmt_num(self.left),
            fmt_num(py),
            fmt_num(self.right),
            fmt_num(py),
            escape(&stroke.colour),
            stroke.width,
            stroke.dash.attr(),
            fmt_num(self.left + 6.0),
            fmt_num(py - 4.0),
            escape(&stroke.colour),
            escape(label)
        );
    }

    /// A text label centred above `x`, at the top of the plot.
    pub fn label_at(&mut self, x: f64, text: &str, colour: &str) {
        let Some(px) = self.px(x) else {
            return;
        };
        let _ = write!(
            self.over,
            r#"<text x="{}" y="{}" text-anchor="middle" font-weight="600" style="fill:{}">{}</text>"#,
            fmt_num(px),
            fmt_num(self.top + 12.0),
            escape(colour),
            escape(text)
        );
    }

    fn frame(&self) -> String {
        let mut g = String::from(r#"<g class="grid">"#);
        for t in &self.y.ticks {
            if let Some(py) = self.py(t.value) {
                let _ = write!(
                    g,
                    r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}"/>"#,
                    fmt_num(self.left),
                    fmt_num(self.right),
                    y = fmt_num(py)
                );
            }
        }
        for t in &self.x.ticks {
            if let Some(px) = self.px(t.value) {
                let _ = write!(
                    g,
                    r#"<line class="v" x1="{x}" y1="{}" x2="{x}" y2="{}"/>"#,
                    fmt_num(self.top),
                    fmt_num(self.bottom),
                    x = fmt_num(px)
                );
            }
        }
        g.push_str("</g>");
        let mut a = String::from(r#"<g class="axis">"#);
        let _ = write!(
            a,
            r#"<line x1="{l}" y1="{b}" x2="{r}" y2="{b}"/><line x1="{l}" y1="{t}" x2="{l}" y2="{b}"/>"#,
            l = fmt_num(self.left),
            r = fmt_num(self.right),
            t = fmt_num(self.top),
            b = fmt_num(self.bottom)
        );
        for t in &self.y.ticks {
            if let Some(py) = self.py(t.value) {
                let _ = write!(
                    a,
                    r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                    fmt_num(self.left - 6.0),
                    fmt_num(py + 3.5),
                    escape(&t.label)
                );
            }
        }
        for t in &self.x.ticks {
            if let Some(px) = self.px(t.value) {
                let _ = write!(
                    a,
                    r#"<line x1="{x}" y1="{}" x2="{x}" y2="{}"/><text x="{x}" y="{}" text-anchor="middle">"#,
                    fmt_num(self.bottom),
                    fmt_num(self.bottom + 4.0),
                    fmt_num(self.bottom + 15.0),
                    x = fmt_num(px)
                );
                for (i, line) in t.label.lines().enumerate() {
                    let _ = write!(
                        a,
                        r#"<tspan x="{}" dy="{}">{}</tspan>"#,
                        fmt_num(px),
                        if i == 0 { 0.0 } else { 13.0 },
                        escape(line)
                    );
                }
                a.push_str("</text>");
            }
        }
        if let Some(title) = &self.x.title {
            let _ = write!(
                a,
                r#"<text class="axis-title" x="{}" y="{}" text-anchor="middle">{}</text>"#,
                fmt_num((self.left + self.right) / 2.0),
                fmt_num(self.height - 5.0),
                escape(title)
            );
        }
        a.push_str("</g>");
        g + &a
    }

    fn legend(&self) -> String {
        let mut s = String::from(r#"<g class="legend">"#);
        for (x, y, item) in &self.legend {
            match &item.swatch {
                Swatch::Line(stroke) => {
                    let _ = write!(
                        s,
                        r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{}" stroke-width="{}"{}/>"#,
                        fmt_num(*x),
                        fmt_num(x + 20.0),
                        escape(&stroke.colour),
                        stroke.width.max(2.0),
                        stroke.dash.attr(),
                        y = fmt_num(y - 4.0)
                    );
                }
                Swatch::Area(fill) => {
                    let _ = write!(
                        s,
                        r#"<rect x="{}" y="{}" width="14" height="10" {}/>"#,
                        fmt_num(x + 3.0),
                        fmt_num(y - 9.0),
                        fill.attrs()
                    );
                }
            }
            let _ = write!(
                s,
                r#"<text x="{}" y="{}">{}</text>"#,
                fmt_num(x + 26.0),
                fmt_num(*y),
                escape(&item.label)
            );
        }
        s.push_str("</g>");
        s
    }

    pub fn render(self) -> String {
        let clip = format!("clip{}", self.id);
        format!(
            concat!(
                r#"<svg class="chart" data-chart="{name}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{title}">"#,
                r#"<title>{title}</title>"#,
                r#"<defs><clipPath id="{clip}"><rect x="{l}" y="{t}" width="{pw}" height="{ph}"/></clipPath></defs>"#,
                r#"<text class="title" x="{l}" y="{ty}">{title}</text>{legend}{frame}"#,
                r#"<g class="under" clip-path="url(#{clip})">{under}</g>"#,
                r#"<g class="marks" clip-path="url(#{clip})">{marks}</g>"#,
                r#"<g class="over">{over}</g></svg>"#
            ),
            name = escape(&self.name),
            w = fmt_num(self.width),
            h = fmt_num(self.height),
            title = escape(&self.title),
            clip = clip,
            l = fmt_num(self.left),
            t = fmt_num(self.top),
            pw = fmt_num(self.right - self.left),
            ph = fmt_num(self.bottom - self.top),
            ty = fmt_num(TITLE_Y),
            legend = self.legend(),
            frame = self.frame(),
            under = self.under,
            marks = self.marks,
            over = self.over,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<b a="1">&'x'</b>"#),
            "&lt;b a=&quot;1&quot;&gt;&amp;&#39;x&#39;&lt;/b&gt;"
        );
    }

    #[test]
    fn linear_axes_get_nice_ticks_covering_the_data() {
        let a = Axis::zero_to(2_340.0, 5);
        assert_eq!((a.lo, a.hi), (0.0, 2_500.0));
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "500", "1000", "1500", "2000", "2500"]);
        assert_eq!(Axis::zero_to(23_000.0, 5).ticks[1].label, "5k");
        let a = Axis::zero_to(0.37, 4);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "0.1", "0.2", "0.3", "0.4"]);
        let a = Axis::linear(0.0, 47.0, 6);
        assert_eq!(a.hi, 50.0);
        assert_eq!(a.ticks[1].label, "10");
        // Nothing above zero still gives a usable axis.
        assert_eq!(Axis::zero_to(0.0, 4).hi, 1.0);
        assert_eq!(nice_step(7.0, 3), 2.5);
    }

    #[test]
    fn log_axes_span_whole_decades() {
        let a = Axis::log(0.8, 31.0);
        assert_eq!((a.lo, a.hi), (0.1, 100.0));
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(
            labels,
            ["0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100"]
        );
        let wide = Axis::log(0.01, 5_000.0);
        let labels: Vec<&str> = wide.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0.01", "0.1", "1", "10", "100", "1k", "10k"]);
    }

    #[test]
    fn lines_break_at_gaps_and_draw_lone_points() {
        let size = Size {
            width: 400.0,
            plot_height: 100.0,
            left: 50.0,
        };
        let mut c = Chart::new(
            1,
            "t",
            "T <1>",
            size,
            Axis::linear(0.0, 10.0, 5),
            Axis::zero_to(10.0, 5),
            vec![LegendItem::line("a & b", &Stroke::solid("#123456"))],
        );
        c.line(
            "a",
            &[
                (0.0, Some(1.0)),
                (1.0, Some(2.0)),
                (2.0, None),
                (3.0, Some(f64::NAN)),
                (4.0, Some(3.0)),
                (5.0, None),
                (6.0, Some(4.0)),
                (7.0, Some(5.0)),
            ],
            &Stroke::solid("#123456"),
        );
        let svg = c.render();
        assert!(
            svg.starts_with(r#"<svg class="chart" data-chart="t""#),
            "{svg}"
        );
        assert!(svg.contains("T &lt;1&gt;") && svg.contains("a &amp; b"));
        let d = svg.split(r#"<path d=""#).nth(1).unwrap();
        let d = &d[..d.find('"').unwrap()];
        assert_eq!(d.matches('M').count(), 2, "{d}");
        assert!(!d.contains("NaN"));
        assert_eq!(svg.matches("<circle").count(), 1);
    }
}
