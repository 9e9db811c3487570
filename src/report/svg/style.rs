//! How marks look: stroke patterns, fills, legend entries.

use std::fmt::Write;

use super::escape;

/// Stroke patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
}

impl Dash {
    pub(super) fn attr(self) -> &'static str {
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

    pub(super) fn attrs(&self) -> String {
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
