//! Terminal exporter: aligned plain-text tables, labels and text left, numbers right, then the
//! notes.

use super::Report;
use super::model::summary;

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for t in report.tables() {
        out.push_str(&t.text());
        if let Some(legend) = summary::legend_of(&t) {
            // Under the table, before its blank line.
            out.pop();
            out.push_str(&format!("  {legend}\n\n"));
        }
    }
    if report.tables().is_empty() {
        out.push_str("no results with a main-phase summary or probe figures\n\n");
    }
    if !report.notes.is_empty() {
        out.push_str("Notes\n");
        for n in &report.notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    out
}
