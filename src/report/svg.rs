//! SVG chart primitives, pure string building: linear and log axes with "nice" ticks, a chart
//! frame (title, legend, grid, axes, tick labels), line series with gaps, bars, shaded bands
//! and reference lines. Data marks go into one `<g class="marks">` so a page can check that
//! something was drawn. Every text goes through [`escape`].

use std::fmt::Write;

mod axis;
mod style;

pub use axis::{Axis, Tick, nice_step, tick_label};
pub use style::{Dash, Fill, LegendItem, Stroke, Swatch};

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

    /// A vertical marker line at `x` across the plot, with a hover text and, if given, a label
    /// beside its top.
    pub fn vline(&mut self, x: f64, stroke: &Stroke, tip: &str, label: Option<&str>) {
        let Some(px) = self.px(x) else {
            return;
        };
        let _ = write!(
            self.over,
            r#"<line class="marker" x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="{}" stroke-width="{}"{}><title>{}</title></line>"#,
            fmt_num(self.top),
            fmt_num(self.bottom),
            escape(&stroke.colour),
            stroke.width,
            stroke.dash.attr(),
            escape(tip),
            x = fmt_num(px),
        );
        if let Some(text) = label {
            let _ = write!(
                self.over,
                r#"<text x="{}" y="{}" font-size="10" style="fill:{}">{}</text>"#,
                fmt_num(px + 3.0),
                fmt_num(self.top + 10.0),
                escape(&stroke.colour),
                escape(text)
            );
        }
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
